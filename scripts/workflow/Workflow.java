///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.flowable:flowable-engine:7.2.0
//DEPS org.postgresql:postgresql:42.7.14
//DEPS com.h2database:h2:2.5.252
//DEPS org.slf4j:slf4j-simple:2.0.20
//SOURCES Engine.java SleepTask.java Arrivals.java MeteredTaskExecutor.java Database.java Cell.java Monitor.java DrainRate.java DrainBottleneck.java
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//DESCRIPTION Flowable Async Executor draining a job backlog: fixed 100 ms jobs, timers and no-op jobs, vs the theoretical maximum
package perfkit.workflow;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.cli.Cli;
import perfkit.harness.run.Forks;
import perfkit.harness.db.JdbcUrl;
import perfkit.harness.cli.Opt;
import perfkit.harness.cli.Params;
import perfkit.harness.db.PrivatePostgres;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.db.RemotePostgres;
import perfkit.harness.run.ProfilingCost;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;
import perfkit.harness.run.Study;
import perfkit.harness.run.Table;

import java.sql.Connection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

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

    // the options, each declared once: the Cli lists them, and Options reads each by its constant, never by name
    static final Opt<List<String>> JOB_TYPES = Opt.choices("job-types", Engine.JOB_TYPES, "fixed,timer,noop", null,
            "job types, comma-separated: fixed (sleeps --job-ms), timer (already due), noop (${true})");
    static final Opt<Integer> JOBS = Opt.integer("jobs", 1_000_000, 1000L, 1, 100_000_000, "jobs in the backlog per cell, at least (the original: 1,000,000)")
            .map(Math::toIntExact);
    static final Opt<Double> MIN_DRAIN = Opt.seconds("min-drain", 150, 0.0, 0, "a cell's backlog grows above --jobs until its drain, at the rate expected "
            + "of it (fixed jobs: the theoretical maximum; timers and no-op jobs: the calibrated no-op rate), lasts this long, so start-up and tail stay a "
            + "small part of it (0 = --jobs)");
    static final Opt<List<Integer>> INSTANCES = Opt.integers("instances", "1,2,4", "1", 1, 64, "engine instances (JVMs) per cell, comma-separated");
    static final Opt<List<Integer>> ACQUIRE_SIZES = Opt.integers("acquire-sizes", "32,512", "32", 1, 100_000, "jobs fetched per acquisition, comma-separated");
    static final Opt<List<String>> LOCKS = Opt.choices("locks", List.of("off", "on"), "off,on", "off", "global acquire lock, comma-separated: off, on");
    static final Opt<List<Integer>> LOCK_POLL_MS = Opt.integers("lock-poll-ms", "500", null, 1, 60_000, "with the lock on: how often an engine waiting "
            + "for the global acquire lock tries again, in ms, comma-separated; every lock-on cell runs at each (Flowable's default 500; the original: a "
            + "shorter wait adds a few hundred jobs/s)");
    static final Opt<Integer> THREADS = Opt.integerOrAuto("threads", "auto", 1, 4096, "executor threads per instance: a number (the original: 128), or "
            + "auto: sized by a no-op calibration drain so that the fixed jobs' theoretical maximum at the most --instances is --headroom percent of what this host serves");
    static final Opt<Integer> HEADROOM = Opt.integer("headroom", 50, null, 1, 100, "with --threads auto: percent of the calibrated no-op rate that the "
            + "theoretical maximum may ask for").map(Math::toIntExact);
    static final Opt<Integer> CALIBRATION_JOBS = Opt.integer("calibration-jobs", 4000, 1000L, 100, 1_000_000, "with --threads auto: no-op jobs in the "
            + "calibration drain").map(Math::toIntExact);
    static final Opt<Integer> QUEUE_SIZE = Opt.integerOrAuto("queue-size", "auto", 1, 1_000_000, "executor queue per instance: a number (the original: "
            + "8192), or auto: " + QUEUE_PER_THREAD + " per executor thread, the original's 8192 for 128, so a full queue holds as many seconds of an engine's "
            + "work as there, and at least twice the largest --acquire-sizes, so a larger acquire size can take more jobs than a smaller one");
    static final Opt<Integer> JOB_MS = Opt.integer("job-ms", 100, null, 1, 3_600_000, "duration of a fixed job in ms").map(Math::toIntExact);
    static final Opt<Integer> REPETITIONS = Opt.integer("repetitions", 1, null, 1, 100, "repetitions of every cell").map(Math::toIntExact);
    static final Opt<Double> WARMUP = Opt.seconds("warmup", 5, 1.0, 0, "seconds at the start of each drain that are warm-up: not in the latency logs or the steady rate");
    static final Opt<Double> MAX_DRAIN = Opt.seconds("max-drain", 3600, 300.0, 1, "give up on a drain after this many seconds (the cell is then invalid)");
    static final Opt<DatabaseKind> DATABASE = Opt.choice("database", DatabaseKind.class, DatabaseKind.POSTGRES,
            "postgres: a private throwaway cluster; h2: embedded, one instance only");
    static final Opt<String> JDBC_URL = Opt.text("jdbc-url", "", null, "use this PostgreSQL database instead (jdbc:postgresql://host:port/db); the study "
            + "works in schemas of its own and drops them");
    static final Opt<String> JDBC_USER = Opt.text("jdbc-user", "", null, "user for --jdbc-url; when empty, the user in the URL, else postgres");
    static final Opt<String> JDBC_PASSWORD = Opt.secret("jdbc-password", "PERFKIT_JDBC_PASSWORD", "password for --jdbc-url (never stored; a password in the URL is the last resort)");
    static final Opt<Opt.Switch> INDEX_FIX = Opt.choice("index-fix", Opt.Switch.class, Opt.Switch.ON,
            "drop ACT_IDX_RU_ACTI_END on PostgreSQL (see the notebook); off shows the pitfall");
    static final Opt<List<String>> FORK_JVM_ARGS = Opt.jvmOptions("fork-jvm-args", "-Xmx1g", "JVM options of every engine JVM, space-separated");

    /** Where the engines' data lives. */
    enum DatabaseKind { POSTGRES, H2 }

    static final Cli CLI = new Cli("workflow", "Flowable's Async Executor draining a backlog of jobs: fixed-time jobs, due timers or no-op jobs,\n"
            + "scaled by engine instances (separate JVMs) and acquire size, with the global acquire lock on and off.")
            .with(JOB_TYPES, JOBS, MIN_DRAIN, INSTANCES, ACQUIRE_SIZES, LOCKS, LOCK_POLL_MS, THREADS, HEADROOM, CALIBRATION_JOBS, QUEUE_SIZE, JOB_MS,
                    REPETITIONS, WARMUP, MAX_DRAIN, DATABASE, JDBC_URL, JDBC_USER)
            .with(JDBC_PASSWORD)
            .with(INDEX_FIX, FORK_JVM_ARGS)
            .rule(p -> Workflow.checkJdbcUrl(JDBC_URL.in(p)))
            .rule(p -> !JDBC_URL.in(p).isBlank() && DATABASE.in(p) == DatabaseKind.H2 ? "--database h2 and --jdbc-url exclude each other" : null)
            .rule(p -> usesH2(p) && INSTANCES.in(p).stream().anyMatch(k -> k > 1)
                    ? "H2 supports one engine instance; use PostgreSQL for --instances above 1" : null)
            .rule(p -> WARMUP.in(p) >= MAX_DRAIN.in(p) ? "--warmup must be shorter than --max-drain" : null)
            .rule(p -> p.placement().containsKey("db") && !JDBC_URL.in(p).isBlank() ? "--place db and --jdbc-url exclude each other: the placed database is a private cluster on that host" : null)
            .rule(p -> p.placement().containsKey("db") && DATABASE.in(p) == DatabaseKind.H2 ? "--place db needs --database postgres: H2 runs inside the engines" : null)
            .rule(p -> enginesElsewhereProblem(p)) // before the binaries, any connection or SSH wait: a misplacement is told first
            .rule(p -> !usesH2(p) && JDBC_URL.in(p).isBlank() && !p.placement().containsKey("db") && PrivatePostgres.binaries() == null
                    ? PrivatePostgres.NOT_FOUND + "; or use --database h2 or --jdbc-url" : null)
            .rule(p -> checkReachable(Options.of(p).usersDatabase())) // late: only a well-formed URL is worth a connection attempt
            // the private cluster and the engines on hosts of their own (the original: engines on their own hosts, RDS apart)
            .place(List.of("db", "engines"), List.of("engines"))
            // H2 lives in the engine and cannot go (enginesElsewhereProblem says so); a user's database stays where it is
            .onParts(p -> DATABASE.in(p) == DatabaseKind.H2 || !JDBC_URL.in(p).isBlank() ? List.of("engines") : List.of("db", "engines"))
            .rule(p -> p.placement().containsKey("db") ? RemotePostgres.problem(p.placement().get("db")) : null)
            .rule(p -> Params.hostsOf(p.placement(), "engines").stream().distinct().map(h -> RemoteJvm.problem("engines", h, Cli.JAVA.in(p)))
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null));

    /**
     * Placed engines reach their database across the network: a private cluster here listens on loopback only, H2 runs
     * inside an engine, and a --jdbc-url on loopback names each engine's own host. Each is one line before the run.
     */
    static String enginesElsewhereProblem(Params p) {
        List<Ssh> hosts = Params.hostsOf(p.placement(), "engines");
        if (hosts.isEmpty()) return null;
        if (usesH2(p)) return "--place engines needs --database postgres: H2 runs inside an engine, and placed engines share one database";
        if (!JDBC_URL.in(p).isBlank() && JdbcUrl.onLoopback(JDBC_URL.in(p)))
            return "--place engines needs a --jdbc-url they can reach: its server on loopback is each engine host's own";
        if (JDBC_URL.in(p).isBlank() && !p.placement().containsKey("db"))
            return "--place engines needs the database off loopback too: --place db=user@host (a private cluster there) or --jdbc-url";
        int most = java.util.Collections.max(INSTANCES.in(p));
        return hosts.size() > most ? "--place engines names " + hosts.size() + " hosts, but no cell runs more than " + most + " engine(s) (--instances)" : null;
    }

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        Study.main(args, CLI, Workflow.class, Workflow::plan, Engine::run);
    }

    /** A run's options, read once from the checked command line, each by its declaration. */
    record Options(List<String> jobTypes, int jobs, List<Integer> instances, List<Integer> acquireSizes, List<String> locks,
                   List<Integer> lockPollMs, Integer threads, int headroomPct, int calibrationJobs, Integer queueSize, int jobMs, double minDrain,
                   int repetitions, double warmup, double maxDrain, boolean h2, Database.Credentials usersDatabase, Ssh dbHost,
                   List<Ssh> engineHosts, boolean indexFix, List<String> forkJvmArgs) {
        static Options of(Params p) {
            return new Options(JOB_TYPES.in(p), JOBS.in(p), INSTANCES.in(p), ACQUIRE_SIZES.in(p), LOCKS.in(p), LOCK_POLL_MS.in(p), THREADS.in(p),
                    HEADROOM.in(p), CALIBRATION_JOBS.in(p), QUEUE_SIZE.in(p), JOB_MS.in(p), MIN_DRAIN.in(p), REPETITIONS.in(p), WARMUP.in(p), MAX_DRAIN.in(p),
                    usesH2(p), JDBC_URL.in(p).isBlank() ? null : Database.Credentials.of(p), p.placement().get("db"),
                    Params.hostsOf(p.placement(), "engines"), INDEX_FIX.in(p) == Opt.Switch.ON, FORK_JVM_ARGS.in(p));
        }

        /**
         * Where engine {@code engine} (1-based) of a cell runs: here, or with --place engines on the engine hosts in
         * turn (engine 1 on the first, engine 2 on the second, ...), each host one part of the placement.
         */
        Forks.Host engineHost(int engine) {
            if (engineHosts.isEmpty()) return Forks.Host.HERE;
            int i = (engine - 1) % engineHosts.size();
            return RemoteJvm.forkHost(i == 0 ? "engines" : "engines" + (i + 1), engineHosts.get(i));
        }

        /**
         * The executor queue per instance: --queue-size, or with auto {@link #QUEUE_PER_THREAD} per executor thread and
         * at least twice the largest acquire size: an engine acquires at most its free places, so a queue under the
         * acquire size makes the larger size take no more than the smaller (the factor would be inert).
         */
        int queueSizeFor(int threads) {
            return queueSize != null ? queueSize : Math.max(threads * QUEUE_PER_THREAD, 2 * Collections.max(acquireSizes));
        }

        /**
         * The backlog of a cell of {@code type} at {@code instances} engines: --jobs, or more so that the drain lasts
         * --min-drain at the rate expected of it (fixed jobs: their theoretical maximum, capped by the no-op rate;
         * timers and no-op jobs: the no-op rate, NaN when not calibrated, which keeps --jobs).
         */
        int jobsFor(String type, int instances, int threads, double noopPerSecond) {
            double rate = type.equals("fixed") ? Math.min(theoreticalMax(instances, threads), Double.isNaN(noopPerSecond) ? Double.MAX_VALUE : noopPerSecond)
                    : noopPerSecond;
            if (!(minDrain > 0) || Double.isNaN(rate)) return jobs;
            return (int) Math.min(100_000_000L, Math.max(jobs, (long) Math.ceil(rate * minDrain)));
        }

        /** Fixed jobs' theoretical maximum of {@code instances} engines of {@code threads} each, in jobs/s. */
        double theoreticalMax(int instances, int threads) { return instances * threads * 1000.0 / jobMs; }
    }

    static boolean usesH2(Params p) {
        return DATABASE.in(p) == DatabaseKind.H2 && JDBC_URL.in(p).isBlank();
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
    static String checkReachable(Database.Credentials c) {
        if (c == null) return null;
        try (Connection conn = c.connect(c.url())) {
            conn.isValid(5);
            return null;
        } catch (Exception e) {
            return "cannot connect to " + c.url() + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("no answer")
                    .replace(c.password().isEmpty() ? "\u0000" : c.password(), "***");
        }
    }

    static void plan(Run run) throws Exception {
        Options o = Options.of(run.typed());
        run.mode("drain");
        run.variants(o.jobTypes());
        run.measurement(o.warmup(), 0, o.repetitions(), "step");

        Database db = Database.open(run, o);
        describe(run, db, o);
        String[] columns = {"cell", "repetition", "job_type", "instances", "threads", "queue_size", "acquire_size", "lock", "lock_poll_ms", "jobs", "generate_seconds",
                "drain_seconds", "jobs_per_s", "steady_jobs_per_s", "theoretical_max_per_s", "pct_of_max", "committed", "commit_events",
                "failed", "wait_arrivals", "body_runs", "left", "dead_letters", "at_wait_state", "valid", "invalid_reason",
                "cpu_engines_pct", "cpu_db_pct", "cpu_system_pct", "cpu_other_pct", "cores", "threads_busy_pct", "queued_mean",
                "db_active_mean", "db_lock_waiters_mean", "bottleneck", "latency_samples", "drain_end_source"};
        Calibration cal = o.threads() != null ? new Calibration(o.threads(), Double.NaN)
                : calibrate(run, o, db, o.acquireSizes().get(0), Collections.max(o.instances()), columns);
        int threads = cal.threads(), queue = o.queueSizeFor(threads);
        if (run.profiling()) profilingCost(run, o, db, o.acquireSizes().get(0));
        try (Table cells = new Table(run, "throughput.csv", "one row per cell: drain time, committed jobs/s overall and steady, "
                + "% of the theoretical maximum, exact-once checks, CPU of engines, database and machine, and the bottleneck", columns);
             Table engines = new Table(run, "engines.csv", "jobs each engine instance committed per cell, its CPU and how busy its threads were",
                     "cell", "instance", "commit_events", "jobs_per_s", "cpu_pct", "threads_busy_pct")) {
            int index = 0;
            List<Integer> polls = o.lockPollMs();
            long lockSettings = o.locks().stream().mapToLong(l -> l.equals("on") ? polls.size() : 1).sum();
            int planned = Math.toIntExact(o.repetitions() * o.jobTypes().size() * o.instances().size() * o.acquireSizes().size() * lockSettings);
            // a cell: its generate, its engines' start-up and a drain of --min-drain (seconds apiece when it is 0)
            run.progress().plan("cell", planned, planned * (Math.max(o.minDrain(), 5) + 20));
            for (int rep = 1; rep <= o.repetitions(); rep++)
                for (String type : o.jobTypes())
                    for (int k : o.instances())
                        for (int acquire : o.acquireSizes())
                            for (String lock : o.locks())
                                // the poll matters only while an engine waits for the lock: lock-off cells run once
                                for (Integer poll : lock.equals("on") ? polls : Collections.<Integer>singletonList(null)) {
                                    // one poll keeps the names runs had before the poll was a factor, so compare still pairs them
                                    String name = type + "-k" + k + "-a" + acquire + "-lock" + lock + (poll == null || polls.size() == 1 ? "" : "-p" + poll) + "-r" + rep;
                                    Cell cell = new Cell(run, o, db, ++index, name, rep, type, k, acquire, lock, poll, threads, queue,
                                            o.jobsFor(type, k, threads, cal.noopPerSecond()), true);
                                    Cell.Outcome outcome = cell.drain();
                                    outcome.write(cells, engines);
                                    // a failed check means jobs were lost or ran twice: the run cannot be trusted
                                    if (!outcome.reasons().isEmpty()) run.invalid(name + ": " + String.join("; ", outcome.reasons()));
                                    run.progress().unitDone();
                                }
        }
    }

    /**
     * What {@code --profile} costs: the calibration's no-op drain (one engine, nothing but the engine's own work: where a
     * recording costs most; the fixed jobs sleep) run in pairs, once recorded and once plain (its engine's spec says
     * profiled: false), which goes first alternating ({@link ProfilingCost}); as many pairs as --repetitions. profiling.csv holds both rates.
     */
    static void profilingCost(Run run, Options o, Database db, int acquire) throws Exception {
        String cell = "noop-k1-a" + acquire + "-lockoff";
        run.notes().put("profilingCost", "the no-op drain of " + cell + " (the calibration's) run in " + o.repetitions() + " pair(s), one drain "
                + "recorded and one plain, alternating which goes first; profiling.csv holds both rates per pair");
        try (Table t = new Table(run, "profiling.csv", "what --profile cost: the no-op drain with and without a recording, in pairs",
                "cell", "pair", "profiled_jobs_per_s", "plain_jobs_per_s", "profiled_over_plain")) {
            for (ProfilingCost.Pair<Cell.Outcome> pr : ProfilingCost.pairs(run, o.repetitions(), (recorded, pair) -> {
                Cell.Outcome d = new Cell(run, o, db, 100_000 + 2 * pair + (recorded ? 0 : 1), "profiling-" + cell + "-" + (recorded ? "profiled" : "plain") + "-p" + pair,
                        pair, "noop", 1, acquire, "off", null, CALIBRATION_THREADS, o.queueSizeFor(CALIBRATION_THREADS), o.calibrationJobs(), recorded).drain();
                if (!d.reasons().isEmpty()) throw new IllegalStateException("a profiling-cost drain failed its checks: " + String.join("; ", d.reasons()));
                return d;
            })) {
                Cell.Outcome profiled = pr.recorded(), plain = pr.plain();
                // one measure for both drains of a pair: steady when both had one, else overall for both
                boolean steady = !Double.isNaN(profiled.steady()) && !Double.isNaN(plain.steady());
                double p = steady ? profiled.steady() : profiled.rate(), q = steady ? plain.steady() : plain.rate();
                t.write(Table.row().set("cell", cell).set("pair", pr.pair()).set("profiled_jobs_per_s", p).set("plain_jobs_per_s", q).set("profiled_over_plain", p / q));
            }
        }
    }

    /** What the no-op calibration found: the executor threads per instance, and the no-op jobs/s one engine drained. */
    record Calibration(int threads, double noopPerSecond) {}

    /**
     * threads = floor(no-op rate x job seconds x headroom / the most instances): the fixed jobs' theoretical maximum
     * at the largest instance count then asks for a known share of what this host completes when jobs cost nothing
     * but their bookkeeping (see DrainRate.threadsFor). So "stable as instances are added" is a question the host can
     * answer: adding engines asks for more of the same CPU, never for more than it serves.
     */
    static Calibration calibrate(Run run, Options opts, Database db, int acquire, int mostInstances, String[] columns) throws Exception {
        Cell.Outcome o;
        try (Table t = new Table(run, "calibration.csv", "the no-op drain that sized --threads auto (same columns as throughput.csv)", columns)) {
            o = new Cell(run, opts, db, 0, "calibration-noop-k1-a" + acquire + "-lockoff", 1, "noop", 1, acquire, "off", null, CALIBRATION_THREADS,
                    opts.queueSizeFor(CALIBRATION_THREADS), opts.calibrationJobs(), true).drain();
            o.write(t, null);
        }
        if (!o.reasons().isEmpty()) throw new IllegalStateException("the calibration drain failed its checks: " + String.join("; ", o.reasons()));
        double rate = Double.isNaN(o.steady()) ? o.rate() : o.steady();
        double headroom = opts.headroomPct() / 100.0;
        int threads = DrainRate.threadsFor(rate / mostInstances, opts.jobMs(), headroom);
        ObjectNode c = run.notes().putObject("calibration");
        c.put("rule", "threads = floor(noop jobs/s x job-ms / 1000 x headroom / most instances), at least 1");
        c.put("mostInstances", mostInstances);
        c.put("noopJobsPerS", rate);
        c.put("rateFrom", Double.isNaN(o.steady()) ? "overall (drain too short for a steady rate)" : "steady");
        c.put("jobs", opts.calibrationJobs());
        c.put("calibrationThreads", CALIBRATION_THREADS);
        c.put("jobMs", opts.jobMs());
        c.put("headroom", headroom);
        c.put("threads", threads);
        c.put("theoreticalMaxPerInstance", opts.theoreticalMax(1, threads));
        // above headroom only when even 1 thread per instance asks for more (a long --job-ms fixes that)
        c.put("largestMaxShareOfNoop", opts.theoreticalMax(mostInstances, threads) / rate);
        c.put("bottleneck", o.bottleneck());
        run.writeManifest();
        run.progress().say(String.format(Locale.ROOT, "calibration: %.0f no-op jobs/s -> %d threads per instance (theoretical maximum %.0f jobs/s "
                + "per instance, %.0f at %d instances)", rate, threads, opts.theoreticalMax(1, threads),
                opts.theoreticalMax(mostInstances, threads), mostInstances));
        return new Calibration(threads, rate);
    }

    static void describe(Run run, Database db, Options o) {
        ObjectNode n = run.notes();
        n.put("database", db.description);
        if (!o.engineHosts().isEmpty())
            n.put("engines", "each engine JVM (and the calibration's) on a host of its own, engine i on the i-th host of --place engines in turn ("
                    + String.join(", ", o.engineHosts().stream().map(Ssh::destination).toList()) + "; placement in the manifest); the backlog is "
                    + "generated from here; the drain's edges and each engine's drain start and last commit are on this host's clock (each host's offset measured "
                    + "at its first engine's start and end, in the placement); each engine's latency log, its window included, keeps its own host's clock");
        n.put("process", "start -> job -> receive task (wait state) -> end; history level none; a fresh schema per cell");
        n.put("jobs", "fixed: async service task sleeping --job-ms; timer: intermediate timer due in the past; noop: async service task ${true}");
        n.put("backlog", o.minDrain() > 0 ? "--jobs " + o.jobs() + " or more per cell, so that its drain lasts --min-drain " + Cli.plain(o.minDrain())
                + " s at the rate expected of it (fixed: the theoretical maximum, capped by the calibrated no-op rate; timer and noop: the calibrated no-op rate, "
                + "or --jobs without a calibration); the jobs column gives each cell's" : "--jobs " + o.jobs() + " per cell");
        n.put("executor", "queue per instance " + (o.queueSize() == null ? "auto: " + QUEUE_PER_THREAD + " per executor thread "
                + "(the original's 8192 for 128), so a full queue holds as many seconds of work as the original's, and at least twice the largest "
                + "acquire size, so the larger size can take more" : "set by --queue-size")
                + " (queue_size per cell; an engine acquires at most its free places); acquire and timer wait 100 ms, queue-full wait 100 ms (Flowable's defaults of 10 s and 5 s make a drain crawl); "
                + "global acquire lock wait time at Flowable's default (1 min), its poll rate --lock-poll-ms (lock_poll_ms per lock-on cell)");
        n.put("completions", "committed completions, counted from the database by a separate connection: jobs minus the rows left in "
                + "ACT_RU_JOB, ACT_RU_TIMER_JOB and ACT_RU_DEADLETTER_JOB (a job's row goes only when its transaction commits), polled "
                + "every 0.1-1 s (10x the query's own time); checked at the end against the executions resting at the wait state");
        n.put("throughput", "jobs_per_s = committed jobs / drain time, from the first engine starting its executor to the first poll that finds "
                + "the backlog drained (drain_end_source = database; engines when the monitor never saw it, e.g. a drain that timed out); steady_jobs_per_s = the committed count's rate between the end of warm-up and 95% drained");
        n.put("theoreticalMax", "fixed jobs only: instances x threads x 1000 / job-ms jobs/s");
        n.put("threads", o.threads() == null
                ? "auto: sized by the calibration drain (notes.calibration), the same count for every cell and job type"
                : "set by --threads");
        n.put("checks", "valid when every job committed once (database count and post-commit events), no execution failed, instances reached the "
                + "wait state exactly once per job (counted in-process, rolled-back attempts included), fixed job bodies ran once per job, "
                + "no job or dead letter is left, and every instance rests at the wait state");
        n.put("cpu", "percent of one core over the drain (first engine's executor start to its end): engines from their own process CPU time "
                + "(of one of their own hosts' cores with --place engines); "
                + "the database as the postmaster's tree (its own time, its reaped backends' time and its live backends'), null on a database "
                + "that is not ours, from its own host's /proc with --place db (percent of one of that host's cores); system from /proc/stat; other = "
                + "system - engines - database (the run's own JVM, the monitor, other tenants; placed engines or a placed database are not in this host's system)");
        n.put("bottleneck", "cpu:<owner> when the machine is at >= 90% of all cores (cpu:database also when a database on a host of its own, "
                + "--place db, has that host at >= 90%; cpu:engines when the busiest engine host of --place engines is); database-locks when on average >= 1 of the cell's "
                + "sessions waits on a lock; executor-threads when the threads are >= 90% busy; acquisition otherwise (threads idle while jobs "
                + "are due); evidence in cpu_*_pct, threads_busy_pct, queued_mean, db_active_mean and db_lock_waiters_mean");
        n.put("latency", "per job: acquired by its engine (corrected) or picked up by a thread (uncorrected) -> committed; jobs committed "
                + "in the first --warmup seconds of a drain are warm-up and not written (a backlog may be acquired at once, so the cut is by "
                + "commit time); each log's window opens at the drain start");
        run.writeManifest();
    }
}
