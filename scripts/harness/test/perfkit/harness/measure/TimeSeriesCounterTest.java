package perfkit.harness.measure;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/** A fork reports its count about once a second on its own clock; the sampler ticks on another. Rates must not alias. */
class TimeSeriesCounterTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void jitteredReportsGiveRatesWithinFivePercentOfTheTrueRate() {
        double trueRate = 50_000; // events per second
        Random random = new Random(42);
        TimeSeries.Counter c = new TimeSeries.Counter();
        long t = 0;
        long nextReport = 0;
        long nextTick = SECOND / 2; // the two clocks are out of phase
        int ticks = 0;
        while (ticks < 60) {
            if (nextReport <= nextTick) {
                t = nextReport;
                c.report((long) (trueRate * t / 1e9), t);
                nextReport += SECOND + (long) ((random.nextDouble() - 0.5) * 0.2 * SECOND); // +-100 ms jitter
            } else {
                t = nextTick;
                double rate = c.rateAtTick(t, 1.0);
                if (ticks > 1) assertEquals(trueRate, rate, trueRate * 0.05, "tick " + ticks);
                nextTick += SECOND;
                ticks++;
            }
        }
    }

    @Test
    void theOldWayAliases() {
        // what a plain per-tick difference of the last reported count shows for the same input: 0, then double
        long[] reports = {0, 990_000_000L, 2_010_000_000L, 2_990_000_000L};
        long[] counts = {0, 49_500, 100_500, 149_500};
        long lastSeen = 0;
        int zeros = 0;
        int r = 0;
        for (long tick = SECOND; tick <= 3 * SECOND; tick += SECOND) {
            long seen = lastSeen;
            while (r < reports.length && reports[r] <= tick) seen = counts[r++];
            if (seen - lastSeen < 1000) zeros++;
            lastSeen = seen;
        }
        assertTrue(zeros > 0, "the aliasing this class avoids");
    }

    @Test
    void aSilentCounterStopsCountingAfterALittleWhile() {
        TimeSeries.Counter c = new TimeSeries.Counter();
        c.report(0, 0);
        c.report(1000, SECOND);
        assertEquals(1000, c.estimateAt(SECOND), 1e-9);
        assertEquals(1500, c.estimateAt(SECOND + SECOND / 2), 1e-9);
        assertEquals(2500, c.estimateAt(60 * SECOND), 1e-9, "no more than 1.5 s of extrapolation");
    }
}
