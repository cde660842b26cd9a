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
import org.flowable.job.api.Job;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.LatencyRecorder;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
                + "<sequenceFlow id=\"f2\" sourceRef=\"job\" targetRef=\"wait\"/><receiveTask id=\"wait\"/>"
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
        int threads = Integer.parseInt(f.param("threads"));
        c.setJdbcMaxActiveConnections(threads + 10);
        c.setAsyncExecutorActivate(false); // started by hand once the engine is built, so the drain's clock starts with it
        c.setAsyncExecutorCorePoolSize(threads);
        c.setAsyncExecutorMaxPoolSize(threads);
        c.setAsyncExecutorThreadPoolQueueSize(Integer.parseInt(f.param("queue-size")));
        int acquire = Integer.parseInt(f.param("acquire-size"));
        c.setAsyncExecutorMaxAsyncJobsDuePerAcquisition(acquire);
        c.setAsyncExecutorMaxTimerJobsPerAcquisition(acquire);
        // The 8.x defaults wait 10 s after an empty acquisition and 5 s when the queue is full: a crawl.
        c.setAsyncExecutorDefaultAsyncJobAcquireWaitTime(100);
        c.setAsyncExecutorDefaultTimerJobAcquireWaitTime(100);
        c.setAsyncExecutorDefaultQueueSizeFullWaitTime(100);
        c.getAsyncExecutorConfiguration().setGlobalAcquireLockEnabled(f.param("lock").equals("on"));
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
     * (FACTS: 212 instead of ~600 jobs/s on 10k jobs). On PostgreSQL only dropping the index helps; H2 runs
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

    /** Phase 2: one engine with its async executor on, until the database holds no job. */
    static void execute(Fork f) throws Exception {
        ProcessEngineConfigurationImpl config = config(f, true);
        ProcessEngine engine = config.buildProcessEngine();
        long drainStartMs = System.currentTimeMillis();
        AtomicLong succeeded = new AtomicLong(), failed = new AtomicLong(), lastDoneMs = new AtomicLong();
        LatencyLog latency = f.latencyLog("latency/" + f.param("cell") + ".fork" + f.param("jvm-index"),
                "workflow " + f.param("cell") + ", engine " + f.param("jvm-index") + ": job due (the drain's start for a backlog) -> completed; "
                        + "both files hold the same values, a backlog has no separate service time");
        LatencyRecorder recorder = latency.newRecorder(); // the listener runs on executor threads: guard the single writer
        long drainStartNs = System.nanoTime();
        engine.getRuntimeService().addEventListener(new FlowableEventListener() {
            public void onEvent(FlowableEvent event) {
                if (event.getType() == FlowableEngineEventType.JOB_EXECUTION_SUCCESS) {
                    Job job = (Job) ((FlowableEngineEntityEvent) event).getEntity();
                    long due = job.getDuedate() == null ? job.getCreateTime().getTime() : job.getDuedate().getTime();
                    long waitedMs = System.currentTimeMillis() - Math.max(due, drainStartMs);
                    long now = System.nanoTime();
                    synchronized (recorder) { recorder.record(now - waitedMs * 1_000_000L, now - waitedMs * 1_000_000L, now); }
                    succeeded.incrementAndGet();
                    lastDoneMs.set(System.currentTimeMillis());
                } else if (event.getType() == FlowableEngineEventType.JOB_EXECUTION_FAILURE) {
                    failed.incrementAndGet();
                }
            }
            public boolean isFailOnException() { return false; }
            public boolean isFireOnTransactionLifecycleEvent() { return false; }
            public String getOnTransaction() { return null; }
        });
        long cpu0 = processCpuNs();
        f.phase("execute", Double.parseDouble(f.param("max-drain")));
        latency.startMeasuring();
        config.getAsyncExecutor().start();
        try {
            ManagementService m = engine.getManagementService();
            long deadline = System.nanoTime() + (long) (Double.parseDouble(f.param("max-drain")) * 1e9);
            while (m.createJobQuery().count() + m.createTimerJobQuery().count() > 0 && System.nanoTime() < deadline)
                f.await(0.25, succeeded::get);
            f.phase("done", 0);
        } finally {
            engine.close();
            latency.close();
        }
        double seconds = (System.nanoTime() - drainStartNs) / 1e9;
        Map.of("succeeded", succeeded.get(), "failed", failed.get(), "sleepRuns", SleepTask.RUNS.get())
                .forEach((k, v) -> f.result().put(k, v));
        f.result().put("drainStartMs", drainStartMs);
        f.result().put("lastDoneMs", lastDoneMs.get());
        f.result().put("cpuPct", 100.0 * (processCpuNs() - cpu0) / 1e9 / seconds);
    }

    static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** After the drain: jobs left, dead letters, and instances resting at the wait state. */
    static long[] verify(String url, String user, String password, String schema) throws Exception {
        String p = schema.isEmpty() ? "" : schema + ".";
        try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement()) {
            long jobs = count(s, "select count(*) from " + p + "act_ru_job") + count(s, "select count(*) from " + p + "act_ru_timer_job");
            long dead = count(s, "select count(*) from " + p + "act_ru_deadletter_job");
            long waiting = count(s, "select count(*) from " + p + "act_ru_execution where act_id_ = 'wait'");
            return new long[]{jobs, dead, waiting};
        }
    }

    static long count(Statement s, String sql) throws Exception {
        try (ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }
}
