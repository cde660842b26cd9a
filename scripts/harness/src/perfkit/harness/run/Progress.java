package perfkit.harness.run;

import java.time.Instant;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Where a run is, for the person waiting on it. On a terminal ({@code PERFKIT_TTY=1}, set by ./bench when stderr is
 * a tty) one line redraws: the run as a whole (unit k of N, elapsed, the time left) and the phase under way (elapsed
 * of planned seconds, rate). Elsewhere each phase is announced once as a plain line, so logs stay short, and the
 * overall figures are not printed. Either way they go into the manifest's {@code progress} as each unit ends, which
 * is where {@code ./bench list} and {@code ./bench show} read them.
 */
public final class Progress {
    private final String study;
    private final boolean live;
    private final long runStartNanos = System.nanoTime();
    private volatile String phase = "";
    private volatile double phasePlannedSeconds;
    private volatile long phaseStartNanos = System.nanoTime();
    private volatile Plan plan;
    private volatile Consumer<Overall> onUnit = o -> {};

    /** What the study said it would do: {@code total} units of {@code unit} (cells, searches), about {@code plannedSeconds} in all. */
    private record Plan(String unit, int total, double plannedSeconds, int done) {}

    /**
     * The run as a whole. {@code secondsLeft} follows the pace so far: the planned time of the units left, scaled by how
     * long the units done took against their plan; before the first one ends, the plan as it stands.
     */
    public record Overall(String unit, int done, int total, double elapsedSeconds, double secondsLeft) {
        static Overall of(String unit, int done, int total, double plannedSeconds, double elapsed) {
            double plannedDone = plannedSeconds * done / total;
            double plannedLeft = plannedSeconds - plannedDone;
            double left = done == 0 ? Math.max(0, plannedSeconds - elapsed) : plannedLeft * elapsed / plannedDone;
            return new Overall(unit, done, total, elapsed, left);
        }

        public Instant endsAt() { return Instant.now().plusMillis(Math.round(secondsLeft * 1000)); }

        String line() {
            return String.format(Locale.ROOT, "%s %d of %d, %s elapsed, %s", unit, Math.min(done + 1, total), total, duration(elapsedSeconds),
                    done >= total ? "ending" : "about " + duration(secondsLeft) + " left");
        }
    }

    public Progress(String study) {
        this.study = study;
        String tty = System.getenv("PERFKIT_TTY");
        this.live = tty != null ? tty.equals("1") : System.console() != null;
    }

    /** The run will do {@code total} units of {@code unit} (say "cell"), about {@code plannedSeconds} in all. */
    public void plan(String unit, int total, double plannedSeconds) {
        if (total < 1) throw new IllegalArgumentException("a plan of " + total + " " + unit + "s");
        plan = new Plan(unit, total, Math.max(plannedSeconds, 1), 0);
        onUnit.accept(overall());
    }

    /** One unit of the plan is done. */
    public void unitDone() {
        Plan p = plan;
        if (p == null) return;
        plan = new Plan(p.unit(), p.total(), p.plannedSeconds(), Math.min(p.done() + 1, p.total()));
        onUnit.accept(overall());
    }

    /** Where the run is, or null when the study declared no plan. */
    public Overall overall() {
        Plan p = plan;
        return p == null ? null : Overall.of(p.unit(), p.done(), p.total(), p.plannedSeconds(), (System.nanoTime() - runStartNanos) / 1e9);
    }

    /** Called with the overall figures when the plan is declared and as each unit ends (the run writes them to its manifest). */
    void onUnit(Consumer<Overall> listener) { this.onUnit = listener; }

    public void phase(String phase, double plannedSeconds) {
        clear();
        this.phase = phase;
        this.phasePlannedSeconds = plannedSeconds;
        this.phaseStartNanos = System.nanoTime();
        if (!live) System.err.printf(Locale.ROOT, "[%s] %s (%.0f s)%n", study, phase, plannedSeconds);
    }

    /** Called once a second with the current rate across all counters. */
    public void rate(double perSecond) {
        if (!live) return;
        double elapsed = (System.nanoTime() - phaseStartNanos) / 1e9;
        Overall o = overall();
        System.err.printf(Locale.ROOT, "\r\033[K[%s] %s%s  %.0f/%.0f s  %s/s", study, o == null ? "" : o.line() + " | ", phase, elapsed,
                phasePlannedSeconds, human(perSecond));
        System.err.flush();
    }

    /** Plain message on its own line (the live line is cleared first). */
    public void say(String message) {
        clear();
        System.err.println("[" + study + "] " + message);
    }

    public void clear() {
        if (live) { System.err.print("\r\033[K"); System.err.flush(); }
    }

    static String human(double v) {
        if (v >= 1e9) return String.format(Locale.ROOT, "%.2fG", v / 1e9);
        if (v >= 1e6) return String.format(Locale.ROOT, "%.2fM", v / 1e6);
        if (v >= 1e3) return String.format(Locale.ROOT, "%.1fk", v / 1e3);
        return String.format(Locale.ROOT, "%.0f", v);
    }

    /** 45 s, 12 min, 1 h 05 min: what a person reads at a glance. */
    static String duration(double seconds) {
        long s = Math.round(seconds);
        if (s < 60) return s + " s";
        if (s < 3600) return Math.round(s / 60.0) + " min";
        long minutes = Math.round(s / 60.0);
        return String.format(Locale.ROOT, "%d h %02d min", minutes / 60, minutes % 60);
    }
}
