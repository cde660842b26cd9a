package perfkit.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One run of a study: its directory {@code <out>/<study>/<run-id>/}, its manifest ({@link RunManifest}), its
 * time series, and its child processes ({@link Supervisor}). Whatever happens (completion, an exception,
 * Ctrl-C, SIGTERM, even SIGKILL through the reaper) the manifest ends in a final status, the data is flushed,
 * and every child process is stopped.
 */
public final class Run {
    public static final String RUNNING = RunLayout.RUNNING, COMPLETE = RunLayout.COMPLETE, FAILED = RunLayout.FAILED,
            INTERRUPTED = RunLayout.INTERRUPTED;
    static final String SCRATCH_DIR = RunLayout.SCRATCH_DIR;
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String study;
    private final Params params;
    private final Path dir;
    private final RunManifest manifest;
    private final TimeSeries timeSeries;
    private final Progress progress;
    private final Supervisor supervisor;
    private final List<Runnable> cleanups = new CopyOnWriteArrayList<>();
    private final CountDownLatch shuttingDown = new CountDownLatch(1);
    private volatile int signalExitCode; // 130 after Ctrl-C, 143 after SIGTERM

    private Run(String study, Map<String, String> params, Path dir, Class<?> mainClass) throws IOException {
        this.study = study;
        this.params = new Params(params);
        this.dir = dir;
        this.progress = new Progress(study);
        this.manifest = new RunManifest(dir, study, params);
        this.supervisor = new Supervisor(dir, mainClass, params.get("java"));
        this.timeSeries = new TimeSeries(dir.resolve(TimeSeries.FILE_NAME), CpuSampler.forThisMachine());
        manifest.addFile(RunFile.of(TimeSeries.FILE_NAME, "timeseries", "per-second throughput per series, CPU% per process and for the system, steal%"));
    }

    /** Tidies up after dead runs, creates the run directory and writes the manifest with status running. */
    public static Run start(String study, Map<String, String> params, Class<?> mainClass) throws IOException {
        Path runsRoot = kitRoot().resolve(params.get("out"));
        Janitor.sweep(runsRoot);
        Janitor.sweepClusters();
        long free = Sys.freeBytes(runsRoot), needed = RunLayout.minFreeMb() << 20;
        if (free >= 0 && free < needed)
            throw new UserError(study + ": only " + (free >> 20) + " MB free under " + runsRoot + "; a run needs at least " + (needed >> 20)
                    + " MB (free some space, choose another --out, or set PERFKIT_MIN_FREE_MB)");
        Path studyDir;
        try {
            studyDir = Files.createDirectories(runsRoot.resolve(study));
        } catch (IOException e) {
            throw new UserError(study + ": cannot create the run folder under " + runsRoot + " (" + e.getClass().getSimpleName() + ")");
        }
        Run run = new Run(study, params, createUniqueDir(studyDir), mainClass);
        run.holdReserve();
        Runtime.getRuntime().addShutdownHook(new Thread(run::onShutdown, "perfkit-shutdown"));
        run.noteSignals();
        run.manifest.write();
        run.supervisor.startReaper();
        run.timeSeries.watchProcess("proc:" + study, ProcessHandle.current().pid());
        run.timeSeries.onRate(run.progress::rate);
        run.timeSeries.start();
        run.progress.say("run " + run.dir);
        return run;
    }

    /** Where data and git live: PERFKIT_HOME (set by ./bench), else the working directory. */
    public static Path kitRoot() { return RunLayout.kitRoot(); }

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

    // ---- what a study uses --------------------------------------------------------------------------

    public Path dir() { return dir; }
    public String study() { return study; }
    public Progress progress() { return progress; }
    public TimeSeries timeSeries() { return timeSeries; }
    public Params typed() { return params; }
    public String param(String name) { return params.values().get(name); }
    public long integer(String name) { return params.integer(name); }
    public double seconds(String name) { return params.seconds(name); }

    /** Study-specific facts a reader needs, e.g. how a variant is built. Call {@link #writeManifest()} after changing them. */
    public ObjectNode notes() { return manifest.notes(); }

    /** A part of this run placed on another host: its entry in the manifest's {@code placement} (see {@link RemotePostgres}). */
    public void placed(ObjectNode part) { manifest.placed(part); }

    /** What kind of measurement this run is (schema field {@code mode}), e.g. throughput or fixed-rate. */
    public void mode(String mode) { manifest.mode(mode); }

