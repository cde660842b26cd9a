package perfkit.harness;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One latency series written as two HdrHistogram interval logs, one histogram per second:
 * {@code <name>.corrected.hlog} (timed from the intended start) and {@code <name>.uncorrected.hlog}
 * (timed from the actual start). Values are nanoseconds; the files are plain HdrHistogram logs, so
 * HistogramLogProcessor and other HdrHistogram readers decode them.
 * <p>
 * Intervals before {@link #startMeasuring()} are warm-up: drained and dropped, never written, unless the
 * log keeps warm-up (then they are written too, and readers trim them by time; the manifest says which).
 */
public final class LatencyLog implements AutoCloseable {
    public static final String CORRECTED = ".corrected.hlog";
    public static final String UNCORRECTED = ".uncorrected.hlog";

    private final List<LatencyRecorder> recorders = new CopyOnWriteArrayList<>();
    private final HistogramLogWriter corrected;
    private final HistogramLogWriter uncorrected;
    private final PrintStream correctedOut;
    private final PrintStream uncorrectedOut;
    private final ScheduledExecutorService ticker;
    private final boolean keepWarmup;
    private volatile boolean measuring;
    private long intervalStartMs = System.currentTimeMillis();
    private long measuredCount;
    private boolean closed;

    public LatencyLog(Path dir, String name, String description) throws java.io.IOException {
        this(dir, name, description, false);
    }

    public LatencyLog(Path dir, String name, String description, boolean keepWarmup) throws java.io.IOException {
        this.keepWarmup = keepWarmup;
        long now = System.currentTimeMillis();
        java.nio.file.Files.createDirectories(dir.resolve(name).getParent());
        correctedOut = new PrintStream(dir.resolve(name + CORRECTED).toFile());
        uncorrectedOut = new PrintStream(dir.resolve(name + UNCORRECTED).toFile());
        String warmup = keepWarmup ? "warm-up intervals included (trim them by time)" : "warm-up intervals excluded";
        corrected = open(correctedOut, now, description + " (corrected: from intended start)", warmup);
        uncorrected = open(uncorrectedOut, now, description + " (uncorrected: from actual start)", warmup);
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "perfkit-hlog-" + name);
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(this::writeInterval, 1, 1, TimeUnit.SECONDS);
    }

    private static HistogramLogWriter open(PrintStream out, long startMs, String comment, String warmup) {
        HistogramLogWriter w = new HistogramLogWriter(out);
        w.outputLogFormatVersion();
        w.outputComment(comment.replace('\n', ' '));
        w.outputComment("values in nanoseconds; " + warmup);
        w.outputStartTime(startMs);
        w.setBaseTime(startMs);
        w.outputBaseTime(startMs);
        w.outputLegend();
        return w;
    }

    /** A recorder for one writer thread. */
    public LatencyRecorder newRecorder() {
        LatencyRecorder r = new LatencyRecorder();
        recorders.add(r);
        return r;
    }

    /** Ends warm-up: what was recorded so far is dropped (or written, when keeping warm-up); from now on every interval is written. */
    public synchronized void startMeasuring() {
        if (keepWarmup) write(drain()); else drain();
        measuring = true;
    }

    /** Samples written so far (measured intervals only). */
    public synchronized long measuredCount() {
        return measuredCount;
    }

    private synchronized void writeInterval() {
        if (closed) return;
        Histogram[] interval = drain();
        if (measuring || keepWarmup) write(interval);
        if (measuring) measuredCount += interval[0].getTotalCount();
    }

    private void write(Histogram[] interval) {
        corrected.outputIntervalHistogram(interval[0]);
        uncorrected.outputIntervalHistogram(interval[1]);
        correctedOut.flush();
        uncorrectedOut.flush();
    }

    private Histogram[] drain() {
        long now = System.currentTimeMillis();
        Histogram c = LatencyRecorder.newHistogram(), u = LatencyRecorder.newHistogram();
        for (LatencyRecorder r : recorders) r.drainInto(c, u);
        for (Histogram h : new Histogram[]{c, u}) {
            h.setStartTimeStamp(intervalStartMs);
            h.setEndTimeStamp(now);
        }
        intervalStartMs = now;
        return new Histogram[]{c, u};
    }

    /** Writes the last partial interval and closes both files. Safe to call twice (e.g. from a shutdown hook). */
    @Override
    public void close() {
        ticker.shutdownNow();
        synchronized (this) {
            if (closed) return;
            writeInterval();
            closed = true;
            correctedOut.close();
            uncorrectedOut.close();
        }
    }
}
