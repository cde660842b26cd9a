package perfkit.threetier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.http.HttpService;
import perfkit.harness.db.JdbcUrl;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.os.Loopback;
import perfkit.harness.cli.Params;
import perfkit.harness.db.PrivatePostgres;
import perfkit.harness.run.Releases;
import perfkit.harness.db.RemotePostgres;
import perfkit.harness.run.Run;
import perfkit.harness.run.Table;
import perfkit.threetier.chain.Hop;
import perfkit.threetier.chain.async.AsyncTier;
import perfkit.threetier.chain.sync.SyncTier;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Round 3, the chain browser -> A -> B -> C: the load driver GETs A, A POSTs a small JSON request to B, B to C; C
 * waits --c-delay-ms, inserts one row into PostgreSQL and answers; each tier adds its field to the answer on the way
 * back. Every tier is a JVM of its own. Variants: sync (Spring MVC on Tomcat, Apache HttpClient 5, JDBC), async
 * (Reactor Netty server and client, Mono.delay, R2DBC, no Spring: the original's pairing), mixed (async with B sync,
 * the original's attempt) and webflux (Spring WebFlux, WebClient, R2DBC: the same framework as sync, so that "async"
 * and "no framework" can be told apart).
 * <p>
 * Per fork a fresh PostgreSQL (or the user's database, in a schema of the run's own) and every variant's tiers at
 * once; each variant is warmed up by rule before any is measured. Then per variant, in an order rotated per fork:
 * saturation (closed model) and capacity (open model); then one open step per variant at a common rate below the
 * slowest variant's capacity (--chain-rate), where their latencies are compared at the same offered load. After
 * the fork C's rows are counted per variant: a row per answered request.
 */
final class ChainRound implements Rounds.Round {
    static final List<String> VARIANTS = List.of("sync", "async", "mixed", "webflux");
    /** The stack of tiers A, B and C per variant. */
    static final Map<String, List<String>> STACKS = Map.of("sync", List.of("sync", "sync", "sync"), "async", List.of("async", "async", "async"),
            "mixed", List.of("async", "sync", "async"), "webflux", List.of("webflux", "webflux", "webflux"));
    static final List<String> TIERS = List.of("a", "b", "c");

    private final Run run;
    private final HttpRound http;
    private final ThreeTier.Options o;
    private final HttpClient probe = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ChainRound(Run run, ThreeTier.Options o, HttpRound http) {
        this.run = run;
        this.http = http;
        this.o = o;
    }

    /** Rules over several options, checked before the run folder exists. */
    static String checkOptions(Params p) {
        if (!ThreeTier.ROUNDS_OPT.in(p).contains("chain")) return null;
        String url = ThreeTier.JDBC_URL.in(p);
        if (url.isEmpty())
            return !p.placement().containsKey("db") && PrivatePostgres.binaries() == null
                    ? "chain: " + PrivatePostgres.NOT_FOUND + "; or use --jdbc-url" : null;
        if (!url.startsWith("jdbc:postgresql://")) return "option --jdbc-url expects a PostgreSQL URL such as jdbc:postgresql://host:5432/database";
        try {
            JdbcUrl.parse(url);
            return null;
        } catch (IllegalArgumentException e) {
            return "option --jdbc-url expects " + e.getMessage();
        }
    }

    /** A tier's JVM: {@code chain-sync}, {@code chain-async} or {@code chain-webflux}, told its tier, its next tier and C's delay by {@code --perfkit.*} arguments. */
    static void service(String role, String[] args) throws Exception {
        switch (role) {
            case "chain-sync" -> SyncTier.start(args);
            case "chain-async" -> AsyncTier.start(args);
            case "chain-webflux" -> perfkit.threetier.chain.webflux.WebFluxTier.start(args);
            default -> throw new IllegalArgumentException("unknown chain service " + role);
        }
    }

    @Override public List<String> cells() { return o.chains().stream().map(v -> "chain/" + v).toList(); }

