package perfkit.threetier;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.measure.CpuSampler;
import perfkit.harness.process.Fork;
import perfkit.harness.db.JdbcUrl;
import perfkit.harness.cli.Params;
import perfkit.harness.db.PrivatePostgres;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.db.RemotePostgres;
import perfkit.harness.run.Releases;
import perfkit.harness.run.Run;
import perfkit.harness.run.Table;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Round 2, inserts: W writer threads insert the same row, one per statement, into PostgreSQL and Cassandra, each
 * at a strict and a relaxed durability setting, so like is compared with like. A cell is
 * {@code inserts/<store>/<durability>}; every fork of every cell gets a fresh database (a private PostgreSQL
 * cluster or an embedded Cassandra node), or a fresh schema / keyspace of its own on the user's database. After
 * each cell the rows are counted in the database: they must equal the inserts acknowledged to the writers.
 */
final class Inserts implements Rounds.Round {
    static final List<String> STORES = List.of("postgres", "cassandra");
    static final List<String> DURABILITIES = List.of("strict", "relaxed");
    /** A user's Cassandra: its commit log mode is the cluster's, which no client can set, so it is one cell. */
    static final String AS_CONFIGURED = "as-configured";
    static final String TABLE = "insert_rows";
    static final List<String> PG_SETTINGS = List.of("fsync", "synchronous_commit", "wal_sync_method", "full_page_writes", "commit_delay", "shared_buffers");

    private final Run run;
    private final ThreeTier.Options o;
    private final boolean usersPostgres, usersCassandra;
    /** What the run created on a user's database or cluster (schemas, keyspaces): dropped by its cell, or at the run's end. */
    private Releases releases;
    private EmbeddedCassandra.Scripts cassandraScripts;
    private CqlBridge usersCql; // the admin session on the user's cluster: DDL, counts, and the drop on any ending
    private int cellIndex;

    Inserts(Run run, ThreeTier.Options o) {
        this.run = run;
        this.o = o;
        this.usersPostgres = o.usersPostgres() != null;
        this.usersCassandra = o.usersCassandra() != null;
    }

    // ---- options ----------------------------------------------------------------------------------

    static String checkOptions(Params p) {
        String url = ThreeTier.JDBC_URL.in(p);
        if (!url.isEmpty()) {
            if (!url.startsWith("jdbc:postgresql://")) return "option --jdbc-url expects a PostgreSQL URL such as jdbc:postgresql://host:5432/database";
            try { JdbcUrl.parse(url); } catch (IllegalArgumentException e) { return "option --jdbc-url expects " + e.getMessage(); }
        }
        String points = ThreeTier.CASSANDRA_CONTACT_POINTS.in(p);
        if (!points.isEmpty())
            for (String hp : points.split(",")) {
                String s = hp.trim();
                int colon = s.lastIndexOf(':');
                int port = colon <= 0 ? -1 : parsePort(s.substring(colon + 1));
                if (port < 1 || port > 65535)
                    return "option --cassandra-contact-points expects host:port[,host:port...], got '" + points + "'";
            }
        if (points.isEmpty() && (!ThreeTier.CASSANDRA_USER.in(p).isBlank() || !ThreeTier.CASSANDRA_PASSWORD.in(p).isEmpty()))
            return "--cassandra-user and --cassandra-password need --cassandra-contact-points";
        boolean truststore = !ThreeTier.CASSANDRA_TRUSTSTORE.in(p).isBlank(), keystore = !ThreeTier.CASSANDRA_KEYSTORE.in(p).isBlank();
        if (points.isEmpty() && (truststore || keystore))
            return "--cassandra-truststore and --cassandra-keystore are for a cluster of yours (--cassandra-contact-points); the embedded node takes plain connections";
        if (keystore && !truststore) return "--cassandra-keystore needs --cassandra-truststore (TLS starts with trusting the cluster)";
        if (truststore) {
            String problem = ThreeTier.Options.tls(p).problem();
            if (problem != null) return problem;
        }
        if (!ThreeTier.ROUNDS_OPT.in(p).contains("inserts")) return null;
        if (ThreeTier.STORES.in(p).contains("postgres") && url.isEmpty() && !p.placement().containsKey("db") && PrivatePostgres.binaries() == null)
            return PrivatePostgres.NOT_FOUND + "; or use --jdbc-url, or --stores cassandra";
        return null;
    }

