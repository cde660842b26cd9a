package perfkit.harness.run;

import perfkit.harness.cli.Cli;
import perfkit.harness.measure.CpuSampler;
import perfkit.harness.os.Disk;
import perfkit.harness.os.Errors;
import perfkit.harness.process.Janitor;
import perfkit.harness.process.Profiler;
import perfkit.harness.record.LogTrim;
import perfkit.harness.record.Manifest;
import perfkit.harness.cli.Params;
import perfkit.harness.record.RunFile;
import perfkit.harness.record.RunLayout;
import perfkit.harness.record.RunManifest;
import perfkit.harness.os.Signals;
import perfkit.harness.process.Supervisor;
import perfkit.harness.measure.TimeSeries;

import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One run of a study: its directory {@code <out>/<study>/<run-id>/} ({@link RunLayout}), its manifest
 * ({@link RunManifest}), its time series, its forks ({@link Forks}) and services, all under a {@link Supervisor}. Whatever happens (completion, an exception,
 * Ctrl-C, SIGTERM, even SIGKILL through the reaper) the manifest ends in a final status, the data is flushed,
 * and every child process is stopped.
 */
public final class Run {
    private final String study;
    private final Params params;
    private final Path dir;
    private final RunManifest manifest;
    private final TimeSeries timeSeries;
    private final Progress progress;
    private final Supervisor supervisor;
    private final Forks forks;
    private final List<Runnable> cleanups = new CopyOnWriteArrayList<>();
    private final CountDownLatch shuttingDown = new CountDownLatch(1);
    private volatile int signalExitCode; // 130 after Ctrl-C, 143 after SIGTERM
    /** With --profile: what records the JVMs under test; null without. */
    private Profiler profiler;

    private Run(String study, Map<String, String> params, Path dir, Class<?> mainClass) throws IOException {
        this.study = study;
        this.params = new Params(params);
        this.dir = dir;
        this.progress = new Progress(study);
        this.manifest = new RunManifest(dir, study, params);
        this.supervisor = new Supervisor(dir, mainClass, Cli.JAVA.in(this.params), manifest::addFile);
        this.timeSeries = new TimeSeries(dir.resolve(TimeSeries.FILE_NAME), CpuSampler.forThisMachine());
        this.forks = new Forks(this, supervisor, manifest);
        manifest.addFile(RunFile.of(TimeSeries.FILE_NAME, "timeseries", "per-second throughput per series, CPU% per process and for the system, steal%"));
    }

    /** Tidies up after dead runs, creates the run directory and writes the manifest with status running. */
    public static Run start(String study, Map<String, String> params, Class<?> mainClass) throws IOException {
        Path runsRoot = RunLayout.kitRoot().resolve(Cli.OUT.in(new Params(params)));
        Janitor.sweep(runsRoot);
        Janitor.sweepClusters();
        Run run = new Run(study, params, RunLayout.createUniqueDir(RunLayout.studyDir(runsRoot, study)), mainClass);
        RunLayout.holdReserve(run.dir, study);
        Runtime.getRuntime().addShutdownHook(new Thread(run::onShutdown, "perfkit-shutdown"));
        Signals.watch(code -> run.signalExitCode = code);
        run.manifest.write();
        run.supervisor.startReaper();
        if (Cli.PROFILE.in(run.params))
            run.profiler = Profiler.attach(run.dir, run.manifest::addFile, run.forks::labelOf, run.supervisor, run.timeSeries, run::onFinish);
        run.timeSeries.watchProcess("proc:" + study, ProcessHandle.current().pid());
        run.timeSeries.onRate(run.progress::rate);
        run.progress.onUnit(o -> run.manifest.progress(o.unit(), o.done(), o.total(), o.done() < o.total() ? o.endsAt() : null));
        run.timeSeries.start();
        run.progress.say("run " + run.dir);
        return run;
    }

    // ---- what a study uses --------------------------------------------------------------------------

    public Path dir() { return dir; }
    public String study() { return study; }
    public Progress progress() { return progress; }
    public TimeSeries timeSeries() { return timeSeries; }
    public Params typed() { return params; }

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
                Manifest.JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(privateParams)).process();
        timeSeries.watchProcess("proc:" + series, p.pid());
        Supervisor.pipeLines(series, p, lines);
        return p;
    }

    /** The run's processes: non-JVM servers start with {@link Supervisor#launchProgram}, stopped however the run ends. */
    public Supervisor supervisor() { return supervisor; }

    public Class<?> mainClass() { return supervisor.mainClass(); }

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

    /** The run's forks: each repetition in a fresh JVM, here or on another host (--place). */
    public Forks forks() { return forks; }

    /** Whether the JVMs under test record themselves ({@code --profile}). */
    public boolean profiling() { return profiler != null; }

    /** Runs {@code body} with the recordings held ({@link Profiler#hold}): the plain twin of a recorded measurement. */
    public <T> T unrecorded(java.util.concurrent.Callable<T> body) throws Exception {
        if (profiler == null) return body.call();
        profiler.hold(true);
        try {
            return body.call();
        } finally {
            profiler.hold(false);
        }
    }

    /** One repetition in a fresh JVM, to its end: its result (see {@link Forks}); its CPU and ticks go into the time series as {@code series}. */
    public <T extends Record> T fork(String series, List<String> jvmArgs, Record spec, double plannedSeconds, Class<T> resultType) throws Exception {
        return forks.one(series, jvmArgs, spec, plannedSeconds, phase -> {}, resultType);
    }

    /** Scratch space for the run (broker logs, queue files): {@code <run>/scratch}, deleted when the run ends. */
    public synchronized Path scratchDir() throws IOException {
        return Files.createDirectories(dir.resolve(RunLayout.SCRATCH_DIR));
    }

    /** Cleanup to do however the run ends (after child processes are stopped), e.g. dropping a schema on a user's database. */
    public void onFinish(Runnable cleanup) {
        cleanups.add(cleanup);
    }

    // ---- endings ----------------------------------------------------------------------------------

    public boolean isRunning() {
        return RunLayout.RUNNING.equals(manifest.status());
    }

    /** Sets the final status once; later calls are ignored (returns false), so a Ctrl-C cannot be overwritten. */
    public synchronized boolean finish(String status, String error) {
        if (!isRunning()) return false;
        supervisor.stopAll();
        runCleanups();
        Disk.deleteRecursively(dir.resolve(RunLayout.SCRATCH_DIR));
        LogTrim.trimAll(dir, LogTrim.LIMIT_BYTES); // the writers have stopped
        timeSeries.close();
        RunLayout.releaseReserve(dir); // nothing else writes now: the manifest gets the space even on a full disk
        try {
            manifest.end(status, error);
        } catch (java.io.UncheckedIOException e) {
            System.err.println("error: " + study + ": could not record the run as " + status + ": " + Errors.oneLine(e));
        }
        supervisor.finished();
        return true;
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
        boolean interrupted = finish(RunLayout.INTERRUPTED, "interrupted by signal before the run completed");
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
