///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
// Spring Boot's BOM pins the framework and what it manages (Tomcat, Netty, Reactor, FreeMarker, R2DBC, HttpClient 5,
// SLF4J): the artifacts below without a version take theirs from it
// Netty before Boot's BOM, so it wins: the BOM's 4.2.19 has no native epoll or QUIC files on the Maven repository the
// kit is built against, and 4.2.18 is the newest that has them
//DEPS io.netty:netty-bom:4.2.18.Final@pom
//DEPS org.springframework.boot:spring-boot-dependencies:4.1.2@pom
//DEPS org.springframework.boot:spring-boot-starter-web
//DEPS org.springframework.boot:spring-boot-starter-webflux
//DEPS org.freemarker:freemarker
//DEPS org.apache.tomcat.embed:tomcat-embed-jasper
// the PostgreSQL driver as workflow pins it (the BOM's too): one version across the scripts, which the tests check
//DEPS org.postgresql:postgresql:42.7.14
//SOURCES Rounds.java HttpRound.java Templates.java Inserts.java ChainRound.java
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//SOURCES ../harness/src/perfkit/harness/http/*.java
//SOURCES templates/*.java
//SOURCES inserts/*.java
// chain round: Apache HttpClient 5 and R2DBC from Boot's BOM; HikariCP at its newest, ahead of the BOM's 7.0.2
//DEPS org.apache.httpcomponents.client5:httpclient5
//DEPS com.zaxxer:HikariCP:7.1.0
//DEPS org.postgresql:r2dbc-postgresql
//DEPS io.r2dbc:r2dbc-pool
//SOURCES chain/*.java chain/sync/*.java chain/async/*.java chain/webflux/*.java
//FILES perfkit-templates/page.jsp=templates/page.jsp perfkit-templates/page.ftlh=templates/page.ftlh
//DESCRIPTION Three rounds of a 2014 three-tier study: JSP vs FreeMarker vs plain HTML, PostgreSQL vs Cassandra inserts at matched durability, and a sync vs async A -> B -> C chain
package perfkit.threetier;

import perfkit.harness.cli.Cli;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.db.JdbcUrl;
import perfkit.harness.cli.Opt;
import perfkit.harness.cli.Params;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.db.RemotePostgres;
import perfkit.harness.os.Ssh;
import perfkit.harness.run.Study;

import java.util.Arrays;
import java.util.List;

/**
 * The three-tier study, in three rounds (--rounds): templates (one Spring MVC server renders the same page with
 * JSP, FreeMarker or plain HTML), inserts (W writer threads insert the same row into PostgreSQL and Cassandra,
 * each at two durability settings) and chain (browser -> A -> B -> C over HTTP with JSON, C waiting and writing a
 * row; sync, async and mixed). See {@link Rounds} for the plan of a run.
 * <p>
 * One JBang script holds every JVM's code except Cassandra's (scripts/three-tier/cassandra, a classpath of its
 * own): the parent runs the study; {@code --service <role>} starts a server, and the inserts' writers run as forks.
 */
public class ThreeTier {
    static final String SERVICE = "--service";
    static final List<String> ROUNDS = List.of("templates", "inserts", "chain");

