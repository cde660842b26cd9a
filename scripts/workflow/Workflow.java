///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.flowable:flowable-engine:7.2.0
//DEPS org.postgresql:postgresql:42.7.7
//DEPS com.h2database:h2:2.3.232
//DEPS org.slf4j:slf4j-simple:2.0.17
//SOURCES Engine.java Postgres.java SleepTask.java
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION Flowable Async Executor draining a job backlog: fixed 100 ms jobs, timers and no-op jobs, vs the theoretical maximum
package perfkit.workflow;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.Cli;
import perfkit.harness.CpuSampler;
import perfkit.harness.Fork;
import perfkit.harness.Run;
import perfkit.harness.Study;
import perfkit.harness.Table;
import perfkit.harness.UserError;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Each cell of the experiment: create a fresh schema, generate N process instances that each leave one job
 * (executor off), then start K engine JVMs with the async executor on against the same database and let them
 * drain the backlog. Throughput is counted from the database, as the original's monitor did.
 */
public class Workflow {
    static final Cli CLI = new Cli("workflow", "Flowable's Async Executor draining a backlog of jobs: fixed-time jobs, due timers or no-op jobs,\n"
            + "scaled by engine instances (separate JVMs) and acquire size, with the global acquire lock on and off.")
            .text("job-types", "fixed,timer,noop", "job types, comma-separated: fixed (sleeps --job-ms), timer (already due), noop (${true})")
            .integer("jobs", 1_000_000, 1000L, 1, "jobs in the backlog per cell (the original: 1,000,000)")
            .text("instances", "1,2,4", "1", "engine instances (JVMs) per cell, comma-separated")
            .text("acquire-sizes", "32,512", "32", "jobs fetched per acquisition, comma-separated")
            .text("locks", "off,on", "off", "global acquire lock, comma-separated: off, on")
            .integer("threads", 128, 32L, 1, "executor threads per instance (the original: 128)")
            .integer("queue-size", 8192, null, 1, "executor queue size per instance (the original: 8192)")
            .integer("job-ms", 100, null, 0, "duration of a fixed job in ms")
            .integer("repetitions", 1, null, 1, "repetitions of every cell")
            .seconds("warmup", 5, 1.0, "seconds of each drain excluded from the steady-state rate")
            .seconds("max-drain", 3600, 300.0, "give up on a drain after this many seconds (the cell is then invalid)")
            .choice("database", List.of("postgres", "h2"), "postgres", "postgres: a private throwaway cluster; h2: embedded, one instance only")
            .text("jdbc-url", "", "use this PostgreSQL database instead (jdbc:postgresql://...); the study works in its own schema and drops it")
            .text("jdbc-user", "postgres", "user for --jdbc-url")
            .text("jdbc-password", "", "password for --jdbc-url (never stored)")
            .choice("index-fix", List.of("on", "off"), "on", "drop ACT_IDX_RU_ACTI_END on PostgreSQL (see the notebook); off shows the pitfall")
            .text("fork-jvm-args", "-Xmx1g", "JVM options of every engine JVM, space-separated");

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        Study.main(args, CLI, Workflow.class, Workflow::plan, f -> {
            if (f.param("mode").equals("generate")) Engine.generate(f);
            else Engine.execute(f);
        });
    }

    static List<String> list(Run run, String name) {
        return Arrays.stream(run.param(name).split(",")).map(String::trim).filter(s -> !s.isEmpty()).distinct().toList();
    }

    static List<Integer> ints(Run run, String name) {
        try {
            List<Integer> xs = list(run, name).stream().map(Integer::parseInt).toList();
            if (xs.isEmpty() || xs.stream().anyMatch(x -> x < 1)) throw new NumberFormatException();
            return xs;
        } catch (NumberFormatException e) {
            throw new UserError("workflow: option --" + name + " expects positive integers separated by commas, got '" + run.param(name) + "'");
        }
    }

    static void plan(Run run) throws Exception {
        List<String> types = list(run, "job-types");
        for (String t : types)
            if (!Engine.JOB_TYPES.contains(t)) throw new UserError("workflow: unknown job type '" + t + "' (job types: fixed, timer, noop)");
        List<Integer> instances = ints(run, "instances"), acquires = ints(run, "acquire-sizes");
        List<String> locks = list(run, "locks");
        for (String l : locks) if (!l.equals("on") && !l.equals("off")) throw new UserError("workflow: --locks takes on and/or off, got '" + l + "'");
        boolean h2 = run.param("database").equals("h2") && run.param("jdbc-url").isBlank();
        if (h2 && instances.stream().anyMatch(k -> k > 1)) throw new UserError("workflow: H2 supports one engine instance; use PostgreSQL for --instances above 1");
        run.variants(types);
        run.measurement(run.seconds("warmup"), 0, run.integer("repetitions"), "step");

        Database db = Database.open(run, h2);
        describe(run, db);
        try (Table cells = new Table(run, "throughput.csv", "one row per cell: drain time, jobs/s overall and steady, % of the theoretical maximum, checks, CPU",
                "repetition", "job_type", "instances", "threads", "acquire_size", "lock", "jobs", "generate_seconds", "drain_seconds",
                "jobs_per_s", "steady_jobs_per_s", "theoretical_max_per_s", "pct_of_max", "succeeded", "failed", "left", "dead_letters",
                "at_wait_state", "valid", "invalid_reason", "cpu_engines_pct", "cpu_db_pct", "cpu_system_pct");
             Table engines = new Table(run, "engines.csv", "jobs each engine instance completed per cell",
                     "cell", "instance", "succeeded", "jobs_per_s", "cpu_pct")) {
            int cell = 0;
            for (int rep = 1; rep <= run.integer("repetitions"); rep++)
                for (String type : types)
                    for (int k : instances)
                        for (int acquire : acquires)
                            for (String lock : locks)
                                new Cell(run, db, ++cell, rep, type, k, acquire, lock).run(cells, engines);
        }
    }

    static void describe(Run run, Database db) {
        ObjectNode n = run.notes();
        n.put("database", db.description);
        n.put("process", "start -> job -> receive task (wait state) -> end; history level none; a fresh schema per cell");
        n.put("jobs", "fixed: async service task sleeping --job-ms; timer: intermediate timer due in the past; noop: async service task ${true}");
        n.put("executor", "acquire and timer wait 100 ms, queue-full wait 100 ms (the 8.x defaults of 10 s and 5 s make a drain crawl); "
                + "global acquire lock wait time and poll rate at Flowable's defaults");
        n.put("throughput", "jobs/s = jobs / drain time; steady = rate from the database's remaining-job count between warm-up and 95% drained");
        n.put("theoreticalMax", "fixed jobs only: instances x threads x 1000 / job-ms jobs/s");
        n.put("checks", "valid when every job ran once (successes = jobs), no job is left, no dead letter, and every instance rests at the wait state");
    }

    /** Where the cells' schemas live: a private PostgreSQL cluster, the user's database, or an H2 file per cell. */
    static final class Database {
        final String url, user, password, description;
        final boolean h2;
        final Postgres postgres;

        private Database(String url, String user, String password, String description, boolean h2, Postgres postgres) {
            this.url = url; this.user = user; this.password = password; this.description = description; this.h2 = h2; this.postgres = postgres;
        }

        static Database open(Run run, boolean h2) throws Exception {
            if (h2) return new Database(null, "sa", "", "H2 2.3.232 embedded (file per cell in the run's scratch folder, ANALYZE_AUTO=0)", true, null);
            String url = run.param("jdbc-url");
            if (!url.isBlank()) {
                checkReachable(url, run.param("jdbc-user"), run.param("jdbc-password"));
                return new Database(url, run.param("jdbc-user"), run.param("jdbc-password"), "user database " + perfkit.harness.Manifest.redact(url), false, null);
            }
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) { port = s.getLocalPort(); }
            run.progress().phase("starting a private PostgreSQL cluster", 3);
            Postgres pg = Postgres.create(port);
            run.onFinish(pg::stop); // registered first: a Ctrl-C during start-up must not leave a cluster behind
            pg.start();
            return new Database(pg.jdbcUrl(), "postgres", "", "private PostgreSQL cluster (Debian server binaries) on 127.0.0.1:" + port
                    + ", initdb in a temp folder, removed afterwards", false, pg);
        }

        static void checkReachable(String url, String user, String password) {
            DriverManager.setLoginTimeout(10);
            String withTimeout = url + (url.contains("?") ? "&" : "?") + "connectTimeout=10&socketTimeout=30";
            try (Connection c = DriverManager.getConnection(withTimeout, user, password)) {
                c.isValid(5);
            } catch (Exception e) {
                throw new IllegalStateException("cannot connect to " + perfkit.harness.Manifest.redact(url) + ": "
                        + String.valueOf(e.getMessage()).lines().findFirst().orElse("no answer"));
            }
        }

        /** A URL for one cell: its own schema on PostgreSQL, its own file on H2. */
        String cellUrl(Run run, String schema) throws Exception {
            if (h2) return "jdbc:h2:file:" + run.scratchDir().resolve("h2").resolve(schema) + ";ANALYZE_AUTO=0;AUTO_SERVER=TRUE";
            try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            return url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        }

        void dropCell(String schema) {
            if (h2) return;
            try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            } catch (Exception e) {
                System.err.println("[workflow] could not drop schema " + schema + ": " + e.getMessage());
            }
        }

        /** CPU ticks of the postmaster and all its backends (-1 when the database is not ours). */
        long ticks(CpuSampler cpu) {
            if (postgres == null || postgres.pid() < 0) return -1;
            return ProcessHandle.of(postgres.pid()).map(p -> cpu.processTicks(p.pid())
                    + p.descendants().mapToLong(d -> Math.max(0, cpu.processTicks(d.pid()))).sum()).orElse(-1L);
        }
    }

    /** One cell: generate, drain with K engines, check, record. */
    record Cell(Run run, Database db, int index, int repetition, String type, int instances, int acquire, String lock) {
        void run(Table cells, Table engines) throws Exception {
            String name = type + "-k" + instances + "-a" + acquire + "-lock" + lock + "-r" + repetition;
            String schema = "perfkit_" + run.dir().getFileName().toString().replaceAll("[^a-z0-9]", "").substring(0, 15) + "_" + index;
            String url = db.cellUrl(run, schema);
            long jobs = run.integer("jobs");
            Map<String, String> base = new LinkedHashMap<>(run.params());
            base.remove("jdbc-password");
            base.putAll(Map.of("db-url", url, "db-user", db.user, "db-password", db.password, "db-schema", db.h2 ? "" : schema,
                    "job-type", type, "acquire-size", String.valueOf(acquire), "lock", lock, "cell", name));
            List<String> jvm = run.param("fork-jvm-args").isBlank() ? List.of() : List.of(run.param("fork-jvm-args").trim().split("\\s+"));
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
                Monitor monitor = new Monitor(run, url, db, schema, jobs);
                long[] dbTicks = {-1};
                long[] t0 = {0};
                List<ObjectNode> results = run.forkAll(series, jvm, params, run.seconds("max-drain"), phase -> {
                    if (phase.equals("execute")) { cpu.sampleSystem(); dbTicks[0] = db.ticks(cpu); t0[0] = System.nanoTime(); monitor.start(); }
                });
                double window = (System.nanoTime() - t0[0]) / 1e9;
                CpuSampler.SystemUsage sys = cpu.sampleSystem();
                double dbPct = dbTicks[0] >= 0 ? CpuSampler.percent(dbTicks[0], db.ticks(cpu), window) : Double.NaN;
                monitor.stop();
                record(cells, engines, g, results, monitor, jobs, dbPct, sys == null ? Double.NaN : sys.busyPercent(), name, schema);
            } finally {
                db.dropCell(schema);
            }
        }

        private void record(Table cells, Table engines, ObjectNode g, List<ObjectNode> results, Monitor monitor, long jobs,
                            double dbPct, double sysPct, String name, String schema) throws Exception {
            long start = results.stream().mapToLong(r -> r.get("drainStartMs").asLong()).min().orElse(0);
            long end = results.stream().mapToLong(r -> r.get("lastDoneMs").asLong()).max().orElse(0);
            double drain = Math.max(1, end - start) / 1000.0;
            long succeeded = results.stream().mapToLong(r -> r.get("succeeded").asLong()).sum();
            long failed = results.stream().mapToLong(r -> r.get("failed").asLong()).sum();
            long sleeps = results.stream().mapToLong(r -> r.get("sleepRuns").asLong()).sum();
            long[] v = monitor.verify();
            List<String> reasons = new ArrayList<>();
            if (succeeded != jobs) reasons.add(succeeded + " of " + jobs + " jobs succeeded");
            if (type.equals("fixed") && sleeps != jobs) reasons.add("fixed job bodies ran " + sleeps + " times for " + jobs + " jobs");
            if (v[0] > 0) reasons.add(v[0] + " jobs left");
            if (v[1] > 0) reasons.add(v[1] + " dead letters");
            if (v[2] != jobs) reasons.add(v[2] + " of " + jobs + " instances at the wait state");
            int threads = (int) run.integer("threads");
            double max = type.equals("fixed") ? instances * threads * 1000.0 / Math.max(1, run.integer("job-ms")) : Double.NaN;
            double rate = succeeded / drain;
            double steady = monitor.steadyRate(run.seconds("warmup"));
            double enginesCpu = results.stream().mapToDouble(r -> r.get("cpuPct").asDouble()).sum();
            cells.row(repetition, type, instances, threads, acquire, lock, jobs, g.get("generateSeconds").asDouble(), drain,
                    rate, steady, max, type.equals("fixed") ? 100 * rate / max : Double.NaN, succeeded, failed, v[0], v[1], v[2],
                    reasons.isEmpty(), String.join("; ", reasons), enginesCpu, dbPct, sysPct);
            // unlike a latency wall, a failed check here means jobs were lost or ran twice: the run cannot be trusted
            if (!reasons.isEmpty()) run.invalid(name + ": " + String.join("; ", reasons));
            for (int i = 0; i < results.size(); i++)
                engines.row(name, i + 1, results.get(i).get("succeeded").asLong(), results.get(i).get("succeeded").asLong() / drain,
                        results.get(i).get("cpuPct").asDouble());
            run.progress().say(String.format(Locale.ROOT, "%s: %,d jobs in %.1f s = %.0f jobs/s%s%s", name, succeeded, drain, rate,
                    type.equals("fixed") ? String.format(Locale.ROOT, " (%.0f%% of the theoretical %.0f)", 100 * rate / max, max) : "",
                    reasons.isEmpty() ? "" : "  INVALID: " + String.join("; ", reasons)));
        }
    }

    /** Counts finished jobs from the database once a second (jobs minus those still queued), as the original's monitor did. */
    static final class Monitor {
        private final Run run;
        private final String url, schema, series;
        private final Database db;
        private final long jobs;
        private final List<double[]> points = new ArrayList<>(); // {seconds since start, completed}
        private volatile boolean running;
        private Thread thread;

        Monitor(Run run, String url, Database db, String schema, long jobs) {
            this.run = run; this.url = url; this.db = db; this.schema = schema; this.jobs = jobs;
            this.series = "db:" + schema;
        }

        void start() {
            running = true;
            long t0 = System.nanoTime();
            long[] last = {0};
            thread = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url, db.user, db.password); Statement s = c.createStatement()) {
                    while (running) {
                        long left = Engine.count(s, "select count(*) from act_ru_job") + Engine.count(s, "select count(*) from act_ru_timer_job");
                        synchronized (points) { points.add(new double[]{(System.nanoTime() - t0) / 1e9, jobs - left}); }
                        last[0] = jobs - left;
                        Thread.sleep(1000);
                    }
                } catch (Exception e) {
                    if (running) System.err.println("[workflow] monitor stopped: " + e.getMessage());
                }
            }, "workflow-monitor");
            thread.setDaemon(true);
            run.timeSeries().watchCounter(series, () -> last[0]);
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            if (thread != null) thread.join(5000);
            run.timeSeries().unwatchCounter(series);
        }

        long[] verify() throws Exception {
            return Engine.verify(url, db.user, db.password, db.h2 ? "" : schema);
        }

        /** Jobs/s between the end of warm-up and 95% drained, from the monitor's samples; NaN when too short. */
        double steadyRate(double warmup) {
            synchronized (points) {
                double[] a = null, b = null;
                for (double[] p : points) {
                    if (a == null && p[0] >= warmup) a = p;
                    if (p[1] <= 0.95 * jobs) b = p;
                }
                if (a == null || b == null || b[0] - a[0] < 1) return Double.NaN;
                return (b[1] - a[1]) / (b[0] - a[0]);
            }
        }
    }
}
