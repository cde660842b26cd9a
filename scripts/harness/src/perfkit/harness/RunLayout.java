package perfkit.harness;

import java.nio.file.Path;

/** Where runs live and the words their manifests use: shared by the run, its forks, the janitor and the watchdogs. */
public final class RunLayout {
    public static final String RUNNING = "running", COMPLETE = "complete", FAILED = "failed", INTERRUPTED = "interrupted";
    /** Temporary files of a live run, inside its directory; removed however the run ends. */
    static final String SCRATCH_DIR = "scratch";
    /** The live run's processes and temp folders, for the janitor; removed when the run ends. */
    static final String LIVE_FILE = ".live.json";
    /**
     * The environment variable that marks every process a run starts, and so everything those start in turn
     * (a postmaster's backends, a node's JVM): its value is the run's folder. The janitor finds a run's leftovers by
     * it even when no live file or watchdog remembers them.
     */
    public static final String MARK_ENV = "PERFKIT_RUN";
    /**
     * Space held back for the run's last words: on a full disk, deleting it lets the final manifest (failed, and why)
     * still be written.
     */
    static final String RESERVE_FILE = ".reserve";
    static final int RESERVE_BYTES = 1 << 20;
    /** Free space a run needs before it starts, in MB; PERFKIT_MIN_FREE_MB changes it. */
    static final long DEFAULT_MIN_FREE_MB = 100;
    /** Scratch's temp folder: every child JVM's java.io.tmpdir, so a server's temp files (Tomcat's) go with the run. */
    static final String TMP_DIR = "tmp";

    private RunLayout() {}

    /** The free space a run needs before it starts: PERFKIT_MIN_FREE_MB, else 100 MB. */
    static long minFreeMb() {
        String v = System.getenv("PERFKIT_MIN_FREE_MB");
        try {
            return v == null || v.isBlank() ? DEFAULT_MIN_FREE_MB : Math.max(0, Long.parseLong(v.trim()));
        } catch (NumberFormatException e) {
            throw new UserError("PERFKIT_MIN_FREE_MB expects a whole number of megabytes, got '" + v + "'");
        }
    }

    /** The marker value of a run: its folder as an absolute, normal path. */
    static String mark(Path runDir) { return runDir.toAbsolutePath().normalize().toString(); }

    /** Where data and git live: PERFKIT_HOME (set by ./bench), else the working directory. */
    public static Path kitRoot() {
        String home = System.getenv("PERFKIT_HOME");
        return Path.of(home == null || home.isBlank() ? "." : home).toAbsolutePath().normalize();
    }
}