    @Override
    public void describe(ObjectNode notes) {
        ObjectNode n = notes.putObject("chain");
        n.put("shape", "browser (the load driver) -> A (GET " + Hop.ENTRY + ") -> B -> C, each tier a JVM of its own (" + o.appJvmArgsText()
                + "); tier to tier a POST " + Hop.PATH + " of a small JSON request {id, from}; C waits " + o.cDelayMs()
                + " ms, inserts one row into PostgreSQL (INSERT ... RETURNING id, autocommit, default durability: an fsync per commit) and answers "
                + "{id, row, cMs}; B adds bMs and A aMs on the way back");
        n.put("delayMs", o.cDelayMs());
        ObjectNode v = n.putObject("variants");
        v.put("sync", "Spring Boot MVC on Tomcat (default pool, 200 threads) in A, B and C; A and B call on with Apache HttpClient 5 classic "
                + "(blocking, a pool of " + Hop.SYNC_CLIENT_CONNECTIONS + " connections); C sleeps on its request thread (Thread.sleep: the stack "
                + "offers no other wait) and writes with JDBC (the PostgreSQL driver) through HikariCP, a fixed pool of " + Hop.DB_POOL);
        v.put("async", "Reactor Netty HttpServer and HttpClient (the client on the server's event loops, a pool of " + Hop.ASYNC_CLIENT_CONNECTIONS
                + " connections, unbounded pending acquires) in A, B and C, no Spring; C waits with Mono.delay (a timer, no thread held) and writes with "
                + "R2DBC PostgreSQL through r2dbc-pool, a fixed pool of " + Hop.DB_POOL);
        v.put("mixed", "A and C as in async, B as in sync (Tomcat, blocking HttpClient): one sync hop in an async chain, as the original tried");
        v.put("webflux", "Spring Boot WebFlux on Reactor Netty in A, B and C, Spring's WebClient (a pool of " + Hop.ASYNC_CLIENT_CONNECTIONS
                + " connections, unbounded pending acquires), JSON through Spring's codecs; C waits with Mono.delay and writes with R2DBC PostgreSQL "
                + "through r2dbc-pool, a fixed pool of " + Hop.DB_POOL + ": sync's framework with reactive style, so sync vs webflux is style alone "
                + "and webflux vs async is the framework's cost");
        n.put("threadsAndPools", "read from the running tiers after each variant's first fork, with the versions that ran: notes.chain.tiers");
        n.put("users", o.chainUsers());
        n.put("compareRate", o.chainRate() == null ? "auto: per fork, half the slowest variant's capacity (last rate met; its "
                + "saturation throughput when no capacity was searched), so every variant runs well below its wall" : o.chainRate() + " req/s");
        n.put("steps", "per fork every variant's tiers start and are warmed up by rule (JIT under 50 ms/s over 10 s, steady throughput; "
                + "notes.serverWarmup) before any is measured; then per variant, in an order rotated per fork: saturation (closed model, --chain-users "
                + "users) and capacity (open model at --slo-ms from the scheduled start); then one open step per variant at the common rate "
                + "(purpose compare in open.csv; notes.chain.compareRates), so latencies are compared at the same offered load");
        n.put("rowCheck", "after each fork C's rows are counted per variant (table " + Hop.TABLE + ", fresh per fork, a variant column): warm-ups "
                + "included, at least one row per request A answered, else the cell is invalid (chain.csv)");
        n.put("published", "original (2014): sync 1,200 req/s vs async 3,300 req/s, async/sync 2.75; async had worse mean and p95 latency; "
                + "mixing (one sync hop in an async chain) did not help: the whole chain had to be async. C waited about 25 ms and wrote to "
                + "PostgreSQL; the async stack used HTTP pipelining");
    }

