package perfkit.harness.measure;

import perfkit.harness.os.Disk;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleConsumer;
import java.util.function.LongSupplier;

/**
 * {@code timeseries.csv}: one row per second, series and metric, in tidy long form:
 * {@code epoch_ms,elapsed_s,phase,series,metric,value}.
 * Metrics: {@code events_per_s} for watched counters, {@code cpu_pct} per watched process and for
 * {@code system}, and {@code steal_pct} for {@code system}; CPU in percent of one core. Other processes may
 * report their own cumulative amounts (a service's JIT and GC milliseconds, see {@link JvmActivity}).
 * Each row is flushed at once, so an interrupted run keeps everything up to its last second.
 */
public final class TimeSeries implements AutoCloseable {
    public static final String FILE_NAME = "timeseries.csv";
    static final String HEADER = "epoch_ms,elapsed_s,phase,series,metric,value";

    private record Polled(LongSupplier cumulative, long[] last) {}
    private record Key(String series, String metric) {}
    static final String EVENTS_PER_S = "events_per_s";
    private record Proc(long pid, boolean tree, long[] lastTicks) {}

    /**
     * A cumulative count reported by another process at its own moments, stamped with System.nanoTime() (one
     * monotonic clock for all processes on Linux). The per-second rate is taken between two estimates of the
     * count at this sampler's ticks, interpolated between reports, so a report landing just before or just
     * after a tick cannot make one second read 0 and the next double.
     */
    public static final class Counter {
        private long prevCount, prevNanos = Long.MIN_VALUE, lastCount, lastNanos = Long.MIN_VALUE;
        private double countAtLastTick = Double.NaN;

        public synchronized void report(long count, long nanos) {
            if (lastNanos != Long.MIN_VALUE && nanos <= lastNanos) return;
            prevCount = lastCount;
            prevNanos = lastNanos;
            lastCount = count;
            lastNanos = nanos;
        }

        /** The count at {@code nanos}: interpolated between the last two reports, extrapolated (at their rate) past the last. */
        synchronized double estimateAt(long nanos) {
            if (lastNanos == Long.MIN_VALUE) return Double.NaN;
            if (prevNanos == Long.MIN_VALUE) return lastCount;
            double rate = (double) (lastCount - prevCount) / (lastNanos - prevNanos);
            // past the last report, extrapolate at most a little more than one report period: a silent fork is not counting
            long ahead = Math.min(nanos - lastNanos, 1_500_000_000L);
            return Math.max(prevCount, lastCount + rate * ahead);
        }

        /** Events per second since the previous tick, or NaN before two estimates exist. */
        synchronized double rateAtTick(long tickNanos, double seconds) {
            double now = estimateAt(tickNanos);
            double before = countAtLastTick;
            countAtLastTick = now;
            return Double.isNaN(now) || Double.isNaN(before) ? Double.NaN : Math.max(0, now - before) / seconds;
        }
    }

