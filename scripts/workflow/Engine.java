package perfkit.workflow;

import org.flowable.common.engine.api.delegate.event.FlowableEngineEntityEvent;
import org.flowable.common.engine.api.delegate.event.FlowableEngineEventType;
import org.flowable.common.engine.api.delegate.event.FlowableEvent;
import org.flowable.common.engine.api.delegate.event.FlowableEventListener;
import org.flowable.common.engine.impl.history.HistoryLevel;
import org.flowable.engine.ManagementService;
import org.flowable.engine.ProcessEngine;
import org.flowable.engine.ProcessEngineConfiguration;
import org.flowable.engine.impl.cfg.ProcessEngineConfigurationImpl;
import org.flowable.job.service.impl.asyncexecutor.DefaultAsyncJobExecutor;
import org.flowable.job.service.impl.persistence.entity.JobInfoEntity;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.LatencyRecorder;
import perfkit.harness.Params;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Flowable engines for the two phases of a cell: generating the backlog (executor off) and draining it (executor on). */
final class Engine {
    static final List<String> JOB_TYPES = List.of("fixed", "timer", "noop");

    private Engine() {}

    /** start -> the job -> a wait state -> end. */
    static String bpmn(String type, long jobMs) {
        String job = switch (type) {
            case "fixed" -> "<serviceTask id=\"job\" flowable:async=\"true\" flowable:class=\"perfkit.workflow.SleepTask\">"
                    + "<extensionElements><flowable:field name=\"ms\" stringValue=\"" + jobMs + "\"/></extensionElements></serviceTask>";
            case "noop" -> "<serviceTask id=\"job\" flowable:async=\"true\" flowable:expression=\"${true}\"/>";
            case "timer" -> "<intermediateCatchEvent id=\"job\"><timerEventDefinition><timeDate>2000-01-01T00:00:00Z</timeDate>"
                    + "</timerEventDefinition></intermediateCatchEvent>";
            default -> throw new IllegalArgumentException(type);
        };
        return "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" xmlns:flowable=\"http://flowable.org/bpmn\" targetNamespace=\"perfkit\">"
                + "<process id=\"" + type + "\" isExecutable=\"true\"><startEvent id=\"start\"/>"
                + "<sequenceFlow id=\"f1\" sourceRef=\"start\" targetRef=\"job\"/>" + job
                + "<sequenceFlow id=\"f2\" sourceRef=\"job\" targetRef=\"wait\"/><receiveTask id=\"wait\"><extensionElements>"
                + "<flowable:executionListener event=\"start\" class=\"perfkit.workflow.Arrivals\"/></extensionElements></receiveTask>"
                + "<sequenceFlow id=\"f3\" sourceRef=\"wait\" targetRef=\"end\"/><endEvent id=\"end\"/></process></definitions>";
    }

    static ProcessEngineConfigurationImpl config(Fork f, boolean executor) {
        var c = (ProcessEngineConfigurationImpl) ProcessEngineConfiguration.createStandaloneProcessEngineConfiguration();
        c.setJdbcUrl(f.param("db-url"));
        c.setJdbcDriver(f.param("db-url").startsWith("jdbc:h2:") ? "org.h2.Driver" : "org.postgresql.Driver");
        c.setJdbcUsername(f.param("db-user"));
        c.setJdbcPassword(f.param("db-password"));
        if (!f.param("db-schema").isEmpty()) c.setDatabaseSchema(f.param("db-schema"));
        c.setDatabaseSchemaUpdate(executor ? ProcessEngineConfiguration.DB_SCHEMA_UPDATE_FALSE : ProcessEngineConfiguration.DB_SCHEMA_UPDATE_TRUE);
        c.setHistoryLevel(HistoryLevel.NONE);
        Params p = f.params();
        int threads = p.intValue("threads");
        c.setJdbcMaxActiveConnections(threads + 10);
        c.setAsyncExecutorActivate(false); // started by hand once the engine is built, so the drain's clock starts with it
        c.setAsyncExecutorCorePoolSize(threads);
        c.setAsyncExecutorMaxPoolSize(threads);
        c.setAsyncExecutorThreadPoolQueueSize(p.intValue("queue-size"));
        int acquire = p.intValue("acquire-size");
        var ex = c.getAsyncExecutorConfiguration();
        ex.setMaxAsyncJobsDuePerAcquisition(acquire);
        ex.setMaxTimerJobsPerAcquisition(acquire);
        // Flowable's defaults wait 10 s after an empty acquisition and 5 s when the queue is full: a crawl.
        ex.setDefaultAsyncJobAcquireWaitTime(Duration.ofMillis(100));
        ex.setDefaultTimerJobAcquireWaitTime(Duration.ofMillis(100));
        ex.setDefaultQueueSizeFullWaitTime(Duration.ofMillis(100));
        ex.setGlobalAcquireLockEnabled(f.param("lock").equals("on"));
        // how soon an engine that found the global lock taken tries again (the original: a shorter wait adds a few hundred jobs/s)
        Duration lockPoll = Duration.ofMillis(p.integer("lock-poll-ms"));
        ex.setAsyncJobsGlobalLockPollRate(lockPoll);
        ex.setTimerLockPollRate(lockPoll);
        return c;
    }

