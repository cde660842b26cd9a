package perfkit.harness.record;

import perfkit.harness.os.Disk;
import perfkit.harness.os.UserError;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Where runs live and the words their manifests use: shared by the run, its forks, the janitor and the watchdogs. */
public final class RunLayout {
    public static final String RUNNING = "running", COMPLETE = "complete", FAILED = "failed", INTERRUPTED = "interrupted";
    /** Temporary files of a live run, inside its directory; removed however the run ends. */
    public static final String SCRATCH_DIR = "scratch";
    /** The live run's processes and temp folders, for the janitor; removed when the run ends. */
    public static final String LIVE_FILE = ".live.json";
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
    public static final String RESERVE_FILE = ".reserve";
    static final int RESERVE_BYTES = 1 << 20;
    /** Free space a run needs before it starts, in MB; PERFKIT_MIN_FREE_MB changes it. */
    static final long DEFAULT_MIN_FREE_MB = 100;
    /** Scratch's temp folder: every child JVM's java.io.tmpdir, so a server's temp files (Tomcat's) go with the run. */
    public static final String TMP_DIR = "tmp";

    /**
     * The study's folder under {@code runsRoot}, made when missing; refused in one line when the disk lacks the room a
     * run needs ({@link #minFreeMb()}) or the folder cannot be made.
     */
    public static Path studyDir(Path runsRoot, String study) {
        long free = Disk.freeBytes(runsRoot), needed = minFreeMb() << 20;
        if (free >= 0 && free < needed)
            throw new UserError(study + ": only " + (free >> 20) + " MB free under " + runsRoot + "; a run needs at least " + (needed >> 20)
                    + " MB (free some space, choose another --out, or set PERFKIT_MIN_FREE_MB)");
        try {
            return Files.createDirectories(runsRoot.resolve(study));
        } catch (IOException e) {
            throw new UserError(study + ": cannot create the run folder under " + runsRoot + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final SecureRandom RANDOM = new SecureRandom();

    private RunLayout() {}

    /** Sortable and unique: UTC time to the second, host, and 24 random bits; the mkdir itself is the final arbiter. */
    public static String newRunId(Instant now, String host) {
        String safeHost = host.toLowerCase().replaceAll("[^a-z0-9-]", "-");
        if (safeHost.length() > 24) safeHost = safeHost.substring(0, 24);
        return ID_TIME.format(now) + "-" + safeHost + "-" + String.format("%06x", RANDOM.nextInt(1 << 24));
    }

    /** A new run folder under {@code parent}, named by a fresh run id. */
    public static Path createUniqueDir(Path parent) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return Files.createDirectory(parent.resolve(newRunId(Instant.now(), HostInfo.hostname())));
            } catch (FileAlreadyExistsException e) {
                if (attempt > 100) throw e;
            }
        }
    }

    /** Holds {@link #RESERVE_BYTES} in the run folder that only {@link #releaseReserve} gives back, for the manifest's last write. */
    public static void holdReserve(Path runDir, String study) {
        try {
            Files.write(runDir.resolve(RESERVE_FILE), new byte[RESERVE_BYTES]);
        } catch (IOException e) {
            Disk.deleteRecursively(runDir.resolve(RESERVE_FILE));
            throw new UserError(study + ": cannot write under " + runDir.getParent() + ": " + Disk.reason(e));
        }
    }

    public static void releaseReserve(Path runDir) {
        try { Files.deleteIfExists(runDir.resolve(RESERVE_FILE)); } catch (IOException ignored) { }
    }

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
    public static String mark(Path runDir) { return runDir.toAbsolutePath().normalize().toString(); }

    /** Where data and git live: PERFKIT_HOME (set by ./bench), else the working directory. */
    public static Path kitRoot() {
        String home = System.getenv("PERFKIT_HOME");
        return Path.of(home == null || home.isBlank() ? "." : home).toAbsolutePath().normalize();
    }
}