    private static int parsePort(String s) {
        try { return Integer.parseInt(s); } catch (NumberFormatException e) { return -1; }
    }

    // ---- plan -------------------------------------------------------------------------------------

    private List<String> durabilitiesOf(String store) {
        return store.equals("cassandra") && usersCassandra ? List.of(AS_CONFIGURED) : o.durabilities();
    }

    @Override
    public List<String> cells() {
        List<String> cells = new ArrayList<>();
        for (String store : o.stores())
            for (String d : durabilitiesOf(store)) cells.add("inserts/" + store + "/" + d);
        return cells;
    }

    @Override
    public void describe(ObjectNode notes) {
        ObjectNode n = notes.putObject("inserts");
        n.put("cells", "inserts/<store>/<durability>; each fork starts fresh databases: a private PostgreSQL cluster or an embedded Cassandra node per cell");
        n.put("writers", writersNote("(its version read once its classes load)"));
        n.put("row", "id bigint primary key, customer text, item text, quantity int, price double; a fresh table per cell");
        n.put("warmup", "the writers insert from the start; after at least --warmup s the window opens once the insert rate has been steady "
                + "for 5 s (within 10%, no trend), at most --server-warmup-max s (warmup_s, warmup_settled in inserts.csv): a database still "
                + "filling its caches, or Cassandra's JVM still compiling, climbs through a fixed warm-up");
        n.put("throughput", "tps = inserts started in the --insert-measure window (after the warm-up) and acknowledged, / --insert-measure seconds; "
                + "latency per insert, sent to acknowledged, in latency/inserts.<store>.<durability>.insert.fork<k>.*.hlog (closed loop: corrected = uncorrected)");
        n.put("rowCounts", "after each cell, count(*) in the database must equal the inserts acknowledged to the writers, warm-up included; "
                + "otherwise the cell is invalid");
        n.put("cpu", "cpu_db_pct: the database's process tree (postmaster and backends; the Cassandra JVM) over the window, percent of one core; "
                + "cpu_writers_pct: the writer JVM (with the Cassandra driver's threads)");
        n.put("postgres", usersPostgres ? "user database " + o.usersPostgres().url() + ", a schema of its own per cell, dropped after; "
                + "synchronous_commit set per session (strict = on, relaxed = off); fsync and the rest as the server is configured"
                : "private PostgreSQL cluster (" + (o.dbHost() == null ? "Debian server binaries, PrivatePostgres" : "on " + o.dbHost()
                + ", RemotePostgres, placement in the manifest; cpu_db_pct from that host") + ") per cell and fork; strict = the defaults (fsync on, "
                + "synchronous_commit on: each commit waits for its WAL flush); relaxed = synchronous_commit=off (commits return before the flush)");
        n.put("cassandra", usersCassandra ? "user cluster at " + o.usersCassandra().contactPoints() + " (datacenter " + o.usersCassandra().datacenter()
                + (o.usersCassandra().tls() == null ? ", plain connection" : ", TLS with each node's certificate checked against the truststore and its "
                + "contact point's name" + (o.usersCassandra().tls().keystore().isEmpty() ? "" : ", and a client certificate")) + "), a keyspace of its own (replication factor 1), dropped after; durability as the cluster is configured (a client cannot "
                + "set the commit log mode), one cell inserts/cassandra/" + AS_CONFIGURED
                : "Cassandra " + EmbeddedCassandra.VERSION + " embedded in a child JVM (" + EmbeddedCassandra.HEAP + ", Cassandra's JDK 17 option set, "
                + (o.placement().containsKey("cassandra") ? "on " + o.placement().get("cassandra") + " bound to the address the run reached it on, "
                        + "ports picked there, its CPU from that host, placement in the manifest" : "loopback, ports it picks free")
                + ", no JMX, PasswordAuthenticator with a random superuser password) per cell and fork; strict = "
                + "commitlog_sync: batch (each write fsynced before it is acknowledged); relaxed = commitlog_sync: periodic, "
                + "commitlog_sync_period: 10000ms (Cassandra's default: acknowledged at once, fsynced every 10 s)");
        n.put("durability", "lost writes on a crash of the machine (power loss, kernel panic): strict loses no acknowledged insert in either database; "
                + "relaxed PostgreSQL may lose the last ~3 x wal_writer_delay (about 600 ms) of acknowledged commits but never corrupts "
                + "(synchronous_commit=off); relaxed Cassandra may lose up to commitlog_sync_period (10 s) of acknowledged writes on a single node "
                + "(replicas hide it only when they do not fail together). A crash of the Cassandra process alone loses nothing (its commit "
                + "log is already in the OS page cache); relaxed PostgreSQL can lose those last commits on a crash of the server process too "
                + "(they wait in WAL buffers in shared memory).");
        n.put("original", "the original (2014) compared Cassandra at its default periodic commit log with a \"tuned\" PostgreSQL "
                + "(published: Cassandra 21,681 vs PostgreSQL 16,876 inserts/s, ratio 1.28); the like-for-like ratios are "
                + "cassandra/strict vs postgres/strict and cassandra/relaxed vs postgres/relaxed");
        n.putObject("settings");
    }

