package perfkit.harness.process;

import perfkit.harness.os.Disk;
import perfkit.harness.record.HostInfo;
import perfkit.harness.record.Manifest;
import perfkit.harness.os.Processes;
import perfkit.harness.record.RunLayout;
import perfkit.harness.record.RunManifest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Tidies up after runs whose JVM died without finishing (SIGKILL, a crash, a power cut): a manifest still at
 * {@code running} whose process is gone becomes {@code interrupted} with the reason, the processes it recorded
 * in its live file ({@link Supervisor}) are stopped, and its scratch and temp folders are removed. Every run
 * start and {@code ./bench list} sweep the runs folder; each run's own {@link Watchdog} does the same at once.
 */
public final class Janitor {
    /** A private PostgreSQL cluster's temp folder ({@link PrivatePostgres}), and the file in it naming the run's JVM. */
    public static final String CLUSTER_PREFIX = "perfkit-pg-", CLUSTER_OWNER_FILE = "owner";

    private Janitor() {}

    /** Cleans every dead run under {@code runsRoot}/<study>/<run-id>; returns how many it marked interrupted. */
    public static int sweep(Path runsRoot) {
        int marked = 0;
        if (!Files.isDirectory(runsRoot)) return 0;
        try (Stream<Path> manifests = Files.find(runsRoot, 3, (p, a) -> p.getFileName().toString().equals(Manifest.FILE_NAME))) {
            for (Path m : manifests.toList()) {
                if (clean(m.getParent(), "the run's process is gone (SIGKILL or a crash); found by the janitor")) marked++;
            }
        } catch (IOException e) {
            System.err.println("perfkit: janitor could not list " + runsRoot + ": " + e.getMessage());
        }
        return marked;
    }

    /**
     * Cleans one run if its process is dead. Returns true when it marked the run interrupted. A live run, or a
     * manifest it cannot read, is left alone.
     */
    static boolean clean(Path runDir, String reason) {
        Path liveFile = runDir.resolve(RunLayout.LIVE_FILE);
        ObjectNode manifest;
        try {
            manifest = Manifest.read(runDir.resolve(Manifest.FILE_NAME));
        } catch (IOException | RuntimeException e) {
            return false;
        }
        if (manifest == null) return false;
        boolean running = RunLayout.RUNNING.equals(Manifest.statusOf(manifest));
        JsonNode live = readLive(liveFile);
        if (!running && live == null) return false;
        if (runnerAlive(manifest, live)) return false;

        // Clients first (forks and services), so none of them fails noisily against a database that went first; then
        // the servers, a PostgreSQL cluster with its own clean shutdown; then whatever else still carries the run's
        // mark, however it was re-parented (a server whose watchdog was killed too). Folders go once nothing uses them.
        List<Processes.Pid> clients = new ArrayList<>(), servers = new ArrayList<>();
        if (live != null) live.path("children").forEach(c ->
                (c.path("wrapped").asBoolean(false) ? servers : clients).add(new Processes.Pid(c.path("pid").asLong(), c.path("startMillis").asLong(-1))));
        stop(clients);
        List<Path> tempDirs = new ArrayList<>();
        if (live != null) live.path("tempDirs").forEach(d -> tempDirs.add(Path.of(d.asText())));
        tempDirs.forEach(Janitor::stopServerIn);
        Processes.marked(RunLayout.MARK_ENV, RunLayout.mark(runDir)).forEach(h -> servers.add(Processes.Pid.of(h)));
        stop(servers);
        tempDirs.forEach(Disk::deleteRecursively);
        Disk.deleteRecursively(runDir.resolve(RunLayout.SCRATCH_DIR));
        Disk.deleteRecursively(runDir.resolve(RunLayout.RESERVE_FILE));
        if (running) {
            RunManifest.registerLeftoverFiles(runDir, manifest);
            manifest.put("status", RunLayout.INTERRUPTED);
            manifest.put("error", reason);
            manifest.put("endedAt", Instant.now().toString());
            try {
                Manifest.writeAtomically(runDir.resolve(Manifest.FILE_NAME), manifest);
            } catch (IOException e) {
                System.err.println("perfkit: could not mark " + runDir + " interrupted: " + e.getMessage());
                return false;
            }
        }
        try { Files.deleteIfExists(liveFile); } catch (IOException ignored) { }
        if (running) System.err.println("perfkit: run " + runDir.getFileName() + " marked interrupted: " + reason);
        return running;
    }

    /** The run's JVM, identified by pid and start time (from the live file) so a reused pid does not fool us. */
    private static boolean runnerAlive(ObjectNode manifest, JsonNode live) {
        if (live != null && live.has("runner")) {
            JsonNode r = live.get("runner");
            return new Processes.Pid(r.path("pid").asLong(), r.path("startMillis").asLong(-1)).live().isPresent();
        }
        if (!manifest.path("host").path("hostname").asText("").equals(HostInfo.hostname())) return true; // not ours to judge
        return Processes.running(manifest.path("pid").asLong(-1));
    }

    /** SIGTERM what is left, then SIGKILL after 5 s. Only processes whose start time matches are touched. */
    static void stop(List<Processes.Pid> pids) {
        List<ProcessHandle> alive = pids.stream().flatMap(p -> p.live().stream()).toList();
        List<ProcessHandle> tree = new ArrayList<>(alive);
        alive.forEach(h -> tree.addAll(h.descendants().toList()));
        tree.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (tree.stream().anyMatch(h -> Processes.running(h.pid())) && System.nanoTime() < deadline) {
            try { Thread.sleep(100); } catch (InterruptedException e) { Thread.currentThread().interrupt(); break; }
        }
        tree.stream().filter(h -> Processes.running(h.pid())).forEach(ProcessHandle::destroyForcibly);
    }

    static JsonNode readLive(Path liveFile) {
        try {
            return Files.exists(liveFile) ? Manifest.JSON.readTree(liveFile.toFile()) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Private PostgreSQL clusters left in the temp folder by runs that died before any cleanup: stopped and removed. */
    public static void sweepClusters() {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith(CLUSTER_PREFIX)).toList()) {
                String[] owner;
                try {
                    owner = Files.readString(dir.resolve(CLUSTER_OWNER_FILE)).trim().split(" ");
                } catch (IOException e) {
                    continue; // not ours, or being created right now
                }
                if (new Processes.Pid(Long.parseLong(owner[0]), Long.parseLong(owner[1])).live().isPresent()) continue;
                stopServerIn(dir);
                Disk.deleteRecursively(dir);
            }
        } catch (IOException | RuntimeException ignored) {
            // nothing to sweep
        }
    }

    /**
     * Stops the server of a cluster folder, if one still runs there: a fast shutdown (SIGINT), so it removes its own
     * shared memory and lock files, SIGKILL after 10 s. Only then may the folder go: removing it under a live server
     * leaves the server running, listening and holding its segments until it notices its lock file is gone.
     */
    static void stopServerIn(Path root) {
        try {
            List<String> pidFile = Files.readAllLines(root.resolve("data/postmaster.pid"));
            long postmaster = Long.parseLong(pidFile.get(0).trim());
            String dataDir = pidFile.get(1).trim();
            // the pid is the server's only if that process works in this very folder (the postmaster changes into its
            // data folder; pids are reused)
            ProcessHandle.of(postmaster).filter(h -> Processes.running(h.pid()))
                    .filter(h -> Path.of(dataDir).equals(workingDir(h.pid())))
                    .ifPresent(h -> Processes.stopTree(h, "INT", 10));
        } catch (IOException | RuntimeException ignored) {
            // no server runs there
        }
    }

    private static Path workingDir(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
