package perfkit.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * One run of a study: its directory {@code <out>/<study>/<run-id>/}, its manifest, its time series,
 * and the child JVMs it forks. Whatever happens (completion, an exception, Ctrl-C, SIGTERM) the manifest
 * ends in a final status, the data is flushed, and child processes are stopped.
 */
public final class Run {
    public static final String RUNNING = "running", COMPLETE = "complete", FAILED = "failed", INTERRUPTED = "interrupted";
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String study;
    private final Map<String, String> params;
    private final Path dir;
    private final ObjectNode manifest;
    private final ArrayNode files;
    private final TimeSeries timeSeries;
    private final Progress progress;
    private final Class<?> mainClass;
    private final List<Process> children = new CopyOnWriteArrayList<>();
    private final List<Runnable> cleanups = new CopyOnWriteArrayList<>();
    static final String SCRATCH_DIR = "scratch";

    private Run(String study, Map<String, String> params, Path dir, Class<?> mainClass) throws IOException {
        this.study = study;
        this.params = params;
        this.dir = dir;
        this.mainClass = mainClass;
        this.progress = new Progress(study);
        this.manifest = initialManifest(study, dir.getFileName().toString(), params);
        this.files = manifest.putArray("files");
        this.timeSeries = new TimeSeries(dir.resolve(TimeSeries.FILE_NAME), CpuSampler.forThisMachine());
        addFile(TimeSeries.FILE_NAME, "timeseries", "per-second throughput per series, CPU% per process and for the system, steal%");
    }

    /** Creates the run directory and writes the manifest with status running. */
    public static Run start(String study, Map<String, String> params, Class<?> mainClass) throws IOException {
        Path studyDir = kitRoot().resolve(params.get("out")).resolve(study);
        Files.createDirectories(studyDir);
        Path dir = createUniqueDir(studyDir);
        Run run = new Run(study, params, dir, mainClass);
        Runtime.getRuntime().addShutdownHook(new Thread(run::onShutdown, "perfkit-shutdown"));
        run.writeManifest();
        run.timeSeries.watchProcess("proc:" + study, ProcessHandle.current().pid());
        run.timeSeries.onRate(run.progress::rate);
        run.timeSeries.start();
        run.progress.say("run " + dir);
        return run;
    }

    /** Where data and git live: PERFKIT_HOME (set by ./bench), else the working directory. */
    public static Path kitRoot() {
        String home = System.getenv("PERFKIT_HOME");
        return Path.of(home == null || home.isBlank() ? "." : home).toAbsolutePath().normalize();
    }

    /** Sortable and unique: UTC time to the second, host, and 24 random bits; the mkdir itself is the final arbiter. */
    public static String newRunId(Instant now, String host) {
        String safeHost = host.toLowerCase().replaceAll("[^a-z0-9-]", "-");
        if (safeHost.length() > 24) safeHost = safeHost.substring(0, 24);
        return ID_TIME.format(now) + "-" + safeHost + "-" + String.format("%06x", RANDOM.nextInt(1 << 24));
    }