    @Override
    public void run() throws Exception {
        ObjectNode notes = (ObjectNode) run.notes().get("chain");
        Table table = new Table(run, "chain.csv", "chain: one row per cell and fork: rows C wrote (warm-ups included), requests A answered (warm-ups "
                + "included) and C answered, pool sizes and threads of the tiers; valid when rows >= requests answered",
                "cell", "variant", "fork", "rows", "answered", "c_answered", "a_stack", "b_stack", "c_stack", "db_pool", "a_client_connections",
                "b_client_connections", "a_threads", "b_threads", "c_threads", "valid", "invalid_reason");
        Database users = o.usersPostgres() == null ? null : Database.users(run, o.usersPostgres());
        notes.put("database", users != null ? "user database " + users.url + ", schema " + users.schema + " (dropped afterwards)"
                : "private PostgreSQL cluster per fork (" + (o.dbHost() == null ? "Debian server binaries" : "the host's server binaries")
                + ", default settings: synchronous_commit on, fsync on), " + (o.dbHost() == null ? "127.0.0.1" : "on " + o.dbHost() + " (placement in the manifest; "
                + "the chain's steps leave cpu_db_pct empty and sut_cpu_ms_per_1k without the database: its CPU is in the time series as proc:postgres@db)")
                + ", scram-sha-256 with a random per-run password, removed afterwards");
        if (o.placement().keySet().stream().anyMatch(p -> TIERS.contains(p) || p.equals("driver")))
            notes.put("hosts", "the load driver on " + HttpLoad.where(Params.hostsOf(o.placement(), "driver")) + ", " + TIERS.stream()
                    .map(t -> t.toUpperCase(Locale.ROOT) + " on " + (o.placement().containsKey(t) ? o.placement().get(t) : "this host"))
                    .collect(java.util.stream.Collectors.joining(", ")) + " (placement in the manifest); placed tiers start one after another (C, B, A), "
                    + "bind the address SSH reached their host on, and their step CPU comes from their host's /proc; the driver times every request on "
                    + "its host's clock");
        try {
            for (int fork = 1; fork <= o.forks(); fork++) {
                Database db = users != null ? users : o.dbHost() != null ? Database.placedCluster(run, fork, o.dbHost(), o.placement().get("c")) : Database.privateCluster(run, fork);
                if (db.postgres != null) { // where it listened, so a check after the run can see it is gone
                    ObjectNode cluster = (notes.has("clusters") ? (ArrayNode) notes.get("clusters") : notes.putArray("clusters")).addObject();
                    cluster.put("fork", fork).put("port", db.postgres.port()).put("pid", db.postgres.pid());
                    run.writeManifest();
                }
                try {
                    fork(fork, db, table, notes);
                } finally {
                    if (db != users) db.close(run, fork);
                }
            }
        } finally {
            table.close();
        }
        run.writeManifest();
    }

    /** One fork: every variant's tiers up and warm, then each measured in a rotated order, then all at the common rate. */
    private void fork(int fork, Database db, Table table, ObjectNode notes) throws Exception {
        db.freshTable();
        List<String> order = Templates.rotated(o.chains(), fork - 1);
        Map<String, Map<String, HttpService>> tiers = new LinkedHashMap<>();
        Map<String, Map<String, JsonNode>> info = new LinkedHashMap<>();
        try {
            for (String variant : order) {
                Map<String, HttpService> t = new LinkedHashMap<>();
                tiers.put(variant, t);
                startTiers(variant, fork, db, t);
            }
            // every variant warm before any is measured: none is measured while its tiers still compile, none gains from going last
            for (String variant : order) http.warm("chain/" + variant, fork, List.of(entry(tiers.get(variant))), servers(tiers.get(variant)));
            Map<String, Double> slowest = new LinkedHashMap<>();
            for (String variant : order) {
                String cell = "chain/" + variant, url = entry(tiers.get(variant));
                double saturation = http.saturation(cell, fork, url, o.chainUsers(), watch(tiers.get(variant), db), servers(tiers.get(variant)));
                CapacitySearch.Result cap = http.capacity(cell, fork, url, saturation, watch(tiers.get(variant), db), servers(tiers.get(variant)));
                slowest.put(variant, cap != null && cap.lastMet() != null ? cap.lastMet() : saturation);
            }
            double rate = compareRate(slowest);
            ObjectNode rates = notes.has("compareRates") ? (ObjectNode) notes.get("compareRates") : notes.putObject("compareRates");
            rates.put(String.valueOf(fork), Double.isNaN(rate) ? null : (Double) Math.rint(rate));
            if (Double.isNaN(rate)) run.progress().say("chain fork " + fork + ": no variant answered, so no common rate to compare at");
            else {
                for (String variant : order)
                    http.openStep("chain/" + variant, fork, entry(tiers.get(variant)), Math.rint(rate), "compare", watch(tiers.get(variant), db),
                            servers(tiers.get(variant)), Double.NaN);
                // every tier a JVM under test, at a rate each variant carries with headroom
                String first = order.get(0);
                http.profilingCost("chain/" + first, fork, entry(tiers.get(first)), Math.rint(rate), watch(tiers.get(first), db), servers(tiers.get(first)));
            }
            for (String variant : order) {
                Map<String, JsonNode> byTier = new LinkedHashMap<>();
                for (String t : TIERS) byTier.put(t, info(tiers.get(variant).get(t)));
                info.put(variant, byTier);
            }
        } finally {
            for (Map<String, HttpService> t : tiers.values()) for (String tier : TIERS) if (t.containsKey(tier)) t.get(tier).stop(run); // A first
        }
        for (String variant : o.chains()) rowCheck(variant, fork, db, info.get(variant), table, notes);
    }

