package perfkit.harness;

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
        // intended 0, actual start 400 us later, done 1 ms after intended: corrected 1 ms, uncorrected 600 us
        for (int i = 0; i < 1000; i++) r.record(0, 400_000, 1_000_000);
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
        for (int i = 0; i < 500; i++) r.record(0, 0, 50_000_000); // warm-up: slow
        log.startMeasuring();
        for (int i = 0; i < 200; i++) r.record(0, 0, 1_000);
        log.close();
        Histogram all = readAll(dir.resolve("w" + LatencyLog.CORRECTED));
        assertEquals(200, all.getTotalCount());
        assertTrue(all.getMaxValue() < 2_000, "no warm-up sample leaked into the log");
        assertEquals(200, log.measuredCount());
    }

    @Test
    void keptWarmUpIsWrittenAndSaidSo() throws Exception {
        LatencyLog log = new LatencyLog(dir, "k", "kept warm-up test", true);
        LatencyRecorder r = log.newRecorder();
        for (int i = 0; i < 500; i++) r.record(0, 0, 50_000_000);
        log.startMeasuring();
        for (int i = 0; i < 200; i++) r.record(0, 0, 1_000);
        log.close();
        assertEquals(700, readAll(dir.resolve("k" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals(200, log.measuredCount(), "only measured samples count as measured");
        assertTrue(java.nio.file.Files.readString(dir.resolve("k" + LatencyLog.CORRECTED)).contains("warm-up intervals included"));
    }

    @Test
    void concurrentRecordingLosesNothing() throws Exception {
        LatencyLog log = new LatencyLog(dir, "c", "concurrency test");
        log.startMeasuring();
        int writers = 3, perWriter = 300_000;
        Thread[] threads = new Thread[writers];
        for (int t = 0; t < writers; t++) {
            LatencyRecorder r = log.newRecorder();
            threads[t] = new Thread(() -> { for (int i = 0; i < perWriter; i++) r.record(0, 10, 100 + (i & 1023)); });
            threads[t].start();
        }
        for (Thread t : threads) t.join();
        log.close();
        assertEquals((long) writers * perWriter, readAll(dir.resolve("c" + LatencyLog.CORRECTED)).getTotalCount());
        assertEquals((long) writers * perWriter, readAll(dir.resolve("c" + LatencyLog.UNCORRECTED)).getTotalCount());
    }

    @Test
    void negativeDifferencesAreClampedNotThrown() throws Exception {
        LatencyLog log = new LatencyLog(dir, "n", "clock test");
        log.startMeasuring();
        log.newRecorder().record(100, 100, 50);
        log.close();
        assertEquals(0, readAll(dir.resolve("n" + LatencyLog.CORRECTED)).getMaxValue());
    }
}
