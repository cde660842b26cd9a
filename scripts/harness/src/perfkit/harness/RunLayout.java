package perfkit.harness;

import java.nio.file.Path;

/** Where runs live and the words their manifests use: shared by the run, its forks, the janitor and the watchdogs. */
public final class RunLayout {
    public static final String RUNNING = "running", COMPLETE = "complete", FAILED = "failed", INTERRUPTED = "interrupted";
    /** Temporary files of a live run, inside its directory; removed however the run ends. */
    static final String SCRATCH_DIR = "scratch";
    /** The live run's processes and temp folders, for the janitor; removed when the run ends. */
    static final String LIVE_FILE = ".live.json";

    private RunLayout() {}

    /** Where data and git live: PERFKIT_HOME (set by ./bench), else the working directory. */
    public static Path kitRoot() {
        String home = System.getenv("PERFKIT_HOME");
        return Path.of(home == null || home.isBlank() ? "." : home).toAbsolutePath().normalize();
    }
}
