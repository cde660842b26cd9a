///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS com.lmax:disruptor:4.0.0
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor
package perfkit.queues;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import com.lmax.disruptor.util.DaemonThreadFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.Cli;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.LatencyRecorder;
import perfkit.harness.Run;
import perfkit.harness.Study;
import perfkit.harness.Table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One producer hands trivial events to 1, 3 or 5 consumers through an ArrayBlockingQueue (consumers compete
 * with poll(100 ms), as in the original write-up) or through the LMAX Disruptor. Each repetition is a fresh
 * JVM per variant; forks of different variants are interleaved so slow drift on the host hits them all alike.
 */
public class Queues {
    static final List<String> VARIANTS = List.of("abq-1", "abq-3", "abq-5", "disruptor-1", "disruptor-3", "disruptor-5");

    static final Cli CLI = new Cli("queues", "ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor:\n"
            + "events per second from one producer as fast as it can go, or end-to-end latency at a fixed --rate.")
            .choices("variants", VARIANTS, String.join(",", VARIANTS), "variants to run, comma-separated")
            .integer("forks", 3, 1L, 1, "JVM forks (repetitions) per variant")
            .seconds("warmup", 5, 2.0, "warm-up per fork in seconds, excluded from results")
            .seconds("measure", 10, 3.0, "measurement window per fork in seconds")
            .integer("rate", 0, null, 0, "fixed-rate mode: events/s published on a schedule, recording latency from the intended publish time (0 = as fast as possible)")
            .integer("capacity", 65536, null, 2, "queue capacity and ring size (ring rounded up to a power of two)")
            .choice("wait-strategy", List.of("blocking", "sleeping", "yielding", "busy-spin"), "blocking", "how Disruptor consumers wait for events")
            .text("fork-jvm-args", "-Xms512m -Xmx512m", "JVM options of each fork, space-separated")
            .flag("keep-warmup", "with --rate: also write warm-up intervals to the latency logs (excluded by default)");

    public static void main(String[] args) {
        Study.main(args, CLI, Queues.class, Queues::plan, Queues::measure);
    }

    // ---- parent: plan the forks, collect their results ------------------------------------------------

    static void plan(Run run) throws Exception {
        List<String> variants = Arrays.stream(run.param("variants").split(",")).map(String::trim).distinct().toList();
        long forks = run.integer("forks");
        double warmup = run.seconds("warmup"), measure = run.seconds("measure");
        long rate = run.integer("rate");
        run.variants(variants);
        run.measurement(warmup, measure, forks, "jvm-fork");
        describe(run.notes(), rate);

        List<String> jvmArgs = run.param("fork-jvm-args").isBlank() ? List.of() : List.of(run.param("fork-jvm-args").trim().split("\\s+"));
        Map<String, List<Double>> perVariant = new LinkedHashMap<>();
        try (Table throughput = new Table(run, "throughput.csv", "events per second per variant and fork over the measurement window",
                "variant", "fork", "consumers", "events", "seconds", "events_per_s", "produced", "producer_bytes_per_event", "target_rate", "achieved_rate");
             Table consumers = new Table(run, "consumers.csv", "events handled by each consumer per variant and fork",
                     "variant", "fork", "consumer", "events")) {
            for (int fork = 1; fork <= forks; fork++) {
                for (String variant : variants) {
                    Map<String, String> p = new LinkedHashMap<>(run.params());
                    p.put("variant", variant);
                    p.put("fork", String.valueOf(fork));
                    ObjectNode r = run.fork(variant + "/fork" + fork, jvmArgs, p, warmup + measure);
                    throughput.row(variant, fork, consumersOf(variant), r.get("events").asLong(), r.get("seconds").asDouble(),
                            r.get("eventsPerSecond").asDouble(), r.get("produced").asLong(), r.get("producerBytesPerEvent").asDouble(),
                            rate, r.get("achievedRate").asDouble());
                    int c = 0;
                    for (JsonNode n : r.get("consumerEvents")) consumers.row(variant, fork, ++c, n.asLong());
                    perVariant.computeIfAbsent(variant, v -> new ArrayList<>()).add(r.get("eventsPerSecond").asDouble());
                    if (rate > 0 && r.get("achievedRate").asDouble() < 0.99 * rate)
                        run.invalid(String.format(Locale.ROOT, "%s fork %d: producer held only %.0f of %d events/s", variant, fork, r.get("achievedRate").asDouble(), rate));
                }
            }
        }
        printSummary(run, perVariant);
    }

    static void describe(ObjectNode notes, long rate) {
        notes.put("mode", rate > 0 ? "fixed-rate" : "max-throughput");
        notes.put("abqProducer", "allocates one event object per put, as the original did; blocking put()");
        notes.put("abqConsumers", "compete on one ArrayBlockingQueue with poll(100 ms), as the original did");
        notes.put("disruptorProducer", "claims a preallocated slot (next/get/publish); no allocation per event (see producer_bytes_per_event)");
        notes.put("disruptorConsumers", "disruptor-N: N handlers sharded by sequence (handler k takes events with sequence % N == k); "
                + "every handler reads every slot, each event is handled exactly once; Disruptor 4.0 has no WorkerPool");
        notes.put("eventValue", "a xorshift pseudo-random long per event, so neither path pays for java.util.Random's CAS");
        notes.put("forkOrder", "interleaved: fork 1 of every variant, then fork 2, ...");
        notes.put("latency", rate > 0 ? "per fork: latency/<variant>.fork<k>.{corrected,uncorrected}.hlog, intended (or actual) publish -> consumed"
                : "not recorded in max-throughput mode (there is no schedule to be late against); use --rate");
    }

