///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.flowable:flowable-engine:7.2.0
//DEPS org.postgresql:postgresql:42.7.7
//DEPS com.h2database:h2:2.3.232
//DEPS org.slf4j:slf4j-simple:2.0.17
//SOURCES Engine.java SleepTask.java Arrivals.java MeteredTaskExecutor.java
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION Flowable Async Executor draining a job backlog: fixed 100 ms jobs, timers and no-op jobs, vs the theoretical maximum
package perfkit.workflow;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.Cli;
import perfkit.harness.CpuSampler;
import perfkit.harness.DrainBottleneck;
import perfkit.harness.DrainRate;
import perfkit.harness.JdbcUrl;
import perfkit.harness.Params;
import perfkit.harness.PrivatePostgres;
import perfkit.harness.Run;
import perfkit.harness.Study;
import perfkit.harness.Sys;
import perfkit.harness.Table;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Each cell of the experiment: create a fresh schema, generate N process instances that each leave one job
 * (executor off), then start K engine JVMs with the async executor on against the same database and let them
 * drain the backlog. Completions are counted from the database, by a separate connection, as committed.
 */
public class Workflow {
    /** Threads of the no-op calibration drain: enough that no-op jobs are limited by CPU and database, not by the pool. */
    static final int CALIBRATION_THREADS = 32;
    /**
     * Queue places per executor thread with --queue-size auto: the original's 8192 for 128 threads. An engine takes at
     * most its free queue places per acquisition, so a queue sized to the original's and not to this host's threads lets
     * one engine take a whole backlog while the others idle, which then measures one engine, not the lock.
     */
    static final int QUEUE_PER_THREAD = 8192 / 128;

