package perfkit.harness.measure;

import perfkit.harness.os.Processes;


import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * How busy a service JVM's JIT compiler and garbage collector are, second by second: a step measured while C2 is
 * still compiling (on 2 cores it takes CPU from the server) or while a collection pauses it is not a steady state.
 * The service prints its cumulative totals once a second; the run writes them to the time series as series
 * {@code jvm:<service>} with metrics {@code jit_ms_per_s} (CPU time of the compiler threads) and
 * {@code gc_ms_per_s} (collection time from the GC beans: pauses for G1 and Parallel).
 * <p>
 * Why CPU and not {@link CompilationMXBean#getTotalCompilationTime}: the JVM adds a compilation's <em>wall</em> time
 * when it <em>ends</em>. On a saturated 2-core host one C2 compile of a Spring MVC app took 14 s of wall time, so that
 * clock read 0 ms/s for 13 s (looking quiet) and then 14,887 ms/s: a warm-up rule on it could neither see a compile
 * in progress nor tell a long one from a busy compiler.
 */
public final class JvmActivity {
    public static final String LINE = "PERFKIT_JVM ";
    public static final String JIT = "jit_ms_per_s", GC = "gc_ms_per_s";

    private JvmActivity() {}

    /** In the service: a daemon thread printing {@code PERFKIT_JVM <nanoTime> <jit ms> <gc ms>} every second. */
    public static void reportEverySecond() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        CompilerThreads compilers = new CompilerThreads(Path.of("/proc/self/task"));
        Processes.daemon("perfkit-jvm-activity", () -> {
            while (true) {
                long gcMs = 0;
                for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) gcMs += Math.max(0, gc.getCollectionTime());
                long jitMs = compilers.cpuMs();
                if (jitMs < 0) jitMs = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
                System.out.println(LINE + System.nanoTime() + " " + jitMs + " " + gcMs);
                System.out.flush();
                try { Thread.sleep(1000); } catch (InterruptedException e) { return; }
            }
        });
    }

    /**
     * CPU time of a JVM's JIT compiler threads ({@code C1 CompilerThre…}, {@code C2 CompilerThre…} in /proc), summed
     * since start, ms. The JVM starts and ends compiler threads as its queue grows and shrinks, so each thread's last
     * reading is kept after it is gone and the sum never goes back.
     */
    static final class CompilerThreads {
        private final Path tasks;
        private final Map<String, Boolean> isCompiler = new HashMap<>();
        private final Map<String, Long> lastTicks = new HashMap<>();

        CompilerThreads(Path tasks) { this.tasks = tasks; }

        /** Milliseconds of CPU, or -1 where /proc cannot tell (not Linux). */
        synchronized long cpuMs() {
            try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
                for (Path t : threads) {
                    String tid = t.getFileName().toString();
                    try {
                        if (!isCompiler.computeIfAbsent(tid, k -> compilerName(read(t.resolve("comm"))))) continue;
                        long ticks = CpuSampler.parseProcessTicks(read(t.resolve("stat")));
                        if (ticks >= 0) lastTicks.merge(tid, ticks, Math::max);
                    } catch (UncheckedIOException gone) {
                        // the thread ended between the listing and the read: its last reading stays
                    }
                }
            } catch (IOException | UncheckedIOException e) {
                return -1;
            }
            long ticks = 0;
            for (long t : lastTicks.values()) ticks += t;
            return Math.round(ticks * 1000 / CpuSampler.TICKS_PER_SECOND);
        }

        static boolean compilerName(String comm) {
            String name = comm.trim();
            return name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre");
        }

        private static String read(Path p) {
            try { return Files.readString(p); } catch (IOException e) { throw new UncheckedIOException(e); }
        }
    }

    /** In the run: turns a service's report lines into time-series counters, and keeps them for {@link Listener#jitMsPerSecond}. */
    public static Listener listen(TimeSeries series, String name) {
        return new Listener(series.counter(name, JIT), series.counter(name, GC));
    }

    /** One report as the run received it: the wall clock here (the service's nanoTime is another JVM's), cumulative totals. */
    public record Report(long receivedMs, long jitMs, long gcMs) {}

    /** A service's reports: written to the time series, and kept (the last hour) to judge warm-up and steps. */
    public static final class Listener {
        static final int KEEP = 3600;
        private final TimeSeries.Counter jit, gc;
        private final java.util.ArrayDeque<Report> reports = new java.util.ArrayDeque<>();

        public Listener(TimeSeries.Counter jit, TimeSeries.Counter gc) {
            this.jit = jit;
            this.gc = gc;
        }

        /** True when the line was a report (and is consumed). */
        public boolean accept(String line) {
            if (!line.startsWith(LINE)) return false;
            String[] f = line.substring(LINE.length()).trim().split(" ");
            try {
                long nanos = Long.parseLong(f[0]), jitMs = Long.parseLong(f[1]), gcMs = Long.parseLong(f[2]);
                jit.report(jitMs, nanos);
                gc.report(gcMs, nanos);
                add(new Report(System.currentTimeMillis(), jitMs, gcMs));
            } catch (RuntimeException malformed) {
                // a report cut by the service's exit: the next second has the totals again
            }
            return true;
        }

        public synchronized void add(Report r) {
            reports.addLast(r);
            while (reports.size() > KEEP) reports.removeFirst();
        }

        /**
         * JIT compilation time per second of wall clock between two instants (epoch ms), from the reports nearest to
         * them (one a second); NaN when the service reported nothing in that span.
         */
        public double jitMsPerSecond(long fromMs, long toMs) { return perSecond(fromMs, toMs, Report::jitMs); }

        /** Collection time (the GC beans': pauses for G1 and Parallel) per second of wall clock between two instants; NaN as above. */
        public double gcMsPerSecond(long fromMs, long toMs) { return perSecond(fromMs, toMs, Report::gcMs); }

        private synchronized double perSecond(long fromMs, long toMs, java.util.function.ToLongFunction<Report> total) {
            Report first = null, last = null;
            for (Report r : reports) {
                if (r.receivedMs() <= fromMs) first = r;
                else if (first == null) first = r;
                if (r.receivedMs() <= toMs) last = r;
            }
            if (first == null || last == null || last.receivedMs() <= first.receivedMs()) return Double.NaN;
            return (total.applyAsLong(last) - total.applyAsLong(first)) * 1000.0 / (last.receivedMs() - first.receivedMs());
        }
    }

    /**
     * The busiest of {@code servers} during a step (epoch ms), by JIT ({@code gc} false) or by GC time, ms/s; NaN when
     * none reported. A step's JIT says whether its servers were still compiling; its GC, how much of it they paused.
     */
    public static double busiest(java.util.Collection<Listener> servers, long fromMs, long toMs, boolean gc) {
        double max = Double.NaN;
        for (Listener l : servers) {
            double v = gc ? l.gcMsPerSecond(fromMs, toMs) : l.jitMsPerSecond(fromMs, toMs);
            if (!Double.isNaN(v)) max = Double.isNaN(max) ? v : Math.max(max, v);
        }
        return max;
    }
}
