package perfkit.harness.measure;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.*;

class LatencyLogTest {
    @TempDir Path dir;

    /** Everything in the file, merged, read back with HdrHistogram's own reader. */
    static Histogram readAll(Path file) throws Exception {
        Histogram total = new Histogram(3);
        try (HistogramLogReader reader = new HistogramLogReader(file.toFile())) {
            for (var h = reader.nextIntervalHistogram(); h != null; h = reader.nextIntervalHistogram()) total.add((Histogram) h);
        }
        return total;
    }

    @Test
    void writesBothSeriesAndReadsBackWithHdrHistogram() throws Exception {
        LatencyLog log = new LatencyLog(dir, "latency/x", "test series");
        LatencyRecorder r = log.newRecorder();
        log.startMeasuring();
        long t = System.nanoTime();
        // actual start 400 us after the intended one, done 1 ms after it: corrected 1 ms, uncorrected 600 us
        for (int i = 0; i < 1000; i++) r.record(t, t + 400_000, t + 1_000_000);
        log.close();
        Histogram corrected = readAll(dir.resolve("latency/x" + LatencyLog.CORRECTED));
        Histogram uncorrected = readAll(dir.resolve("latency/x" + LatencyLog.UNCORRECTED));
        assertEquals(1000, corrected.getTotalCount());
        assertEquals(1000, uncorrected.getTotalCount());
        assertEquals(1_000_000, corrected.getValueAtPercentile(50), 1_000_000 * 0.001);
        assertEquals(600_000, uncorrected.getValueAtPercentile(50), 600_000 * 0.001);
    }

    @Test
    void warmUpIsNotWritten() throws Exception {
        LatencyLog log = new LatencyLog(dir, "w", "warm-up test");
        LatencyRecorder r = log.newRecorder();
        long before = System.nanoTime();
        for (int i = 0; i < 500; i++) r.record(before, before, before + 50_000_000); // warm-up: slow
        log.startMeasuring();
        long t = System.nanoTime();
        for (int i = 0; i < 200; i++) r.record(t, t, t + 1_000);
        // intended before the window but completing inside it: still warm-up, by intended time
        for (int i = 0; i < 50; i++) r.record(before, before, t + 2_000);
        log.close();
        Histogram all = readAll(dir.resolve("w" + LatencyLog.CORRECTED));
        assertEquals(200, all.getTotalCount());
        assertTrue(all.getMaxValue() < 2_000, "no warm-up sample leaked into the log");
        assertEquals(200, log.measuredCount());
    }

    @Test
    void recordSaysWhetherTheSampleWasMeasured() throws Exception {
        LatencyLog log = new LatencyLog(dir, "m", "measured-or-not test", true);
        LatencyRecorder r = log.newRecorder();
        long t = System.nanoTime();
        // a window set late: a sample intended inside it but recorded before it was set is warm-up, and says so
        assertFalse(r.record(t + 1_000, t + 1_000, t + 2_000));
        log.window(t, t + 1_000_000_000L);
        assertTrue(r.record(t + 1_000, t + 1_000, t + 2_000));
        assertFalse(r.record(t - 1, t - 1, t + 2_000), "intended before the window");
        assertFalse(r.record(t + 1_000_000_000L, t + 1_000_000_000L, t + 1_000_000_100L), "intended at its end");
        log.close();
        assertEquals(1, log.measuredCount(), "exactly the samples record called measured");
    }

