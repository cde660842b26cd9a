//DEPS org.hdrhistogram:HdrHistogram:2.2.2
package perfkit.harness.measure;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.WriterReaderPhaser;

/**
 * The hot recording path: one instance per recording thread (single writer), holding the
 * coordinated-omission-corrected and the raw latency of each sample.
 * <p>
 * A recorder from {@link LatencyLog#newRecorder()} sorts each sample by its <em>intended</em> start against the
 * log's window: inside it is measured, before it is warm-up (kept apart, or not recorded at all), after it is
 * ignored. So when a sample completes does not matter: a slow one that ends after the window still counts.
 * A recorder made with {@code new LatencyRecorder()} has no window and measures everything.
 * <p>
 * Why not two HdrHistogram {@code Recorder}s? Each recordValue enters its own phaser with two atomic
 * increments; one phaser around two plain histograms costs about a quarter of that
 * (the overhead study, {@code ./bench run overhead}, measures it). Steady-state recording allocates nothing.
 */
public final class LatencyRecorder {
    /** The window by intended time (System.nanoTime), immutable and swapped whole, so a sample sees one consistent pair. */
    record Cut(int kind, long startNs, long endNs) {
        static final int NONE = 0, FROM = 1, BETWEEN = 2, ALL = 3;
        static final Cut BEFORE_ANY = new Cut(NONE, 0, 0), EVERYTHING = new Cut(ALL, 0, 0);
        static final int WARMUP = -1, MEASURED = 0, AFTER = 1;

        /** Where a sample falls. Differences, not comparisons, because nanoTime may wrap. */
        int classify(long intendedNs) {
            if (kind == ALL) return MEASURED;
            if (kind == NONE || intendedNs - startNs < 0) return WARMUP;
            return kind == BETWEEN && intendedNs - endNs >= 0 ? AFTER : MEASURED;
        }
    }

    /** The window shared by one log and all its recorders. */
    static final class Shared {
        volatile Cut cut;
        Shared(Cut cut) { this.cut = cut; }
    }

    private final Shared window;
    private final boolean keepWarmup;
    private final WriterReaderPhaser phaser = new WriterReaderPhaser();
    private volatile Histogram activeCorrected = newHistogram();
    private volatile Histogram activeUncorrected = newHistogram();
    private Histogram spareCorrected = newHistogram();
    private Histogram spareUncorrected = newHistogram();
    // warm-up samples, only when the log keeps warm-up: apart from the measured ones so measuredCount stays exact
    private volatile Histogram warmCorrected, warmUncorrected;
    private Histogram spareWarmCorrected, spareWarmUncorrected;

    /** A stand-alone recorder: every sample is measured. */
    public LatencyRecorder() {
        this(new Shared(Cut.EVERYTHING), false);
    }

    LatencyRecorder(Shared window, boolean keepWarmup) {
        this.window = window;
        this.keepWarmup = keepWarmup;
        if (keepWarmup) {
            warmCorrected = newHistogram();
            warmUncorrected = newHistogram();
            spareWarmCorrected = newHistogram();
            spareWarmUncorrected = newHistogram();
        }
    }

    static Histogram newHistogram() {
        return new Histogram(3); // auto-resizing, 3 significant digits, values in nanoseconds
    }

    /**
     * Records one sample. {@code intendedNs}: when it should have started (the schedule of an open-model load);
     * {@code startNs}: when it actually started; {@code endNs}: when it completed. All from System.nanoTime().
     * Returns whether it counted as measured: a caller that keeps counts of its own beside the log (a table's row)
     * counts exactly these, so the two agree even when the window was set late (a busy machine can hold the thread
     * that sets it past the window's start).
     */
    public boolean record(long intendedNs, long startNs, long endNs) {
        int where = window.cut.classify(intendedNs);
        if (where == Cut.AFTER || (where == Cut.WARMUP && !keepWarmup)) return false;
        boolean measured = where == Cut.MEASURED;
        long phase = phaser.writerCriticalSectionEnter();
        try {
            (measured ? activeCorrected : warmCorrected).recordValue(Math.max(0, endNs - intendedNs));
            (measured ? activeUncorrected : warmUncorrected).recordValue(Math.max(0, endNs - startNs));
        } finally {
            phaser.writerCriticalSectionExit(phase);
        }
        return measured;
    }

    /**
     * Swaps in empty histograms and adds what was recorded since the last drain to the targets: measured samples to
     * {@code corrected}/{@code uncorrected}, kept warm-up samples to {@code warmCorrected}/{@code warmUncorrected}. Reader side.
     */
    synchronized void drainInto(Histogram corrected, Histogram uncorrected, Histogram warmCorrectedOut, Histogram warmUncorrectedOut) {
        spareCorrected.reset();
        spareUncorrected.reset();
        if (keepWarmup) {
            spareWarmCorrected.reset();
            spareWarmUncorrected.reset();
        }
        phaser.readerLock();
        try {
            Histogram c = activeCorrected, u = activeUncorrected;
            activeCorrected = spareCorrected;
            activeUncorrected = spareUncorrected;
            spareCorrected = c;
            spareUncorrected = u;
            if (keepWarmup) {
                Histogram wc = warmCorrected, wu = warmUncorrected;
                warmCorrected = spareWarmCorrected;
                warmUncorrected = spareWarmUncorrected;
                spareWarmCorrected = wc;
                spareWarmUncorrected = wu;
            }
            phaser.flipPhase();
        } finally {
            phaser.readerUnlock();
        }
        corrected.add(spareCorrected);
        uncorrected.add(spareUncorrected);
        if (keepWarmup) {
            warmCorrectedOut.add(spareWarmCorrected);
            warmUncorrectedOut.add(spareWarmUncorrected);
        }
    }
}
