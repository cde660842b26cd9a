package perfkit.harness.measure;

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
 * Samples are cut by <em>intended</em> start, not by when they complete or when the log closes: a sample
 * intended inside the {@link #window(long, long) window} is measured, an earlier one is warm-up (not written,
 * unless the log keeps warm-up; readers then trim it by the window), a later one is ignored. All logs of one
 * step share one window, so they measure the same samples; and the caller keeps recording through the drain
 * and closes the log after it, so the slowest in-window samples, still in flight at the window's end, count.
 */
public final class LatencyLog implements AutoCloseable {
    public static final String CORRECTED = ".corrected.hlog";
    public static final String UNCORRECTED = ".uncorrected.hlog";

    /** The measurement window in epoch ms, for the manifest (readers trim kept warm-up with it). */
    public record Window(long startMs, long endMs) {}

    private final List<LatencyRecorder> recorders = new CopyOnWriteArrayList<>();
    private final LatencyRecorder.Shared cut = new LatencyRecorder.Shared(LatencyRecorder.Cut.BEFORE_ANY);
    private final HistogramLogWriter corrected;
    private final HistogramLogWriter uncorrected;
    private final PrintStream correctedOut;
    private final PrintStream uncorrectedOut;
    private final ScheduledExecutorService ticker;
    private final boolean keepWarmup;
    // nanoTime -> epoch ms, fixed once per JVM so every log of a step converts the shared window alike
    private static final long EPOCH_MS = System.currentTimeMillis(), EPOCH_NS = System.nanoTime();
    private boolean windowed;
    private long closedNs;
    private long intervalStartMs = System.currentTimeMillis();
    private long measuredCount;
    private boolean closed;

    public LatencyLog(Path dir, String name, String description) throws java.io.IOException {
        this(dir, name, description, false);
    }

    public LatencyLog(Path dir, String name, String description, boolean keepWarmup) throws java.io.IOException {
        this.keepWarmup = keepWarmup;
        java.nio.file.Files.createDirectories(dir.resolve(name).getParent());
        correctedOut = new PrintStream(dir.resolve(name + CORRECTED).toFile());
        uncorrectedOut = new PrintStream(dir.resolve(name + UNCORRECTED).toFile());
        String warmup = keepWarmup ? "warm-up intervals included (trim them by time)" : "warm-up intervals excluded";
        corrected = open(correctedOut, intervalStartMs, description + " (corrected: from intended start)", warmup);
        uncorrected = open(uncorrectedOut, intervalStartMs, description + " (uncorrected: from actual start)", warmup);
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
        w.outputComment("values in nanoseconds; samples cut by intended start time; " + warmup);
        w.outputStartTime(startMs);
        w.setBaseTime(startMs);
        w.outputBaseTime(startMs);
        w.outputLegend();
        return w;
    }

    /** A recorder for one writer thread. */
    public LatencyRecorder newRecorder() {
        LatencyRecorder r = new LatencyRecorder(cut, keepWarmup);
        recorders.add(r);
        return r;
    }

    /**
     * Sets the measurement window by intended start, in System.nanoTime(): samples intended in [start, end) are
     * measured. Give every log of one step the same pair. A sample is sorted when it is recorded, so choose a start
     * a little after this call (e.g. now + 50 ms): a sample recorded before the call is sorted as warm-up.
     */
    public synchronized void window(long startNanos, long endNanos) {
        if (endNanos - startNanos <= 0) throw new IllegalArgumentException("window end must be after its start");
        setCut(new LatencyRecorder.Cut(LatencyRecorder.Cut.BETWEEN, startNanos, endNanos));
    }

    /** Ends warm-up now, with no planned end: every sample intended from now on is measured. */
    public synchronized void startMeasuring() {
        setCut(new LatencyRecorder.Cut(LatencyRecorder.Cut.FROM, System.nanoTime(), 0));
    }

    private void setCut(LatencyRecorder.Cut c) {
        if (closed) throw new IllegalStateException("latency log already closed");
        writeInterval(); // the interval so far ends here, so a measured interval never starts before the window is set
        cut.cut = c;
        windowed = true;
    }

    /** The measurement window (epoch ms), or null when none was set. An open window ends at close (or now, while open). */
    public synchronized Window window() {
        if (!windowed) return null;
        LatencyRecorder.Cut c = cut.cut;
        long endNs = c.kind() == LatencyRecorder.Cut.BETWEEN ? c.endNs() : closed ? closedNs : System.nanoTime();
        return new Window(epochMs(c.startNs()), epochMs(endNs));
    }

    private long epochMs(long nanos) {
        return EPOCH_MS + Math.floorDiv(nanos - EPOCH_NS, 1_000_000L);
    }

    /** Measured samples written so far (warm-up samples never count). */
    public synchronized long measuredCount() {
        return measuredCount;
    }

    private synchronized void writeInterval() {
        if (closed) return;
        long now = System.currentTimeMillis();
        Histogram c = stamped(now), u = stamped(now), wc = stamped(now), wu = stamped(now);
        for (LatencyRecorder r : recorders) r.drainInto(c, u, wc, wu);
        intervalStartMs = now;
        measuredCount += c.getTotalCount();
        if (!windowed && !keepWarmup) return; // nothing but (unrecorded) warm-up so far
        c.add(wc);
        u.add(wu);
        corrected.outputIntervalHistogram(c);
        uncorrected.outputIntervalHistogram(u);
        correctedOut.flush();
        uncorrectedOut.flush();
    }

    private Histogram stamped(long now) {
        Histogram h = LatencyRecorder.newHistogram();
        h.setStartTimeStamp(intervalStartMs);
        h.setEndTimeStamp(now);
        return h;
    }

    /**
     * Writes the last partial interval and closes both files. Call it after the drain, so late completions of
     * in-window samples are in. Safe to call twice (e.g. from a shutdown hook).
     */
    @Override
    public void close() {
        ticker.shutdownNow();
        synchronized (this) {
            if (closed) return;
            writeInterval();
            closed = true;
            closedNs = System.nanoTime();
            correctedOut.close();
            uncorrectedOut.close();
        }
    }
}
