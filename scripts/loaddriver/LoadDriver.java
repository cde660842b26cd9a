///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS io.hyperfoil:hyperfoil-http:0.25.2
// slf4j-api 2 arrives with no provider beside Log4j's 1.x binding and would print a warning with local jar paths
//DEPS org.slf4j:slf4j-nop:2.0.20
// the harness's /proc reader, so the driver's CPU figures follow the run's rules (busy without steal, process trees)
//SOURCES ../harness/src/perfkit/harness/measure/CpuSampler.java
//JAVA_OPTIONS -Xmx512m -XX:+UseParallelGC -XX:NewRatio=1 -XX:+ExitOnOutOfMemoryError -Dlog4j2.level=WARN -Dorg.apache.logging.log4j.level=WARN
//DESCRIPTION The kit's HTTP load driver: runs one Hyperfoil benchmark YAML in-process and writes HdrHistogram interval logs and a JSON result per phase
package perfkit.loaddriver;

import io.hyperfoil.api.config.BaseSequenceBuilder;
import io.hyperfoil.api.config.Benchmark;
import io.hyperfoil.api.config.BenchmarkBuilder;
import io.hyperfoil.api.config.Model;
import io.hyperfoil.api.config.Phase;
import io.hyperfoil.api.config.PhaseBuilder;
import io.hyperfoil.api.config.Step;
import io.hyperfoil.api.config.StepBuilder;
import io.hyperfoil.api.session.Session;
import io.hyperfoil.api.session.PhaseInstance;
import io.hyperfoil.api.statistics.StatisticsSnapshot;
import io.hyperfoil.core.impl.LocalBenchmarkData;
import io.hyperfoil.core.impl.LocalSimulationRunner;
import io.hyperfoil.core.parser.BenchmarkParser;
import io.hyperfoil.http.statistics.HttpStats;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.HdrHistogram.Recorder;
import perfkit.harness.measure.CpuSampler;

