package perfkit.harness.http;

import perfkit.harness.measure.JvmActivity;
import perfkit.harness.os.OpenFiles;
import perfkit.harness.record.Manifest;
import perfkit.harness.run.ProfilingCost;
import perfkit.harness.run.Run;
import perfkit.harness.measure.StepVerdict;
import perfkit.harness.run.Table;

import com.fasterxml.jackson.databind.JsonNode;

import perfkit.harness.http.HttpLoad.Plan.Counts;
import perfkit.harness.http.HttpLoad.Plan.Follows;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One open-model step against an HTTP endpoint, the same in every HTTP study: the kit's load driver warms up at the
 * step's rate and then measures it without a gap (one driver run, its connections sized for this step), and the step
 * is judged against its SLO on the response time from each arrival's <b>scheduled</b> start. The driver's own
 * lateness is measured beside it: a step whose driver started its requests late, or too few of them in some second,
 * says nothing about the system when it met the SLO ({@link #verdict}).
 */
public final class OpenStep {
    /** The driver's lateness p99 may be at most this fraction of the SLO, or the step's driver fell behind. */
    static final double LATENESS_FRACTION_OF_SLO = 0.10;
    /** Every whole second of the window must see at least this fraction of the arrivals its schedule asks for. */
    static final double MIN_ARRIVALS_PER_SECOND = 0.90;
    /** Connections per step: arrivals during this many latencies (Little's law with headroom). */
    static final double CONNECTION_HEADROOM = 1.5;
    /** Connections cover at least this many milliseconds of arrivals. */
    static final double MIN_CONCURRENCY_MS = 20;

    /**
     * What to load, and how to judge it.
     *
     * @param series        the latency series, e.g. {@code mvc/1call/r600}
     * @param path          the request's path and query on {@code url}'s origin
     * @param sloMs         the SLO: p99 of the response time from the scheduled start, ms
     * @param latencyHintMs a latency the target has shown (the previous step's p99, or {@link #probeLatencyMs}): sizes the connections
     * @param servers       the servers under test, whose JIT activity during the window marks a step as warm or not
     */
    public record Spec(String cell, String series, int fork, String url, String path, double rate, double warmupSeconds, double measureSeconds,
                       double sloMs, double latencyHintMs, Map<String, Long> watch, Map<String, String> probes,
                       Map<String, JvmActivity.Listener> servers, String description) {
        /** The same step under another series and description. */
        public Spec as(String series, String description) {
            return new Spec(cell, series, fork, url, path, rate, warmupSeconds, measureSeconds, sloMs, latencyHintMs, watch, probes, servers, description);
        }
    }

    /** One percentile summary in ms, as the driver reports it; NaN when absent. */
    public record Latency(double mean, double p50, double p90, double p95, double p99, double p999, double max) {
        static Latency of(JsonNode n) {
            return new Latency(num(n, "mean"), num(n, "p50"), num(n, "p90"), num(n, "p95"), num(n, "p99"), num(n, "p99_9"), num(n, "max"));
        }
    }

    /**
     * The step's outcome: what the driver did and saw, and the verdict. {@code jitMsPerS} and {@code gcMsPerS} are the
     * busiest server's JIT and GC time during the window.
     */
    public record Result(Spec spec, JsonNode phase, StepVerdict verdict, long requests, long responses, long errors, double seconds,
                         int connections, int driverThreads, Latency latency, Latency uncorrected, Latency lateness, double jitMsPerS,
                         double gcMsPerS) {
        public double achievedRps() { return requests / spec.measureSeconds(); }

        public boolean warm() { return !(jitMsPerS > ServerWarmup.JIT_QUIET_MS_PER_S); }

        /** CPU % of one core of a watched process between the phase's edges (null when not sampled). */
        public Double cpu(String name) {
            JsonNode v = phase.path("cpuPct").path(name);
            return v.isNumber() ? v.asDouble() : null;
        }

        /**
         * CPU milliseconds the servers under test (every watched process but the load driver) spent per 1000 answered
         * requests over the window; null when none was sampled or nothing was answered.
         */
        public Double sutCpuMsPer1k() {
            double pct = 0;
            boolean any = false;
            for (var e : phase.path("cpuPct").properties()) {
                if (e.getKey().equals("driver") || !e.getValue().isNumber()) continue;
                pct += e.getValue().asDouble();
                any = true;
            }
            return !any || responses == 0 ? null : pct / 100 * seconds * 1000 / responses * 1000;
        }

        /**
         * The columns every open.csv shares (each study adds its own): the rate, the counts, the latency from the
         * scheduled start and as Hyperfoil saw it, the driver's lateness and size, the machine, warmth, the verdict.
         */
        public Table.Row row() {
            return Table.row().set("cell", spec.cell()).set("fork", spec.fork()).set("rate_rps", spec.rate()).set("requests", requests)
                    .set("achieved_rps", achievedRps()).set("errors", errors).set("blocked_ms", phase.path("blockedTimeNs").asLong() / 1e6)
                    .set("mean_ms", nan(latency.mean())).set("p50_ms", nan(latency.p50())).set("p90_ms", nan(latency.p90()))
                    .set("p95_ms", nan(latency.p95())).set("p99_ms", nan(latency.p99())).set("p99_9_ms", nan(latency.p999()))
                    .set("max_ms", nan(latency.max())).set("uncorrected_p99_ms", nan(uncorrected.p99()))
                    .set("lateness_p50_ms", nan(lateness.p50())).set("lateness_p99_ms", nan(lateness.p99())).set("lateness_max_ms", nan(lateness.max()))
                    .set("connections", connections).set("driver_threads", driverThreads).set("cpu_driver_pct", cpu("driver"))
                    .set("cpu_system_pct", nan(num(phase, "systemCpuPct"))).set("steal_pct", nan(num(phase, "stealPct")))
                    .set("jit_ms_per_s", nan(jitMsPerS)).set("gc_ms_per_s", nan(gcMsPerS)).set("warm", warm()).set("slo_ms", spec.sloMs())
                    .set("verdict", verdict.status().label).set("meets_slo", verdict.meets()).set("valid", verdict.valid())
                    .set("invalid_reason", verdict.valid() ? "" : verdict.reason());
        }
    }

    private OpenStep() {}

    /** Runs the step: one driver run of a warm-up phase at the rate, then the measured phase, back to back. */
    public static Result run(Run run, Spec spec) throws Exception {
        int wanted = connections(spec.rate(), spec.sloMs(), spec.latencyHintMs());
        FileBudget files = fileBudget(spec.watch());
        int connections = (int) Math.min(wanted, files.connections());
        String capped = connections == wanted ? "" : String.format(Locale.ROOT, "connections capped at %d of the %d Little's law asks: "
                + "half the open files left to %s", connections, wanted, files.tightest());
        String phaseName = spec.series().replace('/', '.') + ".fork" + spec.fork();
        HttpLoad.Plan plan = new HttpLoad.Plan(spec.description(), spec.url());
        // warm-up: the rate rises from a tenth over the first half (the driver's own JVM starts cold and compiles), then
        // holds for the second half, so no backlog from a swamped start reaches the window
        if (spec.warmupSeconds() > 0) {
            plan.ramp("warmup-ramp", spec.path(), spec.rate() / 10, spec.rate(), spec.warmupSeconds() / 2, connections);
            plan.open("warmup", spec.path(), spec.rate(), spec.warmupSeconds() / 2, connections, Counts.WARMUP, Follows.WITHOUT_GAP);
        }
        plan.open(phaseName, spec.path(), spec.rate(), spec.measureSeconds(), connections, Counts.MEASURED,
                spec.warmupSeconds() > 0 ? Follows.WITHOUT_GAP : Follows.AFTER_DRAIN);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: open model at %s req/s (%d connections%s)", spec.cell(), spec.fork(),
                rateLabel(spec.rate()), connections, capped.isEmpty() ? "" : "; " + capped));
        JsonNode result;
        try {
            result = HttpLoad.run(run, phaseName, plan, spec.watch(), spec.probes(), 180 + 3 * (spec.warmupSeconds() + spec.measureSeconds()));
        } catch (LoadResult.DriverFailed e) {
            // a driver that hangs or dies at a rate it cannot carry ends this step, not the run: the search goes on
            Result failed = driverFailed(spec, connections, e.getMessage());
            run.progress().say(String.format(Locale.ROOT, "%s fork %d at %s req/s: %s (%s)", spec.cell(), spec.fork(), rateLabel(spec.rate()),
                    failed.verdict().status().label, failed.verdict().reason()));
            return failed;
        }
        JsonNode ph = LoadResult.phase(result, phaseName);
        // Running out of sessions delays the arrivals it holds back: their lateness shows it, and the lateness rule judges
        // it. Waiting for a connection does not show in lateness (the session started on time), so it stays a problem.
        List<String> driver = new ArrayList<>(LoadResult.problems(ph).stream().filter(pr -> !pr.contains("sessions")).toList());
        // a warm-up that lost connections (blocked, reset) leaves the window with fewer; one that ran out of sessions while
        // the driver's own JVM was cold leaves nothing behind, and the window's lateness tells whether it still runs late
        if (spec.warmupSeconds() > 0) {
            JsonNode w = LoadResult.phase(result, "warmup");
            if (w.path("blockedTimeNs").asLong() > 0 || w.hasNonNull("error"))
                for (String pr : LoadResult.problems(w)) if (!pr.contains("sessions")) driver.add("warm-up: " + pr);
        }
        if (!driver.isEmpty() && !capped.isEmpty()) driver.add(capped);
        Latency latency = Latency.of(ph.path("latencyMs")), uncorrected = Latency.of(ph.path("uncorrectedMs")), lateness = Latency.of(ph.path("latenessMs"));
        long requests = ph.path("requests").asLong(), errors = ph.path("errors").asLong();
        List<Long> perSecond = new ArrayList<>();
        ph.path("startedPerSecond").forEach(n -> perSecond.add(n.asLong()));
        StepVerdict v = verdict(new Facts(spec.rate(), requests, spec.measureSeconds(), errors, driver, ph.path("correctedCount").asLong(),
                latency.p99(), spec.sloMs(), num(ph, "systemCpuPct"), num(ph, "stealPct"), HttpLoad.cores(),
                lateness.p99(), perSecond));
        long fromMs = ph.path("startMs").asLong(), toMs = ph.path("endMs").asLong();
        double jit = JvmActivity.busiest(spec.servers().values(), fromMs, toMs, false), gc = JvmActivity.busiest(spec.servers().values(), fromMs, toMs, true);
        HttpLoad.addHlogs(run, ph, spec.cell(), spec.series(), spec.fork(), spec.description());
        Result r = new Result(spec, ph, v, requests, ph.path("responses").asLong(), errors,
                Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0, connections, result.path("threads").asInt(),
                latency, uncorrected, lateness, jit, gc);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d at %s req/s: p99 %.1f ms from the scheduled start (driver late by %.2f ms at p99), "
                        + "%d errors%s: %s%s", spec.cell(), spec.fork(), rateLabel(spec.rate()), latency.p99(), lateness.p99(), errors,
                r.warm() ? "" : String.format(Locale.ROOT, ", JIT %.0f ms/s", jit), v.status().label, v.reason().isEmpty() ? "" : " (" + v.reason() + ")"));
        return r;
    }

    /**
     * What {@code --profile} costs at one offered rate: {@code spec}'s step run recorded and plain in {@code pairs}
     * pairs ({@link ProfilingCost}), each under a series of its own ({@code <series>/profiled-p1}, {@code /plain-p1}),
     * compared by the CPU the servers under test spent per 1000 answered requests (the offered rate is the same on both
     * sides, so throughput cannot show a cost) and by p99. One row per pair in profiling.csv; a pair with an invalid
     * step says so in {@code valid}.
     */
    public static void profilingCost(Run run, Spec spec, int pairs) throws Exception {
        run.notes().put("profilingCost", "the open-model step of " + spec.cell() + " at " + rateLabel(spec.rate()) + " req/s (fork " + spec.fork()
                + ") run in " + pairs + " pair(s), one recorded and one plain, alternating which goes first; profiling.csv holds the servers' CPU per "
                + "1000 requests and p99 of both");
        try (Table t = new Table(run, "profiling.csv", "what --profile cost: one open-model step at a fixed rate, recorded and plain in pairs: "
                + "CPU of the servers under test per 1000 answered requests, and p99", "cell", "fork", "pair", "rate_rps", "profiled_cpu_ms_per_1k",
                "plain_cpu_ms_per_1k", "profiled_over_plain", "profiled_p99_ms", "plain_p99_ms", "valid")) {
            for (ProfilingCost.Pair<Result> p : ProfilingCost.pairs(run, pairs, (recorded, pair) -> {
                String side = (recorded ? "profiled" : "plain") + "-p" + pair;
                return run(run, spec.as(spec.series() + "/" + side, spec.description() + " (--profile cost: " + side + ")"));
            })) {
                Double a = p.recorded().sutCpuMsPer1k(), b = p.plain().sutCpuMsPer1k();
                t.write(Table.row().set("cell", spec.cell()).set("fork", spec.fork()).set("pair", p.pair()).set("rate_rps", spec.rate())
                        .set("profiled_cpu_ms_per_1k", a).set("plain_cpu_ms_per_1k", b).set("profiled_over_plain", a == null || b == null ? null : a / b)
                        .set("profiled_p99_ms", nan(p.recorded().latency().p99())).set("plain_p99_ms", nan(p.plain().latency().p99()))
                        .set("valid", p.recorded().verdict().valid() && p.plain().verdict().valid()));
            }
        }
    }

    /** The step whose load driver failed: invalid, with the driver's own words as the reason, and nothing measured. */
    static Result driverFailed(Spec spec, int connections, String why) {
        Latency none = Latency.of(Manifest.JSON.createObjectNode());
        StepVerdict v = new StepVerdict(StepVerdict.Status.INVALID, false, List.of("the load driver failed: " + why));
        return new Result(spec, Manifest.JSON.createObjectNode(), v, 0, 0, 0, 0, connections, 0, none, none, none, Double.NaN, Double.NaN);
    }

    /**
     * Connections (and sessions) for a step: by Little's law, the arrivals during a latency, with headroom. The latency
     * is the one the target has shown, times four for the queueing a higher rate brings; at least 20 ms, the arrivals a
     * short stall of the driver itself releases at once; and at most two SLOs: a step whose mean latency exceeds two
     * SLOs cannot meet the SLO, so more connections would only measure its failure more slowly (and a fast target never
     * gets thousands of connections it cannot accept).
     */
    static int connections(double rate, double sloMs, double latencyHintMs) {
        double hint = Double.isFinite(latencyHintMs) && latencyHintMs > 0 ? latencyHintMs : 2 * sloMs;
        double latencyS = Math.min(2 * sloMs, Math.max(MIN_CONCURRENCY_MS, 4 * hint)) / 1000;
        return (int) Math.min(50_000, Math.ceil(rate * latencyS * CONNECTION_HEADROOM) + 16);
    }

    /** The connections a step may open, and the process whose open files bound them. */
    record FileBudget(long connections, String tightest) {}

    /**
     * Half the open files left to the tightest of this JVM (the driver's JVM inherits its limit) and each server under
     * test on this host. A server out of files refuses connections and fails in ways that say nothing of its speed; the
     * other half stays for what it opens on its own behalf (its calls to a backend, a database pool). Too few
     * connections for the rate shows as the driver blocking, and the step is judged by the driver rule.
     */
    static FileBudget fileBudget(Map<String, Long> servers) {
        String tightest = "the load driver";
        long left = OpenFiles.left(ProcessHandle.current().pid()).orElse(Long.MAX_VALUE);
        for (Map.Entry<String, Long> e : servers.entrySet()) {
            if (HttpLoad.isPlaced(e.getValue())) continue; // on another host: the SSH session here holds none of its connections
            long l = OpenFiles.left(e.getValue()).orElse(Long.MAX_VALUE);
            if (l < left) {
                left = l;
                tightest = e.getKey();
            }
        }
        return new FileBudget(Math.max(16, left / 2), tightest);
    }

    /** A step's facts for {@link #verdict}: CPU and steal in % of one core, latencies in ms, arrivals per whole second of the window. */
    public record Facts(double rate, long requests, double seconds, long errors, List<String> driverProblems, long measured, double p99Ms,
                        double sloMs, double systemCpuPct, double stealPct, int cores, double latenessP99Ms, List<Long> startedPerSecond) {}

    /**
     * The verdict. The latency rule is the harness's ({@link StepVerdict#judge}: met, missed, or not measurable on a
     * saturated host). Then:
     * <ul>
     * <li>the driver fell behind: blocked on a connection, out of sessions, fewer requests than its schedule (beyond the
     *     noise {@link StepVerdict#fewestKeptUp} allows), a whole second with under 90% of its arrivals, or a lateness
     *     p99 above 10% of the SLO. Requests it sent late or not at all would only have been slower, so a p99 already
     *     above the SLO is a sound miss; a p99 within it proves nothing, and the step is <b>invalid</b>;</li>
     * <li>errors (timeouts, failed connections, non-2xx): capacity means no errors, so the step cannot be met.</li>
     * </ul>
     */
    public static StepVerdict verdict(Facts f) {
        StepVerdict.Rule rule = StepVerdict.Rule.DEFAULT;
        List<String> behind = new ArrayList<>(f.driverProblems());
        if (!(f.requests() >= StepVerdict.fewestKeptUp(f.rate() * f.seconds(), rule.minRateFraction())))
            behind.add(String.format(Locale.ROOT, "driver sent %.0f of %.0f req/s", f.requests() / f.seconds(), f.rate()));
        long fewest = (long) Math.floor(MIN_ARRIVALS_PER_SECOND * f.rate()) - 1;
        for (int i = 0; i < f.startedPerSecond().size(); i++)
            if (f.startedPerSecond().get(i) < fewest) {
                behind.add(String.format(Locale.ROOT, "driver started %d of %.0f requests in second %d", f.startedPerSecond().get(i), f.rate(), i + 1));
                break;
            }
        if (f.latenessP99Ms() > LATENESS_FRACTION_OF_SLO * f.sloMs())
            behind.add(String.format(Locale.ROOT, "driver late by %.1f ms at p99 (more than %.0f%% of the SLO)", f.latenessP99Ms(), 100 * LATENESS_FRACTION_OF_SLO));
        List<String> failed = f.errors() > 0 ? List.of(f.errors() + " errors (timeouts, failed connections or non-2xx)") : List.of();
        StepVerdict base = StepVerdict.judge(new StepVerdict.Measurement(f.rate(), f.rate(), f.measured(), 0, List.of(), f.p99Ms(), f.sloMs(),
                f.systemCpuPct(), f.stealPct(), f.cores()), rule);
        if (base.status() == StepVerdict.Status.INVALID) {
            List<String> all = new ArrayList<>(base.reasons());
            all.addAll(behind);
            return new StepVerdict(StepVerdict.Status.INVALID, base.saturated(), all);
        }
        if (base.meets()) {
            if (!behind.isEmpty()) return new StepVerdict(StepVerdict.Status.INVALID, base.saturated(), behind);
            if (failed.isEmpty()) return base;
            return new StepVerdict(base.saturated() ? StepVerdict.Status.NOT_MEASURABLE : StepVerdict.Status.MISSED, base.saturated(), failed);
        }
        List<String> reasons = new ArrayList<>(base.reasons());
        reasons.addAll(failed);
        if (!behind.isEmpty()) reasons.add(String.join("; ", behind) + " (the requests sent already miss the SLO)");
        return new StepVerdict(base.status(), base.saturated(), reasons);
    }

    /**
     * The median response time of {@code n} requests sent one after another to a URL, in ms: a first latency hint for a
     * target the study knows nothing about (a user's own server). NaN when it does not answer.
     */
    public static double probeLatencyMs(String url, int n) {
        java.net.http.HttpClient c = java.net.http.HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(5)).build();
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            try {
                c.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).timeout(java.time.Duration.ofSeconds(10))
                        .header("cache-control", "no-store").build(), java.net.http.HttpResponse.BodyHandlers.discarding());
            } catch (Exception e) {
                return Double.NaN;
            }
            ms.add((System.nanoTime() - t0) / 1e6);
        }
        ms.sort(null);
        return ms.get(ms.size() / 2);
    }

    public static String rateLabel(double rate) {
        return rate == Math.rint(rate) ? String.valueOf((long) rate) : String.format(Locale.ROOT, "%.2f", rate);
    }

    static double num(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isNumber() ? v.asDouble() : Double.NaN;
    }

    private static Double nan(double d) { return Double.isNaN(d) ? null : d; }
}
