package perfkit.threetier;

import com.fasterxml.jackson.databind.JsonNode;
import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.cli.Cli;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.http.LoadResult;
import perfkit.harness.http.OpenStep;
import perfkit.harness.http.RateCapacity;
import perfkit.harness.run.Run;
import perfkit.harness.http.ServerWarmup;
import perfkit.harness.run.Table;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the two HTTP rounds (templates, chain) measure one cell against its URL, with the kit's load driver, once its
 * servers are warm by rule ({@link #warm}):
 * <ol>
 * <li><b>saturation</b>: a closed model, {@code users} users looping for --measure seconds after a --warmup of the
 *     driver, gives the throughput the original reported (its "req/s");</li>
 * <li><b>capacity</b>: an open model (a fixed schedule, latency from each arrival's scheduled start, the driver's
 *     lateness beside it: {@link OpenStep}), searched by doubling multiples of 1/8 of the saturation throughput then
 *     bisecting, for the bracket around the largest rate whose p99 meets --slo-ms with no errors;</li>
 * <li><b>fixed rates</b>: open-model steps at given rates (the chain's common rate, where latencies are compared).</li>
 * </ol>
 * Rows go to saturation.csv, open.csv and capacity.csv, with a {@code round} column; hlogs per step.
 */
final class HttpRound implements AutoCloseable {
    /** Processes whose CPU a step records (each with its live children), as columns cpu_<name>_pct; the driver is added. */
    static final List<String> PROCESSES = List.of("app", "a", "b", "c", "db", "driver");
    /** The search's rate step as a fraction of the saturation throughput: 1/8, 2/8, 4/8, 8/8, then bisect. */
    static final int SEARCH_STEPS_TO_SATURATION = 8;
    /** Requests in flight while the servers warm up by rule. */
    static final int WARMUP_USERS = 64;

    private final Run run;
    private final ThreeTier.Options o;
    private final Table saturation, open, capacity;

    HttpRound(Run run, ThreeTier.Options o) throws IOException {
        this.run = run;
        this.o = o;
        saturation = new Table(run, "saturation.csv", "closed model at saturation: one row per round, cell and fork: users looping for the "
                + "measurement window; throughput (the original's req/s), response time, errors, CPU per process, JIT and GC of the servers",
                "cell", "round", "variant", "fork", "users", "seconds", "responses", "errors", "throughput_rps", "mean_ms", "p50_ms", "p90_ms", "p95_ms",
                "p99_ms", "max_ms", "cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_c_pct", "cpu_db_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct",
                "jit_ms_per_s", "gc_ms_per_s", "warm", "valid", "invalid_reason");
        open = new Table(run, "open.csv", "open model: one row per round, cell, fork and offered rate: response time from the scheduled start and "
                + "as Hyperfoil saw it, the driver's lateness, errors, CPU per process, JIT and GC of the servers, verdict against the SLO; purpose is "
                + "search or compare (the chain's common rate)",
                "cell", "round", "variant", "fork", "purpose", "rate_rps", "achieved_rps", "requests", "errors", "blocked_ms", "mean_ms", "p50_ms",
                "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "uncorrected_p99_ms", "lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms",
                "connections", "driver_threads", "cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_c_pct", "cpu_db_pct", "cpu_driver_pct",
                "cpu_system_pct", "steal_pct", "sut_cpu_ms_per_1k", "jit_ms_per_s", "gc_ms_per_s", "warm", "slo_ms", "verdict", "meets_slo", "valid", "invalid_reason");
        capacity = new Table(run, "capacity.csv", "open model: capacity per round, cell and fork as a bracket on the rates tried: the last rate "
                + "whose p99 met the SLO with no errors, and the first above it that did not",
                "cell", "round", "variant", "fork", "slo_ms", "last_met_rps", "first_missed_rps", "status", "stop_reason", "steps");
    }

    /** The part of a cell name after its round: {@code templates/jsp} -> {@code jsp}. */
    static String variant(String cell) { return cell.substring(cell.indexOf('/') + 1); }

    static String round(String cell) { return cell.substring(0, cell.indexOf('/')); }

    /** File stem and phase name of one step: {@code templates.jsp.sat.fork1}. */
    static String stem(String cell, String step, int fork) { return cell.replace('/', '.') + "." + step + ".fork" + fork; }

    /** Warms {@code servers} up by rule on {@code urls}, before any of their cells is measured (see {@link ServerWarmup}). */
    ServerWarmup.Outcome warm(String label, int fork, List<String> urls, Map<String, JvmActivity.Listener> servers) throws InterruptedException {
        return ServerWarmup.warm(run, label, fork, urls, servers, new ServerWarmup.Rule(Math.max(10, o.warmup()), o.serverWarmupMax(), WARMUP_USERS));
    }

    /**
     * Closed model at saturation: a warm-up of the driver, then {@code users} users looping for --measure seconds.
     * Returns the throughput in responses per second (NaN when nothing answered). {@code watch} names the processes
     * whose CPU (with their live children) is recorded per step; {@code servers} those whose JIT is.
     */
    double saturation(String cell, int fork, String url, int users, Map<String, Long> watch, Map<String, JvmActivity.Listener> servers) throws Exception {
        double warmup = o.warmup(), measure = o.measure();
        HttpLoad.Plan plan = new HttpLoad.Plan("three-tier " + cell + " saturation fork " + fork, url);
        String phase = stem(cell, "sat", fork);
        if (warmup > 0) plan.always("warmup", plan.path(), users, warmup, HttpLoad.Plan.Counts.WARMUP);
        plan.always(phase, plan.path(), users, measure, HttpLoad.Plan.Counts.MEASURED);
        run.progress().say(cell + " fork " + fork + ": closed model, " + users + " users for " + Cli.plain(measure) + " s");
        JsonNode result = HttpLoad.run(run, phase, plan, checked(watch), Map.of(), 180 + 3 * (warmup + measure));
        JsonNode ph = LoadResult.phase(result, phase);
        List<String> problems = new ArrayList<>(LoadResult.problems(ph));
        if (warmup > 0) for (String pr : LoadResult.problems(LoadResult.phase(result, "warmup"))) problems.add("warm-up: " + pr);
        long responses = ph.path("responses").asLong(), errors = ph.path("errors").asLong();
        if (errors > 0) problems.add(errors + " errors");
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0, rps = responses / seconds;
        double jit = jit(servers, ph), gc = JvmActivity.busiest(servers.values(), ph.path("startMs").asLong(), ph.path("endMs").asLong(), true);
        JsonNode lat = ph.path("latencyMs");
        saturation.write(Table.row().set("cell", cell).set("round", round(cell)).set("variant", variant(cell)).set("fork", fork).set("users", users)
                .set("seconds", seconds).set("responses", responses).set("errors", errors).set("throughput_rps", rps)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p95_ms", num(lat, "p95"))
                .set("p99_ms", num(lat, "p99")).set("max_ms", num(lat, "max")).set(cpu(ph)).set("cpu_driver_pct", num(ph.path("cpuPct"), "driver"))
                .set("cpu_system_pct", num(ph, "systemCpuPct")).set("steal_pct", num(ph, "stealPct")).set("jit_ms_per_s", Double.isNaN(jit) ? null : jit)
                .set("gc_ms_per_s", Double.isNaN(gc) ? null : gc).set("warm", !(jit > ServerWarmup.JIT_QUIET_MS_PER_S))
                .set("valid", problems.isEmpty()).set("invalid_reason", String.join("; ", problems)));
        HttpLoad.addHlogs(run, ph, cell, cell + "/saturation", fork, cell + ", closed model at saturation, " + users + " users, fork " + fork);
        if (!problems.isEmpty()) run.invalid(cell + " fork " + fork + " saturation: " + String.join("; ", problems));
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: %.0f req/s at %d users, p50 %s ms, p99 %s ms, %d errors%s", cell, fork, rps, users,
                lat.path("p50").asText("-"), lat.path("p99").asText("-"), errors,
                jit > ServerWarmup.JIT_QUIET_MS_PER_S ? String.format(Locale.ROOT, ", JIT %.0f ms/s", jit) : ""));
        return responses == 0 ? Double.NaN : rps;
    }

    /**
     * Open-model capacity at --slo-ms: doubling multiples of 1/8 of {@code saturationRps}, then bisecting, within
     * --budget seconds (one driver run per step, each with its own warm-up); or at the fixed fractions of --open-rates,
     * or not at all with {@code none}. Returns the bracket (null when not measured).
     */
    CapacitySearch.Result capacity(String cell, int fork, String url, double saturationRps, Map<String, Long> watch,
                                   Map<String, JvmActivity.Listener> servers) throws Exception {
        if (!o.measuresCapacity()) return null;
        if (!(saturationRps > 0)) {
            CapacitySearch.Result none = new CapacitySearch.Result(null, null, CapacitySearch.Status.NOT_MEASURABLE, "no saturation throughput to start from", List.of());
            capacityRow(cell, fork, none);
            return none;
        }
        double[] hint = {Double.NaN}; // the previous step's p99 sizes the next step's connections
        RateCapacity.Trial trial = rate -> {
            OpenStep.Result r = openStep(cell, fork, url, rate, "search", watch, servers, hint[0]);
            if (r.verdict().valid() && Double.isFinite(r.latency().p99())) hint[0] = r.latency().p99();
            return r.verdict();
        };
        CapacitySearch.Result res;
        if (!o.searchesCapacity()) { // fixed fractions of the saturation throughput
            List<CapacitySearch.Step> steps = new ArrayList<>();
            for (double f : o.openFractions()) {
                int rate = (int) Math.max(1, Math.round(f * saturationRps));
                steps.add(new CapacitySearch.Step(rate, trial.run(rate)));
            }
            res = CapacitySearch.Result.ofFixedSteps(steps, "fixed fractions " + o.openRates() + " of the saturation throughput");
        } else {
            int step = (int) Math.max(1, Math.round(saturationRps / SEARCH_STEPS_TO_SATURATION));
            double stepSeconds = o.warmup() + o.measure() + 8; // + the driver's start-up
            res = RateCapacity.search(step, step * 4 * SEARCH_STEPS_TO_SATURATION, o.budget(), stepSeconds, trial);
        }
        capacityRow(cell, fork, res);
        return res;
    }

    /** One open-model step at {@code rate} req/s after its own warm-up at that rate; {@code purpose} is search or compare. */
    OpenStep.Result openStep(String cell, int fork, String url, double rate, String purpose, Map<String, Long> watch,
                             Map<String, JvmActivity.Listener> servers, double latencyHintMs) throws Exception {
        String series = cell + "/r" + OpenStep.rateLabel(rate) + (purpose.equals("search") ? "" : "/" + purpose);
        OpenStep.Result r = OpenStep.run(run, new OpenStep.Spec(cell, series, fork, url, HttpLoad.Target.of(url).pathAndQuery(), rate, o.warmup(),
                o.measure(), o.sloMs(), latencyHintMs, checked(watch), Map.of(), servers,
                "three-tier " + cell + ", open model at " + OpenStep.rateLabel(rate) + " req/s (" + purpose + "), fork " + fork));
        open.write(r.row().set("round", round(cell)).set("variant", variant(cell)).set("purpose", purpose).set(cpu(r.phase())).set("sut_cpu_ms_per_1k", r.sutCpuMsPer1k()));
        return r;
    }

    /**
     * With --profile, once per run (the first HTTP cell with a rate it carried): what recording cost, {@code cell}'s open
     * step at {@code rate} run again in --forks pairs, recorded and plain ({@link OpenStep#profilingCost}).
     */
    void profilingCost(String cell, int fork, String url, double rate, Map<String, Long> watch, Map<String, JvmActivity.Listener> servers) throws Exception {
        if (!run.profiling() || costMeasured || !(rate >= 1)) return;
        costMeasured = true;
        OpenStep.profilingCost(run, new OpenStep.Spec(cell, cell + "/r" + OpenStep.rateLabel(rate), fork, url, HttpLoad.Target.of(url).pathAndQuery(), rate,
                o.warmup(), o.measure(), o.sloMs(), Double.NaN, checked(watch), Map.of(), servers,
                "three-tier " + cell + ", open model at " + OpenStep.rateLabel(rate) + " req/s, fork " + fork), o.forks());
    }

    /** Whether what --profile costs was measured (a run whose HTTP cells carried no rate has no measure of it). */
    boolean costMeasured() { return costMeasured; }

    private boolean costMeasured;

    private void capacityRow(String cell, int fork, CapacitySearch.Result r) throws IOException {
        capacity.write(RateCapacity.row(cell, fork, o.sloMs(), r).set("round", round(cell)).set("variant", variant(cell)));
        run.progress().say(cell + " fork " + fork + ": capacity at p99 <= " + o.sloMs() + " ms: " + RateCapacity.describe(r) + "; " + r.stopReason());
    }

    /** The busiest JIT among {@code servers} during a phase, ms/s; NaN when none reported. */
    static double jit(Map<String, JvmActivity.Listener> servers, JsonNode phase) {
        return JvmActivity.busiest(servers.values(), phase.path("startMs").asLong(), phase.path("endMs").asLong(), false);
    }

    /** CPU % of one core per watched process between the step's edges, into the cpu_<name>_pct columns. */
    private static Map<String, Object> cpu(JsonNode phase) {
        Map<String, Object> cols = new java.util.LinkedHashMap<>();
        for (String name : PROCESSES) if (!name.equals("driver")) cols.put("cpu_" + name + "_pct", num(phase.path("cpuPct"), name));
        return cols;
    }

    /** {@code watch} with only the known process names (the rest would have no column). */
    static Map<String, Long> checked(Map<String, Long> watch) {
        for (String name : watch.keySet())
            if (!PROCESSES.contains(name)) throw new IllegalArgumentException("unknown process " + name + "; one of " + PROCESSES);
        return watch;
    }


    private static Double num(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isNumber() ? v.asDouble() : null;
    }

    @Override
    public void close() throws IOException {
        saturation.close();
        open.close();
        capacity.close();
    }
}
