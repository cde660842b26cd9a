package perfkit.harness.measure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

/** A service's JIT and GC report lines become per-second rates in the time series, apart from the event rates. */
class JvmActivityTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void reportsBecomeMillisecondsPerSecondAndAreNotCountedAsEvents(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(TimeSeries.FILE_NAME);
        AtomicReference<Double> eventRate = new AtomicReference<>();
        try (TimeSeries series = new TimeSeries(file, CpuSampler.forThisMachine())) {
            series.onRate(eventRate::set);
            JvmActivity.Listener service = JvmActivity.listen(series, "jvm:app/fork1");
            long t0 = System.nanoTime();
            // the compiler busy 0.8 s per second (C2 at work), the collector 30 ms per second
            assertTrue(service.accept(JvmActivity.LINE + (t0 - 2 * SECOND) + " 1000 100"));
            assertTrue(service.accept(JvmActivity.LINE + (t0 - SECOND) + " 1800 130"));
            assertTrue(service.accept(JvmActivity.LINE + "cut-short"), "a torn report is consumed, not logged");
            assertFalse(service.accept("INFO Tomcat started"), "other output is the service's log");
            series.tick(); // the first tick sets the baseline
            Thread.sleep(20);
            series.tick();
        }
        List<String[]> rows = Files.readAllLines(file).stream().skip(1).map(l -> l.split(",")).toList();
        String[] jit = rows.stream().filter(r -> r[3].equals("jvm:app/fork1") && r[4].equals(JvmActivity.JIT)).findFirst().orElseThrow();
        String[] gc = rows.stream().filter(r -> r[3].equals("jvm:app/fork1") && r[4].equals(JvmActivity.GC)).findFirst().orElseThrow();
        assertEquals(800, Double.parseDouble(jit[5]), 8);
        assertEquals(30, Double.parseDouble(gc[5]), 0.3);
        assertEquals(0.0, eventRate.get(), "milliseconds of JIT are not events for the progress line");
    }

    private static void thread(Path tasks, String tid, String comm, long utime, long stime) throws Exception {
        Path t = Files.createDirectories(tasks.resolve(tid));
        Files.writeString(t.resolve("comm"), comm + "\n");
        Files.writeString(t.resolve("stat"), tid + " (" + comm + ") S 1 1 1 0 -1 4194368 0 0 0 0 " + utime + " " + stime + " 0 0 20 0 1 0 0 0 0\n");
    }

    @Test
    void jitIsTheCompilerThreadsCpuAndKeepsWhatEndedThreadsSpent(@TempDir Path tasks) throws Exception {
        thread(tasks, "101", "C2 CompilerThre", 30, 20);
        thread(tasks, "102", "C1 CompilerThre", 5, 5);
        thread(tasks, "103", "http-nio-8080-e", 900, 100);
        JvmActivity.CompilerThreads compilers = new JvmActivity.CompilerThreads(tasks);
        assertEquals(600, compilers.cpuMs(), "C2's 50 ticks and C1's 10, not the request thread's");
        thread(tasks, "101", "C2 CompilerThre", 80, 20);
        assertEquals(1100, compilers.cpuMs());
        // the JVM ends an idle compiler thread: what it spent is still spent
        Files.delete(tasks.resolve("101/comm"));
        Files.delete(tasks.resolve("101/stat"));
        Files.delete(tasks.resolve("101"));
        assertEquals(1100, compilers.cpuMs());
        thread(tasks, "104", "C2 CompilerThre", 1, 0);
        assertEquals(1110, compilers.cpuMs(), "a new compiler thread adds to the sum");
    }

    @Test
    void withoutProcTheJitClockIsUnknown(@TempDir Path dir) {
        assertEquals(-1, new JvmActivity.CompilerThreads(dir.resolve("missing")).cpuMs());
    }
}