    /**
     * The rate every variant is compared at: --chain-rate, or half the slowest variant's capacity (its last rate met, or
     * its saturation throughput when no capacity was searched); NaN when no variant answered.
     */
    double compareRate(Map<String, Double> capacityByVariant) {
        if (o.chainRate() != null) return o.chainRate();
        return capacityByVariant.values().stream().filter(v -> v != null && v > 0).mapToDouble(Double::doubleValue).min().orElse(Double.NaN) / 2;
    }

    private static String entry(Map<String, HttpService> tiers) { return tiers.get("a").url() + Hop.ENTRY; }

    private static Map<String, Long> watch(Map<String, HttpService> tiers, Database db) {
        Map<String, Long> watch = new LinkedHashMap<>();
        for (String t : TIERS) watch.put(t, tiers.get(t).process().pid());
        if (db.pid() > 0) watch.put("db", db.pid());
        return watch;
    }

    private static Map<String, JvmActivity.Listener> servers(Map<String, HttpService> tiers) {
        Map<String, JvmActivity.Listener> s = new LinkedHashMap<>();
        for (String t : TIERS) s.put(tiers.get(t).name(), tiers.get(t).activity());
        return s;
    }

    private void rowCheck(String variant, int fork, Database db, Map<String, JsonNode> info, Table table, ObjectNode notes) throws Exception {
        String cell = "chain/" + variant;
        if (info == null) return; // the fork failed before this variant ran
        if (fork == 1) {
            ObjectNode t = notes.has("tiers") ? (ObjectNode) notes.get("tiers") : notes.putObject("tiers");
            ObjectNode byTier = t.putObject(variant);
            info.forEach(byTier::set);
        }
        List<String> stacks = STACKS.get(variant);
        long rows = db.rows(variant);
        JsonNode a = info.get("a"), b = info.get("b"), c = info.get("c");
        Long answered = a.path("answered").isNumber() ? a.get("answered").asLong() : null;
        String problem = answered == null ? "could not read A's answered requests"
                : rows < answered ? rows + " rows for " + answered + " answered requests" : "";
        table.write(Table.row().set("cell", cell).set("variant", variant).set("fork", fork).set("rows", rows).set("answered", answered)
                .set("c_answered", c.path("answered").isNumber() ? c.get("answered").asLong() : null)
                .set("a_stack", stacks.get(0)).set("b_stack", stacks.get(1)).set("c_stack", stacks.get(2))
                .set("db_pool", c.path("dbPoolMax").isNumber() ? c.get("dbPoolMax").asInt() : null)
                .set("a_client_connections", a.path("clientConnectionsMax").isNumber() ? a.get("clientConnectionsMax").asInt() : null)
                .set("b_client_connections", b.path("clientConnectionsMax").isNumber() ? b.get("clientConnectionsMax").asInt() : null)
                .set("a_threads", threads(a)).set("b_threads", threads(b)).set("c_threads", threads(c))
                .set("valid", problem.isEmpty()).set("invalid_reason", problem));
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: %d rows for %s answered requests", cell, fork, rows, answered));
        if (!problem.isEmpty()) run.invalid(cell + " fork " + fork + ": " + problem);
    }

    /** Request threads: Tomcat's pool maximum, or Reactor Netty's event loops. */
    private static String threads(JsonNode info) {
        if (info.path("requestThreadsMax").isNumber()) return "tomcat " + info.get("requestThreadsMax").asInt();
        if (info.path("ioWorkerCount").isNumber()) return "event loops " + info.get("ioWorkerCount").asInt();
        return "";
    }

