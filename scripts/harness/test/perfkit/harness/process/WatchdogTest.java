package perfkit.harness.process;

import perfkit.harness.os.Processes;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** The parent-death watchdogs, on real processes: when the parent's end closes their stdin, they and theirs go. */
class WatchdogTest {
    private static List<String> java(Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    @Test
    void aWrappedProgramIsStoppedAndItsFolderRemovedWhenStdinCloses(@TempDir Path tmp) throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("cluster/data"));
        Process watchdog = new ProcessBuilder(java(Watchdog.class, "--wrap", "--signal", "INT", "--grace", "5",
                "--remove", folder.getParent().toString(), "--", "sleep", "300")).redirectErrorStream(true).start();
        ProcessHandle sleeper = waitForChild(watchdog);
        watchdog.getOutputStream().close();
        assertTrue(watchdog.waitFor(20, TimeUnit.SECONDS), "watchdog exits");
        assertFalse(Processes.running(sleeper.pid()), "its program is gone");
        assertFalse(Files.exists(folder.getParent()), "its folder is gone");
    }

    @Test
    void aWrappedProgramDiesWithItsWatchdogEvenWhenTheWatchdogIsKilledOutright() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs util-linux setpriv");
        Process watchdog = new ProcessBuilder(java(Watchdog.class, "--wrap", "--signal", "TERM", "--", "sleep", "300"))
                .redirectErrorStream(true).start();
        ProcessHandle sleeper = waitForChild(watchdog);
        watchdog.destroyForcibly(); // SIGKILL: no hook of the watchdog runs
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Processes.running(sleeper.pid()) && System.nanoTime() < deadline) Thread.sleep(50);
        assertFalse(Processes.running(sleeper.pid()), "the kernel signalled the program when its watchdog died");
    }

    @Test
    void theFirstLineReachesTheWrappedProgramsStdinAndNeverItsCommandLine(@TempDir Path tmp) throws Exception {
        Path got = tmp.resolve("got");
        Process watchdog = new ProcessBuilder(java(Watchdog.class, "--wrap", Watchdog.FORWARD_FIRST_LINE, "--",
                "sh", "-c", "head -n 1 > " + got + "; sleep 300")).redirectErrorStream(true).start();
        watchdog.getOutputStream().write("s3cret\n".getBytes());
        watchdog.getOutputStream().flush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(Files.exists(got) && Files.size(got) > 0) && System.nanoTime() < deadline) Thread.sleep(50);
        assertEquals("s3cret", Files.readString(got).strip());
        for (ProcessHandle h : watchdog.descendants().toList())
            assertFalse(h.info().commandLine().orElse("").contains("s3cret"), h.info().commandLine().orElse(""));
        watchdog.getOutputStream().close();
        assertTrue(watchdog.waitFor(20, TimeUnit.SECONDS));
    }

    @Test
    void aChildJvmRunsItsShutdownHooksAndExitsWhenItsStdinCloses(@TempDir Path tmp) throws Exception {
        Path marker = tmp.resolve("flushed");
        Process child = new ProcessBuilder(java(ChildProcess.class, SleepsForever.class.getName(), marker.toString()))
                .redirectErrorStream(true).start();
        child.getOutputStream().write("{}\n".getBytes());
        child.getOutputStream().flush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(tmp.resolve("started")) && System.nanoTime() < deadline) Thread.sleep(50);
        child.getOutputStream().close();
        assertTrue(child.waitFor(20, TimeUnit.SECONDS));
        assertEquals(ChildProcess.EXIT_PARENT_GONE, child.exitValue());
        assertTrue(Files.exists(marker), "shutdown hooks ran: data would be flushed");
    }

    private static ProcessHandle waitForChild(Process p) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            var kids = p.children().toList();
            if (!kids.isEmpty()) return kids.get(0);
            Thread.sleep(50);
        }
        throw new AssertionError("the wrapped program never started");
    }

    /** A stand-in study main: writes "started", sleeps, and leaves a marker from its shutdown hook. */
    public static final class SleepsForever {
        public static void main(String[] args) throws Exception {
            Path marker = Path.of(args[0]);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try { Files.writeString(marker, "bye"); } catch (Exception ignored) { }
            }));
            Files.writeString(marker.resolveSibling("started"), "yes");
            Thread.sleep(300_000);
        }
    }
}