    @Test
    void keptWarmUpIsWrittenAndSaidSo() throws Exception {
        LatencyLog log = new LatencyLog(dir, "k", "kept warm-up test", true);
        LatencyRecorder r = log.newRecorder();
        long before = System.nanoTime();
        for (int i = 0; i < 500; i++) r.record(before, before, before + 50_000_000);
        log.startMeasuring();
        long t = System.nanoTime();
        for (int i = 0; i < 200; i++) r.record(t, t, t + 1_000);
        log.close();
        assertEquals(700, readAll(dir.resolve("k" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals(200, log.measuredCount(), "only measured samples count as measured");
        assertTrue(java.nio.file.Files.readString(dir.resolve("k" + LatencyLog.CORRECTED)).contains("warm-up intervals included"));
    }

    /**
     * The reason for cutting by intended time: a stall at the end of the window. Samples intended inside it but
     * completing long after its end must be in the histogram (they are the slowest); samples intended after the
     * end must not, however early they complete.
     */
    @Test
    void aStallAtTheEndOfTheWindowIsCountedAndLaterSamplesAreNot() throws Exception {
        LatencyLog log = new LatencyLog(dir, "s", "stall test");
        LatencyRecorder r = log.newRecorder();
        long start = System.nanoTime(), end = start + 1_000_000_000L; // a 1 s window
        log.window(start, end);
        for (int i = 0; i < 1000; i++) { long at = start + i * 900_000L; r.record(at, at, at + 10_000); } // 10 us each
        // 20 samples intended in the last millisecond of the window, delivered 3 s after it ended
        for (int i = 0; i < 20; i++) { long at = end - 1_000_000 + i * 1_000; r.record(at, at, end + 3_000_000_000L); }
        // 300 samples intended at or after the end: ignored, even the fast ones
        for (int i = 0; i < 300; i++) { long at = end + i * 1_000L; r.record(at, at, at + 5_000); }
        log.close();
        Histogram all = readAll(dir.resolve("s" + LatencyLog.CORRECTED));
        assertEquals(1020, all.getTotalCount());
        assertEquals(1020, log.measuredCount());
        assertEquals(20, all.getCountBetweenValues(3_000_000_000L, 3_100_000_000L), "the stalled samples are in the histogram");
        assertEquals(all.getMaxValue(), 3_001_000_000L, 3_001_000_000L * 0.001);
        assertEquals(1020, readAll(dir.resolve("s" + LatencyLog.UNCORRECTED)).getTotalCount());
    }

    @Test
    void logsSharingAWindowMeasureTheSameSamplesWhateverTheirCloseOrder() throws Exception {
        LatencyLog a = new LatencyLog(dir, "a", "first"), b = new LatencyLog(dir, "b", "second");
        LatencyRecorder ra = a.newRecorder(), rb = b.newRecorder();
        long start = System.nanoTime() + 5_000_000, end = start + 100_000_000;
        a.window(start, end);
        b.window(start, end);
        for (long at = start - 50_000_000; at < end + 50_000_000; at += 100_000) { ra.record(at, at, at + 1_000); rb.record(at, at, at + 1_000); }
        a.close();
        Thread.sleep(50); // b closes later, as the second log of a step does
        b.close();
        assertEquals(1000, readAll(dir.resolve("a" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals(1000, readAll(dir.resolve("b" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals(a.window(), b.window(), "one window for both, not each log's own open/close times");
        assertEquals(100, a.window().endMs() - a.window().startMs(), 1);
    }

    @Test
    void anEmptyOrReversedWindowIsRefused() throws Exception {
        try (LatencyLog log = new LatencyLog(dir, "e", "bad window")) {
            long t = System.nanoTime();
            assertThrows(IllegalArgumentException.class, () -> log.window(t, t));
            assertThrows(IllegalArgumentException.class, () -> log.window(t, t - 1));
            assertNull(log.window());
        }
    }

    @Test
    void anOpenWindowEndsAtClose() throws Exception {
        LatencyLog log = new LatencyLog(dir, "o", "open window");
        assertNull(log.window(), "no window before measuring starts");
        log.startMeasuring();
        Thread.sleep(30);
        log.close();
        LatencyLog.Window w = log.window();
        assertTrue(w.endMs() - w.startMs() >= 25, w.toString());
        Thread.sleep(20);
        assertEquals(w, log.window(), "closed: the window no longer grows");
    }

    @Test
    void aStandAloneRecorderMeasuresEverything() {
        LatencyRecorder r = new LatencyRecorder();
        r.record(0, 50, 1_000);
        Histogram c = new Histogram(3), u = new Histogram(3);
        r.drainInto(c, u, null, null);
        assertEquals(1, c.getTotalCount());
        assertEquals(950, u.getMaxValue(), 1);
    }

    @Test
    void concurrentRecordingLosesNothing() throws Exception {
        LatencyLog log = new LatencyLog(dir, "c", "concurrency test");
        log.startMeasuring();
        long t = System.nanoTime();
        int writers = 3, perWriter = 300_000;
        Thread[] threads = new Thread[writers];
        for (int w = 0; w < writers; w++) {
            LatencyRecorder r = log.newRecorder();
            threads[w] = new Thread(() -> { for (int i = 0; i < perWriter; i++) r.record(t, t + 10, t + 100 + (i & 1023)); });
            threads[w].start();
        }
        for (Thread th : threads) th.join();
        log.close();
        assertEquals((long) writers * perWriter, readAll(dir.resolve("c" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals((long) writers * perWriter, readAll(dir.resolve("c" + LatencyLog.UNCORRECTED)).getTotalCount());
    }

    @Test
    void negativeDifferencesAreClampedNotThrown() throws Exception {
        LatencyLog log = new LatencyLog(dir, "n", "clock test");
        log.startMeasuring();
        long t = System.nanoTime() + 1_000;
        log.newRecorder().record(t + 100, t + 100, t + 50);
        log.close();
        assertEquals(1, readAll(dir.resolve("n" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals(0, readAll(dir.resolve("n" + LatencyLog.CORRECTED)).getMaxValue());
    }
}
