///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS io.hyperfoil:hyperfoil-http:0.25.2
// slf4j-api 2 arrives with no provider beside Log4j's 1.x binding and would print a warning with local jar paths
//DEPS org.slf4j:slf4j-nop:2.0.6
//JAVA_OPTIONS -Xmx512m -Dlog4j2.level=WARN -Dorg.apache.logging.log4j.level=WARN
//DESCRIPTION The kit's HTTP load driver: runs one Hyperfoil benchmark YAML in-process and writes HdrHistogram interval logs and a JSON result per phase
package perfkit.loaddriver;

import io.hyperfoil.api.config.Benchmark;
import io.hyperfoil.api.config.Phase;
import io.hyperfoil.api.session.PhaseInstance;
import io.hyperfoil.api.statistics.StatisticsSnapshot;
import io.hyperfoil.core.impl.LocalBenchmarkData;
import io.hyperfoil.core.impl.LocalSimulationRunner;
import io.hyperfoil.core.parser.BenchmarkParser;
import io.hyperfoil.http.statistics.HttpStats;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

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

/**
 * The kit's HTTP load driver, in a JVM of its own because Hyperfoil 0.25.2 brings Vert.x 4.3 and Netty 4.1, older
 * than what the systems under test use. It runs one benchmark YAML the way Hyperfoil's Maven plugin does
 * ({@code BenchmarkParser} then {@code LocalSimulationRunner}), so the YAML kept in the run directory replays in
 * plain Hyperfoil.
 * <p>
 * Per phase it writes:
 * <ul>
 * <li>{@code <hlog-dir>/<phase>.corrected.hlog} and {@code .uncorrected.hlog}: Hyperfoil's response-time histogram
 *     (ns) as one interval spanning the phase. Hyperfoil times a request from when it is sent. In an open model a
 *     request is sent at its scheduled arrival unless it waits for a connection or a session, which Hyperfoil
 *     reports as {@code blockedTime} and session-limit errors; a phase with either is invalid, so in every valid
 *     phase "from intended start" and "from actual start" are the same samples, and the two files hold the same
 *     histogram. A closed model has no schedule: intended and actual start coincide by definition.</li>
 * <li>an entry in the result JSON: its wall-clock edges, request, response and error counts (errors include non-2xx/3xx
 *     answers), HTTP status classes,
 *     {@code blockedTime}, whether the session limit was hit, CPU% of the watched processes and of the machine
 *     (with steal) between the phase's edges, and the JSON the probe URLs answered at its end.</li>
 * </ul>
 * Usage: {@code LoadDriver --benchmark B.yaml --hlog-dir DIR --result R.json [--watch name=pid,...] [--probe name=url,...]}.
 * The result is written (atomically) only at the end; a failure writes {@code {"error": "..."}} instead.
 */
public class LoadDriver {
    static final double TICKS_PER_SECOND = 100.0; // USER_HZ on Linux

    /** What one phase did. */
    static final class PhaseRecord {
        final String name;
        boolean warmup;
        long startMs, endMs;
        long[] startTicks, endTicks;
        long[] startSys, endSys;
        boolean sessionLimitExceeded;
        String error;
        final StatisticsSnapshot stats = new StatisticsSnapshot();
        final Map<String, String> probes = new LinkedHashMap<>();

        PhaseRecord(String name) { this.name = name; }
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
            String json = new LoadDriver(yaml, hlogDir, watch, probes).run();
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
                while (System.in.read() >= 0) { /* nothing is sent; EOF is the signal */ }
            } catch (java.io.IOException ignored) {
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
        System.err.println("LoadDriver: " + why + "\nusage: LoadDriver --benchmark B.yaml --hlog-dir DIR --result R.json [--watch name=pid,...] [--probe name=url,...]");
        System.exit(2);
    }

    private final Path yaml, hlogDir;
    private final Map<String, Long> watch;
    private final Map<String, String> probes;
    private final Map<String, PhaseRecord> phases = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    LoadDriver(Path yaml, Path hlogDir, Map<String, Long> watch, Map<String, String> probes) {
        this.yaml = yaml;
        this.hlogDir = hlogDir;
        this.watch = watch;
        this.probes = probes;
    }

