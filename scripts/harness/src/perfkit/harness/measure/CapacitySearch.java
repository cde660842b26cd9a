package perfkit.harness.measure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The capacity search of a sweep: start at 1 instance (or user, chain, ...) and double (or climb a given grid) until a
 * step does not meet the SLO, then bisect between the largest count that met it and the smallest that did not. Capacity is the
 * largest count that met the SLO. The search also stops when a step met the SLO on a saturated machine (more load
 * cannot be measured), at the instance limit, and when the next step would not fit in the time budget.
 * <p>
 * Pure logic: the step runner is a function and time comes from a supplier, so it is tested with synthetic systems.
 */
public final class CapacitySearch {
    /** Runs one step at {@code load} and judges it. */
    public interface Runner { StepVerdict run(int load) throws Exception; }

    /** One step of the search: the load it ran (chain instances, or requests per second in the HTTP studies) and its verdict. */
    public record Step(int load, StepVerdict verdict) {}

    public enum Status {
        /** the step just above the capacity missed the SLO on a machine with room: this is the system's wall */
        WALL("wall"),
        /** the search stopped before finding the wall (saturation, not measurable above, instance limit, budget) */
        LOWER_BOUND("lower bound"),
        /** no step met the SLO and the first was not a plain miss: this host says nothing about the capacity */
        NOT_MEASURABLE("not measurable on this host"),
        /** the budget did not allow a single step */
        NOT_MEASURED("not measured");

        public final String label;

        Status(String label) { this.label = label; }

        @Override
        public String toString() { return label; }
    }

    /**
     * The capacity as a bracket on the grid of counts tried: {@code lastMet}, the largest count that met the SLO (null
     * when none did), and {@code firstNotMet}, the smallest count above it that did not (null when none was tried:
     * the search stopped first). With a {@link Status#WALL} the capacity lies in [lastMet, firstNotMet); with none met
     * and a wall, it is below firstNotMet. Never a misleading 0.
     */
    public record Result(Integer lastMet, Integer firstNotMet, Status status, String stopReason, List<Step> steps) {
        public Result {
            steps = List.copyOf(steps);
        }

        /** The largest count that met the SLO, or null. */
        public Integer capacity() { return lastMet; }

        /** The same bracket with every count multiplied by {@code factor} (a count of rate steps into a rate, say). */
        public Result scaled(int factor, String stopReason) {
            List<Step> scaledSteps = new ArrayList<>();
            for (Step s : steps) scaledSteps.add(new Step(s.load() * factor, s.verdict()));
            return new Result(lastMet == null ? null : lastMet * factor, firstNotMet == null ? null : firstNotMet * factor, status, stopReason, scaledSteps);
        }

        /**
         * A bracket from steps at fixed counts, read as the search reads its steps: the largest count met below the
         * first plain miss. A step that could not be judged (invalid: the load generator fell behind; not measurable)
         * says nothing either way, so one below a count that was met is passed over (and named in the reason), and one
         * above it ends the bracket as a lower bound. A wall when nothing unjudged lies between the last met and the
         * first miss; a lower bound when all were met.
         */
        public static Result ofFixedSteps(List<Step> steps, String what) {
            List<Step> sorted = steps.stream().sorted(java.util.Comparator.comparingInt(Step::load)).toList();
            Step miss = sorted.stream().filter(s -> s.verdict().status() == StepVerdict.Status.MISSED).findFirst().orElse(null);
            List<Step> below = miss == null ? sorted : sorted.subList(0, sorted.indexOf(miss));
            Integer met = below.stream().filter(s -> s.verdict().meets()).map(Step::load).max(Integer::compare).orElse(null);
            Step unjudged = below.stream().filter(s -> !s.verdict().meets() && (met == null || s.load() > met)).findFirst().orElse(null);
            Step first = unjudged != null ? unjudged : miss;
            boolean wall = unjudged == null && miss != null;
            Status status = wall ? Status.WALL : met == null && first != null ? Status.NOT_MEASURABLE : Status.LOWER_BOUND;
            List<String> passedOver = below.stream().filter(s -> !s.verdict().meets() && met != null && s.load() < met)
                    .map(s -> s.load() + " " + s.verdict().status().label).toList();
            String reason = what + (first == null ? ": all met" : ": the first not met was " + first.verdict().status().label
                    + (first.verdict().reason().isEmpty() ? "" : " (" + first.verdict().reason() + ")"))
                    + (passedOver.isEmpty() ? "" : "; passed over, as a higher rate was met: " + String.join(", ", passedOver));
            return new Result(met, first == null ? null : first.load(), status, reason, steps);
        }
    }

    private CapacitySearch() {}

    /**
     * @param maxInstances      the largest count to try
     * @param budgetSeconds     time allowed for the whole search
     * @param elapsedSeconds    seconds since the search started
     * @param nextStepSeconds   how long the next step is expected to take (e.g. its planned time, or the last step's)
     */
    public static Result search(int maxInstances, double budgetSeconds, DoubleSupplier elapsedSeconds, DoubleSupplier nextStepSeconds,
                                Runner runner) throws Exception {
        return search(maxInstances, budgetSeconds, elapsedSeconds, nextStepSeconds, runner, n -> n + " instance(s)");
    }

