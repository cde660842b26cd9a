package perfkit.threetier;

import com.fasterxml.jackson.databind.JsonNode;
import perfkit.harness.CapacitySearch;
import perfkit.harness.HttpLoad;
import perfkit.harness.Params;
import perfkit.harness.Run;
import perfkit.harness.StepVerdict;
import perfkit.harness.Table;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the two HTTP rounds (templates, chain) measure one cell against its URL, with the kit's load driver:
 * <ol>
 * <li><b>saturation</b>: a closed model, {@code users} users looping for --measure seconds after a --warmup, gives the
 *     throughput the original reported (its "req/s");</li>
 * <li><b>capacity</b>: an open model (constant arrival rate, latency from the scheduled start), searched by doubling
 *     multiples of 1/8 of the saturation throughput then bisecting, for the largest rate whose p99 meets --slo-ms
 *     with no errors;</li>
 * <li><b>fixed rates</b>: open-model steps at given rates (the chain's common rate, where spectra are compared).</li>
 * </ol>
 * Rows go to saturation.csv, open.csv and capacity.csv, with a {@code round} column; hlogs per step.
 */
final class HttpRound implements AutoCloseable {
    /** Sessions and connections allowed per open-model step, as seconds of arrivals at the SLO (Little's law). */
    static final double CONCURRENCY_SLOS = 5;
    static final int MAX_CONCURRENCY = 20_000;
    /** Processes whose CPU a step records (each with its live children), as columns cpu_<name>_pct; the driver is added. */
    static final List<String> PROCESSES = List.of("app", "a", "b", "c", "db", "driver");
    /** The search's rate step as a fraction of the saturation throughput: 1/8, 2/8, 4/8, 8/8, then bisect. */
    static final int SEARCH_STEPS_TO_SATURATION = 8;

    private final Run run;
    private final Params p;
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final Table saturation, open, capacity;

    HttpRound(Run run) throws IOException {
        this.run = run;
        this.p = run.typed();
        saturation = new Table(run, "saturation.csv", "closed model at saturation: one row per round, cell and fork: users looping for the "
                + "measurement window; throughput (the original's req/s), response time, errors, CPU per process",
                "cell", "round", "variant", "fork", "users", "seconds", "responses", "errors", "throughput_rps", "mean_ms", "p50_ms", "p90_ms", "p95_ms",
                "p99_ms", "max_ms", "cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_c_pct", "cpu_db_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct",
                "valid", "invalid_reason");
        open = new Table(run, "open.csv", "open model: one row per round, cell, fork and offered rate: response time from the scheduled start, "
                + "errors, CPU per process, verdict against the SLO; purpose is search or compare (the chain's common rate)",
                "cell", "round", "variant", "fork", "purpose", "rate_rps", "achieved_rps", "requests", "errors", "mean_ms", "p50_ms", "p90_ms", "p95_ms",
                "p99_ms", "p99_9_ms", "max_ms", "cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_c_pct", "cpu_db_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct", "sut_cpu_ms_per_1k", "slo_ms", "verdict", "meets_slo", "valid",
                "invalid_reason");
        capacity = new Table(run, "capacity.csv", "open model: capacity per round, cell and fork: the largest offered rate whose p99 met the SLO with no errors",
                "cell", "round", "variant", "fork", "slo_ms", "capacity_rps", "status", "stop_reason", "steps");
    }

    /** The part of a cell name after its round: {@code templates/jsp} -> {@code jsp}. */
    static String variant(String cell) { return cell.substring(cell.indexOf('/') + 1); }

    static String round(String cell) { return cell.substring(0, cell.indexOf('/')); }

    /** File stem and phase name of one step: {@code templates.jsp.sat.fork1}. */
    static String stem(String cell, String step, int fork) { return cell.replace('/', '.') + "." + step + ".fork" + fork; }

    /**
     * Closed model at saturation: a warm-up, then {@code users} users looping for --measure seconds. Returns the
     * throughput in responses per second (NaN when nothing answered). {@code watch} names the processes whose CPU
     * (with their live children) is recorded per step.
     */
    double saturation(String cell, int fork, String url, int users, Map<String, Long> watch) throws Exception {
        double warmup = p.seconds("warmup"), measure = p.seconds("measure");
        HttpLoad.Plan plan = new HttpLoad.Plan("three-tier " + cell + " saturation fork " + fork, url);
        String phase = stem(cell, "sat", fork);
        if (warmup > 0) plan.always("warmup", plan.path(), users, warmup, true);
        plan.always(phase, plan.path(), users, measure, false);
        run.progress().say(cell + " fork " + fork + ": closed model, " + users + " users for " + fmt(measure) + " s");
        JsonNode ph = HttpLoad.phase(HttpLoad.run(run, phase, plan.yaml(), checked(watch), Map.of(), 180 + 3 * (warmup + measure)), phase);
        List<String> problems = new ArrayList<>(HttpLoad.problems(ph));
        long responses = ph.path("responses").asLong(), errors = ph.path("errors").asLong();
        if (errors > 0) problems.add(errors + " errors");
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0, rps = responses / seconds;
        JsonNode lat = ph.path("latencyMs");
        saturation.write(Table.row().set("cell", cell).set("round", round(cell)).set("variant", variant(cell)).set("fork", fork).set("users", users)
                .set("seconds", seconds).set("responses", responses).set("errors", errors).set("throughput_rps", rps)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p95_ms", num(lat, "p95"))
                .set("p99_ms", num(lat, "p99")).set("max_ms", num(lat, "max")).set(cpu(ph)).set("cpu_system_pct", num(ph, "systemCpuPct"))
                .set("steal_pct", num(ph, "stealPct")).set("valid", problems.isEmpty()).set("invalid_reason", String.join("; ", problems)));
        HttpLoad.addHlogs(run, ph, cell, cell + "/saturation", fork, cell + ", closed model at saturation, " + users + " users, fork " + fork);
        if (!problems.isEmpty()) run.invalid(cell + " fork " + fork + " saturation: " + String.join("; ", problems));
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: %.0f req/s at %d users, p50 %s ms, p99 %s ms, %d errors", cell, fork, rps, users,
                lat.path("p50").asText("-"), lat.path("p99").asText("-"), errors));
        return responses == 0 ? Double.NaN : rps;
    }

    /**
     * Open-model capacity at --slo-ms: doubling multiples of 1/8 of {@code saturationRps}, then bisecting, within
     * --budget seconds (one driver run per step, each with its own warm-up); or at the fixed fractions of --open-rates,
     * or not at all with {@code none}.
     */
    void capacity(String cell, int fork, String url, double saturationRps, Map<String, Long> watch) throws Exception {
        if (!(saturationRps > 0)) {
            capacityRow(cell, fork, null, CapacitySearch.Status.NOT_MEASURABLE.label, "no saturation throughput to start from", List.of());
            return;
        }
        if (p.text("open-rates").equals("none")) return;
        if (!p.text("open-rates").equals("search")) { // fixed fractions of the saturation throughput
            List<CapacitySearch.Step> steps = new ArrayList<>();
            for (double f : fractions(p.text("open-rates"))) {
                int rate = (int) Math.max(1, Math.round(f * saturationRps));
                steps.add(new CapacitySearch.Step(rate, openStep(cell, fork, url, rate, "search", watch)));
            }
            CapacitySearch.Result r = HttpLoad.fixedRateCapacity(steps, "fixed fractions " + p.text("open-rates") + " of the saturation throughput");
            capacityRow(cell, fork, r.capacity(), r.status().label, r.stopReason(), steps);
            return;
        }
        int step = (int) Math.max(1, Math.round(saturationRps / SEARCH_STEPS_TO_SATURATION));
        double stepSeconds = p.seconds("warmup") + p.seconds("measure") + 8; // + the driver's start-up
        CapacitySearch.Result res = HttpLoad.searchRate(step, step * 4 * SEARCH_STEPS_TO_SATURATION, p.seconds("budget"), stepSeconds,
                rate -> openStep(cell, fork, url, rate, "search", watch));
        capacityRow(cell, fork, res.capacity(), res.status().label, res.stopReason(), res.steps());
    }

    /** One open-model step at {@code rate} req/s after its own warm-up at that rate; {@code purpose} is search or compare. */
    StepVerdict openStep(String cell, int fork, String url, double rate, String purpose, Map<String, Long> watch) throws Exception {
        double measure = p.seconds("measure"), warmup = p.seconds("warmup");
        String phase = stem(cell, "r" + rateLabel(rate), fork);
        int concurrency = (int) Math.min(MAX_CONCURRENCY, Math.ceil(rate * CONCURRENCY_SLOS * p.integer("slo-ms") / 1000.0) + 16);
        HttpLoad.Plan plan = new HttpLoad.Plan("three-tier " + cell + " open " + rateLabel(rate) + " req/s fork " + fork, url);
        if (warmup > 0) plan.open("warmup", plan.path(), rate, warmup, concurrency, true, false);
        plan.open(phase, plan.path(), rate, measure, concurrency, false, true);
        run.progress().say(cell + " fork " + fork + ": open model at " + rateLabel(rate) + " req/s");
        JsonNode ph = HttpLoad.phase(HttpLoad.run(run, phase, plan.yaml(), checked(watch), Map.of(), 180 + 3 * (warmup + measure)), phase);
        JsonNode lat = ph.path("latencyMs");
        long errors = ph.path("errors").asLong(), requests = ph.path("requests").asLong(), responses = ph.path("responses").asLong();
        double p99 = orNaN(num(lat, "p99")), achieved = requests / measure;
        StepVerdict v = HttpLoad.openVerdict(rate, requests, measure, errors, HttpLoad.problems(ph), ph.path("histogramCount").asLong(), p99,
                p.integer("slo-ms"), orNaN(num(ph, "systemCpuPct")), orNaN(num(ph, "stealPct")), cores);
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0;
        double sutPct = 0;
        for (var e : ph.path("cpuPct").properties()) if (!e.getKey().equals("driver") && e.getValue().isNumber()) sutPct += e.getValue().asDouble();
        Double sutPer1k = responses == 0 ? null : sutPct / 100 * seconds * 1000 / responses * 1000; // CPU ms per 1000 answered requests
        open.write(Table.row().set("cell", cell).set("round", round(cell)).set("variant", variant(cell)).set("fork", fork).set("purpose", purpose)
                .set("rate_rps", rate).set("achieved_rps", achieved).set("requests", requests).set("errors", errors)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p95_ms", num(lat, "p95"))
                .set("p99_ms", num(lat, "p99")).set("p99_9_ms", num(lat, "p99_9")).set("max_ms", num(lat, "max")).set(cpu(ph))
                .set("cpu_system_pct", num(ph, "systemCpuPct")).set("steal_pct", num(ph, "stealPct")).set("sut_cpu_ms_per_1k", sutPer1k)
                .set("slo_ms", p.integer("slo-ms")).set("verdict", v.status().label).set("meets_slo", v.meets()).set("valid", v.valid())
                .set("invalid_reason", v.valid() ? "" : v.reason()));
        HttpLoad.addHlogs(run, ph, cell, cell + "/r" + rateLabel(rate), fork, cell + ", open model at " + rateLabel(rate) + " req/s, fork " + fork);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d at %s req/s: p99 %.1f ms, %d errors: %s%s", cell, fork, rateLabel(rate), p99, errors,
                v.status().label, v.reason().isEmpty() ? "" : " (" + v.reason() + ")"));
        return v;
    }

    private void capacityRow(String cell, int fork, Integer cap, String status, String reason, List<CapacitySearch.Step> steps) throws IOException {
        StringBuilder tried = new StringBuilder();
        for (CapacitySearch.Step s : steps) tried.append(tried.length() == 0 ? "" : " ").append(s.instances()).append(':').append(s.verdict().status().label);
        capacity.write(Table.row().set("cell", cell).set("round", round(cell)).set("variant", variant(cell)).set("fork", fork)
                .set("slo_ms", p.integer("slo-ms")).set("capacity_rps", cap).set("status", status).set("stop_reason", reason).set("steps", tried.toString()));
        run.progress().say(cell + " fork " + fork + ": capacity at p99 <= " + p.integer("slo-ms") + " ms: " + (cap == null ? "none" : cap + " req/s")
                + " (" + status + "; " + reason + ")");
    }

    /** CPU % of one core per watched process between the step's edges, into the cpu_<name>_pct columns. */
    private static Map<String, Object> cpu(JsonNode phase) {
        Map<String, Object> cols = new java.util.LinkedHashMap<>();
        for (String name : PROCESSES) cols.put("cpu_" + name + "_pct", num(phase.path("cpuPct"), name));
        return cols;
    }

    /** {@code watch} with only the known process names (the rest would have no column). */
    static Map<String, Long> checked(Map<String, Long> watch) {
        for (String name : watch.keySet())
            if (!PROCESSES.contains(name)) throw new IllegalArgumentException("unknown process " + name + "; one of " + PROCESSES);
        return watch;
    }

    /** The fractions of --open-rates, ascending; null when the text is not a list of fractions in (0, 4]. */
    static List<Double> fractions(String text) {
        List<Double> out = new ArrayList<>();
        try {
            for (String f : text.split(",")) {
                double v = Double.parseDouble(f.trim());
                if (!(v > 0 && v <= 4)) return null;
                out.add(v);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        out.sort(null);
        return out;
    }

    static String checkOpenRates(Params p) {
        String t = p.text("open-rates").trim();
        return t.equals("search") || t.equals("none") || fractions(t) != null ? null
                : "option --open-rates expects 'search', 'none' or fractions of the saturation throughput in (0, 4], comma-separated (e.g. 0.25,0.5), got '" + t + "'";
    }

    static String rateLabel(double rate) {
        return rate == Math.rint(rate) ? String.valueOf((long) rate) : String.format(Locale.ROOT, "%.2f", rate);
    }

    private static String fmt(double seconds) { return seconds == Math.rint(seconds) ? String.valueOf((long) seconds) : String.valueOf(seconds); }

    private static Double num(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isNumber() ? v.asDouble() : null;
    }

    private static double orNaN(Double d) { return d == null ? Double.NaN : d; }

    @Override
    public void close() throws IOException {
        saturation.close();
        open.close();
        capacity.close();
    }
}
