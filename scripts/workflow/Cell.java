package perfkit.workflow;

import perfkit.harness.measure.CpuSampler;
import perfkit.harness.run.Forks;
import perfkit.harness.run.Run;
import perfkit.harness.run.Table;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One configuration's drain: generate, drain with K engines, check; {@code lockPollMs} is null with the lock off, where
 * it plays no part; {@code profiled} false keeps its engines out of {@code --profile}'s recordings.
 */
record Cell(Run run, Workflow.Options options, Database db, int index, String name, int repetition, String type, int instances, int acquire,
            String lock, Integer lockPollMs, int threads, int queueSize, long jobs, boolean profiled) {
    /** The database runs on a host of its own (--place db): its CPU is not part of this host's. */
    boolean dbElsewhere() { return db.placed != null; }

    /** The engines run on hosts of their own (--place engines): their CPU is not part of this host's either. */
    boolean enginesElsewhere() { return !options.engineHosts().isEmpty(); }

    Outcome drain() throws Exception {
        // the run id's time and random suffix: unique per run even on a shared database, and under PostgreSQL's 63 characters
        String id = run.dir().getFileName().toString().toLowerCase(Locale.ROOT);
        String schema = "perfkit_" + id.substring(0, 16) + "_" + id.substring(id.length() - 6).replaceAll("[^a-z0-9]", "") + "_" + index;
        String url = db.cellUrl(run, schema);
        // the forks get this connection and nothing of the user's options
        Engine.Db connection = new Engine.Db(url, db.credentials.user(), db.credentials.password(), db.h2 ? "" : schema);
        List<String> jvm = options.forkJvmArgs();
        try {
            Engine.Generated g = run.fork(name + "/generate", jvm, spec(Engine.Phase.GENERATE, 0, connection), jobs / 300.0, Engine.Generated.class);
            run.notes().put("indexFix", g.indexFix());

            List<String> series = new ArrayList<>();
            List<Engine.Spec> specs = new ArrayList<>();
            List<Forks.Host> hosts = new ArrayList<>();
            for (int i = 1; i <= instances; i++) {
                specs.add(spec(Engine.Phase.DRAIN, i, connection));
                series.add(name + "/engine" + i);
                hosts.add(options.engineHost(i));
            }
            CpuSampler cpu = CpuSampler.forThisMachine();
            Monitor monitor = new Monitor(run, db, url, schema, jobs);
            Edges edges = new Edges();
            List<Forks.Forked<Engine.Drained>> forked;
            try {
                forked = run.forks().all(series, jvm, specs, hosts, options.maxDrain(), phase -> {
                    // the drain's edges as the first engine sees them; tree ticks include backends that already exited
                    if (phase.equals("execute")) { cpu.sampleSystem(); edges.db0 = treeTicks(cpu); edges.t0 = System.nanoTime(); edges.t0Ms = System.currentTimeMillis(); monitor.start(); }
                    else if (phase.equals("done")) { edges.sys = cpu.sampleSystem(); edges.db1 = treeTicks(cpu); edges.t1 = System.nanoTime(); edges.t1Ms = System.currentTimeMillis(); }
                }, Engine.Drained.class);
            } finally {
                monitor.stop();
            }
            if (edges.t1 == 0) { edges.sys = cpu.sampleSystem(); edges.db1 = treeTicks(cpu); edges.t1 = System.nanoTime(); edges.t1Ms = System.currentTimeMillis(); }
            // the drain's start and end come from the engines and the monitor here: one clock, this host's
            List<Engine.Drained> results = forked.stream().map(f -> f.result().onThisClock(f::localMs)).toList();
            return outcome(g, results, monitor, edges, busiestEngineHost(forked, edges));
        } finally {
            db.dropCell(schema);
        }
    }

    /** What engine {@code engine} of this cell does in {@code phase} (engine 0 generates). */
    private Engine.Spec spec(Engine.Phase phase, int engine, Engine.Db connection) {
        // the poll plays no part with the lock off; the engine still needs one value
        int poll = lockPollMs != null ? lockPollMs : options.lockPollMs().get(0);
        return new Engine.Spec(phase, name, engine, connection, type, jobs, options.jobMs(), threads, queueSize, acquire, lock.equals("on"),
                poll, options.indexFix(), options.warmup(), options.maxDrain(), profiled);
    }

    private long treeTicks(CpuSampler cpu) {
        long pid = db.pid();
        return pid < 0 ? -1 : cpu.treeTicks(pid);
    }

    /** The busiest engine host over the drain as (busy % of one of its cores, its cores), by share of its cores; (NaN, 0) with the engines here. */
    private static double[] busiestEngineHost(List<Forks.Forked<Engine.Drained>> forked, Edges edges) {
        double[] busiest = {Double.NaN, 0};
        for (Forks.Forked<Engine.Drained> f : forked) {
            if (f.placed() == null) continue;
            double pct = f.placed().hostBusyPercent(edges.t0Ms, edges.t1Ms);
            int cores = f.placed().hostCores();
            if (!Double.isNaN(pct) && (busiest[1] == 0 || pct / cores > busiest[0] / busiest[1])) busiest = new double[]{pct, cores};
        }
        return busiest;
    }

    private Outcome outcome(Engine.Generated g, List<Engine.Drained> results, Monitor monitor, Edges edges, double[] enginesHost) throws Exception {
        Engine.Verification v = monitor.verify();
        long committed = jobs - v.jobsLeft() - v.deadLetters();
        long start = results.stream().mapToLong(Engine.Drained::drainStartMs).min().orElse(-1);
        long end = monitor.drainedAtMs(committed);
        String endSource = "database";
        if (end < 0) { // the monitor never saw the end (e.g. the drain timed out): the engines' last commit instead
            end = results.stream().mapToLong(Engine.Drained::lastCommitMs).max().orElse(-1);
            endSource = "engines";
        }
        double drain = (end - start) / 1000.0;
        double rate = DrainRate.overall(committed, start, end);
        long events = sum(results, Engine.Drained::committed), failed = sum(results, Engine.Drained::failed),
                arrivals = sum(results, Engine.Drained::arrivals), bodies = sum(results, Engine.Drained::sleepRuns);
        List<String> reasons = new ArrayList<>();
        if (committed != jobs) reasons.add(committed + " of " + jobs + " jobs committed");
        if (events != jobs) reasons.add(events + " commit events for " + jobs + " jobs");
        if (failed > 0) reasons.add(failed + " job executions failed");
        if (arrivals != jobs) reasons.add("instances reached the wait state " + arrivals + " times for " + jobs + " jobs");
        if (type.equals("fixed") && bodies != jobs) reasons.add("fixed job bodies ran " + bodies + " times for " + jobs + " jobs");
        if (v.jobsLeft() > 0) reasons.add(v.jobsLeft() + " jobs left");
        if (v.deadLetters() > 0) reasons.add(v.deadLetters() + " dead letters");
        if (v.atWaitState() != jobs) reasons.add(v.atWaitState() + " of " + jobs + " instances at the wait state");
        double max = type.equals("fixed") ? options.theoreticalMax(instances, threads) : Double.NaN;
        double window = (edges.t1 - edges.t0) / 1e9;
        // a database on a host of its own: its CPU from that host, in % of one of its cores, and not in this host's system CPU
        double dbPct = db.placed != null ? db.placedCpuPercent(edges.t0Ms, edges.t1Ms) : CpuSampler.percent(edges.db0, edges.db1, window);
        double sysPct = edges.sys == null ? Double.NaN : edges.sys.busyPercent();
        double enginesPct = results.stream().mapToDouble(Engine.Drained::cpuPct).sum();
        double busy = results.stream().mapToDouble(Engine.Drained::threadsBusy).average().orElse(Double.NaN);
        double queued = results.stream().mapToDouble(Engine.Drained::queuedMean).average().orElse(Double.NaN);
        int cores = Runtime.getRuntime().availableProcessors();
        // a placed database or placed engines are not in this host's CPU: their own hosts' saturation is judged apart
        String bottleneck = DrainBottleneck.classify(new DrainBottleneck.Evidence(sysPct, cores, enginesElsewhere() ? Double.NaN : enginesPct,
                db.placed == null ? dbPct : Double.NaN, busy, monitor.lockWaitersMean(),
                db.placed == null ? Double.NaN : db.placed.hostBusyPercent(edges.t0Ms, edges.t1Ms), db.placed == null ? 0 : db.placed.hostCores(),
                enginesHost[0], (int) enginesHost[1]));
        Outcome o = new Outcome(this, g.generateSeconds(), drain, rate, monitor.steady(start, options.warmup()), max,
                committed, events, failed, arrivals, bodies, v, reasons, enginesPct, dbPct, sysPct, cores, busy, queued,
                monitor.activeMean(), monitor.lockWaitersMean(), bottleneck, sum(results, Engine.Drained::latencySamples), endSource, results);
        run.progress().say(String.format(Locale.ROOT, "%s: %,d jobs in %.1f s = %.0f jobs/s%s; CPU engines %.0f%%, database %.0f%%, system %.0f%%; bottleneck %s%s",
                name, committed, drain, rate,
                type.equals("fixed") ? String.format(Locale.ROOT, " (%.0f%% of the theoretical %.0f)", 100 * rate / max, max) : "",
                enginesPct, dbPct, sysPct, bottleneck, reasons.isEmpty() ? "" : "  INVALID: " + String.join("; ", reasons)));
        return o;
    }

    private static long sum(List<Engine.Drained> results, java.util.function.ToLongFunction<Engine.Drained> field) {
        return results.stream().mapToLong(field).sum();
    }

    /** CPU readings at the drain's start and end (set from the fork-reader thread). */
    static final class Edges {
        volatile long db0 = -1, db1 = -1, t0, t1, t0Ms, t1Ms;
        volatile CpuSampler.SystemUsage sys;
    }

    /** What one drain measured, checked. */
    record Outcome(Cell cell, double generateSeconds, double drainSeconds, double rate, double steady, double theoreticalMax,
                   long committed, long commitEvents, long failed, long arrivals, long bodyRuns, Engine.Verification verification,
                   List<String> reasons, double cpuEngines, double cpuDb, double cpuSystem, int cores, double threadsBusy, double queuedMean,
                   double dbActive, double dbLockWaiters, String bottleneck, long latencySamples, String endSource,
                   List<Engine.Drained> engines) {
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
                    .set("cpu_other_pct", cpuSystem - (c.enginesElsewhere() ? 0 : cpuEngines) - (Double.isNaN(cpuDb) || c.dbElsewhere() ? 0 : cpuDb)).set("cores", cores)
                    .set("threads_busy_pct", 100 * threadsBusy).set("queued_mean", queuedMean)
                    .set("db_active_mean", dbActive).set("db_lock_waiters_mean", dbLockWaiters).set("bottleneck", bottleneck)
                    .set("latency_samples", latencySamples).set("drain_end_source", endSource));
            if (engineTable != null)
                for (int i = 0; i < engines.size(); i++) {
                    Engine.Drained e = engines.get(i);
                    engineTable.write(Table.row().set("cell", c.name()).set("instance", i + 1).set("commit_events", e.committed())
                            .set("jobs_per_s", e.committed() / drainSeconds).set("cpu_pct", e.cpuPct())
                            .set("threads_busy_pct", 100 * e.threadsBusy()));
                }
        }
    }
}
