package perfkit.harness.run;

import java.util.Locale;

/**
 * One updating status line on stderr while a long phase runs: phase, elapsed of planned seconds, rate.
 * It only redraws on a terminal ({@code PERFKIT_TTY=1}, set by ./bench when stderr is a tty); otherwise
 * each phase is announced once as a plain line, so logs stay short.
 */
public final class Progress {
    private final String study;
    private final boolean live;
    private volatile String phase = "";
    private volatile double plannedSeconds;
    private volatile long phaseStartNanos = System.nanoTime();

    public Progress(String study) {
        this.study = study;
        String tty = System.getenv("PERFKIT_TTY");
        this.live = tty != null ? tty.equals("1") : System.console() != null;
    }

    public void phase(String phase, double plannedSeconds) {
        clear();
        this.phase = phase;
        this.plannedSeconds = plannedSeconds;
        this.phaseStartNanos = System.nanoTime();
        if (!live) System.err.printf(Locale.ROOT, "[%s] %s (%.0f s)%n", study, phase, plannedSeconds);
    }

    /** Called once a second with the current rate across all counters. */
    public void rate(double perSecond) {
        if (!live) return;
        double elapsed = (System.nanoTime() - phaseStartNanos) / 1e9;
        System.err.printf(Locale.ROOT, "\r\033[K[%s] %s  %.0f/%.0f s  %s/s", study, phase, elapsed, plannedSeconds, human(perSecond));
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
}