    public void variants(List<String> variants) { manifest.variants(variants); }

    public void measurement(double warmupSeconds, double measureSeconds, long repetitions, String repetitionKind) {
        manifest.measurement(warmupSeconds, measureSeconds, repetitions, repetitionKind);
    }

    /** Registers a data file (path relative to the run directory) with what it holds. */
    public void addFile(String path, String kind, String description) { addFile(RunFile.of(path, kind, description)); }

    public void addFile(RunFile file) { manifest.addFile(file); }

    /** Marks the run as not to be trusted, e.g. when the load generator could not hold its rate. */
    public void invalid(String reason) {
        progress.say("INVALID: " + reason);
        manifest.invalid(reason);
    }

    public void writeManifest() { manifest.write(); }

    // ---- child processes ------------------------------------------------------------------------------

    /**
     * Starts a long-running helper JVM, such as a message broker, from this study's main class with {@code args}.
     * Each line it prints goes to {@code lines}. It is stopped by {@link #stopService} or when the run ends, and
     * stops itself if this JVM dies.
     */
    public Process startService(String series, List<String> jvmArgs, List<String> args, Consumer<String> lines) throws IOException {
        return startService(series, jvmArgs, args, Map.of(), lines);
    }

    /**
     * The same, handing the service {@code privateParams} (a password, say) over its stdin, never on its command
     * line; the service reads them with {@link ChildProcess#param}.
     */
    public Process startService(String series, List<String> jvmArgs, List<String> args, Map<String, String> privateParams,
                                Consumer<String> lines) throws IOException {
        return startService(series, null, jvmArgs, args, privateParams, lines);
    }

    /** The same on another JVM: {@code java} is a java executable (null: the run's --java, else its own). */
    public Process startService(String series, String java, List<String> jvmArgs, List<String> args, Map<String, String> privateParams,
                                Consumer<String> lines) throws IOException {
        Process p = supervisor.launchJvm(series, java, jvmArgs, args,
                Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(privateParams)).process();
        timeSeries.watchProcess("proc:" + series, p.pid());
        Supervisor.pipeLines(series, p, lines);
        return p;
    }

    /** Starts a non-JVM server (e.g. PostgreSQL) under a watchdog; see {@link Supervisor#launchProgram}. */
    Supervisor.Child startProgram(String name, List<String> command, Path log, String signal, double graceSeconds, List<Path> removeOnExit) throws IOException {
        return supervisor.launchProgram(name, command, log, signal, graceSeconds, removeOnExit, null);
    }

    Supervisor.Child startProgram(String name, List<String> command, Path log, String signal, double graceSeconds, List<Path> removeOnExit,
                                  String firstLine) throws IOException {
        return supervisor.launchProgram(name, command, log, signal, graceSeconds, removeOnExit, firstLine);
    }

    Supervisor supervisor() { return supervisor; }

    Class<?> mainClass() { return supervisor.mainClass(); }

    /**
     * Pins every JVM started later whose series starts with {@code seriesPrefix} to {@code cpus} (taskset's list, e.g.
     * {@code 0} or {@code 1-3}), as the originals pinned their services to isolated cores. The study records the placement.
     */
    public void pinCpus(String seriesPrefix, String cpus) {
        supervisor.pin(seriesPrefix, cpus);
    }

    /** Stops a service: stdin closed and SIGTERM, SIGKILL after 10 s; its CPU is no longer sampled. */
    public void stopService(String series, Process p) throws InterruptedException {
        Supervisor.Child c = supervisor.childOf(p);
        if (c != null) supervisor.stop(c, 10);
        else p.destroy();
        timeSeries.unwatchProcess("proc:" + series);
    }

    /**
     * Runs one repetition in a fresh JVM (same java, same classpath, this study's main class) and returns what it
     * measured. The study's typed spec (a record; the fork reads it with {@link Fork#spec}) goes over the fork's stdin,
     * and the fork answers with the study's result record ({@link Fork#result(Record)}): both declared once, in Java.
     * Its CPU and counter ticks go into the time series as {@code series}.
     */
    public <T extends Record> T fork(String series, List<String> jvmArgs, Record spec, double plannedSeconds, Class<T> resultType) throws Exception {
        return fork(series, jvmArgs, spec, plannedSeconds, phase -> {}, resultType);
    }