    /** The writers in words, with the drivers' versions as their jars say: the Cassandra driver's is read from its own class loader. */
    private String writersNote(String cassandraDriver) {
        return o.writers() + " writer threads, each inserting one row per statement with a prepared statement and waiting for "
                + "its acknowledgement (closed loop); PostgreSQL JDBC " + perfkit.harness.os.Library.version(org.postgresql.Driver.class) + " with autocommit (one insert per commit, a connection per writer); "
                + "Apache Cassandra Java driver " + cassandraDriver + " (one session, a prepared statement per writer, consistency LOCAL_ONE, the driver's default), "
                + "loaded in a class loader of its own in the writer JVM because its Netty 4.1 clashes with Spring Boot 4's Netty 4.2";
    }

    // ---- run --------------------------------------------------------------------------------------

    @Override
    public void run() throws Exception {
        List<String> stores = o.stores();
        if (stores.contains("cassandra")) {
            run.progress().phase("building the Cassandra scripts", 20);
            cassandraScripts = EmbeddedCassandra.Scripts.prepare(run, !usersCassandra);
            ((ObjectNode) run.notes().get("inserts")).put("writers", writersNote(CqlBridge.driverVersion(cassandraScripts.clientClasspath())));
        }
        // a user's database that does not answer fails the run in one line, before anything is measured
        if (usersPostgres && stores.contains("postgres")) checkUsersPostgres();
        if (usersCassandra && stores.contains("cassandra")) openUsersCassandra();
        // before anything is created on a user's database or cluster; its session closes after the drops (cleanups run in order)
        releases = new Releases(run);
        run.onFinish(() -> { if (usersCql != null) usersCql.close(); });
        try (Table table = new Table(run, "inserts.csv", "one row per inserts cell and fork: TPS over the window, latency per insert, rows counted "
                + "vs acknowledged, CPU of the database and the writers, the durability settings in force",
                "cell", "store", "durability", "fork", "writers", "window_s", "inserts", "tps", "latency_mean_ms", "latency_p50_ms",
                "latency_p95_ms", "latency_p99_ms", "latency_max_ms", "acknowledged", "rows_counted", "failed_inserts", "cpu_db_pct",
                "cpu_writers_pct", "warmup_s", "warmup_settled", "settings", "valid", "reason")) {
            // stores and durabilities in an order rotated per fork, so the host's drift over a run favours no cell
            for (int fork = 1; fork <= o.forks(); fork++)
                for (String store : Templates.rotated(stores, fork - 1))
                    for (String durability : Templates.rotated(durabilitiesOf(store), fork - 1)) {
                        String cell = "inserts/" + store + "/" + durability;
                        table.write(store.equals("postgres") ? postgresCell(cell, durability, fork) : cassandraCell(cell, durability, fork));
                        run.writeManifest();
                    }
        } finally {
            if (usersCql != null) { usersCql.close(); usersCql = null; }
        }
    }

    /** A name unique per run and cell, even on a shared database: the run id's time and random suffix. */
    private String objectName() {
        String id = run.dir().getFileName().toString().toLowerCase(Locale.ROOT);
        return "perfkit_" + id.substring(0, 16) + "_" + id.substring(id.length() - 6).replaceAll("[^a-z0-9]", "") + "_" + (++cellIndex);
    }

    // ---- PostgreSQL -------------------------------------------------------------------------------