    // the options, each declared once: the Cli lists them, and Options reads each by its constant, never by name
    static final Opt<List<String>> ROUNDS_OPT = Opt.choices("rounds", ROUNDS, "templates,inserts,chain", null, "rounds to run, comma-separated");
    // load shared by the HTTP rounds
    static final Opt<Double> WARMUP = Opt.seconds("warmup", 10, 1.0, 0, "warm-up before each measured step, seconds (not in the histograms)");
    static final Opt<Double> MEASURE = Opt.seconds("measure", 15, 3.0, 0.1, "measurement window of each step, seconds");
    static final Opt<Integer> FORKS = Opt.integer("forks", 3, 1L, 1, 100, "repetitions: each starts fresh server JVMs (and fresh databases), so the "
            + "spread across forks shows").map(Math::toIntExact);
    static final Opt<List<Double>> OPEN_RATES = Opt.numbers("open-rates", "search", "none", 4, List.of("search", "none"), "'search', 'none' or "
            + "fractions of the saturation throughput in (0, 4], comma-separated (e.g. 0.25,0.5)", "open model: 'search' finds the capacity at --slo-ms "
            + "(doubling multiples of 1/8 of the cell's saturation throughput, then bisecting); fractions of that throughput to measure instead, e.g. "
            + "0.25,0.5; or none (no capacity)");
    static final Opt<Double> BUDGET = Opt.seconds("budget", 600, 60.0, 1, "open model: time budget of one capacity search (one cell and fork), seconds");
    static final Opt<List<String>> APP_JVM_ARGS = Opt.jvmOptions("app-jvm-args", "-Xmx512m", "JVM options of each server JVM (space-separated)");
    static final Opt<Double> SERVER_WARMUP_MAX = Opt.seconds("server-warmup-max", 180, 10.0, 1, "longest warm-up by rule of a fork's servers before "
            + "anything is measured (JIT under 50 ms/s over 10 s and steady throughput), seconds; servers that never settle are recorded as such");
    // round 1
    static final Opt<List<String>> ENGINES = Opt.choices("engines", Templates.ENGINES, "jsp,freemarker,plain", null, "templates: engines, comma-separated; "
            + "plain writes the HTML directly (the ceiling)");
    static final Opt<Integer> TEMPLATE_USERS = Opt.integer("template-users", 128, 32L, 1, 10_000, "templates: concurrent users of the closed model that "
            + "measures the maximum throughput").map(Math::toIntExact);
    static final Opt<Integer> TEMPLATE_ITEMS = Opt.integer("template-items", 10, null, 1, 10_000, "templates: list items on the rendered page").map(Math::toIntExact);
    // round 2
    static final Opt<List<String>> STORES = Opt.choices("stores", Inserts.STORES, "postgres,cassandra", null, "inserts: databases, comma-separated");
    static final Opt<List<String>> DURABILITY = Opt.choices("durability", Inserts.DURABILITIES, "strict,relaxed", "relaxed", "inserts: strict = "
            + "PostgreSQL fsyncs each commit, Cassandra commitlog_sync batch; relaxed = synchronous_commit=off, commitlog_sync periodic (Cassandra's default)");
    static final Opt<Integer> WRITERS = Opt.integer("writers", 16, 4L, 1, 1024, "inserts: writer threads (W), each inserting with a prepared statement, "
            + "one row per insert").map(Math::toIntExact);
    static final Opt<Double> INSERT_MEASURE = Opt.seconds("insert-measure", 60, 3.0, 0.1, "inserts: measurement window per cell and fork, seconds; "
            + "longer than Cassandra's periodic commit log sync (10 s), so a window sees its flushes");
    static final Opt<String> JDBC_URL = Opt.text("jdbc-url", "", null, "inserts and chain: use this PostgreSQL database instead of a private one "
            + "(jdbc:postgresql://host:port/db); the study works in a schema of its own and drops it").map(String::trim);
    static final Opt<String> JDBC_USER = Opt.text("jdbc-user", "", null, "user for --jdbc-url; when empty, the user in the URL, else postgres");
    static final Opt<String> JDBC_PASSWORD = Opt.secret("jdbc-password", "PERFKIT_JDBC_PASSWORD", "password for --jdbc-url (never stored)");
    static final Opt<String> CASSANDRA_PASSWORD = Opt.secret("cassandra-password", "PERFKIT_CASSANDRA_PASSWORD", "password for --cassandra-contact-points (never stored)");
    static final Opt<String> CASSANDRA_TRUSTSTORE_PASSWORD = Opt.secret("cassandra-truststore-password", "PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD",
            "password of --cassandra-truststore (never stored)");
    static final Opt<String> CASSANDRA_KEYSTORE_PASSWORD = Opt.secret("cassandra-keystore-password", "PERFKIT_CASSANDRA_KEYSTORE_PASSWORD",
            "password of --cassandra-keystore and its key (never stored)");
    static final Opt<String> CASSANDRA_CONTACT_POINTS = Opt.text("cassandra-contact-points", "", null, "inserts: use this Cassandra cluster instead of an "
            + "embedded node (host:port,host:port); the study works in a keyspace of its own and drops it").map(String::trim);
    static final Opt<String> CASSANDRA_DATACENTER = Opt.text("cassandra-datacenter", "datacenter1", null, "inserts: local datacenter of --cassandra-contact-points");
    static final Opt<String> CASSANDRA_USER = Opt.text("cassandra-user", "", null, "user for --cassandra-contact-points");
    static final Opt<String> CASSANDRA_TRUSTSTORE = Opt.text("cassandra-truststore", "", null, "TLS to --cassandra-contact-points: a PKCS12 or JKS "
            + "truststore of the CA (or the nodes' certificates); each node's certificate must name its contact point's host or address");
    static final Opt<String> CASSANDRA_KEYSTORE = Opt.text("cassandra-keystore", "", null, "with --cassandra-truststore: a PKCS12 or JKS keystore with "
            + "this client's certificate, for a cluster that requires one");
    // round 3
    static final Opt<List<String>> CHAINS = Opt.choices("chains", ChainRound.VARIANTS, "sync,async,mixed,webflux", "sync,async", "chain: sync = Spring MVC "
            + "on Tomcat, blocking client, JDBC; async = Reactor Netty server and client, R2DBC, no Spring (the original's pairing); mixed = async with B "
            + "sync; webflux = Spring WebFlux, WebClient, R2DBC (the same framework as sync: style alone differs)");
    static final Opt<Integer> C_DELAY_MS = Opt.millis("c-delay-ms", 25, null, "chain: C's delay before it writes its row, milliseconds (holding no "
            + "thread where the stack allows)").map(Math::toIntExact);
    static final Opt<Integer> CHAIN_USERS = Opt.integer("chain-users", 256, 64L, 1, 10_000, "chain: concurrent users of the closed model that measures the "
            + "throughput at saturation").map(Math::toIntExact);
    static final Opt<Integer> CHAIN_RATE = Opt.integerOrAuto("chain-rate", "auto", 1, 9_999_999, "chain: the offered rate (req/s) at which every chain "
            + "variant's latency is recorded, so they are compared at the same load; auto = half the slowest variant's capacity in the fork (its last "
            + "rate met, else its saturation throughput)");

