package perfkit.workflow;

import org.flowable.engine.delegate.DelegateExecution;
import org.flowable.engine.delegate.ExecutionListener;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Listens on the wait state's start: counts every arrival there, in every job type, including attempts whose
 * transaction later rolls back. Summed over the engines it equals the job count only when no job ran twice.
 */
public class Arrivals implements ExecutionListener {
    static final AtomicLong COUNT = new AtomicLong();

    @Override
    public void notify(DelegateExecution execution) {
        COUNT.incrementAndGet();
    }
}
