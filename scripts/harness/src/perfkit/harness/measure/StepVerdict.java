package perfkit.harness.measure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What one load step of a capacity sweep says: it met the latency SLO, missed it, could not be measured on this
 * host, or is invalid. Pure logic, in this order:
 * <ol>
 *   <li><b>invalid</b>: the load generator fell behind its rate, work was lost, the study found another problem
 *       (duplicates, reordering...), or nothing was measured. Its latency cannot be trusted either way.</li>
 *   <li><b>met</b>: the latency is within the SLO. It may still have run on a saturated machine, which the
 *       verdict keeps ({@link #saturated}) because a sweep stops growing there.</li>
 *   <li><b>not measurable on this host</b>: it missed the SLO while the whole machine was saturated (system CPU at
 *       or above {@code saturatedFraction} of all cores) or the hypervisor stole more than {@code maxStealPct} of a
 *       core. The miss may be this host's, not the system's: it is neither a plain miss nor evidence of no capacity.</li>
 *   <li><b>missed</b>: a plain miss on a machine with room to spare.</li>
 * </ol>
 */
public record StepVerdict(Status status, boolean saturated, List<String> reasons) {
    public enum Status {
        MET("met"), MISSED("missed"), NOT_MEASURABLE("not measurable on this host"), INVALID("invalid");

        public final String label;

        Status(String label) { this.label = label; }

        @Override
        public String toString() { return label; }
    }

    /**
     * @param saturatedFraction machine saturated at this fraction of all cores busy (0.9 = 90%)
     * @param maxStealPct       steal above this, in % of one core, makes a miss not measurable
     * @param minRateFraction   the load generator must deliver at least this fraction of its target rate
     */
    public record Rule(double saturatedFraction, double maxStealPct, double minRateFraction) {
        public static final Rule DEFAULT = new Rule(0.90, 20, 0.99);
    }

    /**
     * One step's facts. CPU and steal in % of one core (200% = two busy cores), NaN when they could not be sampled.
     * {@code problems} holds the study's own delivery failures (e.g. "3 duplicated"), each making the step invalid.
     */
    public record Measurement(double targetRate, double achievedRate, long measured, long lost, List<String> problems,
                              double latencyMs, double sloMs, double systemCpuPct, double stealPct, int cores) {}

    public StepVerdict {
        reasons = List.copyOf(reasons);
    }

    public boolean meets() { return status == Status.MET; }

    public boolean valid() { return status != Status.INVALID; }

    /** The reasons as one line, empty for a plain met or missed step. */
    public String reason() { return String.join("; ", reasons); }

    /**
     * The fewest requests a load generator with random (Poisson) arrivals sends in a window while keeping up. Its count
     * has mean {@code expected} and standard deviation sqrt(expected), so at 3000 expected a fixed 97% cut would call
     * one step in twenty "behind"; a count more than 4 standard deviations short happens about once in 30,000 windows.
     * A shortfall must exceed both that and {@code 1 - minRateFraction} before the generator fell behind.
     */
    public static double fewestKeptUp(double expected, double minRateFraction) {
        return Math.min(minRateFraction * expected, expected - 4 * Math.sqrt(expected));
    }

    public static StepVerdict judge(Measurement m, Rule rule) {
        boolean saturated = m.systemCpuPct() >= rule.saturatedFraction() * 100 * m.cores();
        boolean stolen = m.stealPct() > rule.maxStealPct();
        List<String> invalid = new ArrayList<>();
        if (!(m.achievedRate() >= rule.minRateFraction() * m.targetRate()))
            invalid.add(String.format(Locale.ROOT, "driver held %.0f of %.0f msg/s", m.achievedRate(), m.targetRate()));
        if (m.lost() > 0) invalid.add(m.lost() + " lost");
        invalid.addAll(m.problems());
        if (m.measured() <= 0) invalid.add("nothing completed in the window");
        if (!invalid.isEmpty()) return new StepVerdict(Status.INVALID, saturated, invalid);
        if (m.latencyMs() <= m.sloMs()) return new StepVerdict(Status.MET, saturated, List.of());
        List<String> host = new ArrayList<>();
        if (saturated) host.add(String.format(Locale.ROOT, "machine saturated: system CPU %.0f%% of %d cores", m.systemCpuPct(), m.cores()));
        if (stolen) host.add(String.format(Locale.ROOT, "steal %.0f%% of a core", m.stealPct()));
        return host.isEmpty() ? new StepVerdict(Status.MISSED, false, List.of()) : new StepVerdict(Status.NOT_MEASURABLE, saturated, host);
    }
}
