package perfkit.harness;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * How busy a service JVM's JIT compiler and garbage collector are, second by second: a step measured while C2 is
 * still compiling (on 2 cores it takes CPU from the server) or while a collection pauses it is not a steady state.
 * The service prints its cumulative totals once a second; the run writes them to the time series as series
 * {@code jvm:<service>} with metrics {@code jit_ms_per_s} (compilation time, summed over compiler threads) and
 * {@code gc_ms_per_s} (collection time from the GC beans: pauses for G1 and Parallel).
 */
public final class JvmActivity {
    static final String LINE = "PERFKIT_JVM ";
    public static final String JIT = "jit_ms_per_s", GC = "gc_ms_per_s";

    private JvmActivity() {}

    /** In the service: a daemon thread printing {@code PERFKIT_JVM <nanoTime> <jit ms> <gc ms>} every second. */
    static void reportEverySecond() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        ChildProcess.daemon("perfkit-jvm-activity", () -> {
            while (true) {
                long gcMs = 0;
                for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) gcMs += Math.max(0, gc.getCollectionTime());
                long jitMs = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
                System.out.println(LINE + System.nanoTime() + " " + jitMs + " " + gcMs);
                System.out.flush();
                try { Thread.sleep(1000); } catch (InterruptedException e) { return; }
            }
        });
    }

    /** In the run: turns a service's report lines into time-series counters. */
    static Listener listen(TimeSeries series, String name) {
        return new Listener(series.counter(name, JIT), series.counter(name, GC));
    }

    record Listener(TimeSeries.Counter jit, TimeSeries.Counter gc) {
        /** True when the line was a report (and is consumed). */
        boolean accept(String line) {
            if (!line.startsWith(LINE)) return false;
            String[] f = line.substring(LINE.length()).trim().split(" ");
            try {
                long nanos = Long.parseLong(f[0]);
                jit.report(Long.parseLong(f[1]), nanos);
                gc.report(Long.parseLong(f[2]), nanos);
            } catch (RuntimeException malformed) {
                // a report cut by the service's exit: the next second has the totals again
            }
            return true;
        }
    }
}
