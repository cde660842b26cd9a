package perfkit.harness.run;

import java.util.ArrayList;
import java.util.List;

/**
 * What {@code --profile} costs: one measurement made twice in a row, once recorded and once plain, in pairs, with
 * which goes first alternating so a drift of the host favours neither. The plain one runs with the run's recordings
 * held ({@link Run#unrecorded}): the same JVMs, only not recording.
 */
public final class ProfilingCost {
    private ProfilingCost() {}

    /** One pair's two readings of the same measurement. */
    public record Pair<T>(int pair, T recorded, T plain) {}

    /** A measurement made once recorded and once plain; {@code pair} counts from 1, for names. */
    @FunctionalInterface
    public interface Measurement<T> {
        T measure(boolean recorded, int pair) throws Exception;
    }

    /** {@code pairs} pairs of {@code m}: the recorded one first in odd pairs, the plain one first in even pairs. */
    public static <T> List<Pair<T>> pairs(Run run, int pairs, Measurement<T> m) throws Exception {
        List<Pair<T>> out = new ArrayList<>();
        for (int pair = 1; pair <= pairs; pair++) out.add(pair(run, pair, m));
        return out;
    }

    /**
     * Pair number {@code pair} of {@code m} alone, for a study that makes its pairs among other work (queues: one per
     * fork of its cell, between the other cells' forks): the same order as in {@link #pairs}.
     */
    public static <T> Pair<T> pair(Run run, int pair, Measurement<T> m) throws Exception {
        T recorded = null, plain = null;
        for (boolean rec : pair % 2 == 1 ? new boolean[]{true, false} : new boolean[]{false, true}) {
            if (rec) recorded = m.measure(true, pair);
            else plain = run.unrecorded(() -> m.measure(false, pair));
        }
        return new Pair<>(pair, recorded, plain);
    }
}
