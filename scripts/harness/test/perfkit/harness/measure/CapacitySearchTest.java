package perfkit.harness.measure;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.*;

class CapacitySearchTest {
    static final StepVerdict MET = new StepVerdict(StepVerdict.Status.MET, false, List.of());
    static final StepVerdict MET_SATURATED = new StepVerdict(StepVerdict.Status.MET, true, List.of());
    static final StepVerdict MISSED = new StepVerdict(StepVerdict.Status.MISSED, false, List.of());
    static final StepVerdict NOT_MEASURABLE = new StepVerdict(StepVerdict.Status.NOT_MEASURABLE, true, List.of("machine saturated"));
    static final StepVerdict INVALID = new StepVerdict(StepVerdict.Status.INVALID, true, List.of("driver held 500 of 1000 msg/s"));

    /** A synthetic system: a step takes 10 s of a fake clock. */
    static final class Fake {
        double clock;
        final List<Integer> tried = new ArrayList<>();

        CapacitySearch.Result search(int max, double budget, CapacitySearch.Runner system) throws Exception {
            return CapacitySearch.search(max, budget, () -> clock, () -> 10, n -> {
                tried.add(n);
                clock += 10;
                return system.run(n);
            });
        }
    }

    static CapacitySearch.Runner monotone(int capacity) {
        return n -> n <= capacity ? MET : MISSED;
    }

    @Test
    void findsTheKnownCapacityOfMonotoneSystems() throws Exception {
        for (int capacity : new int[]{1, 2, 3, 7, 8, 9, 100, 500, 1023}) {
            Fake f = new Fake();
            CapacitySearch.Result r = f.search(1024, 1e9, monotone(capacity));
            assertEquals(capacity, r.capacity(), "capacity " + capacity);
            assertEquals(capacity + 1, r.firstNotMet(), "the bracket closes at the first count that missed");
            assertEquals(CapacitySearch.Status.WALL, r.status());
            assertTrue(f.tried.contains(capacity) && f.tried.contains(capacity + 1), f.tried.toString());
            assertEquals(f.tried.size(), new HashSet<>(f.tried).size(), "no count is tried twice: " + f.tried);
            assertTrue(f.tried.size() <= 2 * 11, "doubling then bisecting stays logarithmic: " + f.tried);
            assertTrue(r.stopReason().startsWith((capacity + 1) + " instance(s): missed the SLO"), r.stopReason());
        }
        Fake nine = new Fake();
        nine.search(1024, 1e9, monotone(9));
        assertEquals(List.of(1, 2, 4, 8, 16, 12, 10, 9), nine.tried);
    }

    @Test
    void aGridIsClimbedAsPublishedThenBisectedToItsResolution() throws Exception {
        List<Integer> original = List.of(1, 10, 25, 50, 100, 150, 200, 250, 375, 500);
        for (int capacity : new int[]{1, 9, 30, 140, 499}) {
            List<Integer> tried = new ArrayList<>();
            CapacitySearch.Result r = CapacitySearch.search(CapacitySearch.Plan.grid(original, 1024, 0.25), 1e9, () -> 0, () -> 10,
                    n -> { tried.add(n); return n <= capacity ? MET : MISSED; }, n -> n + " chains");
            int climbed = (int) original.stream().filter(n -> n <= capacity).count() + 1;
            assertEquals(original.subList(0, climbed), tried.subList(0, climbed), "the grid first, as published: " + tried);
            assertTrue(r.lastMet() <= capacity && capacity < r.firstNotMet(), capacity + " in " + r.lastMet() + ".." + r.firstNotMet());
            assertTrue(r.firstNotMet() - r.lastMet() <= Math.max(1, r.lastMet() / 4), "bracket within a quarter: " + tried);
            assertEquals(CapacitySearch.Status.WALL, r.status());
        }
        CapacitySearch.Result capped = CapacitySearch.search(CapacitySearch.Plan.grid(original, 30, 0.25), 1e9, () -> 0, () -> 10, n -> MET, n -> n + "");
        assertEquals(List.of(1, 10, 25, 30), capped.steps().stream().map(CapacitySearch.Step::load).toList(), "the limit ends the grid");
        assertEquals(CapacitySearch.Status.LOWER_BOUND, capped.status());
        assertThrows(IllegalArgumentException.class, () -> new CapacitySearch.Plan(List.of(1, 5, 5), 0));
    }

