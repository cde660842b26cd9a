///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS com.lmax:disruptor:4.0.0
//DESCRIPTION The queues study's calibration: the smallest 1 producer -> 1 consumer program, with no harness at all
package perfkit.queues;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import com.lmax.disruptor.util.DaemonThreadFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the queues harness is checked against: one producer hands longs to one consumer, as fast as it can, through
 * the Disruptor (claim, write, publish; the handler bumps a padded count) or an ArrayBlockingQueue (put a new object;
 * poll(100 ms) and bump). The main thread sleeps through warm-up and window and reads the count at their edges.
 * Nothing else runs: no samplers, no checksums, no reports. The study runs it beside its own 1P1C cells, so every
 * run shows what its harness costs.
 *
 * <p>Usage: {@code Minimal1P1C <disruptor|abq> <blocking|yielding|busy-spin|sleeping|-> <warmup s> <measure s> <capacity>};
 * prints one line, {@code events_per_s=<x> produced=<n> consumed=<n>}, after the consumer drained.
 */
public class Minimal1P1C {
    /** A count on a cache line of its own, so the producer's writes next to it cost the consumer nothing. */
    static class Pad { long p1, p2, p3, p4, p5, p6, p7; }
    static class Value extends Pad { long value; }
    static final class PaddedCount extends Value {
        long q1, q2, q3, q4, q5, q6, q7;
        static final VarHandle VALUE;
        static {
            try { VALUE = MethodHandles.lookup().findVarHandle(Value.class, "value", long.class); }
            catch (ReflectiveOperationException e) { throw new ExceptionInInitializerError(e); }
        }
        /** One writer: a release store (a plain store on x86), no atomic read-modify-write. */
        void bump() { VALUE.setRelease(this, value + 1); }
        long get() { return (long) VALUE.getAcquire(this); }
    }

    static final class Slot { long value; }

    public static void main(String[] args) throws Exception {
        boolean disruptor;
        double warmup, measure;
        int capacity;
        WaitStrategy wait;
        try {
            if (args.length != 5 || !List.of("disruptor", "abq").contains(args[0])) throw new IllegalArgumentException("expected 5 arguments");
            disruptor = args[0].equals("disruptor");
            wait = disruptor ? waitStrategy(args[1]) : null;
            warmup = Double.parseDouble(args[2]);
            measure = Double.parseDouble(args[3]);
            capacity = Integer.parseInt(args[4]);
            if (!(warmup >= 0 && measure > 0 && capacity >= 2)) throw new IllegalArgumentException("out of range");
        } catch (IllegalArgumentException e) {
            System.err.println("usage: Minimal1P1C <disruptor|abq> <blocking|yielding|busy-spin|sleeping|-> <warmup s >= 0> <measure s > 0> <capacity >= 2>");
            System.exit(2);
            return;
        }
        PaddedCount consumed = new PaddedCount();
        AtomicLong produced = new AtomicLong();
        Runnable stop;
        Thread producer;
        if (disruptor) {
            Disruptor<Slot> d = new Disruptor<>(Slot::new, Integer.highestOneBit(capacity - 1) << 1, DaemonThreadFactory.INSTANCE,
                    ProducerType.SINGLE, wait);
            d.handleEventsWith((slot, sequence, endOfBatch) -> consumed.bump());
            tenure();
            RingBuffer<Slot> ring = d.start();
            producer = new Thread(() -> {
                long n = 0;
                while (!Thread.currentThread().isInterrupted()) {
                    long seq = ring.next();
                    ring.get(seq).value = seq;
                    ring.publish(seq);
                    if ((++n & 0xFFFF) == 0) produced.lazySet(n);
                }
                produced.set(n);
            }, "producer");
            stop = d::halt;
        } else {
            ArrayBlockingQueue<Slot> queue = new ArrayBlockingQueue<>(capacity);
            Thread consumer = new Thread(() -> {
                try {
                    while (true) if (queue.poll(100, TimeUnit.MILLISECONDS) != null) consumed.bump();
                } catch (InterruptedException stopped) { }
            }, "consumer");
            consumer.setDaemon(true);
            tenure();
            consumer.start();
            producer = new Thread(() -> {
                long n = 0;
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Slot s = new Slot();
                        s.value = n;
                        queue.put(s);
                        n++;
                    }
                } catch (InterruptedException stopped) { }
                produced.set(n);
            }, "producer");
            stop = consumer::interrupt;
        }
        producer.setDaemon(true);
        producer.start();
        sleep(warmup);
        long c0 = consumed.get(), t0 = System.nanoTime();
        sleep(measure);
        long c1 = consumed.get(), t1 = System.nanoTime();
        producer.interrupt();
        producer.join(5000);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (consumed.get() < produced.get() && System.nanoTime() < deadline) Thread.sleep(1);
        long drained = consumed.get();
        stop.run();
        System.out.printf(Locale.ROOT, "events_per_s=%.1f produced=%d consumed=%d%n", (c1 - c0) / ((t1 - t0) / 1e9), produced.get(), drained);
    }

    /**
     * Moves the long-lived structures (the queue's array, the ring) to the old generation before any thread starts,
     * as they are in a system that has run for a while. Left young, a queue's array takes the producer's stores
     * without G1's card-marking barrier until a collection promotes it, at a moment that differs from JVM to JVM:
     * 17.4 against 15.0 M events/s for the same ABQ program, young against old. The study's forks do the same.
     */
    static void tenure() {
        System.gc();
    }

    static void sleep(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }

    static WaitStrategy waitStrategy(String name) {
        return switch (name) {
            case "blocking" -> new BlockingWaitStrategy();
            case "yielding" -> new YieldingWaitStrategy();
            case "busy-spin" -> new BusySpinWaitStrategy();
            case "sleeping" -> new SleepingWaitStrategy();
            default -> throw new IllegalArgumentException("unknown wait strategy '" + name + "'");
        };
    }
}