    static final Cli CLI = new Cli("three-tier", "A 2014 three-tier study re-run in three rounds: template engines (JSP, FreeMarker, plain HTML) on one\n"
            + "Spring MVC server; PostgreSQL vs Cassandra inserts by W writer threads, each database at a strict and a relaxed durability\n"
            + "setting; and a browser -> A -> B -> C chain over HTTP (C waits --c-delay-ms and writes a row), sync, async and mixed.\n"
            + "HTTP load: Hyperfoil 0.25.2 in its own JVM (closed model at saturation, open model for capacity at --slo-ms).")
            .with(ROUNDS_OPT, WARMUP, MEASURE, FORKS)
            .sloMs(100, new Cli.Slo("p99", "response time (open model)", "each request's scheduled start (corrected)", "request"))
            .with(OPEN_RATES, BUDGET, APP_JVM_ARGS, SERVER_WARMUP_MAX, ENGINES, TEMPLATE_USERS, TEMPLATE_ITEMS, STORES, DURABILITY, WRITERS, INSERT_MEASURE,
                    JDBC_URL, JDBC_USER)
            .with(JDBC_PASSWORD)
            .with(CASSANDRA_CONTACT_POINTS, CASSANDRA_DATACENTER, CASSANDRA_USER)
            .with(CASSANDRA_PASSWORD)
            .with(CASSANDRA_TRUSTSTORE)
            .with(CASSANDRA_TRUSTSTORE_PASSWORD)
            .with(CASSANDRA_KEYSTORE)
            .with(CASSANDRA_KEYSTORE_PASSWORD)
            .with(CHAINS, C_DELAY_MS, CHAIN_USERS, CHAIN_RATE)
            .rule(Inserts::checkOptions)
            .rule(ChainRound::checkOptions)
            .rule(p -> p.placement().containsKey("db") && !JDBC_URL.in(p).isBlank() ? "--place db and --jdbc-url exclude each other: the placed database is a private cluster on that host" : null)
            .rule(p -> p.placement().containsKey("db") && !ROUNDS_OPT.in(p).contains("chain")
                    && !(ROUNDS_OPT.in(p).contains("inserts") && STORES.in(p).contains("postgres"))
                    ? "--place db places the private PostgreSQL of the chain round or of the inserts round's postgres store; this run has neither" : null)
            // the private PostgreSQL clusters (inserts and chain), the chain's tiers and its load driver on hosts of their own
            .rule(ThreeTier::checkPlacement) // before place's own rule: a misplacement is told before any SSH wait
            .place(List.of("driver", "templates", "a", "b", "c", "db", "cassandra"), List.of("driver"))
            .onParts(ThreeTier::partsOfTheRounds)
            .rule(p -> !ROUNDS_OPT.in(p).contains("chain") ? null
                    : HttpLoad.sharingProblem(Params.hostsOf(p.placement(), "driver").size(), CHAIN_USERS.in(p), "chain-users"))
            .rule(p -> !ROUNDS_OPT.in(p).contains("templates") ? null
                    : HttpLoad.sharingProblem(Params.hostsOf(p.placement(), "driver").size(), TEMPLATE_USERS.in(p), "template-users"))
            .rule(p -> p.placement().containsKey("db") ? RemotePostgres.problem(p.placement().get("db")) : null)
            // the load driver and the Cassandra node are other scripts' JVMs, on the run's own JDK; the servers on --java
            .rule(p -> p.placement().entrySet().stream().filter(e -> !e.getKey().equals("db")).map(e -> RemoteJvm.problem(e.getKey(), e.getValue(),
                            e.getKey().startsWith("driver") || e.getKey().equals("cassandra") ? perfkit.harness.run.ScriptJvm.scriptJava() : Cli.JAVA.in(p)))
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null));

    /** The parts this configuration starts itself, which --on places: a user's own database or cluster stays where it is. */
    static List<String> partsOfTheRounds(Params p) {
        List<String> rounds = ROUNDS_OPT.in(p), stores = STORES.in(p), parts = new java.util.ArrayList<>();
        boolean chain = rounds.contains("chain"), inserts = rounds.contains("inserts");
        if (chain || rounds.contains("templates")) parts.add("driver");
        if (rounds.contains("templates")) parts.add("templates");
        if (chain) parts.addAll(List.of("a", "b", "c"));
        if (JDBC_URL.in(p).isBlank() && (chain || inserts && stores.contains("postgres"))) parts.add("db");
        if (inserts && stores.contains("cassandra") && CASSANDRA_CONTACT_POINTS.in(p).isBlank()) parts.add("cassandra");
        return parts;
    }

    /**
     * A placed tier or driver reaches what comes after it across the network, and a part left here listens on loopback
     * only: so a placed tier needs the tiers after it placed too, C its database (placed, or the user's), and a placed
     * driver loads only the chain, whose A is placed.
     */
    static String checkPlacement(Params p) {
        java.util.Map<String, Ssh> placed = p.placement();
        boolean tiers = placed.containsKey("a") || placed.containsKey("b") || placed.containsKey("c");
        if (tiers && !ROUNDS_OPT.in(p).contains("chain"))
            return "--place a, b and c place the chain round's tiers, which this run does not have";
        if (placed.containsKey("driver") && !ROUNDS_OPT.in(p).contains("chain") && !ROUNDS_OPT.in(p).contains("templates"))
            return "--place driver places the load driver of the chain and templates rounds, which this run does not have";
        if (placed.containsKey("a") && !placed.containsKey("b") || placed.containsKey("b") && !placed.containsKey("c"))
            return "--place a placed tier needs the tiers after it placed too (a needs b and c, b needs c): a tier here listens on loopback only";
        if (placed.containsKey("c") && !placed.containsKey("db") && (JDBC_URL.in(p).isBlank() || perfkit.harness.db.JdbcUrl.onLoopback(JDBC_URL.in(p))))
            return "--place c needs its database elsewhere too (--place db, or a --jdbc-url not on loopback): a database here on loopback is out of its reach";
        if (placed.containsKey("templates") && !ROUNDS_OPT.in(p).contains("templates"))
            return "--place templates places the templates round's server, which this run does not have";
        if (placed.containsKey("cassandra") && !(ROUNDS_OPT.in(p).contains("inserts") && STORES.in(p).contains("cassandra")))
            return "--place cassandra places the inserts round's embedded Cassandra node, which this run does not have";
        if (placed.containsKey("cassandra") && !CASSANDRA_CONTACT_POINTS.in(p).isBlank())
            return "--place cassandra and --cassandra-contact-points exclude each other: the placed node is the run's own, on that host";
        boolean chain = ROUNDS_OPT.in(p).contains("chain"), templates = ROUNDS_OPT.in(p).contains("templates");
        if (placed.containsKey("driver") && (chain && !placed.containsKey("a") || templates && !placed.containsKey("templates")))
            return "--place driver loads the servers from its host: it needs a placed for the chain and templates placed for the templates round "
                    + "(a server here listens on loopback only)";
        return null;
    }

    /** The user's PostgreSQL (--jdbc-url and its credentials); the password only in memory and in a fork's spec. */
    record UsersPostgres(String url, String user, String password) {
        @Override
        public String toString() { return "UsersPostgres[" + url + ", " + user + "]"; }
    }

    /** The user's Cassandra cluster (--cassandra-contact-points and its credentials). */
    record UsersCassandra(String contactPoints, String datacenter, String user, String password, CqlBridge.Tls tls) {
        @Override
        public String toString() { return "UsersCassandra[" + contactPoints + ", " + datacenter + ", " + user + (tls == null ? "" : ", " + tls) + "]"; }
    }

    /**
     * A run's options, read once from the checked command line, each by its declaration. {@code openRates}
     * is search, none, or the fractions in {@code openFractions}; the users' databases are null when the run starts its own.
     */
    record Options(List<String> rounds, double warmup, double measure, int forks, long sloMs, String openRates, List<Double> openFractions,
                   double budget, List<String> appJvmArgs, double serverWarmupMax, List<String> engines, int templateUsers, int templateItems,
                   List<String> stores, List<String> durabilities, int writers, double insertMeasure, UsersPostgres usersPostgres,
                   UsersCassandra usersCassandra, Ssh dbHost, List<String> chains, int cDelayMs, int chainUsers, Integer chainRate,
                   java.util.Map<String, Ssh> placement) {
        static Options of(Params p) {
            UsersPostgres pg = null;
            if (!JDBC_URL.in(p).isBlank()) {
                JdbcUrl u = JdbcUrl.parse(JDBC_URL.in(p));
                pg = new UsersPostgres(u.url(), u.userOr(JDBC_USER.in(p), "postgres"), u.passwordOr(JDBC_PASSWORD.in(p)));
            }
            UsersCassandra cassandra = CASSANDRA_CONTACT_POINTS.in(p).isBlank() ? null : new UsersCassandra(CASSANDRA_CONTACT_POINTS.in(p),
                    CASSANDRA_DATACENTER.in(p), CASSANDRA_USER.in(p), CASSANDRA_PASSWORD.in(p), tls(p));
            return new Options(ROUNDS_OPT.in(p), WARMUP.in(p), MEASURE.in(p), FORKS.in(p), CLI.sloMs(p),
                    p.text("open-rates"), OPEN_RATES.in(p), BUDGET.in(p), APP_JVM_ARGS.in(p),
                    SERVER_WARMUP_MAX.in(p), ENGINES.in(p), TEMPLATE_USERS.in(p), TEMPLATE_ITEMS.in(p),
                    STORES.in(p), DURABILITY.in(p), WRITERS.in(p), INSERT_MEASURE.in(p), pg, cassandra,
                    p.placement().get("db"), CHAINS.in(p), C_DELAY_MS.in(p), CHAIN_USERS.in(p), CHAIN_RATE.in(p),
                    p.placement());
        }

        /** TLS to the user's cluster, or null for a plain connection. */
        static CqlBridge.Tls tls(Params p) {
            if (CASSANDRA_TRUSTSTORE.in(p).isBlank()) return null;
            // absolute: the writer forks read the stores too
            return new CqlBridge.Tls(absolute(CASSANDRA_TRUSTSTORE.in(p)), CASSANDRA_TRUSTSTORE_PASSWORD.in(p),
                    CASSANDRA_KEYSTORE.in(p).isBlank() ? "" : absolute(CASSANDRA_KEYSTORE.in(p)), CASSANDRA_KEYSTORE_PASSWORD.in(p));
        }

        private static String absolute(String file) {
            return java.nio.file.Path.of(file.trim()).toAbsolutePath().normalize().toString();
        }

        /** The open model searches for each cell's capacity (rather than reading fixed fractions, or none). */
        boolean searchesCapacity() { return openRates.equals("search"); }

        /** --open-rates none: no open model at all. */
        boolean measuresCapacity() { return !openRates.equals("none"); }

        /** The server JVMs' options as one line, for the notes. */
        String appJvmArgsText() { return String.join(" ", appJvmArgs); }
    }

    public static void main(String[] args) {
        if (args.length >= 2 && args[0].equals(SERVICE)) {
            service(args[1], Arrays.copyOfRange(args, 2, args.length));
            return;
        }
        Study.main(args, CLI, ThreeTier.class, run -> new Rounds(run).run(), Inserts::writerFork);
    }

    /** A server of the system under test, in its own JVM (started by {@code Run.startService}). */
    static void service(String role, String[] args) {
        try {
            if (role.startsWith("templates")) Templates.service(role, args);
            else if (role.startsWith("chain")) ChainRound.service(role, args);
            else throw new IllegalArgumentException("unknown service " + role);
        } catch (Throwable t) {
            System.err.println("service " + role + " failed: " + t);
            t.printStackTrace();
            System.exit(1);
        }
    }
}