    @Test
    void throughSaturationTheFirstStepNotMetClosesTheBracket() throws Exception {
        // meets up to 5 on a saturated machine, then cannot be measured: by default the search stops at the first saturated
        // step met; through saturation it goes on and brackets this host's capacity
        CapacitySearch.Runner host = n -> n <= 5 ? MET_SATURATED : NOT_MEASURABLE;
        CapacitySearch.Plan plan = CapacitySearch.Plan.doubling(1024);
        CapacitySearch.Result stopped = CapacitySearch.search(plan, 1e9, () -> 0, () -> 10, host, n -> n + "");
        assertEquals(1, stopped.capacity());
        assertNull(stopped.firstNotMet());
        CapacitySearch.Result through = CapacitySearch.search(plan.throughSaturation(), 1e9, () -> 0, () -> 10, host, n -> n + "");
        assertEquals(5, through.capacity());
        assertEquals(6, through.firstNotMet());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, through.status(), "the system's own wall was not seen: the host's was");
    }

    @Test
    void aPlainMissAtOneIsBelowOneNeverZero() throws Exception {
        CapacitySearch.Result r = new Fake().search(1024, 1e9, n -> MISSED);
        assertNull(r.capacity(), "no count met: there is no last met, and certainly no 0");
        assertEquals(1, r.firstNotMet());
        assertEquals(CapacitySearch.Status.WALL, r.status());
        assertEquals(1, r.steps().size());
    }

    @Test
    void notMeasurableOrInvalidAtOneIsNotMeasurableNeverZero() throws Exception {
        for (StepVerdict first : List.of(NOT_MEASURABLE, INVALID)) {
            CapacitySearch.Result r = new Fake().search(1024, 1e9, n -> first);
            assertNull(r.capacity());
            assertEquals(CapacitySearch.Status.NOT_MEASURABLE, r.status());
            assertTrue(r.stopReason().startsWith("1 instance(s): " + first.status().label), r.stopReason());
        }
    }

    @Test
    void aSaturatedHostAboveTheCapacityGivesALowerBound() throws Exception {
        // meets up to 5; 6 and 7 could not be measured; 8 was a plain miss
        CapacitySearch.Result r = new Fake().search(1024, 1e9, n -> n <= 5 ? MET : n < 8 ? NOT_MEASURABLE : MISSED);
        assertEquals(5, r.capacity());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, r.status());
        assertTrue(r.stopReason().contains("not measurable on this host"), r.stopReason());
    }

    @Test
    void stopsGrowingWhenAStepMeetsOnASaturatedMachine() throws Exception {
        Fake f = new Fake();
        CapacitySearch.Result r = f.search(1024, 1e9, n -> n < 4 ? MET : MET_SATURATED);
        assertEquals(4, r.capacity());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, r.status());
        assertEquals(List.of(1, 2, 4), f.tried);
        assertEquals("machine saturated at 4 instance(s)", r.stopReason());
    }

    @Test
    void stopsAtTheInstanceLimit() throws Exception {
        Fake f = new Fake();
        CapacitySearch.Result r = f.search(5, 1e9, n -> MET);
        assertEquals(List.of(1, 2, 4, 5), f.tried);
        assertEquals(5, r.capacity());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, r.status());
    }

    @Test
    void stopsWhenTheNextStepWouldNotFitTheBudget() throws Exception {
        Fake f = new Fake();
        CapacitySearch.Result r = f.search(1024, 35, monotone(100)); // 10 s a step: 3 fit, the 4th would end at 40 s
        assertEquals(List.of(1, 2, 4), f.tried);
        assertEquals(4, r.capacity());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, r.status());
        assertTrue(r.stopReason().contains("time budget of 35 s"), r.stopReason());

        CapacitySearch.Result none = new Fake().search(1024, 5, monotone(100));
        assertNull(none.capacity());
        assertEquals(CapacitySearch.Status.NOT_MEASURED, none.status());
        assertTrue(none.steps().isEmpty());
    }

    @Test
    void nonMonotoneNoiseStillEndsWithACountThatMet() throws Exception {
        for (int seed = 0; seed < 200; seed++) {
            Random random = new Random(seed);
            // around the wall at 40, a step flips with 30% chance
            IntPredicate meets = n -> Math.abs(n - 40) < 10 && random.nextDouble() < 0.3 ? n > 40 : n <= 40;
            Fake f = new Fake();
            List<Integer> met = new ArrayList<>();
            CapacitySearch.Result r = f.search(1024, 1e9, n -> {
                boolean ok = meets.test(n);
                if (ok) met.add(n);
                return ok ? MET : MISSED;
            });
            assertEquals(f.tried.size(), new HashSet<>(f.tried).size(), "seed " + seed + ": " + f.tried);
            assertTrue(f.tried.size() <= 22, "seed " + seed + ": " + f.tried);
            int capacity = r.capacity();
            assertTrue(capacity == 0 || met.contains(capacity), "seed " + seed);
            assertEquals(met.stream().mapToInt(Integer::intValue).max().orElse(0), capacity, "the largest count that met, seed " + seed);
            assertTrue(f.tried.contains(capacity + 1), "the count just above was tried, seed " + seed);
        }
    }

    @Test
    void fixedStepsGiveABracketAndAMissAtTheOnlyRateIsBelowIt() {
        CapacitySearch.Result one = CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(300, MISSED)), "0.5 of saturation");
        assertNull(one.lastMet());
        assertEquals(300, one.firstNotMet(), "below 300, not 0");
        assertEquals(CapacitySearch.Status.WALL, one.status());
        CapacitySearch.Result all = CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(100, MET), new CapacitySearch.Step(200, MET)), "rates");
        assertEquals(200, all.lastMet());
        assertNull(all.firstNotMet(), "all met: a lower bound with an open bracket");
        assertEquals(CapacitySearch.Status.LOWER_BOUND, all.status());
        CapacitySearch.Result scaled = new CapacitySearch.Result(3, 4, CapacitySearch.Status.WALL, "x", List.of()).scaled(100, "y");
        assertEquals(300, scaled.lastMet());
        assertEquals(400, scaled.firstNotMet());
    }

    @Test
    void anUnjudgedFixedStepSaysNothingSoAHigherRateMetStillCounts() {
        StepVerdict late = new StepVerdict(StepVerdict.Status.INVALID, false, List.of("driver late by 25.8 ms at p99"));
        // the reference's webflux/1call: 600 invalid (the driver, not the app), 1200 met, 2400 missed
        CapacitySearch.Result r = CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(600, late),
                new CapacitySearch.Step(1200, MET), new CapacitySearch.Step(2400, MISSED)), "rates");
        assertEquals(1200, r.lastMet());
        assertEquals(2400, r.firstNotMet());
        assertEquals(CapacitySearch.Status.WALL, r.status());
        assertTrue(r.stopReason().contains("passed over, as a higher rate was met: 600 invalid"), r.stopReason());
        // unjudged above the last met: the bracket ends there, and it is no wall
        CapacitySearch.Result above = CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(600, MET),
                new CapacitySearch.Step(1200, late), new CapacitySearch.Step(2400, MISSED)), "rates");
        assertEquals(600, above.lastMet());
        assertEquals(1200, above.firstNotMet());
        assertEquals(CapacitySearch.Status.LOWER_BOUND, above.status());
        // nothing judged as met, the lowest unjudged: nothing can be said
        CapacitySearch.Result none = CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(600, late), new CapacitySearch.Step(1200, MISSED)), "rates");
        assertNull(none.lastMet());
        assertEquals(CapacitySearch.Status.NOT_MEASURABLE, none.status());
        // order of the steps does not matter (forks rotate their order)
        assertEquals(1200, CapacitySearch.Result.ofFixedSteps(List.of(new CapacitySearch.Step(2400, MISSED), new CapacitySearch.Step(1200, MET),
                new CapacitySearch.Step(600, late)), "rates").lastMet());
    }
}
