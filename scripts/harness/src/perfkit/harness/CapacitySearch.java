package perfkit.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The capacity search of a sweep: start at 1 instance (or user, chain, ...) and double until a step does not meet
 * the SLO, then bisect between the largest count that met it and the smallest that did not. Capacity is the
 * largest count that met the SLO. The search also stops when a step met the SLO on a saturated machine (more load
 * cannot be measured), at the instance limit, and when the next step would not fit in the time budget.
 * <p>
 * Pure logic: the step runner is a function and time comes from a supplier, so it is tested with synthetic systems.
 */
public final class CapacitySearch {
    /** Runs one step at {@code instances} and judges it. */
    public interface Runner { StepVerdict run(int instances) throws Exception; }

    public record Step(int instances, StepVerdict verdict) {}

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

    /** {@code capacity} is null when not measurable or not measured, never a misleading 0. */
    public record Result(Integer capacity, Status status, String stopReason, List<Step> steps) {
        public Result {
            steps = List.copyOf(steps);
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
        if (maxInstances < 1) throw new IllegalArgumentException("maxInstances must be >= 1");
        List<Step> steps = new ArrayList<>();
        int good = 0, n = 1;
        Step bad = null;
        while (true) {
            if (elapsedSeconds.getAsDouble() + nextStepSeconds.getAsDouble() > budgetSeconds)
                return end(good, bad, steps, Status.LOWER_BOUND, "time budget of " + Warmup.seconds(budgetSeconds) + " s reached");
            Step s = new Step(n, runner.run(n));
            steps.add(s);
            if (s.verdict().meets()) {
                good = n;
                if (s.verdict().saturated()) return end(good, bad, steps, Status.LOWER_BOUND, "machine saturated at " + n + " instance(s)");
                if (n >= maxInstances) return end(good, bad, steps, Status.LOWER_BOUND, "reached the instance limit " + maxInstances);
            } else {
                bad = s;
            }
            if (bad != null && bad.instances() - good <= 1) {
                boolean missed = bad.verdict().status() == StepVerdict.Status.MISSED;
                String why = bad.verdict().reason().isEmpty() ? "" : " (" + bad.verdict().reason() + ")";
                return end(good, bad, steps, missed ? Status.WALL : Status.LOWER_BOUND,
                        bad.instances() + " instance(s): " + (missed ? "missed the SLO" : bad.verdict().status().label) + why);
            }
            n = bad == null ? Math.min(2 * n, maxInstances) : (good + bad.instances()) / 2;
        }
    }

    /** Capacity is the largest count that met; with none, it is 0 only after a plain miss at 1 instance. */
    private static Result end(int good, Step bad, List<Step> steps, Status status, String reason) {
        if (good > 0) return new Result(good, status, reason, steps);
        if (steps.isEmpty()) return new Result(null, Status.NOT_MEASURED, reason, steps);
        if (bad != null && bad.verdict().status() == StepVerdict.Status.MISSED) return new Result(0, Status.WALL, reason, steps);
        return new Result(null, Status.NOT_MEASURABLE, reason, steps);
    }
}
