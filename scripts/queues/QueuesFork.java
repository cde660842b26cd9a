package perfkit.queues;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.Params;
import perfkit.queues.Handoff.Consumer;
import perfkit.queues.Handoff.Counter;
import perfkit.queues.Handoff.Transport;

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

    static void measure(Fork f) throws Exception {
        Params p = f.params();
        String cell = p.text("cell"), variant = p.text("variant");
        int fork = p.intValue("fork"), n = consumersOf(variant);
        long rate = p.integer("rate");
        double warmup = p.seconds("warmup"), measureSeconds = p.seconds("measure");

        LatencyLog e2e = null, lateness = null;
        if (rate > 0) {
            String at = cell + ", fork " + fork + ", " + rate + " events/s";
            e2e = f.latencyLog(cell, cell, fork, "end-to-end latency publish -> consumed, " + at);
            lateness = f.latencyLog(cell, cell + "/lateness", fork, "producer lateness, actual minus intended publish time (the load generator's own delay, "
                    + "not the queue's; corrected and uncorrected hold the same values), " + at);
        }
        Consumer[] consumers = new Consumer[n];
        for (int i = 0; i < n; i++) consumers[i] = new Consumer(new Counter(), e2e == null ? null : e2e.newRecorder());

        int capacity = p.intValue("capacity");
        boolean timed = rate > 0;
        Transport transport = variant.startsWith("abq") ? new QueueTransport(capacity, timed, consumers)
                : new DisruptorTransport(capacity, timed, waitStrategy(p.text("strategy")), variant.startsWith("disruptor-work"), consumers);
        Producer producer = new Producer(transport, rate, lateness == null ? null : lateness.newRecorder());
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
        ObjectNode r = f.result();
        var perConsumer = r.putArray("consumerEvents");
        var perConsumerTotal = r.putArray("consumerEventsTotal");
        for (int i = 0; i < n; i++) {
            events += c1[i] - c0[i];
            perConsumer.add(c1[i] - c0[i]);
            perConsumerTotal.add(consumers[i].count().get());
        }
        r.put("events", events);
        r.put("seconds", seconds);
        r.put("eventsPerSecond", events / seconds);
        r.put("produced", p1 - p0);
        // fixed rate: the producer stops at the window's end, so divide by the schedule's span, not by the (longer) wait
        r.put("achievedRate", (p1 - p0) / (rate > 0 ? (windowStart + measureNs - t0) / 1e9 : seconds));
        r.put("producerBytesPerEvent", a0 < 0 || a1 < 0 || p1 == p0 ? Double.NaN : (double) (a1 - a0) / (p1 - p0));
        r.put("producedTotal", producedTotal);
        r.put("consumedTotal", consumedTotal);
        r.put("exactlyOnce", producer.stopped() && consumedTotal == producedTotal && checksum == producer.checksum());
        if (rate > 0) {
            r.put("scheduledInWindow", producer.scheduledIn(windowStart, windowStart + measureNs, rate));
            r.put("latencySamples", e2e.measuredCount());
        }
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
