package perfkit.harness.process;

import perfkit.harness.os.Errors;
import perfkit.harness.record.HostInfo;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.measure.LatencyLog;
import perfkit.harness.record.Manifest;
import perfkit.harness.record.RunFile;
import perfkit.harness.record.RunLayout;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The child side of a repetition: a fresh JVM started by {@link Forks}. It reads its spec from stdin,
 * reports through {@link ForkProtocol} lines on stdout, and writes its own data files into the run directory.
 * On SIGTERM, Ctrl-C or the parent's death its shutdown hook flushes every latency log it opened.
 */
public final class Fork {
    /** The measured side of a study, inside a fresh JVM per repetition. */
    public interface Body { void run(Fork fork) throws Exception; }

    private final Path dir;
    private final String series;
    /** The stdin line as it came, for {@link #spec}. */
    private final ObjectNode line;
    private final ObjectNode result = Manifest.newObject();
    private final Map<LatencyLog, RunFile[]> logs = new LinkedHashMap<>();
    private boolean logsClosed;
    private static final String SIMPLE_LOGGER_FILE = "org.slf4j.simpleLogger.logFile";
    private String libraryLog;

    private Fork(Path dir, String series, ObjectNode line) {
        this.dir = dir;
        this.series = series;
        this.line = line;
        result.put("series", series);
        result.putArray("files");
        result.set("jvm", HostInfo.jvm());
    }

    /** args: FLAG runDir series; the spec arrives as the first line of stdin. */
    public static void main(String[] args, Body body) {
        try {
            Fork fork = new Fork(Path.of(args[1]), args[2], ForkProtocol.decodeLine(ChildProcess.firstLine()));
            fork.routeLibraryLogging();
            JvmActivity.reportEverySecond(); // its JIT and GC time, as the servers under test report theirs: warmth can be judged
            Runtime.getRuntime().addShutdownHook(new Thread(fork::closeLogs, "perfkit-fork-shutdown"));
            body.run(fork);
            Profile.finish();
            fork.closeLogs();
            System.out.println(ForkProtocol.result(fork.result));
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            if (ChildProcess.orphaned()) ChildProcess.stopOrphaned(); // it failed because the run is gone: say only that
            // one line for the terminal; the stack trace for whoever debugs it, in the run's folder if the disk allows
            System.err.println("fork " + (args.length > 2 ? args[2] : "") + " failed: " + Errors.oneLine(t));
            if (args.length > 2) Errors.writeStackTrace(Path.of(args[1]).resolve("error-" + args[2].replaceAll("[^A-Za-z0-9._-]", "_") + ".txt"), t);
            System.exit(1);
        }
    }

    /**
     * Libraries that log through slf4j-simple (Flowable, the Kafka clients) write to {@code logs/<series>.log} in the
     * run's folder, not to the terminal: a failure reaches the terminal as the fork's one line, the detail stays here.
     */
    private void routeLibraryLogging() {
        if (System.getProperty(SIMPLE_LOGGER_FILE) != null) return; // the study chose a file itself
        try {
            Files.createDirectories(dir.resolve("logs"));
            String stem = "logs/" + series.replaceAll("[^A-Za-z0-9._-]", "_");
            libraryLog = stem + ".log";
            for (int k = 2; Files.exists(dir.resolve(libraryLog)); k++) libraryLog = stem + "-" + k + ".log"; // a series run twice keeps both
            System.setProperty(SIMPLE_LOGGER_FILE, dir.resolve(libraryLog).toString());
        } catch (IOException e) {
            // a full disk: the libraries keep the terminal, and the run fails on its own writes
        }
    }

    public Path dir() { return dir; }

    /** The run's scratch space, shared with the parent and deleted when the run ends. */
    public Path scratchDir() throws IOException { return Files.createDirectories(dir.resolve(RunLayout.SCRATCH_DIR)); }

    public String series() { return series; }

    /** What the parent sent as a study's typed spec ({@link Run#fork(String, List, Record, double, Class)}): read once, no strings to parse. */
    public <T extends Record> T spec(Class<T> type) throws IOException { return ForkProtocol.spec(line, type); }
    /** What this repetition reports back, as the study's result record (the parent reads it with {@link Run#fork(String, List, Record, double, Class)}). */
    public void result(Record measured) {
        result.setAll((ObjectNode) Manifest.JSON.valueToTree(measured));
    }

    public void phase(String name, double plannedSeconds) {
        System.out.println(ForkProtocol.phase(name, plannedSeconds));
    }

    /** Reports a cumulative count to the parent, stamped with this moment, for the per-second time series. */
    public void report(long cumulative) {
        System.out.println(ForkProtocol.tick(cumulative, System.nanoTime()));
    }

    /** Waits {@code seconds} while reporting the cumulative count to the parent about once a second. */
    public void await(double seconds, LongSupplier cumulative) throws InterruptedException {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            Thread.sleep(Math.max(1, Math.min(1000, left / 1_000_000)));
            report(cumulative.getAsLong());
        }
    }

    /**
     * Opens the two interval logs (corrected and uncorrected) of one latency series of {@code cell} in this fork,
     * {@code latency/<series>.fork<k>.<timing>.hlog}, and lists them in the result with their fields. {@code keepWarmup}:
     * warm-up intervals are written too (a study's --keep-warmup), not only the window's.
     */
    public LatencyLog latencyLog(String cell, String series, int fork, String description, boolean keepWarmup) throws IOException {
        String stem = "latency/" + series.replace('/', '.') + ".fork" + fork;
        LatencyLog log = new LatencyLog(dir, stem, description, keepWarmup);
        RunFile corrected = new RunFile(stem + LatencyLog.CORRECTED, "hlog",
                description + "; corrected for coordinated omission (from intended start), ns", cell, series, fork, RunFile.CORRECTED, null, null);
        RunFile uncorrected = new RunFile(stem + LatencyLog.UNCORRECTED, "hlog",
                description + "; uncorrected (from actual start), ns", cell, series, fork, RunFile.UNCORRECTED, null, null);
        synchronized (logs) {
            logs.put(log, new RunFile[]{corrected, uncorrected});
        }
        return log;
    }

    /** Closes the logs, then lists them with the window they measured. */
    private void closeLogs() {
        synchronized (logs) {
            if (logsClosed) return;
            logsClosed = true;
            ArrayNode files = (ArrayNode) result.get("files");
            logs.forEach((log, entries) -> {
                log.close();
                LatencyLog.Window w = log.window();
                for (RunFile f : entries) files.add((w == null ? f : f.withWindow(w.startMs(), w.endMs())).toJson());
            });
            listLibraryLog(files);
        }
    }

    /** Lists what the libraries logged, or removes the empty file slf4j-simple opened. */
    private void listLibraryLog(ArrayNode files) {
        if (libraryLog == null) return;
        Path log = dir.resolve(libraryLog);
        try {
            if (Files.isRegularFile(log) && Files.size(log) > 0) files.add(RunFile.of(libraryLog, "log", "what the libraries of fork " + series + " logged").toJson());
            else Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // listing a log is not worth failing a measured fork for
        }
    }
}
