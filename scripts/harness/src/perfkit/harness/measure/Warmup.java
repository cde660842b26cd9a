package perfkit.harness.measure;

import java.util.ArrayDeque;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The warm-up rule of an open-model load step. Warm up for at least {@code minSeconds}; after that, warm-up
 * ends as soon as the last {@code stableSamples} per-second samples of the delivered rate and of the CPU each
 * lie within {@code tolerance} of their mean (CPU with an absolute floor, because a few points of one core are
 * noise), with no trend across them. At {@code maxSeconds} warm-up ends anyway and is marked as never settled: the step's
 * numbers may still include JIT compilation and class loading, and its report must say so.
 * <p>
 * Pure logic: the caller feeds one sample a second and stops warming up when {@link #add} says it is done.
 */
public final class Warmup {
    /**
     * @param minSeconds    warm up at least this long
     * @param maxSeconds    give up waiting for stability here (warm-up "never settled")
     * @param stableSamples how many consecutive per-second samples must agree
     * @param tolerance     relative distance from the samples' mean that still counts as stable (0.1 = 10%)
     * @param cpuFloorPct   CPU deviations up to this many points of one core always count as stable
     */
    public record Rule(double minSeconds, double maxSeconds, int stableSamples, double tolerance, double cpuFloorPct) {
        public Rule {
            if (!(minSeconds >= 0) || !(maxSeconds >= minSeconds)) throw new IllegalArgumentException("need 0 <= min <= max warm-up");
            if (stableSamples < 2) throw new IllegalArgumentException("stability needs at least 2 samples");
            if (!(tolerance > 0) || !(cpuFloorPct >= 0)) throw new IllegalArgumentException("tolerance must be > 0 and the CPU floor >= 0");
        }
    }

    /** One second of the step: {@code atSeconds} since the load started, messages (or requests) delivered per second, CPU in % of one core (NaN: not sampled). */
    public record Sample(double atSeconds, double rate, double cpuPct) {}

    /** Where warm-up stands: when {@code done}, it ended at {@code atSeconds}; {@code settled} is false when it hit the maximum. */
    public record State(boolean done, boolean settled, double atSeconds, String reason) {}

    private final Rule rule;
    private final ArrayDeque<Sample> recent = new ArrayDeque<>();
    private State state = new State(false, false, 0, "warming up");

    public Warmup(Rule rule) {
        this.rule = rule;
    }

    public Rule rule() { return rule; }

    public State state() { return state; }

    /** Takes the next per-second sample and returns the state after it; once done, the state no longer changes. */
    public State add(Sample s) {
        recent.addLast(s); // kept up to date after done too, for steadyNow()
        while (recent.size() > rule.stableSamples()) recent.removeFirst();
        if (state.done()) return state;
        if (s.atSeconds() < rule.minSeconds()) return state = new State(false, false, s.atSeconds(), "below the minimum warm-up");
        String unstable = unstable();
        if (unstable == null)
            return state = new State(true, true, s.atSeconds(), String.format(Locale.ROOT,
                    "rate and CPU stable within %.0f%% for %d s", 100 * rule.tolerance(), rule.stableSamples()));
        if (s.atSeconds() >= rule.maxSeconds())
            return state = new State(true, false, s.atSeconds(), "warm-up never settled within " + seconds(rule.maxSeconds()) + " s: " + unstable);
        return state = new State(false, false, s.atSeconds(), unstable);
    }

    /**
     * Whether the latest samples are steady now, whatever the state says: null when they are, else why not. A caller
     * that waits for a second condition too (a JIT going quiet) asks this when that one holds, so both hold at once.
     */
    public String unsteadyNow() {
        return unstable();
    }

    /** Why the recent samples are not a steady state yet, or null when they are. */
    private String unstable() {
        if (recent.size() < rule.stableSamples()) return "fewer than " + rule.stableSamples() + " samples";
        if (!(mean(Sample::rate) > 0)) return "nothing delivered yet";
        if (!within(Sample::rate, 0)) return "delivered rate still varies by more than " + pct(rule.tolerance());
        boolean cpuSampled = recent.stream().anyMatch(s -> !Double.isNaN(s.cpuPct())); // NaN throughout: judged on the rate alone
        if (cpuSampled && !within(Sample::cpuPct, rule.cpuFloorPct())) return "CPU still varies by more than " + pct(rule.tolerance());
        return null;
    }

    /**
     * Every sample within the allowed distance of the mean, and no trend: the least-squares slope across the
     * samples may not move the value by more than that distance either. A slow JIT-driven decline of CPU passes
     * the first check over a few seconds but not the second.
     */
    private boolean within(ToDoubleFunction<Sample> f, double floor) {
        double mean = mean(f), allowed = Math.max(rule.tolerance() * Math.abs(mean), floor);
        int n = recent.size(), i = 0;
        double sxy = 0, sxx = 0;
        for (Sample s : recent) {
            double v = f.applyAsDouble(s), x = i++ - (n - 1) / 2.0;
            if (!Double.isFinite(v) || Math.abs(v - mean) > allowed) return false;
            sxy += x * (v - mean);
            sxx += x * x;
        }
        return Math.abs(sxy / sxx * (n - 1)) <= allowed;
    }

    private double mean(ToDoubleFunction<Sample> f) {
        return recent.stream().mapToDouble(f).average().orElse(Double.NaN);
    }

    /** 30 -> "30", 2.5 -> "2.5": seconds as a person writes them. */
    public static String seconds(double s) {
        return s == Math.rint(s) ? String.valueOf((long) s) : String.valueOf(s);
    }

    private static String pct(double fraction) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * fraction);
    }
}