    String run() throws Exception {
        Benchmark benchmark;
        try (InputStream in = Files.newInputStream(yaml)) {
            benchmark = BenchmarkParser.instance().buildBenchmark(in, new LocalBenchmarkData(yaml), Map.of());
        }
        for (Phase p : benchmark.phases()) phases.computeIfAbsent(p.name(), PhaseRecord::new).warmup = p.isWarmup;
        LocalSimulationRunner runner = new LocalSimulationRunner(benchmark, (phase, stepId, metric, snapshot, countDown) -> {
            PhaseRecord r = record(phase.name());
            synchronized (r) {
                r.stats.add(snapshot);
            }
        }, null, null) {
            @Override
            protected CompletableFuture<Void> phaseChanged(Phase phase, PhaseInstance.Status status, boolean sessionLimitExceeded, Throwable error) {
                edge(phase, status, sessionLimitExceeded, error);
                return super.phaseChanged(phase, status, sessionLimitExceeded, error);
            }
        };
        runner.run();
        Files.createDirectories(hlogDir);
        StringBuilder out = new StringBuilder("{\"benchmark\":").append(str(benchmark.name())).append(",\"phases\":[");
        boolean first = true;
        for (PhaseRecord r : phases.values()) {
            if (!r.warmup) writeHlogs(r);
            out.append(first ? "" : ",").append(json(r));
            first = false;
        }
        return out.append("]}").toString();
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
    private void edge(Phase phase, PhaseInstance.Status status, boolean sessionLimitExceeded, Throwable error) {
        PhaseRecord r = record(phase.name());
        synchronized (r) {
            if (sessionLimitExceeded) r.sessionLimitExceeded = true;
            if (error != null && r.error == null) r.error = String.valueOf(error.getMessage() == null ? error : error.getMessage());
            if (status == PhaseInstance.Status.RUNNING && r.startMs == 0) {
                probe(r, false);
                r.startMs = System.currentTimeMillis();
                r.startTicks = ticks();
                r.startSys = systemTicks();
            } else if (status == PhaseInstance.Status.TERMINATED && r.endMs == 0) {
                r.endMs = System.currentTimeMillis();
                r.endTicks = ticks();
                r.endSys = systemTicks();
                if (!r.warmup) probe(r, true);
            }
        }
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
        for (long pid : watch.values()) t[i++] = treeTicks(pid);
        return t;
    }

    /**
     * CPU ticks of a process and its live descendants (a database's backends, say): a child that exits between two
     * readings moves into its parent's cutime/cstime, so the sum stays continuous; -1 when the process is gone.
     */
    static long treeTicks(long pid) {
        long own = processTicks(pid);
        if (own < 0) return -1;
        long sum = own;
        for (ProcessHandle d : ProcessHandle.of(pid).map(h -> h.descendants().toList()).orElse(List.of())) {
            long t = processTicks(d.pid());
            if (t > 0) sum += t;
        }
        return sum;
    }

    /** utime + stime + cutime + cstime of a process (children count, e.g. a server's reaped workers); -1 when gone. */
    static long processTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
        } catch (Exception e) {
            return -1;
        }
    }

    /** {total, idle+iowait, steal} from the first line of /proc/stat. */
    static long[] systemTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) total += Long.parseLong(f[i]); // guest time is inside user
            return new long[]{total, Long.parseLong(f[4]) + Long.parseLong(f[5]), f.length > 8 ? Long.parseLong(f[8]) : 0};
        } catch (Exception e) {
            return null;
        }
    }

    private void writeHlogs(PhaseRecord r) throws Exception {
        Histogram h = r.stats.histogram.copy();
        h.setStartTimeStamp(r.startMs);
        h.setEndTimeStamp(Math.max(r.endMs, r.startMs));
        for (String timing : List.of("corrected", "uncorrected")) {
            try (PrintStream out = new PrintStream(hlogDir.resolve(r.name + "." + timing + ".hlog").toFile())) {
                HistogramLogWriter w = new HistogramLogWriter(out);
                w.outputLogFormatVersion();
                w.outputComment("Hyperfoil response time of phase " + r.name + " (" + timing + "; the same samples in both files: "
                        + "a valid phase had no blocked time, so every request started at its intended time)");
                w.outputComment("values in nanoseconds; one interval spanning the phase; warm-up phases are not written");
                w.outputStartTime(r.startMs);
                w.setBaseTime(r.startMs);
                w.outputBaseTime(r.startMs);
                w.outputLegend();
                w.outputIntervalHistogram(h);
            }
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
        Histogram h = s.histogram;
        boolean any = h.getTotalCount() > 0;
        b.append(",\"latencyMs\":{\"mean\":").append(any ? num(h.getMean() / 1e6) : "null");
        for (double q : new double[]{50, 90, 95, 99, 99.9}) b.append(",\"p").append(num(q).replaceAll("\\.?0+$", "").replace('.', '_')).append("\":").append(any ? num(h.getValueAtPercentile(q) / 1e6) : "null");
        b.append(",\"max\":").append(any ? num(h.getMaxValue() / 1e6) : "null").append('}');
        b.append(",\"cpuPct\":{");
        int i = 0;
        for (String name : watch.keySet()) {
            long a = r.startTicks == null ? -1 : r.startTicks[i], z = r.endTicks == null ? -1 : r.endTicks[i];
            b.append(i == 0 ? "" : ",").append(str(name)).append(':').append(a < 0 || z < 0 ? "null" : num((z - a) / TICKS_PER_SECOND / seconds * 100));
            i++;
        }
        b.append('}');
        if (r.startSys != null && r.endSys != null && r.endSys[0] > r.startSys[0]) {
            double total = r.endSys[0] - r.startSys[0], cores = Runtime.getRuntime().availableProcessors();
            b.append(",\"systemCpuPct\":").append(num((total - (r.endSys[1] - r.startSys[1])) / total * 100 * cores))
                    .append(",\"stealPct\":").append(num((r.endSys[2] - r.startSys[2]) / total * 100 * cores));
        } else {
            b.append(",\"systemCpuPct\":null,\"stealPct\":null");
        }
        b.append(",\"probes\":{");
        int k = 0;
        for (var e : r.probes.entrySet()) b.append(k++ == 0 ? "" : ",").append(str(e.getKey())).append(':').append(e.getValue().startsWith("{") ? e.getValue() : str(e.getValue()));
        return b.append("}}").toString();
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