    static int consumersOf(String variant) {
        return Integer.parseInt(variant.substring(variant.indexOf('-') + 1));
    }

    static void printSummary(Run run, Map<String, List<Double>> perVariant) {
        run.progress().clear();
        System.err.printf(Locale.ROOT, "%n%-13s %6s %16s %16s %16s%n", "variant", "forks", "mean events/s", "min", "max");
        perVariant.forEach((v, xs) -> System.err.printf(Locale.ROOT, "%-13s %6d %,16.0f %,16.0f %,16.0f%n", v, xs.size(),
                xs.stream().mapToDouble(d -> d).average().orElse(Double.NaN),
                xs.stream().mapToDouble(d -> d).min().orElse(Double.NaN), xs.stream().mapToDouble(d -> d).max().orElse(Double.NaN)));
    }

    // ---- fork: one variant, one fresh JVM ------------------------------------------------------------

    /** The event both paths carry: a value and, in fixed-rate mode, when it should have been and was published. */
    static final class Event {
        long value, intendedNs, sentNs;
    }

    /** A count written by one thread and read by another, padded away from its neighbours' cache lines. */
    static class PadBefore { long p1, p2, p3, p4, p5, p6, p7; }
    static class CountValue extends PadBefore { long value; }
    static final class Counter extends CountValue {
        long q1, q2, q3, q4, q5, q6, q7;
        private static final VarHandle VALUE;
        static {
            try { VALUE = MethodHandles.lookup().findVarHandle(CountValue.class, "value", long.class); }
            catch (ReflectiveOperationException e) { throw new ExceptionInInitializerError(e); }
        }
        /** Single writer: a release store, no atomic read-modify-write. */
        void increment() { VALUE.setRelease(this, value + 1); }
        long get() { return (long) VALUE.getAcquire(this); }
    }

    /** A transport under test: publish from the producer thread, consumers count (and maybe time) what they take. */
    interface Transport {
        void start();
        void publish(long value, long intendedNs, long sentNs) throws InterruptedException;
        void stop();
    }

    static void measure(Fork f) throws Exception {
        String variant = f.param("variant");
        int consumers = consumersOf(variant);
        long rate = f.integer("rate");
        double warmup = f.seconds("warmup"), measureSeconds = f.seconds("measure");

        Counter[] counts = new Counter[consumers];
        for (int i = 0; i < consumers; i++) counts[i] = new Counter();
        LatencyLog latency = rate > 0 ? f.latencyLog("latency/" + variant + ".fork" + f.param("fork"),
                "end-to-end latency publish -> consumed, " + variant + ", fork " + f.param("fork") + ", " + rate + " events/s") : null;
        LatencyRecorder[] recorders = new LatencyRecorder[consumers];
        for (int i = 0; i < consumers && latency != null; i++) recorders[i] = latency.newRecorder();

        int capacity = (int) f.integer("capacity");
        Transport transport = variant.startsWith("abq")
                ? new QueueTransport(capacity, counts, recorders)
                : new DisruptorTransport(capacity, waitStrategy(f.param("wait-strategy")), counts, recorders);
        Producer producer = new Producer(transport, rate);
        transport.start();
        producer.start();

        java.util.function.LongSupplier consumed = () -> Arrays.stream(counts).mapToLong(Counter::get).sum();
        f.phase("warmup", warmup);
        f.await(warmup, consumed);

        long[] c0 = snapshot(counts);
        long p0 = producer.produced.get(), a0 = producer.allocatedBytes(), t0 = System.nanoTime();
        if (latency != null) latency.startMeasuring();
        f.phase("measure", measureSeconds);
        f.await(measureSeconds, consumed);
        long[] c1 = snapshot(counts);
        long p1 = producer.produced.get(), a1 = producer.allocatedBytes(), t1 = System.nanoTime();
        if (latency != null) latency.close(); // the window ends here, before the producer is stopped

        producer.stop();
        transport.stop();

        double seconds = (t1 - t0) / 1e9;
        long events = 0;
        ObjectNode r = f.result();
        var perConsumer = r.putArray("consumerEvents");
        for (int i = 0; i < consumers; i++) {
            events += c1[i] - c0[i];
            perConsumer.add(c1[i] - c0[i]);
        }
        r.put("events", events);
        r.put("seconds", seconds);
        r.put("eventsPerSecond", events / seconds);
        r.put("produced", p1 - p0);
        r.put("achievedRate", (p1 - p0) / seconds);
        r.put("producerBytesPerEvent", a0 < 0 || p1 == p0 ? Double.NaN : (double) (a1 - a0) / (p1 - p0));
    }

