package perfkit.queues;

import perfkit.harness.measure.LatencyRecorder;
import perfkit.queues.Handoff.Counter;
import perfkit.queues.Handoff.Transport;

import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;

/** The single producer: as fast as it can, or on a fixed schedule when rate > 0. */
final class Producer {
    /** Wake this long before a deadline, then spin: Linux timer slack (~50 us) makes a later wake-up late. */
    static final long PARK_MARGIN_NS = 100_000;
    /** Throughput: how often the producer's count reaches the shared counter (a power of two). */
    static final long FLUSH_EVERY = 4096;
    final Counter produced = new Counter();
    private final Transport transport;
    private final long rate;
    private final LatencyRecorder lateness;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long stopAtNs;
    private volatile boolean stopAtSet;
    private long firstIntendedNs; // the schedule's origin: intended times are firstIntendedNs + k * period

    Producer(Transport transport, long rate, LatencyRecorder lateness) {
        this.transport = transport;
        this.rate = rate;
        this.lateness = lateness;
        this.thread = new Thread(this::loop, "producer");
        this.thread.setDaemon(true);
    }

    void start() {
        firstIntendedNs = System.nanoTime();
        thread.start();
    }

    /** Fixed rate: publish every event intended before {@code endNs} (however late), then stop. */
    void stopAtIntended(long endNs) {
        stopAtNs = endNs;
        stopAtSet = true;
    }

    /** Waits until the producer stopped by itself, or until the deadline. */
    void awaitEnd(long deadlineNs) throws InterruptedException {
        long left = deadlineNs - System.nanoTime();
        if (left > 0) thread.join(Math.max(1, left / 1_000_000));
    }

    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(2000);
    }

    boolean stopped() { return !thread.isAlive(); }

    /** The sum of every published value; read after stop(). */
    long checksum() { return produced.checksum(); }

    /** How many events the schedule intends in [startNs, endNs). */
    long scheduledIn(long startNs, long endNs, long rate) {
        long period = 1_000_000_000L / rate;
        return Math.max(0, ceilDiv(endNs - firstIntendedNs, period) - ceilDiv(startNs - firstIntendedNs, period));
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /** Bytes this thread has allocated so far (HotSpot), or -1 where the JVM cannot tell. */
    long allocatedBytes() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported())
            return t.getThreadAllocatedBytes(thread.getId());
        return -1;
    }

    private void loop() {
        try {
            if (rate > 0) onSchedule();
            else asFastAsTaken();
        } catch (InterruptedException e) {
            // stopped
        }
    }

    /** Fixed rate: one event per period from the schedule's origin, each timed from its intended start. */
    private void onSchedule() throws InterruptedException {
        long x = 0x9E3779B97F4A7C15L;
        long period = 1_000_000_000L / rate;
        long next = firstIntendedNs;
        while (running) {
            x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
            if (stopAtSet && next - stopAtNs >= 0) return; // the window's schedule is done
            waitUntil(next);
            long sent = System.nanoTime();
            long token = transport.publish(x, next, sent);
            lateness.record(next, next, sent);
            next += period;
            produced.add(token);
        }
    }

    /**
     * Throughput: publish as fast as the transport takes events, doing per event what the minimal program does.
     * The count and the checksum stay in registers and reach the shared counter every {@link #FLUSH_EVERY}
     * events and at the end, instead of a store the reader's core may pull over on every event.
     */
    private void asFastAsTaken() throws InterruptedException {
        long n = 0, checksum = 0;
        // In locals, not read from this object per event: a blocking wait strategy's monitor inside publish makes
        // the JIT load every field again after it, and the interface call's type check with it (under blocking the
        // harness read 0.82x of the minimal program with the fields, 1.04x with these locals).
        Transport t = transport;
        Counter out = produced;
        try {
            while (running) {
                checksum += t.publish(n, 0, 0); // the value n is unique per event; counted once it went through
                if ((++n & (FLUSH_EVERY - 1)) == 0) out.set(n, checksum);
            }
        } finally {
            out.set(n, checksum);
        }
    }

    /** Parks for long gaps and spins for the last PARK_MARGIN_NS, to leave the 2nd core to consumers yet be on time. */
    private void waitUntil(long deadline) throws InterruptedException {
        for (long gap; (gap = deadline - System.nanoTime()) > 0; ) {
            if (gap > PARK_MARGIN_NS) LockSupport.parkNanos(gap - PARK_MARGIN_NS);
            else Thread.onSpinWait();
            if (!running) throw new InterruptedException();
        }
    }
}
