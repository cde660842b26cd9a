package perfkit.harness.process;

import perfkit.harness.record.HostInfo;
import perfkit.harness.record.Manifest;
import perfkit.harness.os.Processes;
import perfkit.harness.record.RunLayout;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** A run killed outright: its manifest, its children and its folders, as the janitor finds them. */
class JanitorTest {
    private static Processes.Pid deadProcess() throws Exception {
        Process p = new ProcessBuilder("true").start();
        Processes.Pid pid = Processes.Pid.of(p.toHandle());
        p.waitFor(10, TimeUnit.SECONDS);
        return pid;
    }

    private static Path fakeRun(Path root, Processes.Pid runner, Process child, Path temp) throws Exception {
        Path dir = Files.createDirectories(root.resolve("queues/20260101T000000Z-vm-abcdef"));
        ObjectNode m = Manifest.newObject().put("schemaVersion", Manifest.SCHEMA_VERSION).put("status", "running").put("pid", runner.pid());
        m.putObject("host").put("hostname", HostInfo.hostname());
        m.putArray("files");
        Manifest.writeAtomically(dir.resolve(Manifest.FILE_NAME), m);
        Files.createDirectories(dir.resolve(RunLayout.SCRATCH_DIR)).resolve("broker.log").toFile().createNewFile();
        Files.writeString(dir.resolve("latency.hlog"), "partial");
        ObjectNode live = Manifest.newObject();
        live.putObject("runner").put("pid", runner.pid()).put("startMillis", runner.startMillis());
        Processes.Pid c = Processes.Pid.of(child.toHandle());
        live.putArray("children").addObject().put("pid", c.pid()).put("startMillis", c.startMillis()).put("name", "broker");
        live.putArray("tempDirs").add(temp.toString());
        Manifest.writeAtomically(dir.resolve(RunLayout.LIVE_FILE), live);
        return dir;
    }

    @Test
    void aDeadRunIsMarkedInterruptedAndEverythingItLeftGoes(@TempDir Path root) throws Exception {
        Process child = new ProcessBuilder("sleep", "300").start();
        Path temp = Files.createDirectories(root.resolve("perfkit-pg-x/data"));
        try {
            Path run = fakeRun(root, deadProcess(), child, temp.getParent());
            assertEquals(1, Janitor.sweep(root));
            assertTrue(child.waitFor(10, TimeUnit.SECONDS), "the recorded child is stopped");
            ObjectNode m = Manifest.read(run.resolve(Manifest.FILE_NAME));
            assertEquals("interrupted", m.get("status").asText());
            assertTrue(m.get("error").asText().contains("janitor"));
            assertFalse(m.get("endedAt").isNull());
            assertFalse(Files.exists(run.resolve(RunLayout.SCRATCH_DIR)));
            assertFalse(Files.exists(temp.getParent()));
            assertFalse(Files.exists(run.resolve(RunLayout.LIVE_FILE)));
            assertEquals("latency.hlog", m.get("files").get(0).get("path").asText(), "partial data stays listed");
            assertEquals(0, Janitor.sweep(root), "a second sweep has nothing to do");
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void processesCarryingTheRunsMarkAreStoppedThoughNoLiveFileNamesThem(@TempDir Path root) throws Exception {
        // a server whose watchdog died with the run: re-parented, and in no live file, but marked by the run's folder
        Process recorded = new ProcessBuilder("sleep", "300").start();
        Path run = fakeRun(root, deadProcess(), recorded, Files.createDirectories(root.resolve("t")));
        ProcessBuilder pb = new ProcessBuilder("sleep", "301");
        pb.environment().put(RunLayout.MARK_ENV, RunLayout.mark(run));
        Process orphan = pb.start();
        ProcessBuilder other = new ProcessBuilder("sleep", "302");
        other.environment().put(RunLayout.MARK_ENV, RunLayout.mark(run) + "-another-run");
        Process bystander = other.start();
        try {
            assertEquals(List.of(orphan.pid()), Processes.marked(RunLayout.MARK_ENV, RunLayout.mark(run)).stream().map(ProcessHandle::pid).toList());
            assertEquals(1, Janitor.sweep(root));
            assertTrue(orphan.waitFor(10, TimeUnit.SECONDS), "the marked process is stopped");
            assertTrue(bystander.isAlive(), "another run's process is not touched");
        } finally {
            recorded.destroyForcibly();
            orphan.destroyForcibly();
            bystander.destroyForcibly();
        }
    }

    @Test
    void aClusterStillServingIsStoppedBeforeItsFolderGoes(@TempDir Path root) throws Exception {
        // stands in for a postmaster: works in the cluster's data folder, which postmaster.pid names
        Path cluster = Files.createDirectories(root.resolve("perfkit-pg-y"));
        Path data = Files.createDirectories(cluster.resolve("data"));
        Process recorded = new ProcessBuilder("sleep", "300").start();
        Process server = new ProcessBuilder("sleep", "303").directory(data.toFile()).start();
        Files.writeString(data.resolve("postmaster.pid"), server.pid() + "\n" + data + "\n");
        try {
            fakeRun(root, deadProcess(), recorded, cluster);
            assertEquals(1, Janitor.sweep(root));
            assertTrue(server.waitFor(15, TimeUnit.SECONDS), "the server is stopped (SIGINT, a fast shutdown)");
            assertFalse(Files.exists(cluster), "then its folder is removed");
        } finally {
            recorded.destroyForcibly();
            server.destroyForcibly();
        }
    }

    @Test
    void aLiveRunIsLeftAlone(@TempDir Path root) throws Exception {
        Process child = new ProcessBuilder("sleep", "300").start();
        try {
            Path run = fakeRun(root, Processes.Pid.of(ProcessHandle.current()), child, Files.createDirectories(root.resolve("t")));
            assertEquals(0, Janitor.sweep(root));
            assertTrue(child.isAlive());
            assertEquals("running", Manifest.read(run.resolve(Manifest.FILE_NAME)).get("status").asText());
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void aReusedPidIsNotTheRunner(@TempDir Path root) throws Exception {
        // this JVM's pid, but another start time: the recorded runner is dead even though the pid is alive
        Process child = new ProcessBuilder("sleep", "300").start();
        try {
            Processes.Pid reused = new Processes.Pid(ProcessHandle.current().pid(), 12345L);
            fakeRun(root, reused, child, Files.createDirectories(root.resolve("t")));
            assertEquals(1, Janitor.sweep(root));
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void unreadableManifestsAreSkipped(@TempDir Path root) throws Exception {
        Path dir = Files.createDirectories(root.resolve("queues/x"));
        Files.writeString(dir.resolve(Manifest.FILE_NAME), "null");
        Path other = Files.createDirectories(root.resolve("queues/y"));
        Files.writeString(other.resolve(Manifest.FILE_NAME), "{\"status\":");
        assertEquals(0, Janitor.sweep(root));
    }
}