    /** The same, with {@code name} saying what a count means in the stop reason (e.g. {@code n -> n * 100 + " req/s"}). */
    public static Result search(int maxInstances, double budgetSeconds, DoubleSupplier elapsedSeconds, DoubleSupplier nextStepSeconds,
                                Runner runner, java.util.function.IntFunction<String> name) throws Exception {
        return search(Plan.doubling(maxInstances), budgetSeconds, elapsedSeconds, nextStepSeconds, runner, name);
    }

    /**
     * How a search grows and when its bracket is narrow enough. {@code ladder}: the counts tried while every step met
     * (ascending, ending at the limit); {@code resolution}: bisection stops once the first miss is within this fraction
     * of the last met count (0: adjacent counts), so a large capacity is bracketed in a few steps; {@code stopWhenSaturated}:
     * whether a step that met the SLO on a saturated machine ends the search (see {@link #throughSaturation}).
     */
    public record Plan(List<Integer> ladder, double resolution, boolean stopWhenSaturated) {
        public Plan(List<Integer> ladder, double resolution) {
            this(ladder, resolution, true);
        }

        public Plan {
            if (ladder.isEmpty() || ladder.get(0) < 1) throw new IllegalArgumentException("a ladder starts at a count >= 1");
            for (int i = 1; i < ladder.size(); i++)
                if (ladder.get(i) <= ladder.get(i - 1)) throw new IllegalArgumentException("a ladder ascends: " + ladder);
            ladder = List.copyOf(ladder);
        }

        /** 1, 2, 4, ... up to {@code maxInstances}, bisected to adjacent counts. */
        public static Plan doubling(int maxInstances) {
            if (maxInstances < 1) throw new IllegalArgumentException("maxInstances must be >= 1");
            List<Integer> ladder = new ArrayList<>();
            for (long n = 1; n < maxInstances; n *= 2) ladder.add((int) n);
            ladder.add(maxInstances);
            return new Plan(ladder, 0);
        }

        /** The counts of {@code grid} below {@code maxInstances}, then the limit itself (a published grid, say). */
        public static Plan grid(List<Integer> grid, int maxInstances, double resolution) {
            List<Integer> ladder = new ArrayList<>(grid.stream().filter(n -> n < maxInstances).sorted().distinct().toList());
            ladder.add(maxInstances);
            return new Plan(ladder, resolution);
        }

        /**
         * The same plan, going on past a step that met the SLO on a saturated machine: for "how much fits on this host",
         * where the driver and the system share the host by design (as in the original), and a miss at saturation is the
         * host's capacity, not a measurement error.
         */
        public Plan throughSaturation() { return new Plan(ladder, resolution, false); }

        int limit() { return ladder.get(ladder.size() - 1); }

        int above(int n) { return ladder.stream().filter(c -> c > n).findFirst().orElse(limit()); }

        boolean narrow(int good, int bad) { return bad - good <= Math.max(1, (int) Math.floor(good * resolution)); }
    }

    /** The search along {@code plan}: up its ladder until a step does not meet the SLO, then bisect. */
    public static Result search(Plan plan, double budgetSeconds, DoubleSupplier elapsedSeconds, DoubleSupplier nextStepSeconds,
                                Runner runner, java.util.function.IntFunction<String> name) throws Exception {
        List<Step> steps = new ArrayList<>();
        int good = 0, n = plan.ladder().get(0);
        Step bad = null;
        while (true) {
            if (elapsedSeconds.getAsDouble() + nextStepSeconds.getAsDouble() > budgetSeconds)
                return end(good, bad, steps, Status.LOWER_BOUND, "time budget of " + Warmup.seconds(budgetSeconds) + " s reached");
            Step s = new Step(n, runner.run(n));
            steps.add(s);
            if (s.verdict().meets()) {
                good = n;
                if (s.verdict().saturated() && plan.stopWhenSaturated()) return end(good, bad, steps, Status.LOWER_BOUND, "machine saturated at " + name.apply(n));
                if (n >= plan.limit()) return end(good, bad, steps, Status.LOWER_BOUND, "reached the limit of " + name.apply(plan.limit()));
            } else {
                bad = s;
            }
            if (bad != null && plan.narrow(good, bad.load())) {
                boolean missed = bad.verdict().status() == StepVerdict.Status.MISSED;
                String why = bad.verdict().reason().isEmpty() ? "" : " (" + bad.verdict().reason() + ")";
                return end(good, bad, steps, missed ? Status.WALL : Status.LOWER_BOUND,
                        name.apply(bad.load()) + ": " + (missed ? "missed the SLO" : bad.verdict().status().label) + why);
            }
            n = bad == null ? plan.above(n) : (good + bad.load()) / 2;
        }
    }

    /** The bracket: the largest count that met, and the smallest above it that did not; a wall at 1 means "below 1". */
    private static Result end(int good, Step bad, List<Step> steps, Status status, String reason) {
        Integer lastMet = good > 0 ? good : null, firstNotMet = bad == null ? null : bad.load();
        if (good > 0) return new Result(lastMet, firstNotMet, status, reason, steps);
        if (steps.isEmpty()) return new Result(null, null, Status.NOT_MEASURED, reason, steps);
        if (bad != null && bad.verdict().status() == StepVerdict.Status.MISSED) return new Result(null, firstNotMet, Status.WALL, reason, steps);
        return new Result(null, firstNotMet, Status.NOT_MEASURABLE, reason, steps);
    }
}