    /**
     * Starts A, B and C at once (JVM start-ups are most of a quick run): B and C get free ports picked here, so A and B
     * know where to call before their next tier listens. Into {@code tiers} goes each that started, even when another failed.
     * With tiers on other hosts (--place), whose ports are chosen there, C starts first, then B, then A, each told
     * where the next one listens.
     */
    private void startTiers(String variant, int fork, Database db, Map<String, HttpService> tiers) throws Exception {
        List<String> stacks = STACKS.get(variant);
        if (TIERS.stream().anyMatch(o.placement()::containsKey)) {
            run.progress().say("chain/" + variant + " fork " + fork + ": starting C (" + stacks.get(2) + "), B (" + stacks.get(1) + ") and A (" + stacks.get(0)
                    + "), placed tiers on their hosts");
            String next = null;
            for (int i = TIERS.size() - 1; i >= 0; i--) {
                String tier = TIERS.get(i);
                HttpService s = startTier(variant, tier, stacks.get(i), fork, 0, next, tier.equals("c") ? db.params() : Map.of());
                tiers.put(tier, s);
                next = s.url();
            }
            return;
        }
        int c = Loopback.freePort(), b;
        do b = Loopback.freePort(); while (b == c);
        int[] ports = {0, b, c};
        run.progress().say("chain/" + variant + " fork " + fork + ": starting A (" + stacks.get(0) + "), B (" + stacks.get(1) + ") and C (" + stacks.get(2) + ")");
        ExecutorService starter = Executors.newFixedThreadPool(TIERS.size());
        try {
            Map<String, Future<HttpService>> started = new LinkedHashMap<>();
            for (int i = 0; i < TIERS.size(); i++) {
                String tier = TIERS.get(i), stack = stacks.get(i), next = i + 1 < TIERS.size() ? "http://127.0.0.1:" + ports[i + 1] : null;
                int port = ports[i];
                started.put(tier, starter.submit(() -> startTier(variant, tier, stack, fork, port, next, tier.equals("c") ? db.params() : Map.of())));
            }
            Exception failure = null;
            for (var e : started.entrySet()) {
                try {
                    tiers.put(e.getKey(), e.getValue().get());
                } catch (ExecutionException ex) {
                    if (failure == null) failure = ex.getCause() instanceof Exception cause ? cause : ex;
                }
            }
            if (failure != null) throw failure;
        } finally {
            starter.shutdown();
        }
    }

    private HttpService startTier(String variant, String tier, String stack, int fork, int port, String next, Map<String, String> privateParams)
            throws Exception {
        List<String> args = new ArrayList<>(List.of(ThreeTier.SERVICE, "chain-" + stack, "--perfkit.run-dir=" + run.dir(), "--perfkit.tier=" + tier,
                "--perfkit.variant=" + variant, "--perfkit.delay-ms=" + o.cDelayMs(), "--perfkit.port=" + port));
        if (next != null) args.add("--perfkit.next-url=" + next);
        if (!stack.equals("async")) // the Spring tiers
            args.addAll(List.of("--server.port=" + port, "--spring.main.banner-mode=off", "--logging.level.root=WARN",
                    // Tomcat would close callers' connections every 100 requests, and reset them after a minute idle between steps
                    "--server.tomcat.max-keep-alive-requests=-1", "--server.tomcat.keep-alive-timeout=10m"));
        return HttpService.start(run, "chain-" + variant + "-" + tier + "/fork" + fork, tier, o.placement().get(tier), null, o.appJvmArgs(), args, privateParams);
    }