    /** The same, telling {@code onPhase} each phase the fork enters. */
    public <T extends Record> T fork(String series, List<String> jvmArgs, Record spec, double plannedSeconds, Consumer<String> onPhase,
                                     Class<T> resultType) throws Exception {
        return forkOn(ForkHost.HERE, series, jvmArgs, spec, plannedSeconds, onPhase, resultType).result();
    }

    /**
     * Where a fork runs: here ({@link #HERE}), or as part {@code part} on {@code host} (--place), started there by
     * {@code launcher} (the remote JVM's), where it reads the same spec, writes its files into a folder of its own that
     * come back into this run's folder when it ends, and lives under the part's agent.
     */
    public record ForkHost(String part, Ssh host, Launcher launcher) {
        public static final ForkHost HERE = new ForkHost(null, null, null);
    }

    /** Runs one fork on another host to its end: each line it prints to {@code lines}, its files back in the run's folder. */
    public interface Launcher {
        Launched launch(Run run, String part, Ssh host, String series, List<String> jvmArgs, String stdinLine, Consumer<String> lines)
                throws Exception;
    }

    /** How a fork on another host ended: its exit code (null: its session ended first), and its host. */
    public record Launched(Integer exitCode, PlacedHost host) {}

    /** The host a fork ran on: its clock, and its CPU over a window of this host's epoch ms. */
    public interface PlacedHost {
        /** This host's epoch ms for an instant stamped on that host's clock. */
        long localMs(long remoteEpochMs);
        double hostBusyPercent(long fromMs, long toMs);
        double hostStealPercent(long fromMs, long toMs);
        int hostCores();
    }

    /**
     * A typed fork's result, with the data files it wrote (its latency logs), for a parent that reads them back; and,
     * for a fork on another host, that host: its clock and its CPU.
     */
    public record Forked<T extends Record>(T result, List<RunFile> files, PlacedHost placed) {
        /** This host's epoch ms for an instant the fork stamped on its own clock: the same instant for a fork here. */
        public long localMs(long forkEpochMs) { return placed == null ? forkEpochMs : placed.localMs(forkEpochMs); }
    }

    /** {@link #fork} where {@code host} says. */
    public <T extends Record> Forked<T> forkOn(ForkHost host, String series, List<String> jvmArgs, Record spec, double plannedSeconds,
                                               Consumer<String> onPhase, Class<T> resultType) throws Exception {
        ForkLines lines = new ForkLines(series, onPhase);
        PlacedHost placed;
        try {
            placed = host.host() == null ? forkHere(series, jvmArgs, ForkProtocol.encodeSpec(spec), plannedSeconds, lines)
                    : forkThere(host, series, jvmArgs, ForkProtocol.encodeSpec(spec), plannedSeconds, lines);
        } finally {
            lines.close();
        }
        ObjectNode out = lines.result.get();
        manifest.forkJvm(out.path("jvm"));
        List<RunFile> files = new ArrayList<>();
        for (JsonNode f : out.path("files")) files.add(RunFile.fromJson(f));
        for (RunFile f : files) manifest.addFile(f);
        return new Forked<>(ForkProtocol.result(out, resultType), files, placed);
    }

