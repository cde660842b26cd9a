//DEPS org.hdrhistogram:HdrHistogram:2.2.2
package perfkit.harness;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.WriterReaderPhaser;

/**
 * The hot recording path: one instance per recording thread (single writer), holding the
 * coordinated-omission-corrected and the raw latency of each sample.
 * <p>
 * Why not two HdrHistogram {@code Recorder}s? Each recordValue enters its own phaser with two atomic
 * increments; one phaser around two plain histograms costs about a quarter of that
 * ({@code ./bench run harness} measures it). Steady-state recording allocates nothing.
 */
public final class LatencyRecorder {
    private final WriterReaderPhaser phaser = new WriterReaderPhaser();
    private volatile Histogram activeCorrected = newHistogram();
    private volatile Histogram activeUncorrected = newHistogram();
    private Histogram spareCorrected = newHistogram();
    private Histogram spareUncorrected = newHistogram();

    static Histogram newHistogram() {
        return new Histogram(3); // auto-resizing, 3 significant digits, values in nanoseconds
    }

    /**
     * Records one sample. {@code intendedNs}: when it should have started (the schedule of an open-model load);
     * {@code startNs}: when it actually started; {@code endNs}: when it completed. All from System.nanoTime().
     */
    public void record(long intendedNs, long startNs, long endNs) {
        long phase = phaser.writerCriticalSectionEnter();
        try {
            activeCorrected.recordValue(Math.max(0, endNs - intendedNs));
            activeUncorrected.recordValue(Math.max(0, endNs - startNs));
        } finally {
            phaser.writerCriticalSectionExit(phase);
        }
    }

    /** Swaps in empty histograms and adds what was recorded since the last drain to the two targets. Reader side. */
    synchronized void drainInto(Histogram corrected, Histogram uncorrected) {
        spareCorrected.reset();
        spareUncorrected.reset();
        phaser.readerLock();
        try {
            Histogram c = activeCorrected, u = activeUncorrected;
            activeCorrected = spareCorrected;
            activeUncorrected = spareUncorrected;
            spareCorrected = c;
            spareUncorrected = u;
            phaser.flipPhase();
        } finally {
            phaser.readerUnlock();
        }
        corrected.add(spareCorrected);
        uncorrected.add(spareUncorrected);
    }
}
