package perfkit.queues;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.EventProcessor;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.TimeoutException;
import perfkit.queues.Handoff.Consumer;
import perfkit.queues.Handoff.Event;

/**
 * One work-sharing consumer: claims the next sequence from the shared counter, waits until it is published,
 * handles it. Its own sequence (the producer's gate) is set to one below each claim before claiming, so it
 * never passes a slot it has claimed but not yet handled; the producer waits for the slowest such gate.
 */
final class WorkSharingConsumer implements EventProcessor {
    private final RingBuffer<Event> ring;
    private final SequenceBarrier barrier;
    private final Sequence claim;
    private final Consumer consumer;
    private final Sequence sequence = new Sequence();
    private volatile boolean running;

    WorkSharingConsumer(RingBuffer<Event> ring, SequenceBarrier barrier, Sequence claim, Consumer consumer) {
        this.ring = ring;
        this.barrier = barrier;
        this.claim = claim;
        this.consumer = consumer;
    }

    public Sequence getSequence() { return sequence; }

    public void halt() {
        running = false;
        barrier.alert();
    }

    public boolean isRunning() { return running; }

    public void run() {
        running = true;
        boolean handled = true;
        long next = sequence.get(), available = Long.MIN_VALUE;
        while (running) {
            try {
                if (handled) {
                    handled = false;
                    do {
                        next = claim.get() + 1;
                        sequence.set(next - 1);
                    } while (!claim.compareAndSet(next - 1, next));
                }
                if (available >= next) {
                    consumer.take(ring.get(next), next);
                    handled = true;
                } else {
                    available = barrier.waitFor(next);
                }
            } catch (AlertException | InterruptedException | TimeoutException e) {
                // halted: the loop condition ends it
            }
        }
    }
}
