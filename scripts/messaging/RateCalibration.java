package perfkit.messaging;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.run.Run;
import perfkit.harness.run.Table;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --rate-per-chain auto}: the original's 1000 msg/s per chain saturates a small host with one Kafka chain, so its
 * question (how many chains fit under the SLO?) cannot be asked there. This finds the highest rate, starting from the
 * published one, at which one Kafka chain under the blocking policy (Kafka's usual consumer loop) uses at most
 * {@code --calibration-share} of the machine: the services, driver and broker leave room for more chains, and for
 * Chronicle Queue to show how many more. Each try is a one-chain step with a fresh JVM on one fresh broker; the next
 * rate scales the last by target / measured CPU (with a 10% margin), rounded down to two significant digits.
 */
final class RateCalibration {
    static final long PUBLISHED_RATE = 1000;
    static final int MAX_TRIES = 5;
    /** A CPU reading needs a few seconds, not a whole measurement window. */
    static final double MAX_WINDOW_SECONDS = 10;

    private RateCalibration() {}

    static long run(Run run, Sweep s) throws Exception {
        Messaging.Options o = s.options();
        // % of one core of the machine the chain runs on: this one, or its host with --place chains (the step says which)
        double targetPct = o.calibrationSharePct() * Runtime.getRuntime().availableProcessors();
        double window = Math.min(o.measure(), MAX_WINDOW_SECONDS);
        Sweep.Cell cell = new Sweep.Cell("kafka", "blocking");
        List<Table.Row> rows = new ArrayList<>();
        List<Long> tried = new ArrayList<>();
        long chosen = -1, rate = PUBLISHED_RATE;
        try (Sweep.Broker broker = s.broker(cell)) {
            for (int i = 0; i < MAX_TRIES && rate >= 1; i++) {
                run.progress().say(String.format(Locale.ROOT, "calibration: one kafka/blocking chain at %d msg/s", rate));
                Sweep.Measured m = s.measureStep(cell, "kafka/blocking/n1/calibration-" + rate, 1, broker.access(), rate, window, "-cal" + rate);
                targetPct = o.calibrationSharePct() * m.cores();
                boolean fits = m.verdict().valid() && m.testedCpuPct() <= targetPct;
                tried.add(rate);
                rows.add(Table.row().set("cell", "kafka/blocking/n1/calibration-" + rate).set("rate_per_chain", rate).set("cpu_tested_pct", m.testedCpuPct()).set("cpu_broker_pct", m.brokerPct())
                        .set("cpu_app_pct", m.r().appCpuPct()).set("cpu_system_pct", m.systemPct()).set("steal_pct", m.stealPct()).set("target_pct", targetPct)
                        .set("p99_9_ms", Sweep.ms(m.e2e(), 99.9)).set("verdict", m.verdict().status().label).set("fits", fits));
                run.progress().say(String.format(Locale.ROOT, "calibration: %d msg/s: services, driver and broker at %.0f%% of a core (target %.0f%%)%s",
                        rate, m.testedCpuPct(), targetPct, fits ? ": chosen" : ""));
                if (fits) {
                    chosen = rate;
                    break;
                }
                long next = m.testedCpuPct() > 0 ? twoDigitsDown(rate * targetPct / m.testedCpuPct() * 0.9) : rate / 2;
                rate = next < rate ? next : rate / 2; // always lower, so the tries end
            }
        }
        boolean fitted = chosen > 0;
        if (!fitted) chosen = tried.get(tried.size() - 1);
        try (Table t = new Table(run, "calibration.csv", "the one-chain kafka/blocking steps that chose --rate-per-chain auto: CPU of services, "
                + "driver and broker (% of one core) against the target share of the machine", "cell", "rate_per_chain", "cpu_tested_pct", "cpu_broker_pct",
                "cpu_app_pct", "cpu_system_pct", "steal_pct", "target_pct", "p99_9_ms", "verdict", "fits", "chosen")) {
            for (int i = 0; i < rows.size(); i++) t.write(rows.get(i).set("chosen", tried.get(i) == chosen));
        }
        ObjectNode n = run.notes().putObject("calibration");
        n.put("rule", "from the published 1000 msg/s down: the first rate at which one kafka/blocking chain (services, driver and broker) uses at most "
                + o.calibrationSharePct() + "% of the machine (" + Math.round(targetPct) + "% of one core) in a valid step");
        n.put("ratePerChain", chosen);
        n.put("fitted", fitted);
        ArrayNode t = n.putArray("tried");
        tried.forEach(t::add);
        if (!fitted) n.put("why", "no rate tried fitted within " + MAX_TRIES + " tries; the last tried is used");
        run.writeManifest();
        return chosen;
    }

    /** x rounded down to two significant digits, at least 1: 456.7 -> 450, 87.3 -> 87. */
    static long twoDigitsDown(double x) {
        if (x < 1) return 1;
        long scale = 1;
        while (x / scale >= 100) scale *= 10;
        return Math.max(1, (long) Math.floor(x / scale) * scale);
    }
}