    private JsonNode info(HttpService s) {
        try {
            HttpResponse<String> r = probe.send(HttpRequest.newBuilder(URI.create(s.url() + Hop.INFO)).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return Hop.JSON.readTree(r.body());
        } catch (Exception e) {
            return Hop.JSON.getNodeFactory().textNode("could not read: " + e.getMessage());
        }
    }

    /** Where C writes: a private cluster (one per fork) or the user's database, in a schema of the run's own. */
    private static final class Database {
        final String url, user, password, schema;
        final PrivatePostgres postgres;
        /** The private cluster on a host of its own (--place db), or null. */
        final RemotePostgres placed;

        private Database(String url, String user, String password, String schema, PrivatePostgres postgres) {
            this(url, user, password, schema, postgres, null);
        }

        private Database(String url, String user, String password, String schema, PrivatePostgres postgres, RemotePostgres placed) {
            this.url = url; this.user = user; this.password = password; this.schema = schema; this.postgres = postgres; this.placed = placed;
        }

        /** C's database on a host of its own: its CPU is in the time series as that host's (proc:postgres@db, host:db). */
        static Database placedCluster(Run run, int fork, perfkit.harness.os.Ssh host, perfkit.harness.os.Ssh c) throws Exception {
            run.progress().say("chain fork " + fork + ": starting a private PostgreSQL cluster on " + host);
            // a placed C writes to it from its own host
            RemotePostgres pg = RemotePostgres.start(run, "db", host, Map.of(), c == null ? List.of() : List.of(c));
            return new Database(pg.jdbcUrl(), pg.user(), pg.password(), "", null, pg);
        }

        static Database privateCluster(Run run, int fork) throws Exception {
            run.progress().say("chain fork " + fork + ": starting a private PostgreSQL cluster");
            PrivatePostgres pg = PrivatePostgres.start(run, Map.of());
            run.timeSeries().watchProcessTree(series(fork), pg.pid()); // postmaster and backends, per second
            return new Database(pg.jdbcUrl(), pg.user(), pg.password(), "", pg);
        }

        /** The user's database: it must answer (one line otherwise); the schema goes however the run ends. */
        static Database users(Run run, ThreeTier.UsersPostgres u) throws Exception {
            // the run id's time and random suffix: unique per run even on a shared database
            String id = run.dir().getFileName().toString().toLowerCase(Locale.ROOT);
            String schema = "perfkit_chain_" + id.substring(0, 15).replaceAll("[^a-z0-9]", "") + "_" + id.substring(id.length() - 6).replaceAll("[^a-z0-9]", "");
            Database db = new Database(u.url(), u.user(), u.password(), schema, null);
            // listed for dropping as it is created, with the run's end registered first: Ctrl-C or a failure must not leave it behind
            new Releases(run).create("schema " + schema, db::createSchema, db::dropSchema);
            return db;
        }

        Connection connect() throws java.sql.SQLException {
            DriverManager.setLoginTimeout(10);
            String u = JdbcUrl.withParam(url, "connectTimeout", "10");
            if (!schema.isEmpty()) u = JdbcUrl.withParam(u, "currentSchema", schema);
            return DriverManager.getConnection(u, user, password);
        }

        /** What C needs, over its stdin. */
        Map<String, String> params() {
            return Map.of("db-url", url, "db-user", user, "db-password", password, "db-schema", schema);
        }

        void freshTable() throws java.sql.SQLException {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + Hop.TABLE);
                s.execute("CREATE TABLE " + Hop.TABLE + " (id bigserial PRIMARY KEY, request_id bigint NOT NULL, variant text NOT NULL, "
                        + "written_at timestamptz NOT NULL DEFAULT clock_timestamp())");
            }
        }

        long rows(String variant) throws java.sql.SQLException {
            try (Connection c = connect(); java.sql.PreparedStatement s = c.prepareStatement("SELECT count(*) FROM " + Hop.TABLE + " WHERE variant = ?")) {
                s.setString(1, variant);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }

        long pid() { return postgres == null ? -1 : postgres.pid(); }

        void close(Run run, int fork) {
            if (placed != null) { placed.close(); return; }
            run.timeSeries().unwatchProcess(series(fork));
            postgres.close();
        }

        private void createSchema() {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException("chain: cannot connect to " + url + ": " + scrubbed(e));
            }
        }

        private void dropSchema() {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("SET lock_timeout = '30s'");
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(scrubbed(e)); // said, and tried again at the run's end
            }
        }

        private String scrubbed(Exception e) {
            String why = String.valueOf(e.getMessage()).lines().findFirst().orElse("no answer");
            return password.isEmpty() ? why : why.replace(password, "***");
        }

        private static String series(int fork) { return "proc:chain-postgres/fork" + fork; }
    }
}
