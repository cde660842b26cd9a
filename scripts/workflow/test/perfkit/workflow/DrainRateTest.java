package perfkit.workflow;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class DrainRateTest {
    /** A drain from t=0 at a constant rate, sampled every {@code stepMs}, then flat once all are done. */
    private static List<DrainRate.Sample> linear(long total, double perSecond, long stepMs, long untilMs) {
        List<DrainRate.Sample> out = new ArrayList<>();
        for (long t = 0; t <= untilMs; t += stepMs) out.add(new DrainRate.Sample(10_000 + t, Math.min(total, (long) (perSecond * t / 1000))));
        return out;
    }

    @Test
    void steadyRateOfAConstantDrainIsThatRate() {
        assertEquals(100.0, DrainRate.steady(linear(1000, 100, 250, 12_000), 10_000, 2, 1000), 1.0);
    }

    @Test
    void steadyRateSkipsWarmUpAndTheTail() {
        List<DrainRate.Sample> s = new ArrayList<>();
        // 10 jobs/s during a 3 s warm-up, then 100/s, and a slow last 5% that must not count
        long done = 0;
        for (int t = 0; t <= 3000; t += 500) s.add(new DrainRate.Sample(t, done = t / 100));
        for (int t = 3100; done < 950; t += 100) s.add(new DrainRate.Sample(t, done = Math.min(950, 30 + (t - 3000) / 10)));
        long t = s.get(s.size() - 1).epochMs();
        for (int i = 1; i <= 10; i++) s.add(new DrainRate.Sample(t + i * 1000L, 950 + 5 * i));
        assertEquals(100.0, DrainRate.steady(s, 0, 3, 1000), 1.0);
    }

    @Test
    void steadyRateIsUnknownWhenTheSpanIsUnderASecond() {
        assertTrue(Double.isNaN(DrainRate.steady(linear(100, 200, 100, 1000), 10_000, 0.2, 100)));
        assertTrue(Double.isNaN(DrainRate.steady(List.of(), 0, 0, 100)));
    }

    @Test
    void drainedAtIsTheFirstSampleWithEverythingCommitted() {
        List<DrainRate.Sample> s = linear(1000, 100, 100, 12_000);
        assertEquals(20_000, DrainRate.drainedAtMs(s, 1000));
        assertEquals(-1, DrainRate.drainedAtMs(s, 1001), "never fully drained");
        assertEquals(50.0, DrainRate.overall(1000, 0, 20_000), 1e-9);
        assertTrue(Double.isNaN(DrainRate.overall(1000, 5000, 5000)));
    }

    @Test
    void threadsFollowTheNoopRateJobTimeAndHeadroom() {
        assertEquals(8, DrainRate.threadsFor(160, 100, 0.5), "160/s x 0.1 s x 0.5");
        assertEquals(8, DrainRate.threadsFor(176, 100, 0.5), "rounded down, so the maximum stays under the headroom");
        assertEquals(32, DrainRate.threadsFor(6000, 100, 0.5 / 9.375), "the original's 6000/s ask for its 32 threads at that headroom");
        assertEquals(1, DrainRate.threadsFor(5, 100, 0.5), "never zero threads");
        double max = DrainRate.threadsFor(157, 100, 0.5) * 1000 / 100.0;
        assertTrue(max <= 0.5 * 157, "the theoretical maximum stays within the headroom of the no-op rate");
        assertThrows(IllegalArgumentException.class, () -> DrainRate.threadsFor(Double.NaN, 100, 0.5));
        assertThrows(IllegalArgumentException.class, () -> DrainRate.threadsFor(100, 100, 1.5));
    }
}
