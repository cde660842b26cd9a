package perfkit.harness.measure;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.*;

class WarmupTest {
    static final Warmup.Rule RULE = new Warmup.Rule(10, 60, 5, 0.10, 5);

    /** Feeds one sample a second (t = 1, 2, ...) until the rule says done or the series runs out; returns the final state. */
    static Warmup.State feed(Warmup.Rule rule, int seconds, IntFunction<double[]> rateAndCpu) {
        Warmup w = new Warmup(rule);
        for (int t = 1; t <= seconds; t++) {
            double[] v = rateAndCpu.apply(t);
            Warmup.State s = w.add(new Warmup.Sample(t, v[0], v[1]));
            if (s.done()) return s;
        }
        return w.state();
    }

    @Test
    void settlesOnceRateAndCpuStopMovingButNotBeforeTheMinimum() {
        // CPU falls from 180% to 60% over the first 20 s (JIT compiling), the rate is steady from the start
        Warmup.State s = feed(RULE, 100, t -> new double[]{1000, t < 20 ? 180 - 6 * t : 60});
        assertTrue(s.done() && s.settled(), s.reason());
        assertTrue(s.atSeconds() >= 20 && s.atSeconds() <= 20 + RULE.stableSamples(), "ends once the last 5 s are flat: " + s.atSeconds());

        Warmup.State flat = feed(RULE, 100, t -> new double[]{1000, 50});
        assertTrue(flat.settled());
        assertEquals(RULE.minSeconds(), flat.atSeconds(), "a flat series still warms up for the minimum");
    }

    @Test
    void steadinessNowFollowsEverySampleAfterTheStateIsDone() {
        Warmup w = new Warmup(RULE);
        Warmup.State s = null;
        for (int t = 1; t <= 15; t++) s = w.add(new Warmup.Sample(t, 1000, Double.NaN));
        assertTrue(s.done() && s.settled(), s.reason());
        assertNull(w.unsteadyNow());
        // the rate halves after the state settled: the state stays, but "steady now" no longer holds
        w.add(new Warmup.Sample(16, 500, Double.NaN));
        assertTrue(w.state().settled());
        assertNotNull(w.unsteadyNow());
        for (int t = 17; t <= 21; t++) w.add(new Warmup.Sample(t, 500, Double.NaN));
        assertNull(w.unsteadyNow(), "five steady seconds at the new rate");
    }

    @Test
    void neverSettlesWhileTheJitKeepsBursting() {
        // a compile burst every third second, as long as the step runs
        Warmup.State s = feed(RULE, 200, t -> new double[]{1000, t % 3 == 0 ? 150 : 60});
        assertTrue(s.done() && !s.settled());
        assertEquals(RULE.maxSeconds(), s.atSeconds());
        assertTrue(s.reason().startsWith("warm-up never settled within 60 s"), s.reason());
        assertTrue(s.reason().contains("CPU"), s.reason());
    }

    @Test
    void aSlowDriftIsNotSteady() {
        // the delivered rate sags 4% a second (a backlog building): every 5-s window stays inside 10% of its mean, the trend does not
        Warmup.State s = feed(RULE, 200, t -> new double[]{1000 * Math.pow(0.96, t), 80});
        assertFalse(s.settled(), s.reason());
    }

    @Test
    void neverSettlesWhenTheRateOscillates() {
        Warmup.State s = feed(RULE, 200, t -> new double[]{t % 2 == 0 ? 1500 : 500, 80});
        assertFalse(s.settled());
        assertTrue(s.reason().contains("rate"), s.reason());
    }

    @Test
    void nothingDeliveredIsNotASteadyState() {
        assertFalse(feed(RULE, 200, t -> new double[]{0, 3}).settled());
    }

    @Test
    void noisyButStableSettles() {
        Random r = new Random(42);
        // +-5% on the rate and +-4 points on a low CPU: inside 10% (rate) and the 5-point floor (CPU)
        Warmup.State s = feed(RULE, 200, t -> new double[]{1000 * (1 + 0.05 * (2 * r.nextDouble() - 1)), 30 + 4 * (2 * r.nextDouble() - 1)});
        assertTrue(s.settled(), s.reason());
        assertTrue(s.atSeconds() < RULE.maxSeconds());
    }

    @Test
    void stateIsFinalOnceDone() {
        Warmup w = new Warmup(new Warmup.Rule(0, 3, 2, 0.1, 0));
        for (int t = 1; t <= 3; t++) w.add(new Warmup.Sample(t, t * 100, t * 10));
        Warmup.State end = w.state();
        assertTrue(end.done() && !end.settled());
        assertSame(end, w.add(new Warmup.Sample(4, 100, 10)));
    }

    @Test
    void rejectsARuleThatCannotWork() {
        assertThrows(IllegalArgumentException.class, () -> new Warmup.Rule(10, 5, 5, 0.1, 5));
        assertThrows(IllegalArgumentException.class, () -> new Warmup.Rule(1, 5, 1, 0.1, 5));
        assertThrows(IllegalArgumentException.class, () -> new Warmup.Rule(1, 5, 3, 0, 5));
    }
}
