package perfkit.queues;

import perfkit.queues.Handoff.Consumer;
import perfkit.queues.Handoff.Event;
import perfkit.queues.Handoff.TimedEvent;
import perfkit.queues.Handoff.Transport;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The original's transport: allocate an event, put() it, consumers compete with poll(100 ms). */
final class QueueTransport implements Transport {
    private final ArrayBlockingQueue<Event> queue;
    private final Thread[] threads;
    private final boolean timed;
    private volatile boolean running = true;

    QueueTransport(int capacity, boolean timed, Consumer[] consumers) {
        this.timed = timed;
        queue = new ArrayBlockingQueue<>(capacity);
        threads = new Thread[consumers.length];
        for (int i = 0; i < consumers.length; i++) {
            Consumer c = consumers[i];
            threads[i] = new Thread(() -> consume(c), "abq-consumer-" + i);
            threads[i].setDaemon(true);
        }
    }

    private void consume(Consumer c) {
        try {
            while (running) {
                Event e = queue.poll(100, TimeUnit.MILLISECONDS);
                if (e != null) c.take(e, e.value);
            }
        } catch (InterruptedException ignored) {
            // stopped
        }
    }

    public void start() { for (Thread t : threads) t.start(); }

    public long publish(long value, long intendedNs, long sentNs) throws InterruptedException {
        Event e;
        if (timed) {
            TimedEvent t = new TimedEvent();
            t.intendedNs = intendedNs;
            t.sentNs = sentNs;
            e = t;
        } else e = new Event();
        e.value = value;
        queue.put(e);
        return value;
    }

    public void stop() {
        running = false;
        for (Thread t : threads) t.interrupt();
    }
}
