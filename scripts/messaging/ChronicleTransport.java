package perfkit.messaging;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

import perfkit.harness.os.Disk;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/** Chronicle Queue with default settings: one memory-mapped queue per hop, under the run's scratch folder. An idle reader parks. */
final class ChronicleTransport implements Transport {
    private final Path root;
    private final List<ChronicleQueue> open = new CopyOnWriteArrayList<>();

    ChronicleTransport(Path root) {
        this.root = root;
    }

    private Path queuePath(int instance, int hop) {
        return root.resolve("i" + instance).resolve("q" + hop);
    }

    @Override
    public void prepare(int firstInstance, int instances) throws Exception {
        Files.createDirectories(root);
    }

    private ChronicleQueue queue(int instance, int hop) {
        ChronicleQueue q = ChronicleQueue.singleBuilder(queuePath(instance, hop)).build();
        open.add(q);
        return q;
    }

    @Override
    public Sender sender(int instance, int hop) {
        ExcerptAppender appender = queue(instance, hop).createAppender();
        return (intendedNs, sentNs, seq, hops) -> {
            try (DocumentContext dc = appender.writingDocument()) {
                Bytes<?> b = dc.wire().bytes();
                b.writeLong(intendedNs);
                b.writeLong(sentNs);
                b.writeLong(seq);
                b.writeInt(hops);
            }
        };
    }

    @Override
    public Receiver receiver(int instance, int hop) {
        ExcerptTailer tailer = queue(instance, hop).createTailer();
        return (handler, idleWaitNanos) -> {
            int n = 0;
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        if (n == 0) {
                            if (idleWaitNanos > 0) LockSupport.parkNanos(idleWaitNanos);
                            else Thread.onSpinWait();
                        }
                        return n;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    handler.on(b.readLong(), b.readLong(), b.readLong(), b.readInt());
                    n++;
                }
            }
        };
    }

    @Override
    public void close() throws Exception {
        open.forEach(ChronicleQueue::close);
        Disk.deleteRecursively(root);
    }
}