    static final Cli CLI = new Cli("workflow", "Flowable's Async Executor draining a backlog of jobs: fixed-time jobs, due timers or no-op jobs,\n"
            + "scaled by engine instances (separate JVMs) and acquire size, with the global acquire lock on and off.")
            .choices("job-types", Engine.JOB_TYPES, "fixed,timer,noop", "job types, comma-separated: fixed (sleeps --job-ms), timer (already due), noop (${true})")
            .integer("jobs", 1_000_000, 1000L, 1, 100_000_000, "jobs in the backlog per cell (the original: 1,000,000)")
            .integers("instances", "1,2,4", "1", 1, 64, "engine instances (JVMs) per cell, comma-separated")
            .integers("acquire-sizes", "32,512", "32", 1, 100_000, "jobs fetched per acquisition, comma-separated")
            .text("locks", "off,on", "off", "global acquire lock, comma-separated: off, on")
            .integers("lock-poll-ms", "500", null, 1, 60_000, "with the lock on: how often an engine waiting for the global acquire lock tries again, "
                    + "in ms, comma-separated; every lock-on cell runs at each (Flowable's default 500; the original: a shorter wait adds a few hundred jobs/s)")
            .text("threads", "auto", "executor threads per instance: a number (the original: 128), or auto: sized by a no-op calibration "
                    + "drain so that the fixed jobs' theoretical maximum at the most --instances is --headroom percent of what this host serves")
            .integer("headroom", 50, null, 1, 100, "with --threads auto: percent of the calibrated no-op rate that the theoretical maximum may ask for")
            .integer("calibration-jobs", 4000, 1000L, 100, 1_000_000, "with --threads auto: no-op jobs in the calibration drain")
            .text("queue-size", "auto", "executor queue per instance: a number (the original: 8192), or auto: " + QUEUE_PER_THREAD
                    + " per executor thread, the original's 8192 for 128, so a full queue holds as many seconds of an engine's work as there")
            .integer("job-ms", 100, null, 1, 3_600_000, "duration of a fixed job in ms")
            .integer("repetitions", 1, null, 1, 100, "repetitions of every cell")
            .seconds("warmup", 5, 1.0, "seconds at the start of each drain that are warm-up: not in the latency logs or the steady rate")
            .seconds("max-drain", 3600, 300.0, 1, "give up on a drain after this many seconds (the cell is then invalid)")
            .choice("database", List.of("postgres", "h2"), "postgres", "postgres: a private throwaway cluster; h2: embedded, one instance only")
            .text("jdbc-url", "", "use this PostgreSQL database instead (jdbc:postgresql://host:port/db); the study works in schemas of its own and drops them")
            .text("jdbc-user", "", "user for --jdbc-url; when empty, the user in the URL, else postgres")
            .secret("jdbc-password", "PERFKIT_JDBC_PASSWORD", "password for --jdbc-url (never stored; a password in the URL is the last resort)")
            .choice("index-fix", List.of("on", "off"), "on", "drop ACT_IDX_RU_ACTI_END on PostgreSQL (see the notebook); off shows the pitfall")
            .jvmOptions("fork-jvm-args", "-Xmx1g", "JVM options of every engine JVM, space-separated")
            .rule(p -> p.list("locks").isEmpty() || !List.of("off", "on").containsAll(p.list("locks"))
                    ? "option --locks expects off, on or both, got '" + p.text("locks") + "'" : null)
            .rule(p -> p.text("threads").equals("auto") || parseThreads(p.text("threads")) > 0
                    ? null : "option --threads expects auto or an integer from 1 to 4096, got '" + p.text("threads") + "'")
            .rule(p -> p.text("queue-size").equals("auto") || parseCount(p.text("queue-size"), 1_000_000) > 0
                    ? null : "option --queue-size expects auto or an integer from 1 to 1000000, got '" + p.text("queue-size") + "'")
            .rule(p -> Workflow.checkJdbcUrl(p.text("jdbc-url")))
            .rule(p -> !p.text("jdbc-url").isBlank() && p.text("database").equals("h2") ? "--database h2 and --jdbc-url exclude each other" : null)
            .rule(p -> usesH2(p) && p.ints("instances").stream().anyMatch(k -> k > 1)
                    ? "H2 supports one engine instance; use PostgreSQL for --instances above 1" : null)
            .rule(p -> p.seconds("warmup") >= p.seconds("max-drain") ? "--warmup must be shorter than --max-drain" : null)
            .rule(p -> !usesH2(p) && p.text("jdbc-url").isBlank() && PrivatePostgres.binaries() == null
                    ? "PostgreSQL server binaries not found under /usr/lib/postgresql (./bench setup installs them); or use --database h2 or --jdbc-url" : null)
            .rule(Workflow::checkReachable); // last: only a well-formed URL is worth a connection attempt

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        Study.main(args, CLI, Workflow.class, Workflow::plan, f -> {
            if (f.param("mode").equals("generate")) Engine.generate(f);
            else Engine.execute(f);
        });
    }

    static boolean usesH2(Params p) {
        return p.text("database").equals("h2") && p.text("jdbc-url").isBlank();
    }

    /** The thread count of --threads, or -1 when it is not an integer in [1, 4096]. */
    static int parseThreads(String v) { return parseCount(v, 4096); }

    /** An integer in [1, max], or -1 when the text is not one. */
    static int parseCount(String v, int max) {
        try {
            long n = Long.parseLong(v.trim().replace("_", ""));
            return n >= 1 && n <= max ? (int) n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The executor queue per instance: --queue-size, or with auto {@link #QUEUE_PER_THREAD} per executor thread. */
    static int queueSize(Params p, int threads) {
        return p.text("queue-size").equals("auto") ? threads * QUEUE_PER_THREAD : parseCount(p.text("queue-size"), 1_000_000);
    }

    static String checkJdbcUrl(String raw) {
        if (raw.isBlank()) return null;
        if (!raw.trim().startsWith("jdbc:postgresql://")) return "option --jdbc-url expects a PostgreSQL URL such as jdbc:postgresql://host:5432/database";
        try {
            JdbcUrl.parse(raw);
            return null;
        } catch (IllegalArgumentException e) {
            return "option --jdbc-url expects " + e.getMessage();
        }
    }

    /** The user's database must answer before the run folder exists: a wrong host or password is a typo, not a failed run. */
    static String checkReachable(Params p) {
        if (p.text("jdbc-url").isBlank()) return null;
        Database.Credentials c = Database.Credentials.of(p);
        try (Connection conn = c.connect(c.url())) {
            conn.isValid(5);
            return null;
        } catch (Exception e) {
            return "cannot connect to " + c.url() + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("no answer")
                    .replace(c.password().isEmpty() ? "\u0000" : c.password(), "***");
        }
    }

    static void plan(Run run) throws Exception {
        Params p = run.typed();
        List<String> types = p.list("job-types");
        List<Integer> instances = p.ints("instances"), acquires = p.ints("acquire-sizes");
        List<String> locks = List.copyOf(new LinkedHashSet<>(p.list("locks")));
        List<Integer> polls = p.ints("lock-poll-ms");
        run.mode("drain");
        run.variants(types);
        run.measurement(p.seconds("warmup"), 0, p.integer("repetitions"), "step");

        Database db = Database.open(run, usesH2(p));
        describe(run, db);
        String[] columns = {"cell", "repetition", "job_type", "instances", "threads", "queue_size", "acquire_size", "lock", "lock_poll_ms", "jobs", "generate_seconds",
                "drain_seconds", "jobs_per_s", "steady_jobs_per_s", "theoretical_max_per_s", "pct_of_max", "committed", "commit_events",
                "failed", "wait_arrivals", "body_runs", "left", "dead_letters", "at_wait_state", "valid", "invalid_reason",
                "cpu_engines_pct", "cpu_db_pct", "cpu_system_pct", "cpu_other_pct", "cores", "threads_busy_pct", "queued_mean",
                "db_active_mean", "db_lock_waiters_mean", "bottleneck", "latency_samples", "drain_end_source"};
        int threads = p.text("threads").equals("auto") ? calibrate(run, db, acquires.get(0), Collections.max(instances), columns) : parseThreads(p.text("threads"));
        int queue = queueSize(p, threads);
        try (Table cells = new Table(run, "throughput.csv", "one row per cell: drain time, committed jobs/s overall and steady, "
                + "% of the theoretical maximum, exact-once checks, CPU of engines, database and machine, and the bottleneck", columns);
             Table engines = new Table(run, "engines.csv", "jobs each engine instance committed per cell, its CPU and how busy its threads were",
                     "cell", "instance", "commit_events", "jobs_per_s", "cpu_pct", "threads_busy_pct")) {
            int index = 0;
            for (int rep = 1; rep <= p.integer("repetitions"); rep++)
                for (String type : types)
                    for (int k : instances)
                        for (int acquire : acquires)
                            for (String lock : locks)
                                // the poll matters only while an engine waits for the lock: lock-off cells run once
                                for (Integer poll : lock.equals("on") ? polls : Collections.<Integer>singletonList(null)) {
                                    // one poll keeps the names runs had before the poll was a factor, so compare still pairs them
                                    String name = type + "-k" + k + "-a" + acquire + "-lock" + lock + (poll == null || polls.size() == 1 ? "" : "-p" + poll) + "-r" + rep;
                                    Cell cell = new Cell(run, db, ++index, name, rep, type, k, acquire, lock, poll, threads, queue, p.integer("jobs"));
                                    Outcome o = cell.drain();
                                    o.write(cells, engines);
                                    // a failed check means jobs were lost or ran twice: the run cannot be trusted
                                    if (!o.reasons().isEmpty()) run.invalid(name + ": " + String.join("; ", o.reasons()));
                                }
        }
    }

    /**
     * threads = floor(no-op rate x job seconds x headroom / the most instances): the fixed jobs' theoretical maximum
     * at the largest instance count then asks for a known share of what this host completes when jobs cost nothing
     * but their bookkeeping (see DrainRate.threadsFor). So "stable as instances are added" is a question the host can
     * answer: adding engines asks for more of the same CPU, never for more than it serves.
     */
    static int calibrate(Run run, Database db, int acquire, int mostInstances, String[] columns) throws Exception {
        Params p = run.typed();
        Outcome o;
        try (Table t = new Table(run, "calibration.csv", "the no-op drain that sized --threads auto (same columns as throughput.csv)", columns)) {
            o = new Cell(run, db, 0, "calibration-noop-k1-a" + acquire + "-lockoff", 1, "noop", 1, acquire, "off", null, CALIBRATION_THREADS,
                    queueSize(p, CALIBRATION_THREADS), p.integer("calibration-jobs")).drain();
            o.write(t, null);
        }
        if (!o.reasons().isEmpty()) throw new IllegalStateException("the calibration drain failed its checks: " + String.join("; ", o.reasons()));
        double rate = Double.isNaN(o.steady()) ? o.rate() : o.steady();
        double headroom = p.integer("headroom") / 100.0;
        int threads = DrainRate.threadsFor(rate / mostInstances, p.integer("job-ms"), headroom);
        ObjectNode c = run.notes().putObject("calibration");
        c.put("rule", "threads = floor(noop jobs/s x job-ms / 1000 x headroom / most instances), at least 1");
        c.put("mostInstances", mostInstances);
        c.put("noopJobsPerS", rate);
        c.put("rateFrom", Double.isNaN(o.steady()) ? "overall (drain too short for a steady rate)" : "steady");
        c.put("jobs", p.integer("calibration-jobs"));
        c.put("calibrationThreads", CALIBRATION_THREADS);
        c.put("jobMs", p.integer("job-ms"));
        c.put("headroom", headroom);
        c.put("threads", threads);
        c.put("theoreticalMaxPerInstance", threads * 1000.0 / p.integer("job-ms"));
        // above headroom only when even 1 thread per instance asks for more (a long --job-ms fixes that)
        c.put("largestMaxShareOfNoop", mostInstances * threads * 1000.0 / p.integer("job-ms") / rate);
        c.put("bottleneck", o.bottleneck());
        run.writeManifest();
        run.progress().say(String.format(Locale.ROOT, "calibration: %.0f no-op jobs/s -> %d threads per instance (theoretical maximum %.0f jobs/s "
                + "per instance, %.0f at %d instances)", rate, threads, threads * 1000.0 / p.integer("job-ms"),
                mostInstances * threads * 1000.0 / p.integer("job-ms"), mostInstances));
        return threads;
    }

    static void describe(Run run, Database db) {
        Params p = run.typed();
        ObjectNode n = run.notes();
        n.put("database", db.description);
        n.put("process", "start -> job -> receive task (wait state) -> end; history level none; a fresh schema per cell");
        n.put("jobs", "fixed: async service task sleeping --job-ms; timer: intermediate timer due in the past; noop: async service task ${true}");
        n.put("executor", "queue per instance " + (p.text("queue-size").equals("auto") ? "auto: " + QUEUE_PER_THREAD + " per executor thread "
                + "(the original's 8192 for 128), so a full queue holds as many seconds of work as the original's" : "set by --queue-size")
                + " (queue_size per cell; an engine acquires at most its free places); acquire and timer wait 100 ms, queue-full wait 100 ms (Flowable's defaults of 10 s and 5 s make a drain crawl); "
                + "global acquire lock wait time at Flowable's default (1 min), its poll rate --lock-poll-ms (lock_poll_ms per lock-on cell)");
        n.put("completions", "committed completions, counted from the database by a separate connection: jobs minus the rows left in "
                + "ACT_RU_JOB, ACT_RU_TIMER_JOB and ACT_RU_DEADLETTER_JOB (a job's row goes only when its transaction commits), polled "
                + "every 0.1-1 s (10x the query's own time); checked at the end against the executions resting at the wait state");
        n.put("throughput", "jobs_per_s = committed jobs / drain time, from the first engine starting its executor to the first poll that finds "
                + "the backlog drained (drain_end_source = database; engines when the monitor never saw it, e.g. a drain that timed out); steady_jobs_per_s = the committed count's rate between the end of warm-up and 95% drained");
        n.put("theoreticalMax", "fixed jobs only: instances x threads x 1000 / job-ms jobs/s");
        n.put("threads", run.param("threads").equals("auto")
                ? "auto: sized by the calibration drain (notes.calibration), the same count for every cell and job type"
                : "set by --threads");
        n.put("checks", "valid when every job committed once (database count and post-commit events), no execution failed, instances reached the "
                + "wait state exactly once per job (counted in-process, rolled-back attempts included), fixed job bodies ran once per job, "
                + "no job or dead letter is left, and every instance rests at the wait state");
        n.put("cpu", "percent of one core over the drain (first engine's executor start to its end): engines from their own process CPU time; "
                + "the database as the postmaster's tree (its own time, its reaped backends' time and its live backends'), null on a database "
                + "that is not ours; system from /proc/stat; other = system - engines - database (the run's own JVM, the monitor, other tenants)");
        n.put("bottleneck", "cpu:<owner> when the machine is at >= 90% of all cores; database-locks when on average >= 1 of the cell's "
                + "sessions waits on a lock; executor-threads when the threads are >= 90% busy; acquisition otherwise (threads idle while jobs "
                + "are due); evidence in cpu_*_pct, threads_busy_pct, queued_mean, db_active_mean and db_lock_waiters_mean");
        n.put("latency", "per job: acquired by its engine (corrected) or picked up by a thread (uncorrected) -> committed; jobs committed "
                + "in the first --warmup seconds of a drain are warm-up and not written (a backlog may be acquired at once, so the cut is by "
                + "commit time); each log's window opens at the drain start");
        run.writeManifest();
    }

    /** Where the cells' schemas live: a private PostgreSQL cluster, the user's database, or an H2 file per cell. */
    static final class Database {
        /** Connection details without secrets in the URL. */
        record Credentials(String url, String user, String password) {
            static Credentials of(Params p) {
                JdbcUrl u = JdbcUrl.parse(p.text("jdbc-url"));
                return new Credentials(u.url(), u.userOr(p.text("jdbc-user"), "postgres"), u.passwordOr(p.text("jdbc-password")));
            }

            Connection connect(String url) throws Exception {
                DriverManager.setLoginTimeout(10);
                return DriverManager.getConnection(JdbcUrl.withParam(url, "connectTimeout", "10"), user, password);
            }

            @Override
            public String toString() { return "Credentials[" + url + ", " + user + "]"; }
        }

        final Credentials credentials;
        final String description;
        final boolean h2, usersDatabase;
        final PrivatePostgres postgres;
        private final Set<String> liveSchemas = new LinkedHashSet<>();

        private Database(Credentials credentials, String description, boolean h2, boolean usersDatabase, PrivatePostgres postgres) {
            this.credentials = credentials; this.description = description; this.h2 = h2; this.usersDatabase = usersDatabase; this.postgres = postgres;
        }

        static Database open(Run run, boolean h2) throws Exception {
            if (h2) return new Database(new Credentials(null, "sa", ""), "H2 2.3.232 embedded (file per cell in the run's scratch folder, ANALYZE_AUTO=0)", true, false, null);
            if (!run.param("jdbc-url").isBlank()) {
                Credentials c = Credentials.of(run.typed());
                return new Database(c, "user database " + c.url(), false, true, null);
            }
            run.progress().phase("starting a private PostgreSQL cluster", 3);
            PrivatePostgres pg = PrivatePostgres.start(run, Map.of());
            run.timeSeries().watchProcessTree("proc:postgres", pg.pid()); // postmaster and backends, per second
            return new Database(new Credentials(pg.jdbcUrl(), pg.user(), pg.password()), "private PostgreSQL cluster (Debian server binaries) on 127.0.0.1:"
                    + pg.port() + ", scram-sha-256 with a random per-run password, removed afterwards", false, false, pg);
        }

        /** A URL for one cell: its own schema on PostgreSQL, its own file on H2. */
        String cellUrl(Run run, String schema) throws Exception {
            if (h2) return "jdbc:h2:file:" + run.scratchDir().resolve("h2").resolve(schema) + ";ANALYZE_AUTO=0;AUTO_SERVER=TRUE";
            try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            if (usersDatabase) {
                synchronized (liveSchemas) { liveSchemas.add(schema); }
                // right after CREATE SCHEMA: Ctrl-C, SIGTERM or a failure must not leave it in the user's database
                run.onFinish(() -> dropCell(schema));
            }
            String url = JdbcUrl.withParam(credentials.url(), "currentSchema", schema);
            return JdbcUrl.withParam(url, "ApplicationName", applicationName(schema));
        }

        /** How the cell's sessions name themselves, so the monitor can tell them apart in pg_stat_activity. */
        static String applicationName(String schema) { return "perfkit-" + schema; }

        /** Drops a cell's schema on the user's database (a private cluster goes whole). Safe to call twice. */
        void dropCell(String schema) {
            if (!usersDatabase) return;
            synchronized (liveSchemas) { if (!liveSchemas.remove(schema)) return; }
            try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
                s.execute("SET lock_timeout = '30s'");
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            } catch (Exception e) {
                System.err.println("[workflow] could not drop schema " + schema + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
            }
        }

        /** The postmaster's pid, whose process tree holds all database CPU; -1 when the database is not ours. */
        long pid() { return postgres == null ? -1 : postgres.pid(); }
    }

    /** What one drain measured, checked. */
    record Outcome(Cell cell, double generateSeconds, double drainSeconds, double rate, double steady, double theoreticalMax,
                   long committed, long commitEvents, long failed, long arrivals, long bodyRuns, Engine.Verification verification,
                   List<String> reasons, double cpuEngines, double cpuDb, double cpuSystem, int cores, double threadsBusy, double queuedMean,
                   double dbActive, double dbLockWaiters, String bottleneck, long latencySamples, String endSource,
                   List<ObjectNode> engines) {
        void write(Table cells, Table engineTable) throws Exception {
            Cell c = cell;
            cells.write(Table.row().set("cell", c.name()).set("repetition", c.repetition()).set("job_type", c.type()).set("instances", c.instances())
                    .set("threads", c.threads()).set("queue_size", c.queueSize()).set("acquire_size", c.acquire()).set("lock", c.lock()).set("lock_poll_ms", c.lockPollMs()).set("jobs", c.jobs())
                    .set("generate_seconds", generateSeconds).set("drain_seconds", drainSeconds).set("jobs_per_s", rate)
                    .set("steady_jobs_per_s", steady).set("theoretical_max_per_s", theoreticalMax).set("pct_of_max", 100 * rate / theoreticalMax)
                    .set("committed", committed).set("commit_events", commitEvents).set("failed", failed).set("wait_arrivals", arrivals)
                    .set("body_runs", c.type().equals("fixed") ? bodyRuns : null)
                    .set("left", verification.jobsLeft()).set("dead_letters", verification.deadLetters()).set("at_wait_state", verification.atWaitState())
                    .set("valid", reasons.isEmpty()).set("invalid_reason", String.join("; ", reasons))
                    .set("cpu_engines_pct", cpuEngines).set("cpu_db_pct", cpuDb).set("cpu_system_pct", cpuSystem)
                    .set("cpu_other_pct", cpuSystem - cpuEngines - (Double.isNaN(cpuDb) ? 0 : cpuDb)).set("cores", cores)
                    .set("threads_busy_pct", 100 * threadsBusy).set("queued_mean", queuedMean)
                    .set("db_active_mean", dbActive).set("db_lock_waiters_mean", dbLockWaiters).set("bottleneck", bottleneck)
                    .set("latency_samples", latencySamples).set("drain_end_source", endSource));
            if (engineTable != null)
                for (int i = 0; i < engines.size(); i++) {
                    ObjectNode e = engines.get(i);
                    engineTable.write(Table.row().set("cell", c.name()).set("instance", i + 1).set("commit_events", e.get("committed").asLong())
                            .set("jobs_per_s", e.get("committed").asLong() / drainSeconds).set("cpu_pct", e.get("cpuPct").asDouble())
                            .set("threads_busy_pct", 100 * e.get("threadsBusy").asDouble()));
                }
        }
    }

    /** One cell: generate, drain with K engines, check. */
    /** One configuration's drain; {@code lockPollMs} is null with the lock off, where it plays no part. */
    record Cell(Run run, Database db, int index, String name, int repetition, String type, int instances, int acquire, String lock,
                Integer lockPollMs, int threads, int queueSize, long jobs) {
        Outcome drain() throws Exception {
            // the run id's time and random suffix: unique per run even on a shared database, and under PostgreSQL's 63 characters
            String id = run.dir().getFileName().toString().toLowerCase(Locale.ROOT);
            String schema = "perfkit_" + id.substring(0, 16) + "_" + id.substring(id.length() - 6).replaceAll("[^a-z0-9]", "") + "_" + index;
            String url = db.cellUrl(run, schema);
            Map<String, String> base = new LinkedHashMap<>(run.params());
            base.keySet().removeIf(k -> k.startsWith("jdbc-")); // the forks get the connection below, nothing of the user's options
            base.putAll(Map.of("db-url", url, "db-user", db.credentials.user(), "db-password", db.credentials.password(),
                    "db-schema", db.h2 ? "" : schema, "job-type", type, "acquire-size", String.valueOf(acquire), "lock", lock, "cell", name,
                    "threads", String.valueOf(threads), "jobs", String.valueOf(jobs)));
            base.put("queue-size", String.valueOf(queueSize));
            if (lockPollMs != null) base.put("lock-poll-ms", String.valueOf(lockPollMs));
            else base.put("lock-poll-ms", run.typed().list("lock-poll-ms").get(0)); // unused with the lock off; one value for the engine
            List<String> jvm = Sys.jvmArgs(run.param("fork-jvm-args"));
            try {
                Map<String, String> gen = new LinkedHashMap<>(base);
                gen.put("mode", "generate");
                gen.put("jvm-index", "0");
                ObjectNode g = run.fork(name + "/generate", jvm, gen, jobs / 300.0);
                run.notes().put("indexFix", g.get("indexFix").asText());

                List<String> series = new ArrayList<>();
                List<Map<String, String>> params = new ArrayList<>();
                for (int i = 1; i <= instances; i++) {
                    Map<String, String> p = new LinkedHashMap<>(base);
                    p.put("mode", "execute");
                    p.put("jvm-index", String.valueOf(i));
                    params.add(p);
                    series.add(name + "/engine" + i);
                }
                CpuSampler cpu = CpuSampler.forThisMachine();
                Monitor monitor = new Monitor(run, db, url, schema, jobs);
                Edges edges = new Edges();
                List<ObjectNode> results;
                try {
                    results = run.forkAll(series, jvm, params, run.seconds("max-drain"), phase -> {
                        // the drain's edges as the first engine sees them; tree ticks include backends that already exited
                        if (phase.equals("execute")) { cpu.sampleSystem(); edges.db0 = treeTicks(cpu); edges.t0 = System.nanoTime(); monitor.start(); }
                        else if (phase.equals("done")) { edges.sys = cpu.sampleSystem(); edges.db1 = treeTicks(cpu); edges.t1 = System.nanoTime(); }
                    });
                } finally {
                    monitor.stop();
                }
                if (edges.t1 == 0) { edges.sys = cpu.sampleSystem(); edges.db1 = treeTicks(cpu); edges.t1 = System.nanoTime(); }
                return outcome(g, results, monitor, edges);
            } finally {
                db.dropCell(schema);
            }
        }

        private long treeTicks(CpuSampler cpu) {
            long pid = db.pid();
            return pid < 0 ? -1 : cpu.treeTicks(pid);
        }

        private Outcome outcome(ObjectNode g, List<ObjectNode> results, Monitor monitor, Edges edges) throws Exception {
            Engine.Verification v = monitor.verify();
            long committed = jobs - v.jobsLeft() - v.deadLetters();
            long start = results.stream().mapToLong(r -> r.get("drainStartMs").asLong()).min().orElse(-1);
            long end = monitor.drainedAtMs(committed);
            String endSource = "database";
            if (end < 0) { // the monitor never saw the end (e.g. the drain timed out): the engines' last commit instead
                end = results.stream().mapToLong(r -> r.get("lastCommitMs").asLong()).max().orElse(-1);
                endSource = "engines";
            }
            double drain = (end - start) / 1000.0;
            double rate = DrainRate.overall(committed, start, end);
            long events = sum(results, "committed"), failed = sum(results, "failed"), arrivals = sum(results, "arrivals"), bodies = sum(results, "sleepRuns");
            List<String> reasons = new ArrayList<>();
            if (committed != jobs) reasons.add(committed + " of " + jobs + " jobs committed");
            if (events != jobs) reasons.add(events + " commit events for " + jobs + " jobs");
            if (failed > 0) reasons.add(failed + " job executions failed");
            if (arrivals != jobs) reasons.add("instances reached the wait state " + arrivals + " times for " + jobs + " jobs");
            if (type.equals("fixed") && bodies != jobs) reasons.add("fixed job bodies ran " + bodies + " times for " + jobs + " jobs");
            if (v.jobsLeft() > 0) reasons.add(v.jobsLeft() + " jobs left");
            if (v.deadLetters() > 0) reasons.add(v.deadLetters() + " dead letters");
            if (v.atWaitState() != jobs) reasons.add(v.atWaitState() + " of " + jobs + " instances at the wait state");
            double max = type.equals("fixed") ? instances * threads * 1000.0 / run.integer("job-ms") : Double.NaN;
            double window = (edges.t1 - edges.t0) / 1e9;
            double dbPct = CpuSampler.percent(edges.db0, edges.db1, window);
            double sysPct = edges.sys == null ? Double.NaN : edges.sys.busyPercent();
            double enginesPct = results.stream().mapToDouble(r -> r.get("cpuPct").asDouble()).sum();
            double busy = results.stream().mapToDouble(r -> r.get("threadsBusy").asDouble()).average().orElse(Double.NaN);
            double queued = results.stream().mapToDouble(r -> r.get("queuedMean").asDouble()).average().orElse(Double.NaN);
            int cores = Runtime.getRuntime().availableProcessors();
            String bottleneck = DrainBottleneck.classify(new DrainBottleneck.Evidence(sysPct, cores, enginesPct, dbPct, busy, monitor.lockWaitersMean()));
            Outcome o = new Outcome(this, g.get("generateSeconds").asDouble(), drain, rate, monitor.steady(start, run.seconds("warmup")), max,
                    committed, events, failed, arrivals, bodies, v, reasons, enginesPct, dbPct, sysPct, cores, busy, queued,
                    monitor.activeMean(), monitor.lockWaitersMean(), bottleneck, sum(results, "latencySamples"), endSource, results);
            run.progress().say(String.format(Locale.ROOT, "%s: %,d jobs in %.1f s = %.0f jobs/s%s; CPU engines %.0f%%, database %.0f%%, system %.0f%%; bottleneck %s%s",
                    name, committed, drain, rate,
                    type.equals("fixed") ? String.format(Locale.ROOT, " (%.0f%% of the theoretical %.0f)", 100 * rate / max, max) : "",
                    enginesPct, dbPct, sysPct, bottleneck, reasons.isEmpty() ? "" : "  INVALID: " + String.join("; ", reasons)));
            return o;
        }

        private static long sum(List<ObjectNode> results, String field) {
            return results.stream().mapToLong(r -> r.get(field).asLong()).sum();
        }
    }

    /** CPU readings at the drain's start and end (set from the fork-reader thread). */
    static final class Edges {
        volatile long db0 = -1, db1 = -1, t0, t1;
        volatile CpuSampler.SystemUsage sys;
    }

    /**
     * Counts committed completions from the database on its own connection, as the original's monitor counted
     * the jobs left. Polls every 0.1 to 1 s: ten times the query's own duration, so counting a large backlog
     * costs the database at most a tenth of one backend.
     */
    static final class Monitor {
        private final Run run;
        private final Database db;
        private final String url, schema, series;
        private final long jobs;
        private final List<DrainRate.Sample> samples = new ArrayList<>();
        private double activeSum, lockSum;
        private int sessionSamples;
        private volatile boolean running;
        private volatile long last;
        private Thread thread;

        Monitor(Run run, Database db, String url, String schema, long jobs) {
            this.run = run; this.db = db; this.url = url; this.schema = schema; this.jobs = jobs;
            this.series = "db:" + schema;
        }

        void start() {
            running = true;
            thread = new Thread(this::poll, "workflow-monitor");
            thread.setDaemon(true);
            run.timeSeries().watchCounter(series, () -> last);
            thread.start();
        }

        private void poll() {
            // on PostgreSQL under a name of its own, so the session counts below leave the monitor out
            try (Connection c = db.h2 ? DriverManager.getConnection(url, db.credentials.user(), db.credentials.password())
                    : db.credentials.connect(JdbcUrl.withParam(JdbcUrl.withParam(db.credentials.url(), "currentSchema", schema), "ApplicationName", "perfkit-monitor"));
                 Statement s = c.createStatement()) {
                String sessions = "select count(*) filter (where state = 'active'), count(*) filter (where wait_event_type = 'Lock') "
                        + "from pg_stat_activity where application_name = '" + Database.applicationName(schema) + "'";
                while (running) {
                    long t0 = System.nanoTime();
                    long left = Engine.count(s, "select count(*) from act_ru_job") + Engine.count(s, "select count(*) from act_ru_timer_job")
                            + Engine.count(s, "select count(*) from act_ru_deadletter_job");
                    long now = System.currentTimeMillis();
                    synchronized (samples) { samples.add(new DrainRate.Sample(now, jobs - left)); }
                    last = jobs - left;
                    if (!db.h2) {
                        try (ResultSet r = s.executeQuery(sessions)) {
                            r.next();
                            synchronized (samples) { activeSum += r.getLong(1); lockSum += r.getLong(2); sessionSamples++; }
                        }
                    }
                    long took = (System.nanoTime() - t0) / 1_000_000;
                    Thread.sleep(Math.max(100, Math.min(1000, 10 * took)));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                if (running) System.err.println("[workflow] monitor stopped: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
            }
        }

        void stop() throws InterruptedException {
            running = false;
            if (thread != null) {
                thread.interrupt();
                thread.join(5000);
            }
            run.timeSeries().unwatchCounter(series);
        }

        Engine.Verification verify() throws Exception {
            return Engine.verify(url, db.credentials.user(), db.credentials.password(), db.h2 ? "" : schema);
        }

        /** When a poll first found {@code committed} jobs done (dead letters count as done here; they invalidate the cell anyway). */
        long drainedAtMs(long committed) {
            synchronized (samples) { return DrainRate.drainedAtMs(samples, committed); }
        }

        double steady(long startMs, double warmup) {
            synchronized (samples) { return DrainRate.steady(samples, startMs, warmup, jobs); }
        }

        double activeMean() { synchronized (samples) { return sessionSamples == 0 ? Double.NaN : activeSum / sessionSamples; } }

        double lockWaitersMean() { synchronized (samples) { return sessionSamples == 0 ? Double.NaN : lockSum / sessionSamples; } }
    }
}