    static Path createUniqueDir(Path parent) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return Files.createDirectory(parent.resolve(newRunId(Instant.now(), HostInfo.hostname())));
            } catch (FileAlreadyExistsException e) {
                if (attempt > 100) throw e;
            }
        }
    }

    private static ObjectNode initialManifest(String study, String runId, Map<String, String> params) {
        ObjectNode m = Manifest.newObject();
        m.put("schemaVersion", Manifest.SCHEMA_VERSION);
        m.put("study", study);
        m.put("runId", runId);
        m.put("tag", params.getOrDefault("tag", ""));
        m.put("quick", Boolean.parseBoolean(params.getOrDefault("quick", "false")));
        m.putArray("variants");
        m.set("params", Manifest.redactedParams(params));
        m.put("status", RUNNING);
        m.putNull("error");
        m.put("startedAt", Instant.now().toString());
        m.putNull("endedAt");
        m.put("pid", ProcessHandle.current().pid());
        m.set("host", HostInfo.host());
        m.set("jvm", HostInfo.jvm());
        m.set("kit", HostInfo.kit(kitRoot()));
        ObjectNode meas = m.putObject("measurement");
        meas.put("warmupSeconds", 0);
        meas.put("measureSeconds", 0);
        meas.put("repetitions", 1);
        meas.put("repetitionKind", "none");
        meas.put("warmupExcluded", !Boolean.parseBoolean(params.getOrDefault("keep-warmup", "false")));
        m.put("valid", true);
        m.putArray("invalidReasons");
        m.putObject("notes");
        return m;
    }

    // ---- what a study uses --------------------------------------------------------------------------

    public Path dir() { return dir; }
    public String study() { return study; }
    public Progress progress() { return progress; }
    public TimeSeries timeSeries() { return timeSeries; }
    public Map<String, String> params() { return params; }
    public String param(String name) { return params.get(name); }
    public long integer(String name) { return Long.parseLong(params.get(name).replace("_", "")); }
    public double seconds(String name) { return Double.parseDouble(params.get(name)); }
    public boolean flag(String name) { return Boolean.parseBoolean(params.get(name)); }

    /** Study-specific facts a reader needs, e.g. how a variant is built. */
    public synchronized ObjectNode notes() { return (ObjectNode) manifest.get("notes"); }

    public synchronized void variants(List<String> variants) {
        ArrayNode a = manifest.putArray("variants");
        variants.forEach(a::add);
        writeManifest();
    }

    public synchronized void measurement(double warmupSeconds, double measureSeconds, long repetitions, String repetitionKind) {
        ObjectNode meas = (ObjectNode) manifest.get("measurement");
        meas.put("warmupSeconds", warmupSeconds);
        meas.put("measureSeconds", measureSeconds);
        meas.put("repetitions", repetitions);
        meas.put("repetitionKind", repetitionKind);
        writeManifest();
    }

    /** Registers a data file (path relative to the run directory) with what it holds. */
    public synchronized void addFile(String path, String kind, String description) {
        for (JsonNode f : files) if (f.get("path").asText().equals(path)) return;
        ObjectNode f = files.addObject();
        f.put("path", path);
        f.put("kind", kind);
        f.put("description", description);
    }

    /** Marks the run as not to be trusted, e.g. when the load generator could not hold its rate. */
    public synchronized void invalid(String reason) {
        manifest.put("valid", false);
        ((ArrayNode) manifest.get("invalidReasons")).add(reason);
        progress.say("INVALID: " + reason);
        writeManifest();
    }

    public synchronized void writeManifest() {
        try {
            Manifest.writeAtomically(dir.resolve(Manifest.FILE_NAME), manifest);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write manifest in " + dir, e);
        }
    }

    // ---- forks ------------------------------------------------------------------------------------

    /** Starts a child JVM of this study's main class, watched for CPU as {@code proc:<series>} and stopped when the run ends. */
    private Process launch(String series, List<String> jvmArgs, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass.getName());
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        children.add(p);
        timeSeries.watchProcess("proc:" + series, p.pid());
        return p;
    }

    /**
     * Starts a long-running helper process, such as a message broker, from this study's main class with
     * {@code args}. Each line it prints goes to {@code lines}. It is stopped by {@link #stopService} or when the run ends.
     */
    public Process startService(String series, List<String> jvmArgs, List<String> args, Consumer<String> lines) throws IOException {
        Process p = launch(series, jvmArgs, args);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
                for (String line; (line = out.readLine()) != null; ) lines.accept(line);
            } catch (IOException ignored) {
                // the process ended
            }
        }, "perfkit-service-" + series);
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    /** SIGTERM, then SIGKILL after 10 s; the service's CPU is no longer sampled. */
    public void stopService(String series, Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        children.remove(p);
        timeSeries.unwatchProcess("proc:" + series);
    }

    /**
     * Runs one repetition in a fresh JVM (same java, same classpath, this study's main class) and returns
     * the result it reported. The child's CPU and counter ticks go into the time series as {@code series}.
     */
    public ObjectNode fork(String series, List<String> jvmArgs, Map<String, String> forkParams, double plannedSeconds) throws Exception {
        return fork(series, jvmArgs, forkParams, plannedSeconds, phase -> {});
    }

    /** The same, telling {@code onPhase} each phase the fork enters (e.g. to sample other processes at its edges). */
    public ObjectNode fork(String series, List<String> jvmArgs, Map<String, String> forkParams, double plannedSeconds,
                           Consumer<String> onPhase) throws Exception {
        Process p = launch(series, jvmArgs, List.of(Fork.FLAG, dir.toString(), series, Manifest.JSON.writeValueAsString(forkParams)));
        AtomicLong count = new AtomicLong();
        AtomicReference<ObjectNode> result = new AtomicReference<>();
        timeSeries.watchCounter(series, count::get);
        progress.phase(series + " starting", plannedSeconds);
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith(Fork.TICK)) count.set(Long.parseLong(line.substring(Fork.TICK.length())));
                else if (line.startsWith(Fork.PHASE)) {
                    String[] ph = line.substring(Fork.PHASE.length()).split(" ", 2);
                    timeSeries.phase(ph[0]);
                    progress.phase(series + " " + ph[0], Double.parseDouble(ph[1]));
                    onPhase.accept(ph[0]);
                } else if (line.startsWith(Fork.RESULT)) {
                    result.set((ObjectNode) Manifest.JSON.readTree(line.substring(Fork.RESULT.length())));
                } else {
                    System.err.println(line);
                }
            }
            int code = p.waitFor();
            if (code != 0 || result.get() == null)
                throw new IllegalStateException("fork " + series + " exited with code " + code + (result.get() == null ? " without a result" : ""));
        } finally {
            timeSeries.unwatchCounter(series);
            timeSeries.unwatchProcess("proc:" + series);
            timeSeries.phase("between");
            children.remove(p);
        }
        recordForkJvm(result.get().path("jvmInputArguments"));
        for (JsonNode f : result.get().path("files")) addFile(f.get("path").asText(), f.get("kind").asText(), f.get("description").asText());
        return result.get();
    }

    /** Several forks at once (e.g. one JVM per instance); returns their results in order, or throws the first failure. */
    public List<ObjectNode> forkAll(List<String> series, List<String> jvmArgs, List<Map<String, String>> forkParams,
                                    double plannedSeconds, Consumer<String> onPhase) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(series.size(), r -> {
            Thread t = new Thread(r, "perfkit-fork-waiter");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<ObjectNode>> futures = new ArrayList<>();
            for (int i = 0; i < series.size(); i++) {
                int k = i;
                futures.add(pool.submit(() -> fork(series.get(k), jvmArgs, forkParams.get(k), plannedSeconds, k == 0 ? onPhase : ph -> {})));
            }
            List<ObjectNode> results = new ArrayList<>();
            for (Future<ObjectNode> f : futures) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ex ? ex : e;
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Scratch space for the run (broker logs, queue files, database files): {@code <run>/scratch}, deleted when the run ends. */
    public synchronized Path scratchDir() throws IOException {
        return Files.createDirectories(dir.resolve(SCRATCH_DIR));
    }

    /** Cleanup to do however the run ends (after child processes are stopped), e.g. deleting topics on a user's cluster. */
    public void onFinish(Runnable cleanup) {
        cleanups.add(cleanup);
    }

    /** Forks run with other JVM options than this process; the manifest shows them beside its own. */
    private synchronized void recordForkJvm(JsonNode args) {
        ObjectNode jvm = (ObjectNode) manifest.get("jvm");
        if (args.isArray() && !jvm.has("forkInputArguments")) {
            jvm.set("forkInputArguments", args);
            writeManifest();
        }
    }

    // ---- endings ----------------------------------------------------------------------------------

    public synchronized boolean isRunning() {
        return RUNNING.equals(Manifest.statusOf(manifest));
    }

    /** Sets the final status once; later calls are ignored (returns false), so a Ctrl-C cannot be overwritten. */
    public synchronized boolean finish(String status, String error) {
        if (!isRunning()) return false;
        stopChildren();
        runCleanups();
        deleteRecursively(dir.resolve(SCRATCH_DIR));
        timeSeries.close();
        registerLeftoverFiles();
        manifest.put("status", status);
        if (error == null) manifest.putNull("error"); else manifest.put("error", Manifest.redact(error));
        manifest.put("endedAt", Instant.now().toString());
        writeManifest();
        return true;
    }

    private void onShutdown() {
        if (finish(INTERRUPTED, "interrupted by signal before the run completed")) {
            progress.clear();
            System.err.println("[" + study + "] interrupted: data flushed, run marked interrupted: " + dir);
        }
        stopChildren();
    }

    /** SIGTERM first, so a fork's own shutdown hook flushes its histograms; SIGKILL after 10 s. */
    private void stopChildren() {
        for (Process p : children) p.destroy();
        for (Process p : children) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
    }

    private void runCleanups() {
        for (Runnable c : cleanups) {
            try {
                c.run();
            } catch (RuntimeException e) {
                System.err.println("[" + study + "] cleanup failed: " + Study.oneLine(e));
            }
        }
        cleanups.clear();
    }

    static void deleteRecursively(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("perfkit: could not remove " + root + ": " + e.getMessage());
        }
    }

    /** Files a fork wrote but never reported (it was stopped first) still belong in the listing. */
    private void registerLeftoverFiles() {
        Set<String> known = new HashSet<>();
        files.forEach(f -> known.add(f.get("path").asText()));
        try (Stream<Path> all = Files.walk(dir)) {
            all.filter(Files::isRegularFile)
                    .map(p -> dir.relativize(p).toString())
                    .filter(p -> !p.equals(Manifest.FILE_NAME) && !p.endsWith(".tmp") && !known.contains(p))
                    .sorted()
                    .forEach(p -> addFile(p, kindOf(p), "written before the run ended; may be partial"));
        } catch (IOException ignored) {
            // listing is best effort; the data itself is on disk
        }
    }

    static String kindOf(String path) {
        if (path.endsWith(".hlog")) return "hlog";
        if (path.endsWith(".csv")) return "table";
        if (path.equals("error.txt")) return "log";
        return "other";
    }
}