    private InsertWriters.Postgres usersPgTarget(String durability) {
        ThreeTier.UsersPostgres u = o.usersPostgres();
        return new InsertWriters.Postgres(u.url(), u.user(), u.password(), durability.equals("relaxed") ? "off" : "on");
    }

    private void checkUsersPostgres() {
        InsertWriters.Postgres t = usersPgTarget("strict");
        try (Connection c = t.connect()) {
            c.isValid(5);
        } catch (Exception e) {
            throw new IllegalStateException("cannot connect to " + t.url() + ": " + scrub(firstLine(e), t.password()));
        }
    }

    private Table.Row postgresCell(String cell, String durability, int fork) throws Exception {
        PrivatePostgres pg = null;
        RemotePostgres placed = null;
        InsertWriters.Postgres target;
        Map<String, String> serverSettings = durability.equals("relaxed") ? Map.of("synchronous_commit", "off") : Map.of();
        if (usersPostgres) {
            target = usersPgTarget(durability);
        } else if (o.dbHost() != null) {
            run.progress().phase(cell + " fork " + fork + ": starting a private PostgreSQL cluster on " + o.dbHost(), 3);
            placed = RemotePostgres.start(run, "db", o.dbHost(), serverSettings);
            target = new InsertWriters.Postgres(placed.jdbcUrl(), placed.user(), placed.password(), "");
        } else {
            run.progress().phase(cell + " fork " + fork + ": starting a private PostgreSQL cluster", 3);
            pg = PrivatePostgres.start(run, serverSettings);
            run.timeSeries().watchProcessTree("proc:postgres", pg.pid());
            target = new InsertWriters.Postgres(pg.jdbcUrl(), pg.user(), pg.password(), "");
        }
        String schema = objectName(), table = schema + "." + TABLE, created = "schema " + schema;
        // on a user's database the schema is listed for dropping as it is created: Ctrl-C or a failure must not leave it there
        if (usersPostgres) releases.create(created, () -> execute(target, "CREATE SCHEMA " + schema), () -> dropSchema(target, schema));
        else execute(target, "CREATE SCHEMA " + schema);
        try {
            Map<String, String> settings = new LinkedHashMap<>();
            try (Connection c = target.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + table + " (" + InsertWriters.PG_COLUMNS + ")");
                for (String name : PG_SETTINGS)
                    try (ResultSet r = s.executeQuery("SHOW " + name)) { r.next(); settings.put(name, r.getString(1)); }
            }
            long pid = pg == null ? -1 : pg.pid();
            Measured m = fork(cell, spec(cell, fork, table, target, null), pid, placed == null ? null : placed::cpuPercent);
            long counted;
            try (Connection c = target.connect(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*) FROM " + table)) {
                r.next();
                counted = r.getLong(1);
            }
            String where = usersPostgres ? "user database, synchronous_commit set per session"
                    : placed != null ? "private cluster on " + o.dbHost() + " at " + placed.address() + ":" + placed.port() + ", server settings"
                    : "private cluster 127.0.0.1:" + pg.port() + ", server settings";
            return row(cell, "postgres", durability, fork, m, counted, settings, where);
        } finally {
            if (usersPostgres) releases.release(created);
            if (pg != null) { run.timeSeries().unwatchProcess("proc:postgres"); pg.close(); }
            if (placed != null) placed.close();
        }
    }

    private static void dropSchema(InsertWriters.Postgres target, String schema) {
        try (Connection c = target.connect(); Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '30s'");
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (Exception e) {
            throw new IllegalStateException(scrub(firstLine(e), target.password())); // said, and tried again at the run's end
        }
    }

    private static void execute(InsertWriters.Postgres target, String sql) throws Exception {
        try (Connection c = target.connect(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    // ---- Cassandra --------------------------------------------------------------------------------

    private void openUsersCassandra() throws Exception {
        ThreeTier.UsersCassandra c = o.usersCassandra();
        try {
            usersCql = CqlBridge.open(cassandraScripts.clientClasspath(), c.contactPoints(), c.datacenter(), c.user(), c.password(), c.tls(), 10);
        } catch (CqlBridge.CqlException e) {
            throw new IllegalStateException("cannot connect to Cassandra at " + c.contactPoints() + ": " + scrub(e.getMessage(), c.password()));
        }
    }

    private Table.Row cassandraCell(String cell, String durability, int fork) throws Exception {
        EmbeddedCassandra node = null;
        CqlBridge cql = usersCql;
        String points, user, password, datacenter;
        CqlBridge.Tls tls = usersCassandra ? o.usersCassandra().tls() : null;
        if (usersCassandra) {
            points = o.usersCassandra().contactPoints();
            user = o.usersCassandra().user();
            password = o.usersCassandra().password();
            datacenter = o.usersCassandra().datacenter();
        } else {
            run.progress().phase(cell + " fork " + fork + ": starting an embedded Cassandra node", 15);
            node = EmbeddedCassandra.start(run, cassandraScripts, durability + "-fork" + fork, durability, o.placement().get("cassandra"));
            points = node.contactPoint();
            user = node.user();
            password = node.password();
            datacenter = EmbeddedCassandra.DATACENTER;
            try {
                cql = CqlBridge.open(cassandraScripts.clientClasspath(), points, datacenter, user, password, 10);
            } catch (Exception e) {
                node.close();
                throw e;
            }
        }
        String keyspace = objectName(), table = keyspace + "." + TABLE, created = "keyspace " + keyspace;
        CqlBridge admin = cql;
        String createKeyspace = "CREATE KEYSPACE " + keyspace + " WITH replication = {'class': 'NetworkTopologyStrategy', '" + datacenter + "': 1}";
        try {
            if (usersCassandra) releases.create(created, () -> admin.execute(createKeyspace), () -> admin.execute("DROP KEYSPACE IF EXISTS " + keyspace));
            else cql.execute(createKeyspace);
            cql.execute("CREATE TABLE " + table + " (" + InsertWriters.CQL_COLUMNS + ")");
            Map<String, String> settings = commitlogSettings(cql, node);
            InsertWriters.Cassandra target = new InsertWriters.Cassandra(cassandraScripts.clientClasspath(), points, datacenter, user, password, tls);
            RemoteJvm elsewhere = node == null ? null : node.remote();
            Measured m = fork(cell, spec(cell, fork, table, null, target), node == null ? -1 : node.pid(), elsewhere == null ? null : elsewhere::cpuPercent);
            long counted = cql.execute("SELECT count(*) FROM " + table);
            String where = usersCassandra ? "as the cluster is configured (read from the contacted node's system_views.settings)"
                    : "embedded node " + points + (elsewhere == null ? "" : " on " + elsewhere.host()) + ", generated cassandra.yaml";
            return row(cell, "cassandra", durability, fork, m, counted, settings, where);
        } finally {
            if (usersCassandra) releases.release(created);
            if (node != null) { cql.close(); node.close(); }
        }
    }

    /** The commit log settings in force, as the node reports them; the yaml's when the virtual table cannot be read. */
    private static Map<String, String> commitlogSettings(CqlBridge cql, EmbeddedCassandra node) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            for (List<String> r : cql.rows("SELECT name, value FROM system_views.settings"))
                // the 5.0 names only: the old *_in_ms aliases repeat them
                if ((r.get(0).startsWith("commitlog_sync") || r.get(0).equals("commitlog_disk_access_mode")) && !r.get(0).endsWith("_in_ms"))
                    out.put(r.get(0), r.get(1));
        } catch (Exception e) {
            out.put("unreadable", firstLine(e));
        }
        if (node != null && out.containsKey("unreadable")) out.putAll(node.yamlSettings());
        return out;
    }

    // ---- one fork ---------------------------------------------------------------------------------

    private InsertWriters.Spec spec(String cell, int fork, String table, InsertWriters.Postgres postgres, InsertWriters.Cassandra cassandra) {
        return new InsertWriters.Spec(cell, fork, table, o.writers(), o.warmup(), o.serverWarmupMax(), o.insertMeasure(), postgres, cassandra);
    }

    private record Measured(InsertWriters.Result result, double cpuDbPct) {}

    /** A database on another host: its CPU in percent of one of that host's cores between two instants of this host's clock. */
    private interface CpuElsewhere { double percent(long fromMs, long toMs) throws InterruptedException; }

    /**
     * Runs the writers in a fresh JVM; the database's CPU is sampled at the window's edges as the fork reports them:
     * its process tree here, or its own host's readings for a database placed on another ({@code placed}).
     */
    private Measured fork(String cell, InsertWriters.Spec spec, long dbPid, CpuElsewhere placed) throws Exception {
        CpuSampler cpu = CpuSampler.forThisMachine();
        long[] ticks = {-1, -1};
        long[] wall = {0, 0}, epochMs = {0, 0};
        InsertWriters.Result result = run.forks().one(cell + "/writers", o.appJvmArgs(), spec,
                spec.warmup() + spec.measure() + 5, phase -> {
                    if (phase.equals("measure")) { ticks[0] = dbPid < 0 ? -1 : cpu.treeTicks(dbPid); wall[0] = System.nanoTime(); epochMs[0] = System.currentTimeMillis(); }
                    else if (phase.equals("done")) { ticks[1] = dbPid < 0 ? -1 : cpu.treeTicks(dbPid); wall[1] = System.nanoTime(); epochMs[1] = System.currentTimeMillis(); }
                }, InsertWriters.Result.class);
        double dbPct = placed != null ? (epochMs[1] == 0 ? Double.NaN : placed.percent(epochMs[0], epochMs[1]))
                : dbPid < 0 || wall[1] == 0 ? Double.NaN : CpuSampler.percent(ticks[0], ticks[1], (wall[1] - wall[0]) / 1e9);
        return new Measured(result, dbPct);
    }

    private Table.Row row(String cell, String store, String durability, int fork, Measured m, long counted, Map<String, String> settings, String where) {
        InsertWriters.Result r = m.result();
        if (r.driver() != null) ((ObjectNode) run.notes().path("inserts")).put("cassandraDriver", r.driver()); // the driver that ran, not the one we meant
        long acknowledged = r.acknowledged(), failed = r.failed(), measured = r.measured();
        double window = r.windowSeconds(), tps = measured / window;
        List<String> reasons = new ArrayList<>();
        if (counted != acknowledged) reasons.add("counted " + counted + " rows for " + acknowledged + " acknowledged inserts");
        if (failed > 0) reasons.add(failed + " inserts failed (first: " + r.firstError() + ")");
        if (measured == 0) reasons.add("no insert was acknowledged in the window");
        String settingText = settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).reduce((a, b) -> a + "; " + b).orElse("")
                + " (" + where + ")";
        ObjectNode all = (ObjectNode) run.notes().path("inserts").path("settings");
        if (!all.has(cell)) {
            ObjectNode s = all.putObject(cell);
            settings.forEach(s::put);
            s.put("source", where);
        }
        String reason = String.join("; ", reasons);
        if (!reasons.isEmpty()) run.invalid(cell + " fork " + fork + ": " + reason);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: %.0f inserts/s, p50 %.2f ms, p99 %.2f ms; %d rows for %d acknowledged; CPU db %s, writers %.0f%%%s",
                cell, fork, tps, r.p50Ms(), r.p99Ms(), counted, acknowledged,
                Double.isNaN(m.cpuDbPct()) ? "n/a (not ours)" : String.format(Locale.ROOT, "%.0f%%", m.cpuDbPct()),
                r.cpuWritersPct(), reasons.isEmpty() ? "" : "  INVALID: " + reason));
        return Table.row().set("cell", cell).set("store", store).set("durability", durability).set("fork", fork).set("writers", o.writers())
                .set("window_s", window).set("inserts", measured).set("tps", tps).set("latency_mean_ms", r.meanMs())
                .set("latency_p50_ms", r.p50Ms()).set("latency_p95_ms", r.p95Ms())
                .set("latency_p99_ms", r.p99Ms()).set("latency_max_ms", r.maxMs())
                .set("acknowledged", acknowledged).set("rows_counted", counted).set("failed_inserts", failed).set("cpu_db_pct", m.cpuDbPct())
                .set("cpu_writers_pct", r.cpuWritersPct()).set("warmup_s", r.warmupSeconds())
                .set("warmup_settled", r.warmupSettled()).set("settings", settingText).set("valid", reasons.isEmpty()).set("reason", reason);
    }

    static void writerFork(Fork fork) throws Exception { InsertWriters.run(fork); }

    private static String firstLine(Throwable e) {
        return String.valueOf(e.getMessage()).lines().findFirst().orElse(e.getClass().getSimpleName());
    }

    private static String scrub(String message, String password) {
        return password == null || password.isEmpty() ? message : message.replace(password, "***");
    }
}