import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The kit's HTTP load driver, in a JVM of its own because Hyperfoil 0.25.2 brings Vert.x 4.3 and Netty 4.1, older
 * than what the systems under test use. It runs one benchmark YAML the way Hyperfoil's Maven plugin does
 * ({@code BenchmarkParser} then {@code LocalSimulationRunner}), so the YAML kept in the run directory replays in
 * plain Hyperfoil.
 * <p>
 * Hyperfoil times a request from when it is prepared, so a wait for a connection is inside its histogram, but a
 * session that its open-model scheduler starts late (a millisecond timer with a catch-up loop, then the event loop's
 * queue) is not. So the driver times open-model phases itself, with two steps it adds to the parsed benchmark around
 * the scenario (the YAML on disk stays plain Hyperfoil): the arrivals run on a fixed schedule ({@code variance: false},
 * arrival k at {@code k / rate} after the phase's start, as wrk2 does), the first step records each session's lateness
 * (actual start minus scheduled start) and the last records the response's end from the scheduled start.
 * <p>
 * Per phase it writes:
 * <ul>
 * <li>{@code <hlog-dir>/<phase>.corrected.hlog}: response time from the <b>scheduled</b> start (ns), open-model phases;
 *     for a closed-model phase, which has no schedule, Hyperfoil's own histogram;</li>
 * <li>{@code <phase>.uncorrected.hlog}: Hyperfoil's response time, from when the request was prepared (ns);</li>
 * <li>{@code <phase>.lateness.hlog}: open-model phases, the driver's own lateness per session (ns);</li>
 * <li>an entry in the result JSON: its wall-clock edges, request, response and error counts (errors include non-2xx/3xx
 *     answers), HTTP status classes,
 *     {@code blockedTime}, whether the session limit was hit, CPU% of the watched processes and of the machine
 *     (with steal) between the phase's edges, and the JSON the probe URLs answered at its end.</li>
 * </ul>
 * Usage: {@code LoadDriver --benchmark B.yaml --hlog-dir DIR --result R.json [--watch name=pid,...] [--probe name=url,...]
 * [--start-on-go true]}. With {@code --start-on-go true} (one of several drivers sharing a load) it prints
 * {@code perfkit-ready} once its connections are open and begins at the epoch ms that a {@code go <ms>} line on stdin names.
 * At each phase's start and end it prints {@code perfkit-phase warmup|measure|ended <phase>} on stdout, which the
 * study follows to label its time series (HttpLoad).
 * The result is written (atomically) only at the end; a failure writes {@code {"error": "..."}} instead. Its fields
 * are declared in {@code data/schema/load-result.schema.json}: a field added, renamed or retyped here is declared
 * there too (the tests validate every result against it).
 */
public class LoadDriver {
    private static final CpuSampler CPU = CpuSampler.forThisMachine();

    /** What one phase did. */
    static final class PhaseRecord {
        final String name;
        boolean warmup;
        long startMs, endMs;
        long[] startTicks, endTicks;
        CpuSampler.SystemTimes startSys, endSys;
        boolean sessionLimitExceeded;
        String error;
        final StatisticsSnapshot stats = new StatisticsSnapshot();
        /** Open-model phases: the driver's own histograms, taken when the phase terminates. */
        Histogram corrected, lateness;
        final Map<String, String> probes = new LinkedHashMap<>();

        PhaseRecord(String name) { this.name = name; }
    }

    /**
     * The schedule and clocks of one open-model phase. Arrival k (from 0) is due {@code k * intervalNs} after the phase's
     * start, on the {@link System#nanoTime} scale: {@code anchorNs} is the instant Hyperfoil's scheduler counts from
     * (its {@code absoluteStartTime}, a wall-clock millisecond), mapped onto nanoTime when the phase starts.
     */
    static final class Timing {
        final double intervalNs;
        volatile long anchorNs = Long.MIN_VALUE;
        long anchoredAtNs;
        final AtomicLong started = new AtomicLong();
        final Recorder lateness = new Recorder(3), corrected = new Recorder(3);
        /** Sessions started per second of the phase, by actual start. */
        final AtomicLongArray perSecond;
        final Map<Integer, Long> scheduled = new ConcurrentHashMap<>();
        /** How long arrivals are scheduled for: the phase ends later, once its last response is in. */
        final long durationMs;

        Timing(double usersPerSec, long durationMs) {
            this.intervalNs = 1e9 / usersPerSec;
            this.durationMs = durationMs;
            this.perSecond = new AtomicLongArray((int) Math.max(1, durationMs / 1000 + 4));
        }

        /** At the phase's start (Hyperfoil has just read the wall clock): where its start millisecond lies on nanoTime. */
        void anchor(long absoluteStartMs) {
            long nano = System.nanoTime();
            java.time.Instant now = java.time.Instant.now();
            long wallNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
            anchoredAtNs = nano;
            anchorNs = nano - (wallNs - absoluteStartMs * 1_000_000L);
        }
    }

    static final Map<String, Timing> TIMINGS = new ConcurrentHashMap<>();

    /** First step of an open-model session: which arrival it is, when it was due, how late it started. */
    static final class MarkStart implements Step {
        @Override
        public boolean invoke(Session session) {
            long now = System.nanoTime();
            Timing t = TIMINGS.get(session.phase().definition().name());
            if (t == null || t.anchorNs == Long.MIN_VALUE) return true;
            long k = t.started.getAndIncrement();
            long due = t.anchorNs + Math.round(k * t.intervalNs);
            t.lateness.recordValue(Math.max(0, now - due));
            t.scheduled.put(session.uniqueId(), due);
            int second = (int) ((now - t.anchoredAtNs) / 1_000_000_000L);
            if (second >= 0 && second < t.perSecond.length()) t.perSecond.incrementAndGet(second);
            return true;
        }
    }

    /** Last step: the response is in (the request is sync); its time from the scheduled start. */
    static final class MarkEnd implements Step {
        @Override
        public boolean invoke(Session session) {
            long now = System.nanoTime();
            Timing t = TIMINGS.get(session.phase().definition().name());
            Long due = t == null ? null : t.scheduled.remove(session.uniqueId());
            if (due != null) t.corrected.recordValue(Math.max(0, now - due));
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) usage("unexpected argument " + args[i]);
            opts.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0 || !opts.containsKey("benchmark") || !opts.containsKey("hlog-dir") || !opts.containsKey("result"))
            usage("--benchmark, --hlog-dir and --result are required");
        Path yaml = Path.of(opts.get("benchmark")), hlogDir = Path.of(opts.get("hlog-dir")), result = Path.of(opts.get("result"));
        watchParent();
        try {
            Map<String, Long> watch = new LinkedHashMap<>();
            for (String w : split(opts.getOrDefault("watch", ""))) {
                String[] kv = w.split("=", 2);
                watch.put(kv[0], kv[1].equals("self") ? ProcessHandle.current().pid() : Long.parseLong(kv[1]));
            }
            Map<String, String> probes = new LinkedHashMap<>();
            for (String p : split(opts.getOrDefault("probe", ""))) {
                String[] kv = p.split("=", 2);
                probes.put(kv[0], kv[1]);
            }
            String json = new LoadDriver(yaml, hlogDir, watch, probes, Boolean.parseBoolean(opts.getOrDefault("start-on-go", "false"))).run();
            writeAtomically(result, json);
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            String msg = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            writeAtomically(result, "{\"error\":" + str(msg.replaceAll("\\s+", " ")) + "}");
            System.exit(1);
        }
    }

    /**
     * The driver must not outlive whoever started it: it exits when its stdin reaches EOF (the run's watchdog holds
     * the other end) or its parent process is gone. Run by hand from a terminal, stdin stays open and nothing happens.
     */
    private static void watchParent() {
        ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        daemon("loaddriver-stdin", () -> {
            try {
                var in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
                // nothing is sent but a start time (--start-on-go); EOF is the signal
                for (String line = in.readLine(); line != null; line = in.readLine())
                    if (line.startsWith(GO)) START_AT.complete(Long.parseLong(line.substring(GO.length()).strip()));
            } catch (java.io.IOException | NumberFormatException ignored) {
                // same as EOF
            }
            gone("its stdin closed");
        });
        if (parent != null) daemon("loaddriver-parent", () -> {
            while (parent.isAlive()) {
                try { Thread.sleep(200); } catch (InterruptedException e) { return; }
            }
            gone("its parent " + parent.pid() + " is gone");
        });
    }

    /** The line on stdin that says when a driver started with {@code --start-on-go true} begins: {@code go <epoch ms>}. */
    static final String GO = "go ";
    private static final CompletableFuture<Long> START_AT = new CompletableFuture<>();

    /**
     * One of several drivers sharing a load: says it is ready once its connections are open (its JVM started, Hyperfoil
     * loaded, every session set up), then waits for the time they all begin at, on this host's clock, so their phases
     * run side by side. It waits as long as the run does: the run's end closes stdin, which ends the driver. A time
     * already past starts it at once; the run judges how far apart the hosts' phases ran.
     */
    private static void awaitGo() throws Exception {
        System.out.println(READY);
        System.out.flush();
        long wait = START_AT.get() - System.currentTimeMillis();
        if (wait > 0) Thread.sleep(wait);
    }

    static final String READY = "perfkit-ready";

    private static synchronized void gone(String why) {
        daemon("loaddriver-halt", () -> {
            try { Thread.sleep(3000); } catch (InterruptedException ignored) { }
            Runtime.getRuntime().halt(143);
        });
        System.err.println("LoadDriver: stopping: " + why);
        System.exit(143);
    }

    private static void daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }

    private static void usage(String why) {
        System.err.println("LoadDriver: " + why + "\nusage: LoadDriver --benchmark B.yaml --hlog-dir DIR --result R.json [--watch name=pid,...] [--probe name=url,...] [--start-on-go true]");
        System.exit(2);
    }

    private final Path yaml, hlogDir;
    private final boolean startOnGo;
    private final Map<String, Long> watch;
    private final Map<String, String> probes;
    private final Map<String, PhaseRecord> phases = new LinkedHashMap<>();
    /** The driver's event loops (the benchmark's {@code threads}). */
    private int threads;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    LoadDriver(Path yaml, Path hlogDir, Map<String, Long> watch, Map<String, String> probes, boolean startOnGo) {
        this.startOnGo = startOnGo;
        this.yaml = yaml;
        this.hlogDir = hlogDir;
        this.watch = watch;
        this.probes = probes;
    }

    String run() throws Exception {
        BenchmarkBuilder builder;
        try (InputStream in = Files.newInputStream(yaml)) {
            builder = BenchmarkParser.instance().builder(in, new LocalBenchmarkData(yaml), Map.of());
        }
        for (PhaseBuilder<?> pb : BenchmarkBuilder.phasesForTesting(builder)) if (pb instanceof PhaseBuilder.ConstantRate) timeSessions(pb);
        Benchmark benchmark = builder.build();
        for (Phase p : benchmark.phases()) {
            phases.computeIfAbsent(p.name(), PhaseRecord::new).warmup = p.isWarmup;
            if (p.model instanceof Model.ConstantRate m) {
                if (m.variance) throw new IllegalArgumentException("phase " + p.name() + ": the driver times open-model phases on a fixed schedule (variance: false)");
                TIMINGS.put(p.name(), new Timing(m.usersPerSec, p.duration()));
            }
        }
        threads = benchmark.defaultThreads();
        LocalSimulationRunner runner = new LocalSimulationRunner(benchmark, (phase, stepId, metric, snapshot, countDown) -> {
            PhaseRecord r = record(phase.name());
            synchronized (r) {
                r.stats.add(snapshot);
            }
        }, null, null) {
            @Override
            public void openConnections(io.vertx.core.Handler<io.vertx.core.AsyncResult<Void>> handler) {
                if (!startOnGo) {
                    super.openConnections(handler);
                    return;
                }
                // the go is awaited once the connections are open, so that no host's connection set-up delays its start;
                // off the event loop, which must not block
                super.openConnections(opened -> daemon("loaddriver-go", () -> {
                    try {
                        awaitGo();
                    } catch (Exception e) { // Hyperfoil would start anyway (its handler only counts down): no load without a go
                        System.err.println("LoadDriver: no start time: " + e);
                        System.exit(1);
                    }
                    handler.handle(opened);
                }));
            }

            @Override
            protected CompletableFuture<Void> phaseChanged(Phase phase, PhaseInstance.Status status, boolean sessionLimitExceeded, Throwable error) {
                PhaseInstance instance = instances.get(phase.name());
                edge(phase, status, sessionLimitExceeded, error, instance == null ? System.currentTimeMillis() : instance.absoluteStartTime());
                return super.phaseChanged(phase, status, sessionLimitExceeded, error);
            }
        };
        runner.run();
        Files.createDirectories(hlogDir);
        StringBuilder out = new StringBuilder("{\"benchmark\":").append(str(benchmark.name())).append(",\"threads\":").append(threads)
                .append(",\"phases\":[");
        boolean first = true;
        for (PhaseRecord r : phases.values()) {
            if (!r.warmup) writeHlogs(r);
            out.append(first ? "" : ",").append(json(r));
            first = false;
        }
        return out.append("]}").toString();
    }

    /** Wraps every initial sequence of an open-model phase in {@link MarkStart} ... {@link MarkEnd}. */
    @SuppressWarnings("unchecked")
    private static void timeSessions(PhaseBuilder<?> phase) throws ReflectiveOperationException {
        java.lang.reflect.Field stepsField = BaseSequenceBuilder.class.getDeclaredField("steps");
        stepsField.setAccessible(true); // Hyperfoil has no public way to insert a step before the first
        java.lang.reflect.Field forks = PhaseBuilder.class.getDeclaredField("forks"), scenario = io.hyperfoil.api.config.PhaseForkBuilder.class.getDeclaredField("scenario"),
                initial = io.hyperfoil.api.config.ScenarioBuilder.class.getDeclaredField("initialSequences");
        forks.setAccessible(true);
        scenario.setAccessible(true);
        initial.setAccessible(true);
        for (Object fork : (List<Object>) forks.get(phase))
        for (Object seq : (List<Object>) initial.get(scenario.get(fork))) {
            List<StepBuilder<?>> steps = (List<StepBuilder<?>>) stepsField.get(seq);
            steps.add(0, new BaseSequenceBuilder.SimpleAdapter(MarkStart::new));
            steps.add(new BaseSequenceBuilder.SimpleAdapter(MarkEnd::new));
        }
    }

    private PhaseRecord record(String name) {
        synchronized (phases) {
            return phases.computeIfAbsent(name, PhaseRecord::new);
        }
    }

    /**
     * A phase started or ended: sample CPU and ask the probes now, before Hyperfoil hears of the change, so the next
     * phase cannot start before this one's numbers are taken. Probes answer stats since their previous call: the call
     * at a phase's start discards what came before, the call at its end is the phase's.
     */
    private void edge(Phase phase, PhaseInstance.Status status, boolean sessionLimitExceeded, Throwable error, long absoluteStartMs) {
        PhaseRecord r = record(phase.name());
        synchronized (r) {
            if (sessionLimitExceeded) r.sessionLimitExceeded = true;
            if (error != null && r.error == null) r.error = String.valueOf(error.getMessage() == null ? error : error.getMessage());
            if (status == PhaseInstance.Status.RUNNING && r.startMs == 0) {
                edgeLine(r.warmup ? "warmup" : "measure", phase.name());
                Timing t = TIMINGS.get(phase.name());
                if (t != null) t.anchor(absoluteStartMs);
                // the scheduler starts counting now: a probe here must not hold the phase's first arrivals back
                CompletableFuture.runAsync(() -> probe(r, false));
                r.startMs = System.currentTimeMillis();
                r.startTicks = ticks();
                r.startSys = CPU.systemTimes();
            } else if (status == PhaseInstance.Status.TERMINATED && r.endMs == 0) {
                edgeLine("ended", phase.name());
                r.endMs = System.currentTimeMillis();
                Timing t = TIMINGS.get(phase.name());
                if (t != null) { // every session has ended: nothing records into these any more
                    r.corrected = t.corrected.getIntervalHistogram();
                    r.lateness = t.lateness.getIntervalHistogram();
                }
                r.endTicks = ticks();
                r.endSys = CPU.systemTimes();
                if (!r.warmup) probe(r, true);
            }
        }
    }

    /** The line the study follows to label its time series by phase (HttpLoad.PHASE_EDGE), at once, not when a buffer fills. */
    private static void edgeLine(String what, String phase) {
        System.out.println("perfkit-phase " + what + " " + phase);
        System.out.flush();
    }

    private void probe(PhaseRecord r, boolean keep) {
        probes.forEach((name, url) -> {
            try {
                HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (keep) r.probes.put(name, resp.body().trim());
            } catch (Exception e) {
                if (keep) r.probes.put(name, "{\"error\":" + str(String.valueOf(e)) + "}");
            }
        });
    }

    private long[] ticks() {
        long[] t = new long[watch.size()];
        int i = 0;
        for (long pid : watch.values()) t[i++] = CPU.treeTicks(pid);
        return t;
    }

    private void writeHlogs(PhaseRecord r) throws Exception {
        Timing t = TIMINGS.get(r.name);
        Histogram hyperfoil = r.stats.histogram.copy();
        if (t == null) { // closed model: no schedule, so from the scheduled start and from the actual one are the same
            String what = "response time of closed-model phase " + r.name + " as Hyperfoil measures it, from when the request was prepared "
                    + "(a closed model has no schedule: the same samples in the corrected and uncorrected files)";
            writeHlog(r, "corrected", hyperfoil, what);
            writeHlog(r, "uncorrected", hyperfoil, what);
            return;
        }
        writeHlog(r, "corrected", r.corrected, "response time of open-model phase " + r.name
                + " from each arrival's scheduled start (fixed schedule: arrival k due k / rate after the phase's start), measured by the driver");
        writeHlog(r, "uncorrected", hyperfoil, "response time of open-model phase " + r.name + " as Hyperfoil measures it, from when the request "
                + "was prepared: a late session start is not in it, a wait for a connection is");
        writeHlog(r, "lateness", r.lateness, "the load driver's own lateness in open-model phase " + r.name
                + ": each session's actual start minus its scheduled start");
    }

    private void writeHlog(PhaseRecord r, String kind, Histogram h, String what) throws Exception {
        h.setStartTimeStamp(r.startMs);
        h.setEndTimeStamp(Math.max(r.endMs, r.startMs));
        try (PrintStream out = new PrintStream(hlogDir.resolve(r.name + "." + kind + ".hlog").toFile())) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputLogFormatVersion();
            w.outputComment(what);
            w.outputComment("values in nanoseconds; one interval spanning the phase; warm-up phases are not written");
            w.outputStartTime(r.startMs);
            w.setBaseTime(r.startMs);
            w.outputBaseTime(r.startMs);
            w.outputLegend();
            w.outputIntervalHistogram(h);
        }
    }

    /**
     * Every request that did not succeed: Hyperfoil's errors (failed connections, timeouts, internal) plus answers
     * that are not 2xx or 3xx. Hyperfoil counts a 500 as a response (and as "invalid"), not as an error, so a
     * server shedding load with 500s would otherwise read as error-free.
     */
    static long errors(StatisticsSnapshot s, HttpStats http) {
        long notSuccess = http.status_4xx + http.status_5xx + http.status_other;
        return s.errors() + Math.max(s.invalid, notSuccess);
    }

    private String json(PhaseRecord r) {
        StatisticsSnapshot s = r.stats;
        HttpStats http = HttpStats.get(s);
        double seconds = Math.max(1, r.endMs - r.startMs) / 1000.0;
        StringBuilder b = new StringBuilder("{");
        b.append("\"name\":").append(str(r.name)).append(",\"warmup\":").append(r.warmup)
                .append(",\"startMs\":").append(r.startMs).append(",\"endMs\":").append(r.endMs)
                .append(",\"requests\":").append(s.requestCount).append(",\"responses\":").append(s.responseCount)
                .append(",\"connectionErrors\":").append(s.connectionErrors).append(",\"requestTimeouts\":").append(s.requestTimeouts)
                .append(",\"internalErrors\":").append(s.internalErrors).append(",\"invalid\":").append(s.invalid)
                .append(",\"errors\":").append(errors(s, http))
                .append(",\"blockedTimeNs\":").append(s.blockedTime)
                .append(",\"status2xx\":").append(http.status_2xx).append(",\"status3xx\":").append(http.status_3xx)
                .append(",\"status4xx\":").append(http.status_4xx).append(",\"status5xx\":").append(http.status_5xx)
                .append(",\"statusOther\":").append(http.status_other).append(",\"cacheHits\":").append(http.cacheHits)
                .append(",\"sessionLimitExceeded\":").append(r.sessionLimitExceeded)
                .append(",\"error\":").append(r.error == null ? "null" : str(r.error))
                .append(",\"histogramCount\":").append(s.histogram.getTotalCount());
        Timing t = TIMINGS.get(r.name);
        b.append(",\"schedule\":").append(t == null ? "null" : str("fixed"));
        // latencyMs: what a step is judged on, from the scheduled start in an open model; uncorrectedMs: Hyperfoil's own
        Histogram uncorrected = s.histogram;
        Histogram corrected = t == null ? uncorrected : r.corrected;
        b.append(",\"latencyMs\":").append(summary(corrected)).append(",\"uncorrectedMs\":").append(summary(uncorrected))
                .append(",\"correctedCount\":").append(corrected == null ? 0 : corrected.getTotalCount());
        if (t != null) {
            b.append(",\"latenessMs\":").append(summary(r.lateness)).append(",\"started\":").append(t.started.get());
            b.append(",\"startedPerSecond\":[");
            // whole seconds of the schedule only: the phase ends when its slowest response is in, and the seconds
            // after the last arrival, when nothing was due, must not read as seconds the driver fell behind in
            int full = (int) Math.max(0, Math.min(r.endMs - r.startMs, t.durationMs) / 1000);
            for (int i = 0; i < Math.min(full, t.perSecond.length()); i++) b.append(i == 0 ? "" : ",").append(t.perSecond.get(i));
            b.append(']');
        }
        b.append(",\"cpuPct\":{");
        int i = 0;
        for (String name : watch.keySet()) {
            long a = r.startTicks == null ? -1 : r.startTicks[i], z = r.endTicks == null ? -1 : r.endTicks[i];
            b.append(i == 0 ? "" : ",").append(str(name)).append(':').append(num(CpuSampler.percent(a, z, seconds)));
            i++;
        }
        b.append('}');
        CpuSampler.SystemUsage sys = CPU.between(r.startSys, r.endSys);
        if (sys != null) {
            b.append(",\"systemCpuPct\":").append(num(sys.busyPercent())).append(",\"stealPct\":").append(num(sys.stealPercent()));
        } else {
            b.append(",\"systemCpuPct\":null,\"stealPct\":null");
        }
        b.append(",\"probes\":{");
        int k = 0;
        for (var e : r.probes.entrySet()) b.append(k++ == 0 ? "" : ",").append(str(e.getKey())).append(':').append(e.getValue().startsWith("{") ? e.getValue() : str(e.getValue()));
        return b.append("}}").toString();
    }

    /** {mean, p50, p90, p95, p99, p99_9, max} in ms, or null for no histogram. */
    static String summary(Histogram h) {
        if (h == null) return "null";
        boolean any = h.getTotalCount() > 0;
        StringBuilder b = new StringBuilder("{\"mean\":").append(any ? num(h.getMean() / 1e6) : "null");
        for (double q : new double[]{50, 90, 95, 99, 99.9})
            b.append(",\"p").append(num(q).replaceAll("\\.?0+$", "").replace('.', '_')).append("\":").append(any ? num(h.getValueAtPercentile(q) / 1e6) : "null");
        return b.append(",\"max\":").append(any ? num(h.getMaxValue() / 1e6) : "null").append('}').toString();
    }

    static String num(double d) {
        return Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "null";
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static List<String> split(String s) {
        List<String> out = new ArrayList<>();
        for (String p : s.split(",")) if (!p.isBlank()) out.add(p.trim());
        return out;
    }

    static void writeAtomically(Path file, String content) throws java.io.IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
