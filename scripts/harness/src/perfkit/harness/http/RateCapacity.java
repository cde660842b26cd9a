package perfkit.harness.http;

import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.measure.StepVerdict;
import perfkit.harness.run.Table;

/**
 * Capacity in requests per second at an SLO, from open-model steps: the harness's {@link CapacitySearch} over multiples
 * of a rate step, or a reading of steps at fixed rates. Either way a bracket on the grid of rates tried: the last rate
 * met and the first not met, never a single number that hides which it is.
 */
public final class RateCapacity {
    /** Runs one open-model step at {@code rate} req/s and judges it. */
    public interface Trial { StepVerdict run(int rate) throws Exception; }

    private RateCapacity() {}

    /** Doubling multiples of {@code rateStep} (1x, 2x, 4x ...) up to {@code maxRate}, then bisecting, within {@code budgetSeconds}. */
    public static CapacitySearch.Result search(int rateStep, int maxRate, double budgetSeconds, double stepSeconds, Trial trial) throws Exception {
        long t0 = System.nanoTime();
        CapacitySearch.Result r = CapacitySearch.search(Math.max(1, maxRate / rateStep), budgetSeconds, () -> (System.nanoTime() - t0) / 1e9,
                () -> stepSeconds, n -> trial.run(n * rateStep), n -> (long) n * rateStep + " req/s");
        return r.scaled(rateStep, r.stopReason());
    }

    /** The columns every capacity.csv shares: the bracket, how the search ended, and the steps it tried. */
    public static Table.Row row(String cell, int fork, double sloMs, CapacitySearch.Result r) {
        StringBuilder tried = new StringBuilder();
        for (CapacitySearch.Step s : r.steps()) tried.append(tried.length() == 0 ? "" : " ").append(s.load()).append(':').append(s.verdict().status().label);
        return Table.row().set("cell", cell).set("fork", fork).set("slo_ms", sloMs).set("last_met_rps", r.lastMet())
                .set("first_missed_rps", r.firstNotMet()).set("status", r.status().label).set("stop_reason", r.stopReason()).set("steps", tried.toString());
    }

    /** The bracket in words: "600..1200 req/s (wall)", "at least 2400 req/s (lower bound)", "below 300 req/s (wall)". */
    public static String describe(CapacitySearch.Result r) {
        String bracket = r.lastMet() == null ? (r.firstNotMet() == null ? "none" : "below " + r.firstNotMet())
                : r.firstNotMet() == null ? "at least " + r.lastMet() : r.lastMet() + ".." + r.firstNotMet();
        return bracket + (bracket.equals("none") ? "" : " req/s") + " (" + r.status().label + ")";
    }
}