    static long[] snapshot(Counter[] counts) {
        long[] s = new long[counts.length];
        for (int i = 0; i < counts.length; i++) s[i] = counts[i].get();
        return s;
    }

    static WaitStrategy waitStrategy(String name) {
        return switch (name) {
            case "sleeping" -> new SleepingWaitStrategy();
            case "yielding" -> new YieldingWaitStrategy();
            case "busy-spin" -> new BusySpinWaitStrategy();
            default -> new BlockingWaitStrategy();
        };
    }

    /** The single producer: as fast as it can, or on a fixed schedule when rate > 0. */
    static final class Producer {
        final Counter produced = new Counter();
        private final Transport transport;
        private final long rate;
        private final Thread thread;
        private volatile boolean running = true;

        Producer(Transport transport, long rate) {
            this.transport = transport;
            this.rate = rate;
            this.thread = new Thread(this::loop, "producer");
            this.thread.setDaemon(true);
        }

        void start() { thread.start(); }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(2000);
        }

        /** Bytes this thread has allocated so far (HotSpot), or -1 where the JVM cannot tell. */
        long allocatedBytes() {
            if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported())
                return t.getThreadAllocatedBytes(thread.getId());
            return -1;
        }

        private void loop() {
            long x = 0x9E3779B97F4A7C15L;
            long period = rate > 0 ? 1_000_000_000L / rate : 0;
            long next = System.nanoTime();
            try {
                while (running) {
                    x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                    if (rate > 0) {
                        waitUntil(next);
                        transport.publish(x, next, System.nanoTime());
                        next += period;
                    } else {
                        transport.publish(x, 0, 0);
                    }
                    produced.increment();
                }
            } catch (InterruptedException e) {
                // stopped
            }
        }

        /** Parks for long gaps and spins only for the last few microseconds, to leave the 2nd core to consumers. */
        private void waitUntil(long deadline) throws InterruptedException {
            for (long gap; (gap = deadline - System.nanoTime()) > 0; ) {
                if (gap > 20_000) LockSupport.parkNanos(gap - 10_000);
                else Thread.onSpinWait();
                if (!running) throw new InterruptedException();
            }
        }
    }

    /** The original's transport: allocate an event, put() it, consumers compete with poll(100 ms). */
    static final class QueueTransport implements Transport {
        private final ArrayBlockingQueue<Event> queue;
        private final Thread[] consumers;
        private volatile boolean running = true;

        QueueTransport(int capacity, Counter[] counts, LatencyRecorder[] recorders) {
            queue = new ArrayBlockingQueue<>(capacity);
            consumers = new Thread[counts.length];
            for (int i = 0; i < counts.length; i++) {
                Counter count = counts[i];
                LatencyRecorder recorder = recorders[i];
                consumers[i] = new Thread(() -> consume(count, recorder), "abq-consumer-" + i);
                consumers[i].setDaemon(true);
            }
        }

        private void consume(Counter count, LatencyRecorder recorder) {
            try {
                while (running) {
                    Event e = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (e == null) continue;
                    if (recorder != null) recorder.record(e.intendedNs, e.sentNs, System.nanoTime());
                    count.increment();
                }
            } catch (InterruptedException ignored) {
                // stopped
            }
        }

        public void start() { for (Thread t : consumers) t.start(); }

        public void publish(long value, long intendedNs, long sentNs) throws InterruptedException {
            Event e = new Event();
            e.value = value;
            e.intendedNs = intendedNs;
            e.sentNs = sentNs;
            queue.put(e);
        }

        public void stop() {
            running = false;
            for (Thread t : consumers) t.interrupt();
        }
    }

    /** The Disruptor: preallocated events in a ring; N handlers share the work by sequence number. */
    static final class DisruptorTransport implements Transport {
        private final Disruptor<Event> disruptor;
        private RingBuffer<Event> ring;

        DisruptorTransport(int capacity, WaitStrategy wait, Counter[] counts, LatencyRecorder[] recorders) {
            int size = Integer.highestOneBit(capacity - 1) << 1;
            disruptor = new Disruptor<>(Event::new, size, DaemonThreadFactory.INSTANCE, ProducerType.SINGLE, wait);
            int n = counts.length;
            @SuppressWarnings("unchecked")
            EventHandler<Event>[] handlers = new EventHandler[n];
            for (int k = 0; k < n; k++) handlers[k] = shard(k, n, counts[k], recorders[k]);
            disruptor.handleEventsWith(handlers);
        }

        private static EventHandler<Event> shard(int k, int n, Counter count, LatencyRecorder recorder) {
            return (e, sequence, endOfBatch) -> {
                if (sequence % n != k) return;
                if (recorder != null) recorder.record(e.intendedNs, e.sentNs, System.nanoTime());
                count.increment();
            };
        }

        public void start() { ring = disruptor.start(); }

        public void publish(long value, long intendedNs, long sentNs) {
            long seq = ring.next();
            Event e = ring.get(seq);
            e.value = value;
            e.intendedNs = intendedNs;
            e.sentNs = sentNs;
            ring.publish(seq);
        }

        public void stop() { disruptor.halt(); }
    }
}
