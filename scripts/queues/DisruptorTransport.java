package perfkit.queues;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventProcessor;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import com.lmax.disruptor.util.DaemonThreadFactory;
import perfkit.queues.Handoff.Consumer;
import perfkit.queues.Handoff.Event;
import perfkit.queues.Handoff.TimedEvent;
import perfkit.queues.Handoff.Transport;

/** The Disruptor: preallocated events in a ring, consumed by one handler, sharded handlers, or work-sharing consumers. */
final class DisruptorTransport implements Transport {
    private final Disruptor<Event> disruptor;
    private final boolean timed;
    private RingBuffer<Event> ring;

    DisruptorTransport(int capacity, boolean timed, WaitStrategy wait, boolean workSharing, Consumer[] consumers) {
        this.timed = timed;
        int size = Integer.highestOneBit(capacity - 1) << 1;
        disruptor = new Disruptor<>(timed ? TimedEvent::new : Event::new, size, DaemonThreadFactory.INSTANCE, ProducerType.SINGLE, wait);
        int n = consumers.length;
        if (workSharing) {
            RingBuffer<Event> r = disruptor.getRingBuffer();
            SequenceBarrier barrier = r.newBarrier();
            Sequence claim = new Sequence(); // the shared counter: the last sequence any consumer claimed
            EventProcessor[] workers = new EventProcessor[n];
            for (int k = 0; k < n; k++) workers[k] = new WorkSharingConsumer(r, barrier, claim, consumers[k]);
            disruptor.handleEventsWith(workers); // registers each worker's sequence as a gating sequence
        } else {
            @SuppressWarnings("unchecked")
            EventHandler<Event>[] handlers = new EventHandler[n];
            for (int k = 0; k < n; k++) handlers[k] = n == 1 ? single(consumers[k]) : shard(k, n, consumers[k]);
            disruptor.handleEventsWith(handlers);
        }
    }

    private static EventHandler<Event> single(Consumer c) {
        return (e, sequence, endOfBatch) -> c.take(e, sequence);
    }

    /** Sharded broadcast: every handler sees every slot and keeps its own share. */
    private static EventHandler<Event> shard(int k, int n, Consumer c) {
        return (e, sequence, endOfBatch) -> {
            if (sequence % n == k) c.take(e, sequence);
        };
    }

    public void start() { ring = disruptor.start(); }

    public long publish(long value, long intendedNs, long sentNs) {
        long seq = ring.next();
        Event e = ring.get(seq);
        e.value = value;
        if (timed) {
            TimedEvent t = (TimedEvent) e;
            t.intendedNs = intendedNs;
            t.sentNs = sentNs;
        }
        ring.publish(seq);
        return seq;
    }

    public void stop() { disruptor.halt(); }
}