    private final BufferedWriter out;
    private final CpuSampler cpu;
    private final long startNanos = System.nanoTime();
    private final Map<String, Polled> polled = new ConcurrentHashMap<>();
    private final Map<Key, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Proc> processes = new ConcurrentHashMap<>();
    /** Each gauge's watchers, the newest last: the newest is read, and when it stops, the one before it takes over. */
    private final Map<Key, List<java.util.function.DoubleSupplier>> gauges = new ConcurrentHashMap<>();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "perfkit-timeseries");
        t.setDaemon(true);
        return t;
    });
    private volatile String phase = "setup";
    private volatile DoubleConsumer rateListener = r -> {};
    private long lastTickNanos = startNanos;
    private boolean closed;

    public TimeSeries(Path file, CpuSampler cpu) throws IOException {
        this.out = Files.newBufferedWriter(file);
        this.cpu = cpu;
        out.write(HEADER);
        out.newLine();
        out.flush();
    }

    public void start() {
        cpu.sampleSystem();
        ticker.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
    }

    /** The phase the next rows are written under (setup, warmup, measure, drain, between: data/README.md). */
    public void phase(String phase) {
        this.phase = phase;
        phaseListener.accept(phase);
    }

    private volatile java.util.function.Consumer<String> phaseListener = p -> { };

    /** Tells {@code listener} each phase as it is set, repeats included (a profiler opens its windows on them). */
    public void onPhase(java.util.function.Consumer<String> listener) { phaseListener = listener; }

    public String phase() { return phase; }

    /** Reports the summed rate of all counters after every tick (for the progress line). */
    public void onRate(DoubleConsumer listener) { this.rateListener = listener; }

    /** Emits the per-second rate of a cumulative count read in this process at each tick. */
    public void watchCounter(String series, LongSupplier cumulative) {
        polled.put(series, new Polled(cumulative, new long[]{cumulative.getAsLong()}));
    }

    /** A count another process reports with its own timestamps (see {@link Counter}). */
    public Counter counter(String series) {
        return counter(series, EVENTS_PER_S);
    }

    /**
     * Any cumulative amount another process reports, written as its per-second rate under {@code metric}, e.g.
     * milliseconds of JIT compilation as {@code jit_ms_per_s}. Only events count towards the progress line's rate.
     */
    public Counter counter(String series, String metric) {
        Counter c = new Counter();
        counters.put(new Key(series, metric), c);
        return c;
    }

    public void unwatchCounter(String series) {
        polled.remove(series);
        counters.keySet().removeIf(k -> k.series().equals(series));
    }

    public void watchProcess(String series, long pid) {
        processes.put(series, new Proc(pid, false, new long[]{cpu.processTicks(pid)}));
    }

    /** CPU of a process with all its descendants and reaped children, e.g. a database server and its backends. */
    public void watchProcessTree(String series, long pid) {
        processes.put(series, new Proc(pid, true, new long[]{cpu.treeTicks(pid)}));
    }

    public void unwatchProcess(String series) { processes.remove(series); }

    /**
     * A value read at each tick and written as it is (NaN: no row), e.g. a part on another host, whose agent already
     * reports per-second figures ({@link RemotePostgres}).
     */
    public void watchGauge(String series, String metric, java.util.function.DoubleSupplier value) {
        gauges.compute(new Key(series, metric), (k, watchers) -> {
            List<java.util.function.DoubleSupplier> w = watchers == null ? new java.util.concurrent.CopyOnWriteArrayList<>() : watchers;
            w.add(value);
            return w;
        });
    }

    public void unwatchGauges(String series) { gauges.keySet().removeIf(k -> k.series().equals(series)); }

    /**
     * Stops one watcher of a gauge. Two parts of a run may feed one series (two forks on one host, each with that
     * host's figures): the series goes on while any of them still watches it.
     */
    public void unwatchGauge(String series, String metric, java.util.function.DoubleSupplier value) {
        gauges.computeIfPresent(new Key(series, metric), (k, watchers) -> {
            watchers.remove(value);
            return watchers.isEmpty() ? null : watchers;
        });
    }

    synchronized void tick() { // package-private: tests tick by hand
        if (closed) return;
        long now = System.nanoTime();
        double seconds = (now - lastTickNanos) / 1e9;
        lastTickNanos = now;
        long epochMs = System.currentTimeMillis();
        double elapsed = (now - startNanos) / 1e9;
        try {
            double totalRate = 0;
            for (var e : polled.entrySet()) {
                long value = e.getValue().cumulative().getAsLong();
                double rate = (value - e.getValue().last()[0]) / seconds;
                e.getValue().last()[0] = value;
                totalRate += rate;
                row(epochMs, elapsed, e.getKey(), EVENTS_PER_S, rate);
            }
            for (var e : counters.entrySet()) {
                double rate = e.getValue().rateAtTick(now, seconds);
                if (Double.isNaN(rate)) continue;
                if (e.getKey().metric().equals(EVENTS_PER_S)) totalRate += rate;
                row(epochMs, elapsed, e.getKey().series(), e.getKey().metric(), rate);
            }
            for (var e : processes.entrySet()) {
                long ticks = e.getValue().tree() ? cpu.treeTicks(e.getValue().pid()) : cpu.processTicks(e.getValue().pid());
                double pct = CpuSampler.percent(e.getValue().lastTicks()[0], ticks, seconds);
                e.getValue().lastTicks()[0] = ticks;
                if (!Double.isNaN(pct)) row(epochMs, elapsed, e.getKey(), "cpu_pct", pct);
            }
            for (var e : gauges.entrySet()) {
                List<java.util.function.DoubleSupplier> watchers = e.getValue();
                if (watchers.isEmpty()) continue;
                double v;
                try {
                    v = watchers.get(watchers.size() - 1).getAsDouble();
                } catch (RuntimeException ex) {
                    continue; // one bad reading must not stop the ticks: a scheduled task that throws never runs again
                }
                if (!Double.isNaN(v)) row(epochMs, elapsed, e.getKey().series(), e.getKey().metric(), v);
            }
            CpuSampler.SystemUsage sys = cpu.sampleSystem();
            if (sys != null) {
                row(epochMs, elapsed, "system", "cpu_pct", sys.busyPercent());
                row(epochMs, elapsed, "system", "steal_pct", sys.stealPercent());
            }
            out.flush();
            rateListener.accept(totalRate);
        } catch (IOException e) {
            if (!writeFailed) System.err.println("perfkit: cannot write " + FILE_NAME + ": " + Disk.reason(e)); // once, not every second
            writeFailed = true;
        }
    }

    private boolean writeFailed;

    private void row(long epochMs, double elapsed, String series, String metric, double value) throws IOException {
        out.write(String.format(Locale.ROOT, "%d,%.3f,%s,%s,%s,%.3f", epochMs, elapsed, phase, series, metric, value));
        out.newLine();
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        ticker.shutdownNow();
        try { out.close(); } catch (IOException ignored) { }
    }
}
