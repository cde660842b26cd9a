//DEPS com.fasterxml.jackson.dataformat:jackson-dataformat-yaml:2.23.0
package perfkit.harness.http;

import perfkit.harness.measure.LatencyLog;
import perfkit.harness.record.Manifest;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.record.RunFile;
import perfkit.harness.record.RunLayout;
import perfkit.harness.run.ScriptJvm;
import perfkit.harness.os.Ssh;
import perfkit.harness.process.Supervisor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The study side of the kit's HTTP load driver ({@code scripts/loaddriver/LoadDriver.java}, Hyperfoil 0.25.2 in a
 * JVM of its own): writes Hyperfoil benchmark YAML into the run directory (kept, so a Hyperfoil user can replay
 * it), runs the driver as a supervised child of the run, and reads back its per-phase result.
 * <p>
 * A study that uses it adds {@code //SOURCES ../harness/src/perfkit/harness/http/*.java}. It lives in the harness package
 * because it starts the driver through the run's {@link Supervisor} (a watchdog, the live file, the janitor), so
 * a killed run leaves no driver behind.
 * <p>
 * Hyperfoil's known pitfalls are handled here, once: every request sends {@code cache-control: no-store} (its
 * HTTP cache is on by default), none sends {@code connection: close}, and {@code sharedConnections} is sized by
 * the caller at or above the peak concurrency; a phase with {@code blockedTime > 0} is invalid ({@link #problems}).
 */
public final class HttpLoad {
    /** Where the driver's YAML, results and logs go, relative to the run directory. */
    private static final String DIR = LoadResult.DIR;

    private HttpLoad() {}

    /** The driver script: {@code <kit>/scripts/loaddriver/LoadDriver.java}. */
    public static Path driverScript() {
        return RunLayout.kitRoot().resolve("scripts/loaddriver/LoadDriver.java");
    }

    /** The driver JVM, built and its classpath read once per run by {@link #prepare}; each driver run is then a plain java child. */
    private static volatile ScriptJvm driver;
    /**
     * The driver JVM's options besides its heap (what its //JAVA_OPTIONS say, for a JBang user running it by hand). The
     * parallel collector with half the heap young: the driver's garbage dies young, and at 20,000 req/s against nginx on
     * 2 cores its p99 lateness was 2-4 ms so, against 5-14 ms with G1 (and 12 ms with ZGC).
     */
    static final List<String> DRIVER_JVM = List.of("-XX:+UseParallelGC", "-XX:NewRatio=1", "-XX:+ExitOnOutOfMemoryError",
            "-Dlog4j2.level=WARN", "-Dorg.apache.logging.log4j.level=WARN");
    /** Heap for the driver: a base, and room per connection (Netty buffers, the session's state): measured against nginx at 20k req/s. */
    static final int DRIVER_HEAP_BASE_MB = 384, DRIVER_HEAP_KB_PER_CONNECTION = 192;

    /** The driver's hosts when it is placed on others ({@code --place driver=user@host[+user@host...]}); empty: this one. */
    private static volatile List<Ssh> driverHosts = List.of();
    private static volatile int[] driverCores = {};

    /** Compiles the driver (resolving Hyperfoil on first use) before anything is measured. */
    public static void prepare(Run run) throws IOException, InterruptedException {
        prepare(run, List.of());
    }

    /**
     * The same, with every driver run on {@code hosts} (empty: this one), each running its share of every phase
     * ({@link Plan#yaml(int, int, int)}): the classpath goes there, and the results and hlogs come back into the run
     * when they end, merged into one of each. What they load and probe must be reachable from there.
     */
    public static void prepare(Run run, List<Ssh> hosts) throws IOException, InterruptedException {
        run.progress().say("preparing the HTTP load driver (Hyperfoil; the first time downloads it)");
        driver = ScriptJvm.prepare(driverScript(), "perfkit.loaddriver.LoadDriver", "the load driver", run.dir().resolve(DIR));
        int[] cores = new int[hosts.size()];
        for (int i = 0; i < cores.length; i++) {
            cores[i] = hosts.get(i).cores();
            if (cores[i] < 1) throw new IllegalStateException("cannot read the core count of " + hosts.get(i) + ", which the load driver's threads and verdicts need");
        }
        driverHosts = List.copyOf(hosts);
        driverCores = cores;
    }

    /** The driver's event loops (per host when there are several): every core, at most 4 (one alone reached 90% of a core and fell behind on a 2-core host). */
    public static int threads() {
        return threads(cores());
    }

    private static int threads(int cores) { return Math.max(1, Math.min(4, cores)); }

    /**
     * The logical cores of the driver's host (the fewest of its hosts): its CPU figures (systemCpuPct, the busiest
     * host's when there are several) are in percent of one of them.
     */
    public static int cores() {
        return driverHosts.isEmpty() ? Runtime.getRuntime().availableProcessors() : java.util.Arrays.stream(driverCores).min().orElse(1);
    }

    /** Where a driver placed on {@code hosts} runs, for a run's notes: this host, its host, or its hosts and how they share the load. */
    public static String where(List<Ssh> hosts) {
        if (hosts.size() < 2) return hosts.isEmpty() ? "this host" : hosts.get(0).toString();
        return hosts.stream().map(Ssh::toString).collect(Collectors.joining(" + ")) + " (each runs an equal share of every phase's arrival rate "
                + "and users; their counts add up and their histograms are added)";
    }

    /** Why {@code drivers} hosts cannot share a closed model of {@code users} users (each needs one, --{@code option}), or null. */
    public static String sharingProblem(int drivers, int users, String option) {
        return drivers > users ? "--place driver on " + drivers + " hosts needs at least " + drivers + " users in each closed step (--" + option
                + " has " + users + "): each host runs a share of them" : null;
    }

    /** The heap a driver run with {@code connections} connections gets, in MB. */
    static int heapMb(int connections) {
        return DRIVER_HEAP_BASE_MB + (int) Math.ceil(connections * (double) DRIVER_HEAP_KB_PER_CONNECTION / 1024);
    }

    /** The command that starts the driver JVM with {@code args}, its heap sized for {@code connections}. */
    static List<String> driverCommand(List<String> args, int connections) {
        if (driver == null) throw new IllegalStateException("HttpLoad.prepare(run) must run before the load driver");
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + heapMb(connections) + "m"));
        jvm.addAll(DRIVER_JVM);
        return driver.command(jvm, args);
    }

    /**
     * Runs the driver on {@code yaml} (saved as {@code load/<name>.yaml}) and returns its result: {@code phases[]} with
     * counts, errors, blockedTimeNs, latency summary, CPU% of the {@code watch} processes and of the machine between
     * each phase's edges, and each probe URL's answer at the phase's end. The hlogs go to {@code latency/<phase>.*.hlog}.
     */
    public static JsonNode run(Run run, String name, Plan plan, Map<String, Long> watch, Map<String, String> probes,
                               double timeoutSeconds) throws Exception {
        Path dir = Files.createDirectories(run.dir().resolve(DIR));
        Path bench = dir.resolve(name + ".yaml"), result = dir.resolve(name + ".result.json"), log = dir.resolve(name + ".log");
        Files.writeString(bench, plan.yaml());
        run.addFile(DIR + "/" + name + ".yaml", "other", "Hyperfoil benchmark the load driver ran (replayable with Hyperfoil 0.25)");
        List<Ssh> hosts = driverHosts;
        int n = hosts.size();
        if (n > 1 && plan.fewestUsers() < n)
            throw new LoadResult.DriverFailed("a closed phase of " + name + " has " + plan.fewestUsers() + " users, fewer than the " + n + " driver hosts sharing it");
        List<String> cmd = new ArrayList<>(n == 0
                ? List.of("--benchmark", bench.toString(), "--hlog-dir", run.dir().resolve("latency").toString(), "--result", result.toString())
                : List.of("--benchmark", "{work}/bench.yaml", "--hlog-dir", "{work}/latency", "--result", "{work}/result.json"));
        List<String> w = new ArrayList<>(List.of("driver=self"));
        Map<String, RemoteJvm> remote = new java.util.LinkedHashMap<>();
        watch.forEach((k, pid) -> {
            RemoteJvm placed = PLACED.get(pid); // a service on another host: its pid here is its SSH session's
            if (placed != null) remote.put(k, placed);
            else if (n == 0) w.add(k + "=" + pid); // a driver elsewhere cannot read this host's processes
        });
        cmd.addAll(List.of("--watch", String.join(",", w)));
        if (!probes.isEmpty()) {
            List<String> p = new ArrayList<>();
            probes.forEach((k, url) -> p.add(k + "=" + url));
            cmd.addAll(List.of("--probe", String.join(",", p)));
        }
        if (n > 1) cmd.addAll(List.of("--start-on-go", "true")); // they begin together, when all are ready (startTogether)
        PhaseEdges edges = new PhaseEdges(log); // from the log's end: a driver of the same name before appended to it
        java.io.BufferedWriter remoteLog = n == 0 ? null
                : Files.newBufferedWriter(log, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        // with several hosts each brings back its own result and hlogs, merged into the run's below
        DriverShares shares = n > 1 ? new DriverShares(run, name, n) : null;
        if (shares != null) shares.clear(); // a driver that leaves nothing must not have an earlier step's files merged
        List<RemoteJvm> elsewhere = new ArrayList<>();
        List<java.util.concurrent.CompletableFuture<Void>> ready = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ready.add(new java.util.concurrent.CompletableFuture<>());
                elsewhere.add(startElsewhere(run, hosts.get(i), i, n, name, plan, cmd,
                        shares == null ? run.dir().resolve("latency") : shares.hlogs(i), shares == null ? result : shares.result(i), remoteLog, ready.get(i)));
            }
            if (n > 1) startTogether(name, hosts, elsewhere, ready, plan.interleaveMs());
        } catch (Exception e) {
            elsewhere.forEach(RemoteJvm::close);
            if (remoteLog != null) remoteLog.close();
            throw e;
        }
        Supervisor.Child child = n > 0 ? null : run.supervisor().launchProgram("load-driver", driverCommand(cmd, plan.connections()), log, "TERM", 5, List.of(), null);
        if (child != null) run.timeSeries().watchProcessTree("proc:load-driver", child.process().pid());
        String before = run.timeSeries().phase();
        try {
            long deadline = System.nanoTime() + (long) (timeoutSeconds * 1e9);
            // the time series follows the driver's phases as it announces them (a few hundred ms late at most); with
            // several, the first one's
            while (child != null ? !child.process().waitFor(200, TimeUnit.MILLISECONDS) : anyRunning(name, hosts, elsewhere)) {
                edges.latest().ifPresent(run.timeSeries()::phase);
                if (System.nanoTime() > deadline)
                    throw new LoadResult.DriverFailed("load driver " + name + " did not finish within " + Math.round(timeoutSeconds) + " s");
            }
            for (int i = 0; i < n; i++) {
                if (elsewhere.get(i).exitCode(30) == null)
                    throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " ended without its results (its SSH session broke)");
                if (!elsewhere.get(i).fileProblems().isEmpty())
                    throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " sent back " + elsewhere.get(i).fileProblems().get(0));
            }
            if (n > 1) failedEarly(name, hosts, elsewhere); // a share must have ended well, or the sum is not the load
        } finally {
            run.timeSeries().phase(before);
            if (child != null) {
                run.timeSeries().unwatchProcess("proc:load-driver");
                run.supervisor().stop(child, 10);
            } else {
                elsewhere.forEach(RemoteJvm::close);
                synchronized (remoteLog) { remoteLog.close(); }
            }
        }
        if (shares != null) shares.merge(elsewhere, hosts, driverCores, plan.interleaveMs(), plan.onSchedule(), result); // throws DriverFailed when one of them failed
        if (!Files.isRegularFile(result)) throw new LoadResult.DriverFailed("load driver " + name + " " + whyNoResult(log, plan) + "; see " + run.dir().relativize(log));
        JsonNode r = Manifest.JSON.readTree(result.toFile());
        run.addFile(DIR + "/" + name + ".result.json", "other", "load driver result per phase: counts, errors, blocked time, latency summary, CPU, probes"
                + (n > 1 ? " (the " + n + " driver hosts' results merged)" : ""));
        run.addFile(DIR + "/" + name + ".log", "log", "load driver output" + (n > 1 ? " (the first host's lines plain, each other's prefixed with its part)" : ""));
        if (r.hasNonNull("error")) throw new LoadResult.DriverFailed("load driver " + name + " failed: " + r.get("error").asText());
        for (JsonNode ph : r.path("phases")) {
            if (!(ph instanceof ObjectNode phase)) continue;
            if (n == 1) {
                // a driver elsewhere timed the phase on its host's clock: its edges on this host's, as everything else reads them
                long from = phase.path("startMs").asLong(), to = phase.path("endMs").asLong();
                phase.put("driverStartMs", from).put("driverEndMs", to).put("startMs", elsewhere.get(0).localMs(from)).put("endMs", elsewhere.get(0).localMs(to));
            }
            if (!(phase.path("cpuPct") instanceof ObjectNode cpu)) continue;
            for (var e : remote.entrySet()) {
                double pct = e.getValue().cpuPercent(phase.path("startMs").asLong(), phase.path("endMs").asLong());
                if (!Double.isNaN(pct)) cpu.put(e.getKey(), pct);
            }
        }
        // the file says what the run used: edges on this host's clock, and the placed parts' CPU
        if ((n == 1 || !remote.isEmpty()) && r instanceof ObjectNode amended)
            Manifest.writeAtomically(result, amended);
        return r;
    }

    /**
     * Several drivers begin together: each builds its benchmark, opens its connections and says it is ready, and then
     * each is told its start, half a second ahead, on its own host's clock (by the offset measured at its start):
     * host i {@code i x interleaveMs} after the first, so that their fixed schedules interleave instead of arriving
     * side by side. How far apart their phases ran is judged when their results merge ({@link DriverShares}).
     */
    private static void startTogether(String name, List<Ssh> hosts, List<RemoteJvm> drivers, List<java.util.concurrent.CompletableFuture<Void>> ready,
                                      double interleaveMs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        for (int i = 0; i < drivers.size(); i++) {
            while (!ready.get(i).isDone()) {
                failedEarly(name, hosts, drivers);
                if (System.nanoTime() > deadline)
                    throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " was not ready within " + READY_TIMEOUT_S + " s");
                Thread.sleep(50);
            }
        }
        failedEarly(name, hosts, drivers);
        long at = System.currentTimeMillis() + 500;
        for (int i = 0; i < drivers.size(); i++) {
            try {
                drivers.get(i).tell("go " + (drivers.get(i).remoteMs(at) + Math.round(i * interleaveMs)));
            } catch (IOException e) {
                throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " could not be told to start: " + e.getMessage());
            }
        }
    }

    private static final int READY_TIMEOUT_S = 120;

    /** Whether any driver elsewhere is still running, after a short wait when one is; one of several that failed ends the others' load at once. */
    private static boolean anyRunning(String name, List<Ssh> hosts, List<RemoteJvm> drivers) throws InterruptedException {
        if (drivers.size() > 1) failedEarly(name, hosts, drivers);
        boolean any = false;
        for (RemoteJvm d : drivers) any |= d.session().isAlive() && d.exitCode(0) == null;
        if (any) Thread.sleep(200);
        return any;
    }

    /** A driver elsewhere that ended badly, or lost its session, while the others may still load: they would load for nothing. */
    private static void failedEarly(String name, List<Ssh> hosts, List<RemoteJvm> drivers) throws InterruptedException {
        for (int i = 0; i < drivers.size(); i++) {
            Integer code = drivers.get(i).exitCode(0);
            // a session that has ended may still be handing over its last lines (its files, then its exit)
            if (code == null && !drivers.get(i).session().isAlive()) code = drivers.get(i).exitCode(30);
            if (code != null && code != 0)
                throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " failed (exit " + code + "; see its lines in the log)");
            if (code == null && !drivers.get(i).session().isAlive())
                throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " ended without its results (its SSH session broke)");
        }
    }

    /**
     * Driver {@code share} of {@code of} on {@code host}: its share of the plan with its files in its work folder there;
     * its output goes into the local log as it comes (the first's plain, so the phase edges follow it; the others'
     * after their part's name), and its result and hlogs come back when it ends.
     */
    private static RemoteJvm startElsewhere(Run run, Ssh host, int share, int of, String name, Plan plan, List<String> args,
                                            Path hlogs, Path result, java.io.BufferedWriter out,
                                            java.util.concurrent.CompletableFuture<Void> ready) throws Exception {
        String part = share == 0 ? "driver" : "driver" + (share + 1), prefix = share == 0 ? "" : part + ": ";
        if (share > 0) { // the probes ask for figures since their last call: only the first driver asks, or each would reset the other's
            args = new ArrayList<>(args);
            int probe = args.indexOf("--probe");
            if (probe >= 0) args.subList(probe, probe + 2).clear();
        }
        if (of > 1) {
            Files.writeString(run.dir().resolve(DIR).resolve(name + ".d" + (share + 1) + ".yaml"), plan.yaml(share, of, threads(driverCores[share])));
            run.addFile(DIR + "/" + name + ".d" + (share + 1) + ".yaml", "other", "driver " + (share + 1) + " of " + of + "'s share of " + name + ".yaml, as it ran on " + host);
        }
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + heapMb(plan.connections(share, of)) + "m"));
        jvm.addAll(DRIVER_JVM);
        RemoteJvm d = RemoteJvm.program(run, part, "load-" + part, host, jvm, driver, args,
                Map.of("bench.yaml", plan.yaml(share, of, threads(driverCores[share]))), Map.of("latency", hlogs, "result.json", result), line -> {
                    if (line.equals("perfkit-ready")) ready.complete(null);
                    synchronized (out) {
                        try { out.write(prefix + line); out.newLine(); out.flush(); } catch (IOException ignored) { }
                    }
                });
        try {
            d.record("load driver " + name + (of > 1 ? " (" + (share + 1) + " of " + of + ")" : ""));
        } catch (RuntimeException e) {
            d.close(); // it would load the system until the run ends
            throw e;
        }
        return d;
    }

    /**
     * Services on other hosts by the pid of their SSH session here (what a study passes in {@code watch}): the driver
     * cannot read their CPU, so a phase's {@code cpuPct} gets theirs from their host's readings between its edges.
     */
    private static final Map<Long, RemoteJvm> PLACED = new java.util.concurrent.ConcurrentHashMap<>();

    static void placed(long sessionPid, RemoteJvm jvm) { PLACED.put(sessionPid, jvm); }

    static void unplaced(long sessionPid) { PLACED.remove(sessionPid); }

    static boolean isPlaced(long sessionPid) { return PLACED.containsKey(sessionPid); }

    /**
     * Reads the driver's log as it grows for its {@code perfkit-phase} lines and names the phase the time series is
     * in: {@code measure} while a measured phase runs, else {@code warmup} while a warm-up phase runs (phases overlap:
     * a warm-up ends only when its last response is in, after the next phase began), else {@code drain} once a
     * measured phase has ended (its last responses, the driver writing its logs).
     */
    static final class PhaseEdges {
        static final String LINE = "perfkit-phase ";
        private final Path log;
        private long offset;
        private String partial = "";
        /** Phases started and not yet ended, and whether each is measured. */
        private final Map<String, Boolean> running = new java.util.HashMap<>();
        private boolean measuredEnded;

        /** Follows {@code log} from its current end (the driver's output is appended to it). */
        PhaseEdges(Path log) {
            this.log = log;
            long size;
            try {
                size = Files.exists(log) ? Files.size(log) : 0;
            } catch (IOException e) {
                size = 0;
            }
            this.offset = size;
        }

        /** The time series' phase after the lines written since the last call, or empty while no phase has started. */
        Optional<String> latest() {
            read().forEach(this::edge);
            if (running.containsValue(true)) return Optional.of("measure");
            if (running.containsValue(false)) return Optional.of("warmup");
            return measuredEnded ? Optional.of("drain") : Optional.empty();
        }

        private void edge(String line) {
            String[] f = line.split(" ", 3);
            if (f.length < 3 || !line.startsWith(LINE)) return;
            if (f[1].equals("ended")) measuredEnded |= Boolean.TRUE.equals(running.remove(f[2]));
            else running.put(f[2], f[1].equals("measure"));
        }

        /** The whole lines written since the last call (a line still being written waits for the next). */
        private List<String> read() {
            try (var ch = FileChannel.open(log)) {
                if (ch.size() <= offset) return List.of();
                ByteBuffer buf = ByteBuffer.allocate((int) Math.min(ch.size() - offset, 1 << 20));
                int n = ch.read(buf, offset);
                if (n <= 0) return List.of();
                offset += n;
                String text = partial + new String(buf.array(), 0, n, StandardCharsets.UTF_8);
                int end = text.lastIndexOf('\n');
                partial = text.substring(end + 1);
                return end < 0 ? List.of() : List.of(text.substring(0, end).split("\n"));
            } catch (IOException e) {
                return List.of(); // not written yet
            }
        }
    }

    /** What ended a driver run without a result, from its log's last words: out of memory, say, rather than a timeout later. */
    static String whyNoResult(Path log, Plan plan) {
        List<String> lines;
        try {
            lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (IOException e) {
            lines = List.of();
        }
        for (String l : lines)
            if (l.contains("OutOfMemoryError"))
                return "ran out of memory (" + heapMb(plan.connections()) + " MB heap for " + plan.connections() + " connections)";
        lines = lines.stream().filter(l -> !l.startsWith(PhaseEdges.LINE) && !l.isBlank()).toList(); // its own words, not a phase edge
        return "ended without a result" + (lines.isEmpty() ? "" : " (" + lines.get(lines.size() - 1).strip() + ")");
    }

    /**
     * Runs another load tool (e.g. siege or wrk) as a supervised child of the run, output to {@code load/<name>.out},
     * and returns that output; null when it did not finish within the timeout (it is stopped then).
     */
    public static String runTool(Run run, String name, List<String> command, double timeoutSeconds) throws Exception {
        Path out = Files.createDirectories(run.dir().resolve(DIR)).resolve(name + ".out");
        Supervisor.Child child = run.supervisor().launchProgram(name, command, out, "INT", 5, List.of(), null);
        run.timeSeries().watchProcessTree("proc:" + name, child.process().pid());
        boolean done;
        try {
            done = child.process().waitFor((long) (timeoutSeconds * 1000), TimeUnit.MILLISECONDS);
        } finally {
            run.timeSeries().unwatchProcess("proc:" + name);
            run.supervisor().stop(child, 10);
        }
        String runDir = run.dir().toString();
        String shown = command.stream() // paths inside the run read relative to it: the manifest names no machine's folders
                .map(a -> a.replace(runDir + "/", "")).collect(Collectors.joining(" "));
        run.addFile(DIR + "/" + name + ".out", "log", "output of " + shown);
        return done ? Files.readString(out) : null;
    }

    /**
     * Registers a phase's hlogs (written by the driver) in the manifest, with cell, series, fork and window: response time
     * from the scheduled start (corrected) and as Hyperfoil measures it (uncorrected), and for an open-model phase the
     * driver's own lateness as a series of its own, {@code <series>/driver-lateness}.
     */
    public static void addHlogs(Run run, JsonNode phase, String cell, String series, int fork, String description) {
        String stem = "latency/" + phase.path("name").asText();
        // the window on the clock of the hlogs' own timestamps: a driver elsewhere wrote them on its host's
        long start = phase.path(phase.has("driverStartMs") ? "driverStartMs" : "startMs").asLong(),
                end = phase.path(phase.has("driverEndMs") ? "driverEndMs" : "endMs").asLong();
        boolean open = phase.path("schedule").isTextual();
        run.addFile(new RunFile(stem + LatencyLog.CORRECTED, "hlog", description + (open
                ? "; response time from each arrival's scheduled start (fixed schedule), ns, measured by the driver"
                : "; response time, ns (a closed model has no schedule: the same samples as the uncorrected file)"),
                cell, series, fork, RunFile.CORRECTED, start, end));
        run.addFile(new RunFile(stem + LatencyLog.UNCORRECTED, "hlog", description + "; response time as Hyperfoil measures it, from when "
                + "the request was prepared (a late session start is not in it), ns", cell, series, fork, RunFile.UNCORRECTED, start, end));
        if (open) run.addFile(new RunFile(stem + LATENESS, "hlog", description + "; the load driver's lateness: each session's actual start "
                + "minus its scheduled start, ns", cell, series + "/" + DRIVER_LATENESS, fork, RunFile.CORRECTED, start, end));
    }

    /** The series suffix and file suffix of the driver's lateness. */
    public static final String DRIVER_LATENESS = "driver-lateness", LATENESS = ".lateness.hlog";

    // ---- benchmark YAML --------------------------------------------------------------------------------

    /**
     * A benchmark of phases that run one after another in one driver JVM, against one origin. Kinds:
     * <ul>
     * <li>{@link #closed}: {@code users} users at once, each doing {@code repeats} requests back to back (a {@code loop}),
     *     the shape of {@code siege -b -c N -r R}; the phase ends when every user is done;</li>
     * <li>{@link #always}: {@code users} users looping for a duration (a closed-model warm-up);</li>
     * <li>{@link #open}: a constant arrival rate on a fixed schedule ({@code variance: false}: arrival k at k / rate, so
     *     the driver can time each request from its scheduled start), one new session (one request) per arrival, at
     *     most {@code concurrency} in flight: a phase that needs more is invalid (blocked or out of sessions), never
     *     silently throttled.</li>
     * </ul>
     * Each phase starts when the previous one has terminated (all its requests answered), except a phase marked
     * {@code continuous}, which starts as soon as the previous stops starting requests, so arrivals go on without a
     * gap (a measurement right after its warm-up at the same rate). {@code sharedConnections} is the largest
     * concurrency of any phase, so no request waits for a connection; the driver runs {@link #threads()} event loops.
     */
    public static final class Plan {
        private final String name;
        private final Target target;
        private final List<Phase> phases = new ArrayList<>();

        /**
         * One phase as planned: {@code users} for a closed model, {@code from}/{@code to} req/s for an arrival rate
         * ({@code to} alone for a constant one), {@code concurrency} the most in flight at once.
         */
        private record Phase(String name, String model, int users, double from, double to, Double seconds, Counts counts, Follows follows,
                             String previous, String path, int repeats, int concurrency) {
            boolean closed() { return users > 0; }
        }

        public Plan(String name, String url) {
            this.name = name;
            this.target = Target.of(url);
        }

        /** The path and query of the plan's URL, for phases that load it as given. */
        public String path() { return target.pathAndQuery(); }

        /** The connections the driver opens: the largest concurrency of any phase. */
        public int connections() { return connections(0, 1); }

        /** The connections driver {@code share} of {@code of} opens: the largest concurrency of its share of any phase. */
        int connections(int share, int of) {
            int c = 1;
            for (Phase p : phases) c = Math.max(c, p.closed() ? split(p.users, share, of) : ceilShare(p.concurrency, of));
            return c;
        }

        /**
         * How far apart hosts sharing this plan start, ms, so that their fixed schedules interleave: the gap between two
         * arrivals of its measured open phase at the whole rate (0 without one). Below a millisecond it rounds away.
         */
        double interleaveMs() {
            return phases.stream().filter(p -> p.model.equals("constantRate") && p.counts == Counts.MEASURED).mapToDouble(p -> 1000.0 / p.to)
                    .findFirst().orElse(0);
        }

        /**
         * The phases whose start is fixed by the start of the run: the first, and each that follows the one before
         * without a gap after a fixed duration. Hosts sharing the plan start these together; a phase that waits for
         * the one before to drain starts on each host when its own share has drained.
         */
        java.util.Set<String> onSchedule() {
            java.util.Set<String> out = new java.util.HashSet<>();
            for (Phase p : phases) {
                boolean fixed = p.previous == null || p.follows == Follows.WITHOUT_GAP && out.contains(p.previous) && phase(p.previous).seconds != null;
                if (!fixed) break;
                out.add(p.name);
            }
            return out;
        }

        private Phase phase(String name) { return phases.stream().filter(p -> p.name.equals(name)).findFirst().orElseThrow(); }

        /** The fewest users of any closed phase (a driver host needs at least one of each); MAX_VALUE when none is closed. */
        int fewestUsers() {
            return phases.stream().filter(Phase::closed).mapToInt(Phase::users).min().orElse(Integer.MAX_VALUE);
        }

        /** Whether a phase is measured or warm-up (Hyperfoil's isWarmup: its samples are not the step's). */
        public enum Counts { MEASURED, WARMUP }

        /**
         * When a phase starts: right as the one before ends its time, so the load has no gap (Hyperfoil's startAfter),
         * or only once every session of the one before has finished (startAfterStrict).
         */
        public enum Follows { WITHOUT_GAP, AFTER_DRAIN }

        public Plan closed(String phase, String path, int users, int repeats) {
            return add(new Phase(phase, "atOnce", users, 0, 0, null, Counts.MEASURED, Follows.AFTER_DRAIN, previous(), path, repeats, users));
        }

        public Plan always(String phase, String path, int users, double seconds, Counts counts) {
            return add(new Phase(phase, "always", users, 0, 0, seconds, counts, Follows.AFTER_DRAIN, previous(), path, 1, users));
        }

        /** A warm-up whose arrival rate rises from {@code from} to {@code to} req/s: a cold driver JVM is not swamped at once. */
        public Plan ramp(String phase, String path, double from, double to, double seconds, int concurrency) {
            return add(new Phase(phase, "increasingRate", 0, from, to, seconds, Counts.WARMUP, Follows.AFTER_DRAIN, previous(), path, 1, concurrency));
        }

        /** An open-model phase: arrivals at a fixed {@code rate} req/s on a schedule, at most {@code concurrency} in flight. */
        public Plan open(String phase, String path, double rate, double seconds, int concurrency, Counts counts, Follows follows) {
            return add(new Phase(phase, "constantRate", 0, rate, rate, seconds, counts, follows, previous(), path, 1, concurrency));
        }

        private String previous() { return phases.isEmpty() ? null : phases.get(phases.size() - 1).name; }

        private Plan add(Phase p) {
            phases.add(p);
            return this;
        }

        /** The whole plan, as one driver on this run's host runs it (and a Hyperfoil user can replay it). */
        public String yaml() { return yaml(0, 1, threads()); }

        /**
         * Driver {@code share}'s part of the plan when {@code of} driver hosts share it: every arrival rate divided
         * by {@code of}, the users of a closed phase dealt out one by one (their counts add up exactly), each on its
         * own fixed schedule from its own phase start, with {@code threads} event loops.
         */
        String yaml(int share, int of, int threads) {
            ObjectNode bench = Manifest.newObject().put("name", name).put("threads", threads);
            bench.putObject("http").put("host", target.origin()).put("sharedConnections", connections(share, of)).put("requestTimeout", "60s");
            // a user goes on after a non-2xx answer (as siege does); by default Hyperfoil stops its session, so a server
            // shedding load would receive fewer requests than the closed model promises
            bench.putObject("ergonomics").put("stopOnInvalid", false);
            ArrayNode list = bench.putArray("phases");
            for (Phase p : phases) {
                ObjectNode model = list.addObject().putObject(p.name).putObject(p.model);
                switch (p.model) {
                    case "atOnce", "always" -> model.put("users", split(p.users, share, of));
                    case "increasingRate" -> model.put("initialUsersPerSec", perSecond(p.from / of)).put("targetUsersPerSec", perSecond(p.to / of))
                            .put("variance", false).put("maxSessions", ceilShare(p.concurrency, of));
                    default -> model.put("usersPerSec", perSecond(p.to / of)).put("variance", false).put("maxSessions", ceilShare(p.concurrency, of));
                }
                if (p.seconds != null) model.put("duration", millis(p.seconds));
                if (p.counts == Counts.WARMUP) model.put("isWarmup", true);
                if (p.previous != null) model.put(p.follows == Follows.WITHOUT_GAP ? "startAfter" : "startAfterStrict", p.previous);
                model.putArray("scenario").addObject().set("user", scenario(p.path, p.repeats));
            }
            try {
                return "# generated by perfkit (scripts/harness/src/perfkit/harness/http/HttpLoad.java); run with Hyperfoil 0.25\n"
                        + (of > 1 ? "# driver " + (share + 1) + " of " + of + ": its share of the plan's rates and users\n" : "")
                        + YAML.writeValueAsString(bench);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException("cannot write the benchmark's YAML", e);
            }
        }

        /** A rate as the benchmark states it: to the thousandth of a request per second. */
        private static double perSecond(double rate) { return Math.round(rate * 1000) / 1000.0; }

        /** Share {@code share}'s part of {@code n} dealt out one by one among {@code of}: the parts add up to n. */
        static int split(int n, int share, int of) { return n / of + (share < n % of ? 1 : 0); }

        private static int ceilShare(int n, int of) { return (n + of - 1) / of; }
    }

    /** Hyperfoil's benchmark YAML: written by a YAML library, so a path or name is always quoted as it needs. */
    static final YAMLMapper YAML = YAMLMapper.builder().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES).build();

    /** One user's steps: {@code repeats} synchronous GETs back to back (a loop when more than one). */
    private static ArrayNode scenario(String path, int repeats) {
        ArrayNode steps = Manifest.JSON.createArrayNode();
        ObjectNode request = Manifest.newObject().put("GET", path).put("metric", "request").put("sync", true);
        request.putObject("headers").put("cache-control", "no-store"); // Hyperfoil's HTTP cache is on by default; never connection: close
        if (repeats == 1) {
            steps.addObject().set("httpRequest", request);
        } else {
            ObjectNode loop = steps.addObject().putObject("loop").put("counterVar", "repetition").put("repeats", repeats);
            loop.putArray("steps").addObject().set("httpRequest", request);
        }
        return steps;
    }

    private static String millis(double seconds) {
        return Math.max(1, Math.round(seconds * 1000)) + "ms";
    }

    /** An http URL split the way Hyperfoil wants it: origin for {@code http.host}, path and query for the request. */
    public record Target(String origin, String pathAndQuery) {
        public static Target of(String url) {
            URI u = URI.create(url);
            if (!"http".equals(u.getScheme()) || u.getHost() == null) throw new IllegalArgumentException("expects an http://host[:port]/path URL, got " + url);
            String origin = "http://" + u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "");
            String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
            return new Target(origin, u.getRawQuery() == null ? path : path + "?" + u.getRawQuery());
        }
    }
}
