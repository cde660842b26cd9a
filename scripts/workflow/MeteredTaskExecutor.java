package perfkit.workflow;

import org.flowable.common.engine.api.async.AsyncTaskExecutor;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps the async executor's thread pool to measure how busy its threads are: the time spent running jobs, summed
 * over threads. Busy time / (threads x elapsed) near 1 means every thread is occupied; well below 1 while jobs are
 * due means the threads wait for acquisition to hand them work.
 */
final class MeteredTaskExecutor implements AsyncTaskExecutor {
    /** When the current thread picked up the job it runs (System.nanoTime), for the job's own latency sample. */
    static final ThreadLocal<Long> STARTED_NS = new ThreadLocal<>();

    private final AsyncTaskExecutor inner;
    private final LongAdder busyNanos = new LongAdder();
    private final AtomicLong submitted = new AtomicLong(), started = new AtomicLong();

    MeteredTaskExecutor(AsyncTaskExecutor inner) { this.inner = inner; }

    private Runnable timed(Runnable r) {
        submitted.incrementAndGet();
        return () -> {
            started.incrementAndGet();
            long t0 = System.nanoTime();
            STARTED_NS.set(t0);
            try {
                r.run();
            } finally {
                STARTED_NS.remove();
                busyNanos.add(System.nanoTime() - t0);
            }
        };
    }

    /** Thread-nanoseconds spent running jobs so far (jobs still running are not yet counted). */
    long busyNanos() { return busyNanos.sum(); }

    /** Jobs handed to the pool and not yet started: the pool's queue. */
    long queued() { return submitted.get() - started.get(); }

    @Override
    public void execute(Runnable r) {
        try {
            inner.execute(timed(r));
        } catch (RuntimeException rejected) { // queue full: Flowable retries the job later
            submitted.decrementAndGet();
            throw rejected;
        }
    }

    @Override
    public CompletableFuture<?> submit(Runnable r) {
        try {
            return inner.submit(timed(r));
        } catch (RuntimeException rejected) {
            submitted.decrementAndGet();
            throw rejected;
        }
    }

    @Override
    public <T> CompletableFuture<T> submit(Callable<T> c) {
        submitted.incrementAndGet();
        try {
            return inner.submit(() -> {
                started.incrementAndGet();
                long t0 = System.nanoTime();
                try {
                    return c.call();
                } finally {
                    busyNanos.add(System.nanoTime() - t0);
                }
            });
        } catch (RuntimeException rejected) {
            submitted.decrementAndGet();
            throw rejected;
        }
    }

    @Override public void shutdown() { inner.shutdown(); }
    @Override public int getRemainingCapacity() { return inner.getRemainingCapacity(); }
}