    /** Phase 1: schema, deployment, the index fix, then N process instances each leaving one job. */
    static void generate(Fork f) throws Exception {
        String type = f.param("job-type");
        long jobs = f.integer("jobs");
        ProcessEngine engine = config(f, false).buildProcessEngine();
        try {
            engine.getRepositoryService().createDeployment().addString(type + ".bpmn20.xml", bpmn(type, f.integer("job-ms"))).deploy();
            f.result().put("indexFix", fixIndex(f));
            f.phase("generate", jobs / 500.0);
            long t0 = System.nanoTime();
            AtomicLong started = new AtomicLong();
            int writers = 4;
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long share = jobs / writers + (w < jobs % writers ? 1 : 0);
                Thread t = new Thread(() -> {
                    for (long i = 0; i < share; i++) {
                        engine.getRuntimeService().startProcessInstanceByKey(type);
                        started.incrementAndGet();
                    }
                });
                t.start();
                threads.add(t);
            }
            while (threads.stream().anyMatch(Thread::isAlive)) f.await(1, started::get);
            f.result().put("generated", started.get());
            f.result().put("generateSeconds", (System.nanoTime() - t0) / 1e9);
        } finally {
            engine.close();
        }
    }

    /**
     * The planner picks ACT_IDX_RU_ACTI_END for the activity-instance lookup and every job becomes O(n)
     * (measured on 10k jobs: 212 instead of about 600 jobs/s; --index-fix off shows it). On PostgreSQL only dropping the index helps; H2 runs
     * with ANALYZE_AUTO=0 instead.
     */
    static String fixIndex(Fork f) throws Exception {
        if (f.param("db-url").startsWith("jdbc:h2:")) return "H2 with ANALYZE_AUTO=0 in the URL, so the planner keeps the good plan";
        if (f.param("index-fix").equals("off")) return "none (--index-fix off): ACT_IDX_RU_ACTI_END kept, expect O(n) jobs";
        try (Connection c = DriverManager.getConnection(f.param("db-url"), f.param("db-user"), f.param("db-password"));
             Statement s = c.createStatement()) {
            s.execute("DROP INDEX IF EXISTS " + f.param("db-schema") + ".act_idx_ru_acti_end");
        }
        return "dropped ACT_IDX_RU_ACTI_END on PostgreSQL, so activity-instance lookups do not scan";
    }

    /**
     * Phase 2: one engine with its async executor on, until the database holds no job. Each job's latency sample runs
     * from its acquisition by this engine (intended) or its pick-up by a thread (actual) to its commit. Warm-up is cut
     * by commit time: jobs committed in the first {@code --warmup} seconds are not recorded. (A backlog is not an
     * open-model load: with the lock off the executor may acquire its whole queue in the first second, so a cut by
     * acquisition time would leave nothing to measure.) The log's window opens at the drain start.
     */
    static void execute(Fork f) throws Exception {
        Params p = f.params();
        ProcessEngineConfigurationImpl config = config(f, true);
        ProcessEngine engine = config.buildProcessEngine();
        DefaultAsyncJobExecutor executor = (DefaultAsyncJobExecutor) config.getAsyncExecutor();
        if (executor.getTaskExecutor() == null) throw new IllegalStateException("Flowable built no task executor for the async executor");
        MeteredTaskExecutor pool = new MeteredTaskExecutor(executor.getTaskExecutor());
        executor.setTaskExecutor(pool);
        int engineNo = p.intValue("jvm-index"), threads = p.intValue("threads");
        String cell = p.text("cell");
        LatencyLog latency = f.latencyLog(cell, cell, engineNo, "workflow " + cell + ", engine " + engineNo
                + ": job acquired by the engine (corrected) or picked up by a thread (uncorrected) -> committed");
        LatencyRecorder recorder = latency.newRecorder(); // listeners run on executor threads: guard the single writer
        long lockMs = config.getAsyncExecutorConfiguration().getAsyncJobLockTime().toMillis();
        AtomicLong committed = new AtomicLong(), failed = new AtomicLong(), lastCommitMs = new AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean warmedUp = new java.util.concurrent.atomic.AtomicBoolean();
        // fired after the job's transaction commits, so these counts and latencies are of committed completions
        engine.getRuntimeService().addEventListener(new Listener("COMMITTED", e -> {
            long nowNs = System.nanoTime(), nowMs = System.currentTimeMillis();
            Long picked = MeteredTaskExecutor.STARTED_NS.get();
            long startNs = picked == null ? nowNs : picked, intendedNs = startNs;
            if (((FlowableEngineEntityEvent) e).getEntity() instanceof JobInfoEntity j && j.getLockExpirationTime() != null) {
                long agoMs = nowMs - (j.getLockExpirationTime().getTime() - lockMs); // Flowable locks a job for lockMs when it acquires it
                if (agoMs >= 0 && agoMs * 1_000_000L >= nowNs - startNs) intendedNs = nowNs - agoMs * 1_000_000L;
            }
            if (warmedUp.get()) synchronized (recorder) { recorder.record(intendedNs, startNs, nowNs); }
            committed.incrementAndGet();
            lastCommitMs.set(nowMs);
        }), FlowableEngineEventType.JOB_EXECUTION_SUCCESS);
        engine.getRuntimeService().addEventListener(new Listener(null, e -> failed.incrementAndGet()), FlowableEngineEventType.JOB_EXECUTION_FAILURE);

        double maxDrain = p.seconds("max-drain"), warmup = p.seconds("warmup");
        f.phase("execute", maxDrain);
        long drainStartMs = System.currentTimeMillis(), t0 = System.nanoTime(), cpu0 = processCpuNs();
        latency.startMeasuring(); // every job acquired from the drain start on; warm-up is cut by commit time (warmedUp)
        executor.start();
        long tDone;
        double queuedSum = 0;
        int queuedSamples = 0;

        try {
            ManagementService m = engine.getManagementService();
            long deadline = t0 + (long) (maxDrain * 1e9);
            while (m.createJobQuery().count() + m.createTimerJobQuery().count() > 0 && System.nanoTime() < deadline) {
                if (!warmedUp.get() && System.nanoTime() - t0 >= warmup * 1e9) warmedUp.set(true);
                queuedSum += pool.queued();
                queuedSamples++;
                f.await(0.25, committed::get);
            }
            tDone = System.nanoTime();
            f.result().put("cpuPct", 100.0 * (processCpuNs() - cpu0) / (tDone - t0));
            f.result().put("threadsBusy", pool.busyNanos() / ((double) threads * (tDone - t0)));
            f.phase("done", 0);
        } finally {
            engine.close();
            latency.close();
        }
        f.result().put("committed", committed.get());
        f.result().put("failed", failed.get());
        f.result().put("arrivals", Arrivals.COUNT.get());
        f.result().put("sleepRuns", SleepTask.RUNS.get());
        f.result().put("drainStartMs", drainStartMs);
        f.result().put("drainSeconds", (tDone - t0) / 1e9);
        f.result().put("lastCommitMs", lastCommitMs.get());
        f.result().put("queuedMean", queuedSamples == 0 ? 0 : queuedSum / queuedSamples);
        f.result().put("latencySamples", latency.measuredCount());
    }

    /** An event listener; {@code onTransaction} "COMMITTED" defers it until the job's transaction has committed. */
    private record Listener(String onTransaction, java.util.function.Consumer<FlowableEvent> body) implements FlowableEventListener {
        public void onEvent(FlowableEvent event) { body.accept(event); }
        public boolean isFailOnException() { return false; }
        public boolean isFireOnTransactionLifecycleEvent() { return onTransaction != null; }
        public String getOnTransaction() { return onTransaction; }
    }

    static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** What the database holds after a drain. */
    record Verification(long jobsLeft, long deadLetters, long atWaitState) {}

    /** After the drain: jobs left, dead letters, and instances resting at the wait state. */
    static Verification verify(String url, String user, String password, String schema) throws Exception {
        String p = schema.isEmpty() ? "" : schema + ".";
        try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement()) {
            return new Verification(
                    count(s, "select count(*) from " + p + "act_ru_job") + count(s, "select count(*) from " + p + "act_ru_timer_job"),
                    count(s, "select count(*) from " + p + "act_ru_deadletter_job"),
                    count(s, "select count(*) from " + p + "act_ru_execution where act_id_ = 'wait'"));
        }
    }

    static long count(Statement s, String sql) throws Exception {
        try (ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }
}
