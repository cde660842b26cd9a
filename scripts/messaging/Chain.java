package perfkit.messaging;

import perfkit.harness.measure.LatencyRecorder;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One chain instance: a driver publishing at a fixed rate into hop 0, five services each forwarding
 * hop k-1 to hop k (incrementing the message's counter), and the driver reading hop 5. The driver checks
 * that every message arrives exactly once, in order, having passed all five services.
 */
final class Chain {
    static final int SERVICES = 5;

    final int id;
    private final Transport transport;
    private final long periodNs;
    private final boolean busySpin;
    private final LatencyRecorder endToEnd, firstHop;
    private final List<Thread> threads = new ArrayList<>();
    private final List<Thread> driverThreads = new ArrayList<>();
    private volatile boolean publishing = true, running = true;
    private volatile Throwable failure;

    final AtomicLong sent = new AtomicLong(), received = new AtomicLong();
    long duplicates, outOfOrder, badHops; // written by the driver's receiving thread only
    private final BitSet seen = new BitSet();
    private long expected;

    /** The step's measurement window by intended send time (System.nanoTime), shared with the latency logs. */
    record Window(long startNs, long endNs) {
        boolean contains(long intendedNs) {
            return intendedNs - startNs >= 0 && intendedNs - endNs < 0; // differences: nanoTime may wrap
        }
    }

    private volatile Window window;
    private volatile long scheduleStartNs;
    private final CountDownLatch scheduled = new CountDownLatch(1);
    private final AtomicLong windowDelivered = new AtomicLong();

    Chain(int id, Transport transport, long ratePerSecond, boolean busySpin, LatencyRecorder endToEnd, LatencyRecorder firstHop) {
        this.id = id;
        this.transport = transport;
        this.periodNs = 1_000_000_000L / ratePerSecond;
        this.busySpin = busySpin;
        this.endToEnd = endToEnd;
        this.firstHop = firstHop;
        driverThreads.add(thread("i" + id + "-publish", this::publish));
        for (int k = 1; k <= SERVICES; k++) {
            int service = k;
            threads.add(thread("i" + id + "-svc" + k, () -> serve(service)));
        }
        driverThreads.add(thread("i" + id + "-receive", this::receive));
        threads.addAll(driverThreads);
    }

    private Thread thread(String name, ThrowingRunnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                if (running) failure = e;
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    interface ThrowingRunnable { void run() throws Exception; }

    void start() { threads.forEach(Thread::start); }

    List<Thread> driverThreads() { return driverThreads; }

    Throwable failure() { return failure; }

    /** Open model: message n is due at start + n * period, whenever the previous one went out. */
    private void publish() throws Exception {
        try (Transport.Sender out = transport.sender(id, 0)) {
            long start = System.nanoTime();
            scheduleStartNs = start;
            scheduled.countDown();
            for (long seq = 0; publishing; seq++) {
                long due = start + seq * periodNs;
                for (long wait; (wait = due - System.nanoTime()) > 0 && publishing; ) LockSupport.parkNanos(wait);
                if (!publishing) break;
                out.send(due, System.nanoTime(), seq, 0);
                sent.set(seq + 1);
            }
        }
    }

    private void serve(int service) throws Exception {
        try (Transport.Receiver in = transport.receiver(id, service - 1); Transport.Sender out = transport.sender(id, service)) {
            Transport.Handler forward = (intended, sentNs, seq, hops) -> {
                if (service == 1) firstHop.record(intended, sentNs, System.nanoTime());
                out.send(intended, sentNs, seq, hops + 1);
            };
            while (running) in.poll(forward, idleWaitNanos());
        }
    }

    private void receive() throws Exception {
        try (Transport.Receiver in = transport.receiver(id, SERVICES)) {
            Transport.Handler check = (intended, sentNs, seq, hops) -> {
                endToEnd.record(intended, sentNs, System.nanoTime());
                if (hops != SERVICES) badHops++;
                int s = (int) seq;
                if (seen.get(s)) { duplicates++; return; }
                seen.set(s);
                if (seq != expected) outOfOrder++;
                expected = Math.max(expected, seq + 1);
                Window w = window;
                if (w != null && w.contains(intended)) windowDelivered.incrementAndGet();
                received.incrementAndGet();
            };
            while (running) in.poll(check, idleWaitNanos());
        }
    }

    /** The original's policy: an idle service waits 1/8 of the time between messages (or spins). */
    private long idleWaitNanos() {
        return busySpin ? 0 : periodNs / 8;
    }

    /** Stops the driver's publisher and waits for it, so that {@link #sent} is final. Publishing goes on through the drain, so the
     *  window's last messages meet the same load as its first. */
    void stopPublishing() throws InterruptedException {
        publishing = false;
        driverThreads.get(0).join(10_000);
    }

    /** Sets the measurement window; messages intended inside it are counted (and must all arrive). */
    void window(Window w) {
        window = w;
    }

    /** Messages the schedule puts inside the window: seq with start + seq * period in [window start, window end). */
    long windowExpected() throws InterruptedException {
        if (!scheduled.await(10, TimeUnit.SECONDS)) return 0;
        Window w = window;
        return firstSeqAtOrAfter(w.endNs()) - firstSeqAtOrAfter(w.startNs());
    }

    /** Of those, how many the driver has sent so far (it sends in sequence order). */
    long windowSent() throws InterruptedException {
        if (!scheduled.await(10, TimeUnit.SECONDS)) return 0;
        long first = firstSeqAtOrAfter(window.startNs());
        return Math.max(0, Math.min(sent.get(), first + windowExpected()) - first);
    }

    /** Of those, how many arrived (once each) at the driver. */
    long windowDelivered() { return windowDelivered.get(); }

    private long firstSeqAtOrAfter(long ns) {
        long d = ns - scheduleStartNs;
        return d <= 0 ? 0 : (d + periodNs - 1) / periodNs;
    }

    void stop() throws InterruptedException {
        running = false;
        publishing = false;
        for (Thread t : threads) t.join(10_000);
    }
}
