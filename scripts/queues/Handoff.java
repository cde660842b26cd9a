package perfkit.queues;

import perfkit.harness.measure.LatencyRecorder;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What passes from the producer to the consumers and how each consumer counts it: the event, the padded counter,
 * the consumer, and the {@link Transport} every topology implements. Shared by the producer, the transports and the fork.
 */
final class Handoff {
    private Handoff() {}

    /**
     * What travels: one long, like the minimal program's slot. At a fixed rate a {@link TimedEvent} also carries its
     * intended and actual send times; in throughput mode those 16 bytes would cost about 0.6x of the Disruptor's
     * rate, which there is bound by the producer writing the ring's events (about 2.7 GB/s here at 24 or 40 bytes).
     */
    static class Event {
        long value;
    }

    static final class TimedEvent extends Event {
        long intendedNs, sentNs;
    }

    /** A count written by one thread and read by another, padded away from its neighbours' cache lines. */
    static class PadBefore { long p1, p2, p3, p4, p5, p6, p7; }
    static class CountValue extends PadBefore { long value; long checksum; }
    static final class Counter extends CountValue {
        long q1, q2, q3, q4, q5, q6, q7;
        private static final VarHandle VALUE;
        static {
            try { VALUE = MethodHandles.lookup().findVarHandle(CountValue.class, "value", long.class); }
            catch (ReflectiveOperationException e) { throw new ExceptionInInitializerError(e); }
        }
        /** Single writer: a release store, no atomic read-modify-write. The checksum is written first, so an acquire read of the count sees it. */
        void add(long eventValue) {
            checksum += eventValue;
            VALUE.setRelease(this, value + 1);
        }
        /** Single writer: both totals at once, the checksum first (see add). */
        void set(long count, long checksumSoFar) {
            checksum = checksumSoFar;
            VALUE.setRelease(this, count);
        }
        long get() { return (long) VALUE.getAcquire(this); }
        /** Only meaningful once the writer has stopped; read get() first. */
        long checksum() { return checksum; }
    }

    /**
     * What a consumer does with each event it takes: time it (fixed rate), then count it with its token. The token is
     * what the delivery check sums: the event's value on the queue path, its ring sequence on the Disruptor path. A
     * sequence is unique per event, so sums and counts still catch a lost or doubled event, and a Disruptor consumer
     * in throughput mode reads nothing from the slot: the minimal program's handler does not either, and pulling each
     * slot's cache line over from the producer's core cost the yielding 1P1C cell most of its throughput.
     */
    record Consumer(Counter count, LatencyRecorder recorder) {
        void take(Event e, long token) {
            if (recorder != null && e instanceof TimedEvent t) recorder.record(t.intendedNs, t.sentNs, System.nanoTime());
            count.add(token);
        }
    }

    /** A transport under test: publish from the producer thread, consumers take what they get. */
    interface Transport {
        void start();
        /** Publishes one event and returns its token for the delivery check (see {@link Consumer}). */
        long publish(long value, long intendedNs, long sentNs) throws InterruptedException;
        void stop();
    }
}
