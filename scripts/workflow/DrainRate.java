package perfkit.workflow;

import java.util.List;

/**
 * Rates of a drain: a backlog of work emptied as fast as possible, watched by a monitor that counts committed
 * completions now and then (the workflow study's database monitor). Pure arithmetic over the monitor's samples.
 */
public final class DrainRate {
    /** One monitor reading: wall-clock time and completions committed so far. */
    public record Sample(long epochMs, long completed) {}

    /** The steady rate stops where the tail starts: the last few percent drain with fewer busy threads. */
    public static final double STEADY_UP_TO = 0.95;

    private DrainRate() {}

    /**
     * Completions per second between the end of warm-up ({@code startMs + warmupSeconds}) and the last sample at or
     * below {@link #STEADY_UP_TO} of {@code total}. NaN when that span is shorter than a second, as a rate over
     * fewer samples says more about the sampling than about the drain.
     */
    public static double steady(List<Sample> samples, long startMs, double warmupSeconds, long total) {
        long warmEnd = startMs + Math.round(warmupSeconds * 1000);
        Sample a = null, b = null;
        for (Sample s : samples) {
            if (a == null && s.epochMs() >= warmEnd) a = s;
            if (s.completed() <= STEADY_UP_TO * total) b = s;
        }
        if (a == null || b == null || b.epochMs() - a.epochMs() < 1000) return Double.NaN;
        return (b.completed() - a.completed()) * 1000.0 / (b.epochMs() - a.epochMs());
    }

    /** When the first sample saw all {@code total} completions committed, or -1 if none did. */
    public static long drainedAtMs(List<Sample> samples, long total) {
        for (Sample s : samples) if (s.completed() >= total) return s.epochMs();
        return -1;
    }

    /** Completions per second over a drain from {@code startMs} to {@code endMs}; NaN when the span is empty or unknown. */
    public static double overall(long completed, long startMs, long endMs) {
        if (startMs < 0 || endMs <= startMs) return Double.NaN;
        return completed * 1000.0 / (endMs - startMs);
    }

    /**
     * Executor threads for jobs that each hold a thread {@code jobMs} without using CPU: enough threads that the
     * theoretical maximum ({@code threads * 1000 / jobMs} per second) is {@code headroom} of the rate at which
     * this host completes no-op jobs. Every job carries the same bookkeeping as a no-op job (acquire, update,
     * commit), so a theoretical maximum above the no-op rate asks for more than the host can serve. At least 1.
     */
    public static int threadsFor(double noopPerSecond, double jobMs, double headroom) {
        if (!(noopPerSecond > 0) || !(jobMs > 0) || !(headroom > 0) || headroom > 1)
            throw new IllegalArgumentException("need a positive no-op rate and job time, and a headroom in (0, 1]");
        double threads = Math.floor(noopPerSecond * jobMs / 1000.0 * headroom);
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, threads));
    }
}
