package perfkit.queues;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import perfkit.harness.process.Fork;
import perfkit.harness.measure.LatencyLog;
import perfkit.queues.Handoff.Consumer;
import perfkit.queues.Handoff.Counter;
import perfkit.queues.Handoff.Transport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/** One cell in one fresh JVM: start the consumers and the producer, warm up, measure the window, drain, check every event arrived once. */
final class QueuesFork {
    /** How long a fork waits, after its window, for the producer to finish the window's schedule and for consumers to drain. */
    static final double DRAIN_TIMEOUT_S = 10;
    /** Fixed rate: the latency window starts this long after it is set, so no in-window sample is sorted before the logs know it. */
    static final long WINDOW_LEAD_NS = 50_000_000;

    private QueuesFork() {}

    /** The consumers of a variant: the number after its last dash (abq-3: 3). */
    static int consumersOf(String variant) {
        return Integer.parseInt(variant.substring(variant.lastIndexOf('-') + 1));
    }

    /** What one fork measures: a cell (a variant under a wait strategy, "" for the queue), and the options it needs. */
    record Spec(String cell, String variant, String waitStrategy, int fork, long rate, double warmup, double measure, int capacity,
                boolean keepWarmup, boolean profiled) {}

    /**
     * What it measured: events per consumer and in all in the window, the producer's rate and allocation, and the
     * delivery check over the whole fork. A fixed rate adds the events scheduled in the window and the latency samples
     * recorded for them (null in throughput mode).
     */
    record Result(List<Long> consumerEvents, List<Long> consumerEventsTotal, long events, double seconds, double eventsPerSecond,
                  long produced, double achievedRate, double producerBytesPerEvent, long producedTotal, long consumedTotal,
                  boolean exactlyOnce, Long scheduledInWindow, Long latencySamples) {}

    static void measure(Fork f) throws Exception {
        Spec spec = f.spec(Spec.class);
        String cell = spec.cell(), variant = spec.variant();
        int fork = spec.fork(), n = consumersOf(variant);
        long rate = spec.rate();
        double warmup = spec.warmup(), measureSeconds = spec.measure();

        LatencyLog e2e = null, lateness = null;
        if (rate > 0) {
            String at = cell + ", fork " + fork + ", " + rate + " events/s";
            e2e = f.latencyLog(cell, cell, fork, "end-to-end latency publish -> consumed, " + at, spec.keepWarmup());
            lateness = f.latencyLog(cell, cell + "/lateness", fork, "producer lateness, actual minus intended publish time (the load generator's own delay, "
                    + "not the queue's; corrected and uncorrected hold the same values), " + at, spec.keepWarmup());
        }
        Consumer[] consumers = new Consumer[n];
        for (int i = 0; i < n; i++) consumers[i] = new Consumer(new Counter(), e2e == null ? null : e2e.newRecorder());

        int capacity = spec.capacity();
        boolean timed = rate > 0;
        Transport transport = variant.startsWith("abq") ? new QueueTransport(capacity, timed, consumers)
                : new DisruptorTransport(capacity, timed, waitStrategy(spec.waitStrategy()), variant.startsWith("disruptor-work"), consumers);
        Producer producer = new Producer(transport, rate, lateness == null ? null : lateness.newRecorder());
        // Long-lived structures to the old generation first, as in a system that has run for a while and as the
        // minimal program does (Minimal1P1C.tenure: young or old, the queue's array costs the producer 15% apart).
        System.gc();
        transport.start();
        producer.start();

        LongSupplier consumed = () -> { long s = 0; for (Consumer c : consumers) s += c.count().get(); return s; };
        f.phase("warmup", warmup);
        f.await(warmup, consumed);

        long measureNs = (long) (measureSeconds * 1e9), windowStart = System.nanoTime() + WINDOW_LEAD_NS;
        if (rate > 0) {
            // One window by intended time for both logs, starting just after they know it (a sample is sorted when
            // it is recorded); the producer finishes the window's schedule, then stops.
            e2e.window(windowStart, windowStart + measureNs);
            lateness.window(windowStart, windowStart + measureNs);
            producer.stopAtIntended(windowStart + measureNs);
            for (long left; (left = windowStart - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
        }
        long[] c0 = snapshot(consumers);
        long p0 = producer.produced.get(), a0 = producer.allocatedBytes(), t0 = System.nanoTime();
        f.phase("measure", measureSeconds);
        f.await(measureSeconds, consumed);
        long[] c1 = snapshot(consumers);
        long p1 = producer.produced.get(), a1 = producer.stopped() ? -1 : producer.allocatedBytes(), t1 = System.nanoTime();

        f.phase("drain", DRAIN_TIMEOUT_S);
        long drainEnd = System.nanoTime() + (long) (DRAIN_TIMEOUT_S * 1e9);
        if (rate > 0) producer.awaitEnd(drainEnd);
        producer.stop();
        while (consumed.getAsLong() < producer.produced.get() && System.nanoTime() - drainEnd < 0) Thread.sleep(1);
        long consumedTotal = consumed.getAsLong(), producedTotal = producer.produced.get();
        if (e2e != null) { e2e.close(); lateness.close(); } // after the drain: late in-window completions are in
        long checksum = 0;
        for (Consumer c : consumers) checksum += c.count().checksum();
        transport.stop();

        double seconds = (t1 - t0) / 1e9;
        long events = 0;
        List<Long> perConsumer = new ArrayList<>(), perConsumerTotal = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            events += c1[i] - c0[i];
            perConsumer.add(c1[i] - c0[i]);
            perConsumerTotal.add(consumers[i].count().get());
        }
        f.result(new Result(perConsumer, perConsumerTotal, events, seconds, events / seconds, p1 - p0,
                // fixed rate: the producer stops at the window's end, so divide by the schedule's span, not by the (longer) wait
                (p1 - p0) / (rate > 0 ? (windowStart + measureNs - t0) / 1e9 : seconds),
                a0 < 0 || a1 < 0 || p1 == p0 ? Double.NaN : (double) (a1 - a0) / (p1 - p0), producedTotal, consumedTotal,
                producer.stopped() && consumedTotal == producedTotal && checksum == producer.checksum(),
                rate > 0 ? producer.scheduledIn(windowStart, windowStart + measureNs, rate) : null, rate > 0 ? e2e.measuredCount() : null));
    }

    static long[] snapshot(Consumer[] consumers) {
        long[] s = new long[consumers.length];
        for (int i = 0; i < consumers.length; i++) s[i] = consumers[i].count().get();
        return s;
    }

    static WaitStrategy waitStrategy(String name) {
        return switch (name) {
            case "sleeping" -> new SleepingWaitStrategy();
            case "yielding" -> new YieldingWaitStrategy();
            case "busy-spin" -> new BusySpinWaitStrategy();
            case "blocking" -> new BlockingWaitStrategy();
            default -> throw new IllegalArgumentException("unknown wait strategy '" + name + "'");
        };
    }
}
