package perfkit.workflow;

import org.flowable.common.engine.api.delegate.Expression;
import org.flowable.engine.delegate.DelegateExecution;
import org.flowable.engine.delegate.JavaDelegate;

import java.util.concurrent.atomic.AtomicLong;

/** The `fixed` job's work: sleeps a fixed time (field "ms" from the BPMN). Counts its runs to catch duplicates. */
public class SleepTask implements JavaDelegate {
    static final AtomicLong RUNS = new AtomicLong();
    private Expression ms;

    public void setMs(Expression ms) { this.ms = ms; }

    @Override
    public void execute(DelegateExecution execution) {
        RUNS.incrementAndGet();
        try {
            Thread.sleep(Long.parseLong(ms.getValue(execution).toString()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sleeping", e);
        }
    }
}