    private PlacedHost forkHere(String series, List<String> jvmArgs, String stdinLine, double plannedSeconds, ForkLines lines) throws Exception {
        Supervisor.Child child = supervisor.launchJvm(series, jvmArgs, List.of(ForkProtocol.FLAG, dir.toString(), series), stdinLine);
        Process p = child.process();
        timeSeries.watchProcess("proc:" + series, p.pid());
        progress.phase(series + " starting", plannedSeconds);
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) lines.accept(line);
            lines.check(p.waitFor(), "");
        } finally {
            timeSeries.unwatchProcess("proc:" + series);
            supervisor.forget(child);
        }
        return null;
    }

    private PlacedHost forkThere(ForkHost host, String series, List<String> jvmArgs, String stdinLine, double plannedSeconds, ForkLines lines) throws Exception {
        progress.phase(series + " starting on " + host.host(), plannedSeconds);
        Launched end = host.launcher().launch(this, host.part(), host.host(), series, jvmArgs, stdinLine, lines);
        if (end.exitCode() == null) throw new IllegalStateException("fork " + series + " on " + host.host() + ": its session ended before it did");
        lines.check(end.exitCode(), " on " + host.host());
        for (JsonNode f : lines.result.get().path("files"))
            if (!Files.isRegularFile(dir.resolve(f.path("path").asText())))
                throw new IllegalStateException("fork " + series + " on " + host.host() + " wrote " + f.path("path").asText() + ", which did not come back");
        return end.host();
    }

    /** What a fork says on stdout, line by line: ticks, phases and its result; any other line goes to the terminal. */
    private final class ForkLines implements Consumer<String> {
        private final String series;
        private final Consumer<String> onPhase;
        private final TimeSeries.Counter counter;
        private final JvmActivity.Listener activity;
        final AtomicReference<ObjectNode> result = new AtomicReference<>();
        private volatile Exception unreadable;

        ForkLines(String series, Consumer<String> onPhase) {
            this.series = series;
            this.onPhase = onPhase;
            this.counter = timeSeries.counter(series);
            this.activity = JvmActivity.listen(timeSeries, "jvm:" + series);
        }

        @Override
        public void accept(String line) {
            try {
                if (line.startsWith(ForkProtocol.TICK)) {
                    ForkProtocol.Tick t = ForkProtocol.parseTick(line);
                    counter.report(t.count(), t.nanos());
                } else if (line.startsWith(ForkProtocol.PHASE)) {
                    ForkProtocol.Phase ph = ForkProtocol.parsePhase(line);
                    timeSeries.phase(ph.name());
                    progress.phase(series + " " + ph.name(), ph.plannedSeconds());
                    onPhase.accept(ph.name());
                } else if (line.startsWith(ForkProtocol.RESULT)) {
                    result.set(ForkProtocol.parseResult(line));
                } else if (!activity.accept(line)) {
                    System.err.println(line);
                }
            } catch (IOException | RuntimeException e) {
                if (unreadable == null) unreadable = e;
            }
        }

        /** Fails unless the fork exited 0 with a readable result. */
        void check(int code, String where) throws Exception {
            if (unreadable != null) throw new IllegalStateException("fork " + series + where + " said something unreadable: " + Errors.oneLine(unreadable), unreadable);
            if (code != 0 || result.get() == null)
                throw new IllegalStateException("fork " + series + where + " exited with code " + code + (result.get() == null ? " without a result" : ""));
        }

        void close() {
            timeSeries.unwatchCounter(series);
            timeSeries.unwatchCounter("jvm:" + series);
            timeSeries.phase("between");
        }
    }

    /**
     * Several typed forks at once, one spec each (e.g. one JVM per instance); returns their results in order, each with
     * its files, or throws the first failure. Only the first fork's phases reach {@code onPhase}.
     */
    public <T extends Record> List<Forked<T>> forkAll(List<String> series, List<String> jvmArgs, List<? extends Record> specs, double plannedSeconds,
                                                      Consumer<String> onPhase, Class<T> resultType) throws Exception {
        return forkAll(series, jvmArgs, specs, java.util.Collections.nCopies(series.size(), ForkHost.HERE), plannedSeconds, onPhase, resultType);
    }

    /** The same, fork k where {@code hosts} k says. */
    public <T extends Record> List<Forked<T>> forkAll(List<String> series, List<String> jvmArgs, List<? extends Record> specs, List<ForkHost> hosts,
                                                      double plannedSeconds, Consumer<String> onPhase, Class<T> resultType) throws Exception {
        return all(series.size(), k -> forkOn(hosts.get(k), series.get(k), jvmArgs, specs.get(k), plannedSeconds, k == 0 ? onPhase : ph -> {}, resultType));
    }

    private interface ForkCall<T> { T call(int index) throws Exception; }

    private static <T> List<T> all(int n, ForkCall<T> fork) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "perfkit-fork-waiter");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                futures.add(pool.submit(() -> fork.call(k)));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
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

    /** Scratch space for the run (broker logs, queue files): {@code <run>/scratch}, deleted when the run ends. */
    public synchronized Path scratchDir() throws IOException {
        return Files.createDirectories(dir.resolve(SCRATCH_DIR));
    }

    /** Cleanup to do however the run ends (after child processes are stopped), e.g. dropping a schema on a user's database. */
    public void onFinish(Runnable cleanup) {
        cleanups.add(cleanup);
    }

    // ---- endings ----------------------------------------------------------------------------------

    public boolean isRunning() {
        return RUNNING.equals(manifest.status());
    }

    /** Sets the final status once; later calls are ignored (returns false), so a Ctrl-C cannot be overwritten. */
    public synchronized boolean finish(String status, String error) {
        if (!isRunning()) return false;
        supervisor.stopAll();
        runCleanups();
        Sys.deleteRecursively(dir.resolve(SCRATCH_DIR));
        LogTrim.trimAll(dir, LogTrim.LIMIT_BYTES); // the writers have stopped
        timeSeries.close();
        releaseReserve(); // nothing else writes now: the manifest gets the space even on a full disk
        try {
            manifest.end(status, error);
        } catch (java.io.UncheckedIOException e) {
            System.err.println("error: " + study + ": could not record the run as " + status + ": " + Errors.oneLine(e));
        }
        supervisor.finished();
        return true;
    }

    /** A file of {@link RunLayout#RESERVE_BYTES} that only {@link #finish} gives back, for the manifest's last write. */
    private void holdReserve() {
        try {
            Files.write(dir.resolve(RunLayout.RESERVE_FILE), new byte[RunLayout.RESERVE_BYTES]);
        } catch (IOException e) {
            Sys.deleteRecursively(dir.resolve(RunLayout.RESERVE_FILE));
            throw new UserError(study + ": cannot write under " + dir.getParent() + ": " + Sys.reason(e));
        }
    }

    private void releaseReserve() {
        try { Files.deleteIfExists(dir.resolve(RunLayout.RESERVE_FILE)); } catch (IOException ignored) { }
    }

    /**
     * True once this JVM is shutting down (Ctrl-C, SIGTERM, or an exit), waiting up to {@code seconds} for it. The
     * shutdown then ends the JVM with the signal's code, so the main thread must not pick an exit code of its own.
     */
    public boolean awaitShutdown(double seconds) {
        try {
            return shuttingDown.await((long) (seconds * 1000), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return shuttingDown.getCount() == 0;
        }
    }

    private void onShutdown() {
        shuttingDown.countDown();
        boolean interrupted = finish(INTERRUPTED, "interrupted by signal before the run completed");
        if (interrupted) {
            progress.clear();
            System.err.println("[" + study + "] interrupted: data flushed, run marked interrupted: " + dir);
        }
        supervisor.stopAll();
        // The exit code must say "interrupted" whichever thread reaches the JVM's exit first.
        if (interrupted && signalExitCode != 0) {
            System.err.flush();
            Runtime.getRuntime().halt(signalExitCode);
        }
    }

    /**
     * Remembers which signal ends the run, then hands it to the JVM's own handler (which starts the shutdown).
     * {@code sun.misc.Signal} is reached by reflection: javac warns about it on every compile otherwise, and a
     * study's first run would print those warnings to its user.
     */
    private void noteSignals() {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal"), handlerType = Class.forName("sun.misc.SignalHandler");
            java.lang.reflect.Method handle = signalClass.getMethod("handle", signalClass, handlerType);
            java.lang.reflect.Method number = signalClass.getMethod("getNumber");
            java.lang.reflect.Method delegate = handlerType.getMethod("handle", signalClass);
            for (String name : List.of("INT", "TERM")) {
                Object signal = signalClass.getConstructor(String.class).newInstance(name);
                Object[] jvmHandler = new Object[1];
                Object ours = java.lang.reflect.Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[]{handlerType}, (proxy, m, args) -> {
                    if (!m.getName().equals("handle")) return m.invoke(this, args); // toString, hashCode, equals
                    signalExitCode = 128 + (int) number.invoke(args[0]);
                    try {
                        delegate.invoke(jvmHandler[0], args[0]);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        if (!(e.getCause() instanceof UnsupportedOperationException)) throw e.getCause();
                        System.exit(signalExitCode); // a native default: exit the usual way
                    }
                    return null;
                });
                try {
                    jvmHandler[0] = handle.invoke(null, signal, ours);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    if (!(e.getCause() instanceof IllegalArgumentException)) throw e;
                    // started with this signal ignored (e.g. nohup): leave it so
                }
            }
        } catch (ReflectiveOperationException e) {
            System.err.println("perfkit: cannot watch for Ctrl-C and SIGTERM (" + e + "); an interrupted run still stops, with the JVM's exit code");
        }
    }

    private void runCleanups() {
        for (Runnable c : cleanups) {
            try {
                c.run();
            } catch (RuntimeException e) {
                System.err.println("[" + study + "] cleanup failed: " + Errors.oneLine(e));
            }
        }
        cleanups.clear();
    }
}
