package perfkit.webreactive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.CapacitySearch;
import perfkit.harness.HttpLoad;
import perfkit.harness.HttpService;
import perfkit.harness.Params;
import perfkit.harness.Run;
import perfkit.harness.StepVerdict;
import perfkit.harness.Sys;
import perfkit.harness.Table;

import java.io.BufferedWriter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The plan of a run: the external service once, then per fork and stack a fresh app JVM that gets, per calls
 * count, a closed-model sweep (one driver run whose phases are the N steps) and an open-model capacity search
 * (one driver run per rate). A cell is {@code <stack>/<calls>call}, e.g. {@code mvc/2call}.
 */
final class Cells {
    static final List<String> STACKS = List.of("mvc", "webflux", "mvc-virtual");
    /** The external service's p50 must stay this close to its delay at the highest load, or the run is invalid. */
    static final double BACKEND_TOLERANCE_MS = 2.0;
    /** Closed-model warm-up users: enough to load every stack, no more than the sweep's largest step. */
    static final int WARMUP_USERS = 50;
    /**
     * Open model: sessions and connections allowed per step, as seconds of arrivals. By Little's law a step whose
     * mean response time stays under this many SLOs never needs more; a step that does is invalid (blocked or out of
     * sessions), not silently throttled.
     */
    static final double CONCURRENCY_SLOS = 5;
    static final int MAX_CONCURRENCY = 20_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Run run;
    private final Params p;
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Table closed, open, capacity;
    private HttpService backend;
    private String target;
    /** The step with the highest rate of calls to the external service, and its p50 there. */
    private double peakBackendRate = -1;
    private Peers peers;
    /** The driver's closed-model throughput per cell, fork and N, for the peers' comparison. */
    private final Map<String, Double> closedRps = new java.util.HashMap<>();
    private ObjectNode peakBackend;

    Cells(Run run) {
        this.run = run;
        this.p = run.typed();
    }

    static String cell(String stack, int calls) { return stack + "/" + calls + "call"; }

    /** File stem and Hyperfoil phase name of one step: {@code mvc.1call.n10.fork1}. */
    static String stem(String cell, String step, int fork) { return cell.replace('/', '.') + "." + step + ".fork" + fork; }

    void run() throws Exception {
        run.mode("sweep");
        target = p.text("target-url").trim();
        List<String> stacks = new ArrayList<>(p.list("variants"));
        ObjectNode notes = run.notes();
        int appJdk = target.isEmpty() ? appJdkFeature() : 0;
        if (stacks.contains("mvc-virtual") && appJdk < 21 && target.isEmpty()) {
            stacks.remove("mvc-virtual");
            notes.put("mvcVirtualSkipped", "mvc-virtual needs JDK 21+ (virtual threads); the apps run on JDK " + appJdk + ", so it was not run");
            run.progress().say("mvc-virtual skipped: needs JDK 21+");
        }
        List<Integer> calls = p.ints("calls");
        List<String> cells = new ArrayList<>();
        if (!target.isEmpty()) cells.add("target");
        else for (String s : stacks) for (int c : calls) cells.add(cell(s, c));
        run.variants(cells);
        boolean openModel = p.list("models").contains("open");
        run.measurement(p.seconds("warmup"), p.seconds("measure"), p.integer("forks"), "jvm-fork"); // a fork here is a fresh app JVM per stack
        describe(notes, stacks);
        run.writeManifest();

        HttpLoad.prepare(run);
        peers = new Peers(run);
        closed = new Table(run, "closed.csv", "closed model (siege -c N -r R shape): one row per cell, fork and N: requests, errors, "
                + "throughput, response time, the external service's own latency, CPU per process, validity",
                "cell", "stack", "calls", "fork", "users", "requests", "expected_requests", "responses", "errors", "blocked_ms", "seconds",
                "throughput_rps", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "backend_p50_ms", "backend_p99_ms", "backend_calls",
                "cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct", "valid", "invalid_reason");
        open = new Table(run, "open.csv", "open model: one row per cell, fork and offered rate: achieved rate, response time from the "
                + "scheduled start, errors, CPU per process and per 1000 requests, verdict against the SLO",
                "cell", "stack", "calls", "fork", "rate_rps", "requests", "achieved_rps", "errors", "blocked_ms", "mean_ms", "p50_ms", "p90_ms",
                "p99_ms", "p99_9_ms", "max_ms", "backend_p50_ms", "backend_p99_ms", "cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct",
                "cpu_system_pct", "steal_pct", "app_cpu_ms_per_1k", "sut_cpu_ms_per_1k", "slo_ms", "verdict", "meets_slo", "valid", "invalid_reason");
        capacity = new Table(run, "capacity.csv", "open model: capacity per cell and fork, the largest offered rate whose p99 met the SLO with no errors",
                "cell", "stack", "calls", "fork", "slo_ms", "capacity_rps", "status", "stop_reason", "steps");

        if (!target.isEmpty()) {
            for (int fork = 1; fork <= p.integer("forks"); fork++) {
                stackFork("target", List.of(0), fork, null);
                if (fork == 1) peers.cell("target", 1, target, n -> driverRps("target", 1, n));
                if (openModel && searching()) openSearch("target", "target", 0, fork, null);
            }
        } else {
            backend = HttpService.start(run, "backend", List.of("-Xmx256m"),
                    List.of(WebReactive.SERVICE, "backend", p.text("backend-delay-ms"), run.dir().toString()));
            for (int fork = 1; fork <= p.integer("forks"); fork++) {
                for (String stack : stacks) {
                    HttpService app = startApp(stack, fork);
                    try {
                        stackFork(stack, calls, fork, app);
                        if (fork == 1) {
                            // thread pools as the closed sweep left them; then the peers, on the first calls count
                            (notes.has("apps") ? (ObjectNode) notes.get("apps") : notes.putObject("apps")).set(stack, info(app));
                            int c = calls.get(0);
                            peers.cell(cell(stack, c), 1, url(app) + "?calls=" + c, n -> driverRps(cell(stack, c), 1, n));
                        }
                        if (openModel && searching()) for (int c : calls) openSearch(cell(stack, c), stack, c, fork, app);
                    } finally {
                        app.stop(run);
                    }
                }
            }
            backend.stop(run);
            checkBackend(notes);
        }
        peers.close();
        closed.close();
        open.close();
        capacity.close();
        run.writeManifest();
    }

    /** The feature version of the JDK the apps run on: --java when given (the harness starts services with it), else this JVM's. */
    private int appJdkFeature() {
        String jdk = p.has("java") ? p.text("java").trim() : "";
        if (jdk.isEmpty()) return Runtime.version().feature();
        try {
            Process v = new ProcessBuilder(jdk, "-version").redirectErrorStream(true).start();
            String out = new String(v.getInputStream().readAllBytes());
            v.waitFor();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("version \"(1\\.)?(\\d+)").matcher(out);
            return m.find() ? Integer.parseInt(m.group(2)) : Runtime.version().feature();
        } catch (IOException | InterruptedException | NumberFormatException e) {
            return Runtime.version().feature();
        }
    }

    private void describe(ObjectNode n, List<String> stacks) {
        n.put("externalService", "Reactor Netty server on 127.0.0.1 answering GET /1/0/customer/customers/{c}/users/{u} with a small JSON user after "
                + p.text("backend-delay-ms") + " ms (Mono.delay: a timer, no thread held); its own latency is probed at every step's start and end");
        n.put("mvc", "Spring Boot 4.1.1 MVC on Tomcat, default pool (server.tomcat.threads.max 200); RestClient on the JDK HttpClient (blocking, "
                + "HTTP/1.1 keep-alive); server.tomcat.max-keep-alive-requests=-1 so Tomcat does not close the driver's connections every 100 requests");
        n.put("webflux", "Spring Boot 4.1.1 WebFlux on Reactor Netty, default event loops (max(cores, 4)); WebClient (Reactor Netty) on the same loops");
        n.put("mvc-virtual", "as mvc, with spring.threads.virtual.enabled=true: one virtual thread per request instead of the 200-thread pool");
        n.put("callsPerRequest", "1 or 2 calls to the external service per request, the second after the first answered");
        n.put("closedModel", "Hyperfoil atOnce: N users, each doing " + p.text("repeats") + " requests back to back (a loop), the shape of siege -b -c N -r "
                + p.text("repeats") + "; steps run one after another in one driver JVM, after a warm-up of " + p.text("warmup") + " s with up to "
                + WARMUP_USERS + " users looping; each step's requests must equal N x " + p.text("repeats"));
        n.put("openModel", "Hyperfoil constantRate: one new request per arrival, timed from its send; a step is invalid when the driver waited for a "
                + "connection (blockedTime > 0), ran out of sessions, or sent fewer requests than its Poisson arrivals could explain (under 99% of rate x duration and more than 4 standard deviations, 4 sqrt(rate x duration), short); capacity = largest rate with p99 <= "
                + p.text("slo-ms") + " ms per external call (so " + slo(2) + " ms with 2 calls) and no errors, by doubling multiples of " + p.text("rate-step") + " req/s then bisecting (harness CapacitySearch)"
                + "; every open step follows a warm-up of " + p.text("warmup") + " s at its own rate, measured without a gap"
                + (p.text("rates").isBlank() ? "" : "; this run measured the fixed rates " + p.text("rates") + " instead of searching"));
        n.put("littlesLaw", "a pool of T threads whose requests each wait D = calls x delay holds at most T/D requests per second; in the closed "
                + "model latency stays near D up to N = T users and then grows linearly, N/T x D");
        n.put("processes", "external service, each app and the load driver each run in a JVM of their own on this host (loopback only); CPU columns "
                + "are % of one core between each step's edges");
        n.put("loadDriver", "Hyperfoil 0.25.2 (io.hyperfoil:hyperfoil-http) in-process in its own JVM (scripts/loaddriver/LoadDriver.java); YAML in load/");
    }

    // ---- services ---------------------------------------------------------------------------------------

    private HttpService startApp(String stack, int fork) throws Exception {
        List<String> args = new ArrayList<>(List.of(WebReactive.SERVICE, stack.equals("webflux") ? "webflux" : "mvc",
                "--perfkit.run-dir=" + run.dir(), "--server.port=0", "--server.address=127.0.0.1", "--perfkit.backend-url=http://127.0.0.1:" + backend.port(),
                "--spring.main.banner-mode=off", "--logging.level.root=WARN", "--server.tomcat.max-keep-alive-requests=-1"));
        if (stack.equals("mvc-virtual")) args.add("--spring.threads.virtual.enabled=true");
        return HttpService.start(run, stack + "/fork" + fork, Sys.jvmArgs(p.text("app-jvm-args")), args);
    }

    private JsonNode info(HttpService app) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + "/__info"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body());
        } catch (Exception e) {
            return JSON.getNodeFactory().textNode("could not read: " + e.getMessage());
        }
    }

    private Map<String, Long> watch(HttpService app) {
        Map<String, Long> w = new LinkedHashMap<>();
        if (app != null) w.put("app", app.process().pid());
        if (backend != null) w.put("backend", backend.process().pid());
        return w;
    }

    private Map<String, String> probes() {
        return backend == null ? Map.of() : Map.of("backend", "http://127.0.0.1:" + backend.port() + "/__stats");
    }

    private boolean searching() { return p.text("rates").isBlank(); }

    private List<Double> fixedRates() {
        List<Double> rates = new ArrayList<>();
        for (String r : p.text("rates").split(",")) if (!r.isBlank()) rates.add(Double.parseDouble(r.trim().replace("_", "")));
        return rates;
    }

    private String url(HttpService app) {
        return app == null ? target : "http://127.0.0.1:" + app.port() + "/users/42";
    }

    private static String path(HttpLoad.Plan plan, HttpService app, int calls) {
        return app == null ? plan.path() : "/users/42?calls=" + calls;
    }

    private static String rateLabel(double rate) {
        return rate == Math.rint(rate) ? String.valueOf((long) rate) : String.format(Locale.ROOT, "%.2f", rate);
    }

    private int concurrency(double rate) {
        return (int) Math.min(MAX_CONCURRENCY, Math.ceil(rate * CONCURRENCY_SLOS * p.integer("slo-ms") / 1000.0) + 16);
    }

    /**
     * One driver run per stack and fork: per calls count a warm-up, then the closed-model steps; then, when the run
     * has fixed rates, the open-model steps. One driver JVM for all of them keeps start-ups out of a quick run.
     */
    private void stackFork(String stack, List<Integer> callsList, int fork, HttpService app) throws Exception {
        boolean closedModel = p.list("models").contains("closed"), openFixed = p.list("models").contains("open") && !searching();
        if (!closedModel && !openFixed) return;
        int repeats = p.intValue("repeats");
        List<Integer> users = p.ints("users");
        int maxUsers = closedModel ? users.stream().mapToInt(Integer::intValue).max().orElse(1) : WARMUP_USERS;
        double warmup = p.seconds("warmup"), measure = p.seconds("measure"), delay = p.integer("backend-delay-ms") / 1000.0;
        HttpLoad.Plan plan = new HttpLoad.Plan("web-reactive " + stack + " fork " + fork, url(app));
        double planned = 0;
        for (int c : callsList) {
            String cell = app == null ? "target" : cell(stack, c);
            if (warmup > 0) plan.always("warmup." + cell.replace('/', '.'), path(plan, app, c), Math.min(WARMUP_USERS, maxUsers), warmup, true);
            planned += warmup;
            if (closedModel) for (int n : users) {
                plan.closed(stem(cell, "n" + n, fork), path(plan, app, c), n, repeats);
                planned += 2 + repeats * Math.max(1, c) * delay * Math.max(1.0, n / 100.0);
            }
        }
        if (openFixed) for (int c : callsList) for (double rate : fixedRates()) {
            String cell = app == null ? "target" : cell(stack, c);
            // each rate warms up at that rate first: a step that follows N = 1000 users or a saturating rate
            // otherwise measures the previous step's aftermath (p99 2x the SLO at 300 req/s, p50 unchanged)
            String step = stem(cell, "r" + rateLabel(rate), fork);
            if (warmup > 0) plan.open("warmup." + step, path(plan, app, c), rate, warmup, concurrency(rate), true, false);
            plan.open(step, path(plan, app, c), rate, measure, concurrency(rate), false, warmup > 0);
            planned += warmup + measure + 2;
        }
        run.progress().say(stack + " fork " + fork + ": " + (closedModel ? "closed model N = " + p.text("users") : "")
                + (closedModel && openFixed ? ", " : "") + (openFixed ? "open model at " + p.text("rates") + " req/s" : ""));
        // generous: only a broken system needs the driver's 60 s request timeout on every step
        JsonNode r = HttpLoad.run(run, stack.replace('/', '.') + ".fork" + fork, plan.yaml(), watch(app), probes(), 180 + 4 * planned);
        for (int c : callsList) {
            String cell = app == null ? "target" : cell(stack, c);
            if (closedModel) for (int n : users) closedRow(HttpLoad.phase(r, stem(cell, "n" + n, fork)), cell, stack, c, fork, n, repeats);
            if (openFixed) {
                List<CapacitySearch.Step> steps = new ArrayList<>();
                for (double rate : fixedRates()) {
                    JsonNode ph = HttpLoad.phase(r, stem(cell, "r" + rateLabel(rate), fork));
                    steps.add(new CapacitySearch.Step((int) Math.round(rate), openRow(ph, cell, stack, c, fork, rate)));
                }
                capacityOfFixedRates(cell, stack, c, fork, steps);
            }
        }
    }

    private double driverRps(String cell, int fork, int users) {
        return closedRps.getOrDefault(cell + "|" + fork + "|" + users, Double.NaN);
    }

    // ---- closed model -----------------------------------------------------------------------------------

    private void closedRow(JsonNode ph, String cell, String stack, int calls, int fork, int users, int repeats) throws IOException {
        long expected = (long) users * repeats, requests = ph.path("requests").asLong(), responses = ph.path("responses").asLong();
        List<String> problems = new ArrayList<>(HttpLoad.problems(ph));
        if (requests != expected) problems.add(requests + " requests sent, expected " + expected);
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0;
        JsonNode lat = ph.path("latencyMs"), be = ph.path("probes").path("backend"), cpu = ph.path("cpuPct");
        closed.write(Table.row().set("cell", cell).set("stack", stack).set("calls", calls).set("fork", fork).set("users", users)
                .set("requests", requests).set("expected_requests", expected).set("responses", responses).set("errors", ph.path("errors").asLong())
                .set("blocked_ms", ph.path("blockedTimeNs").asLong() / 1e6).set("seconds", seconds).set("throughput_rps", responses / seconds)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p99_ms", num(lat, "p99"))
                .set("max_ms", num(lat, "max")).set("backend_p50_ms", num(be, "p50Ms")).set("backend_p99_ms", num(be, "p99Ms"))
                .set("backend_calls", be.has("count") ? be.get("count").asLong() : null)
                .set("cpu_app_pct", num(cpu, "app")).set("cpu_backend_pct", num(cpu, "backend")).set("cpu_driver_pct", num(cpu, "driver"))
                .set("cpu_system_pct", num(ph, "systemCpuPct")).set("steal_pct", num(ph, "stealPct"))
                .set("valid", problems.isEmpty()).set("invalid_reason", String.join("; ", problems)));
        closedRps.put(cell + "|" + fork + "|" + users, responses / seconds);
        HttpLoad.addHlogs(run, ph, cell, cell + "/n" + users, fork, cell + ", closed model, " + users + " users x " + repeats + " requests, fork " + fork);
        notePeak(cell, "N=" + users, fork, be, seconds);
        if (!problems.isEmpty()) run.invalid(cell + " fork " + fork + " N=" + users + ": " + String.join("; ", problems));
        run.progress().say(String.format(Locale.ROOT, "%s fork %d N=%d: %d/%d answered, %d errors, %.0f req/s, p50 %s ms, p99 %s ms, external service p50 %s ms",
                cell, fork, users, responses, expected, ph.path("errors").asLong(), responses / seconds, lat.path("p50").asText("-"),
                lat.path("p99").asText("-"), be.path("p50Ms").asText("-")));
    }

    // ---- open model -------------------------------------------------------------------------------------

    private void capacityOfFixedRates(String cell, String stack, int calls, int fork, List<CapacitySearch.Step> steps) throws IOException {
        CapacitySearch.Result r = HttpLoad.fixedRateCapacity(steps, "fixed rates " + p.text("rates"));
        capacityRow(cell, stack, calls, fork, r.capacity(), r.status().label, r.stopReason(), steps);
    }

    /** Doubling multiples of --rate-step, then bisecting (harness CapacitySearch); one driver run per step. */
    private void openSearch(String cell, String stack, int calls, int fork, HttpService app) throws Exception {
        int step = p.intValue("rate-step");
        double stepSeconds = p.seconds("warmup") + p.seconds("measure") + 8; // + the driver's start-up
        CapacitySearch.Result res = HttpLoad.searchRate(step, (int) Math.min(Integer.MAX_VALUE, p.integer("max-rate")), p.seconds("budget"), stepSeconds,
                n -> openStep(cell, stack, calls, fork, app, n));
        capacityRow(cell, stack, calls, fork, res.capacity(), res.status().label, res.stopReason(), res.steps());
    }

    private void capacityRow(String cell, String stack, int calls, int fork, Integer cap, String status, String reason, List<CapacitySearch.Step> steps) throws IOException {
        StringBuilder tried = new StringBuilder();
        for (CapacitySearch.Step s : steps) tried.append(tried.length() == 0 ? "" : " ").append(s.instances()).append(':').append(s.verdict().status().label);
        capacity.write(Table.row().set("cell", cell).set("stack", stack).set("calls", calls).set("fork", fork).set("slo_ms", slo(calls))
                .set("capacity_rps", cap).set("status", status).set("stop_reason", reason).set("steps", tried.toString()));
        run.progress().say(cell + " fork " + fork + ": capacity at p99 <= " + slo(calls) + " ms: " + (cap == null ? "none" : cap + " req/s")
                + " (" + status + "; " + reason + ")");
    }

    private StepVerdict openStep(String cell, String stack, int calls, int fork, HttpService app, double rate) throws Exception {
        double measure = p.seconds("measure"), warmup = p.seconds("warmup");
        String phase = stem(cell, "r" + rateLabel(rate), fork);
        HttpLoad.Plan plan = new HttpLoad.Plan("web-reactive " + cell + " open " + rateLabel(rate) + " req/s fork " + fork, url(app));
        if (warmup > 0) plan.open("warmup", path(plan, app, calls), rate, warmup, concurrency(rate), true, false);
        plan.open(phase, path(plan, app, calls), rate, measure, concurrency(rate), false, true);
        run.progress().say(cell + " fork " + fork + ": open model at " + rateLabel(rate) + " req/s");
        JsonNode res = HttpLoad.run(run, cell.replace('/', '.') + ".open.r" + rateLabel(rate) + ".fork" + fork, plan.yaml(), watch(app), probes(),
                180 + 3 * (warmup + measure));
        return openRow(HttpLoad.phase(res, phase), cell, stack, calls, fork, rate);
    }

    private StepVerdict openRow(JsonNode ph, String cell, String stack, int calls, int fork, double rate) throws IOException {
        double slo = slo(calls), measure = p.seconds("measure");
        JsonNode lat = ph.path("latencyMs"), be = ph.path("probes").path("backend"), cpu = ph.path("cpuPct");
        long errors = ph.path("errors").asLong(), requests = ph.path("requests").asLong(), responses = ph.path("responses").asLong();
        double achieved = requests / measure;
        double p99 = orNaN(num(lat, "p99"));
        StepVerdict v = verdict(calls, rate, requests, measure, errors, HttpLoad.problems(ph), ph.path("histogramCount").asLong(), p99,
                orNaN(num(ph, "systemCpuPct")), orNaN(num(ph, "stealPct")));
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0;
        Double appCpu = num(cpu, "app"), beCpu = num(cpu, "backend");
        // CPU milliseconds per 1000 answered requests, over the phase's edges
        Double appPer1k = appCpu == null || responses == 0 ? null : appCpu / 100 * seconds * 1000 / responses * 1000;
        Double sutPer1k = appPer1k == null ? null : (appCpu + (beCpu == null ? 0 : beCpu)) / 100 * seconds * 1000 / responses * 1000;
        open.write(Table.row().set("cell", cell).set("stack", stack).set("calls", calls).set("fork", fork).set("rate_rps", rate)
                .set("requests", requests).set("achieved_rps", achieved).set("errors", errors).set("blocked_ms", ph.path("blockedTimeNs").asLong() / 1e6)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p99_ms", num(lat, "p99"))
                .set("p99_9_ms", num(lat, "p99_9")).set("max_ms", num(lat, "max")).set("backend_p50_ms", num(be, "p50Ms")).set("backend_p99_ms", num(be, "p99Ms"))
                .set("cpu_app_pct", appCpu).set("cpu_backend_pct", beCpu).set("cpu_driver_pct", num(cpu, "driver"))
                .set("cpu_system_pct", num(ph, "systemCpuPct")).set("steal_pct", num(ph, "stealPct"))
                .set("app_cpu_ms_per_1k", appPer1k).set("sut_cpu_ms_per_1k", sutPer1k).set("slo_ms", slo)
                .set("verdict", v.status().label).set("meets_slo", v.meets()).set("valid", v.valid()).set("invalid_reason", v.valid() ? "" : v.reason()));
        HttpLoad.addHlogs(run, ph, cell, cell + "/r" + rateLabel(rate), fork, cell + ", open model at " + rateLabel(rate) + " req/s, fork " + fork);
        if (v.valid()) notePeak(cell, rateLabel(rate) + " req/s", fork, be, seconds);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d at %s req/s: p99 %.1f ms, %d errors: %s%s", cell, fork, rateLabel(rate), p99, errors,
                v.status().label, v.reason().isEmpty() ? "" : " (" + v.reason() + ")"));
        return v;
    }

    StepVerdict verdict(int calls, double rate, long requests, double seconds, long errors, List<String> driverProblems, long measured, double p99,
                        double systemCpu, double steal) {
        return HttpLoad.openVerdict(rate, requests, seconds, errors, driverProblems, measured, p99, slo(calls), systemCpu, steal, cores);
    }

    /**
     * The p99 SLO of a cell: --slo-ms per call to the external service, since a request that must wait 2 x 100 ms
     * can never answer within 200 ms; a --target-url cell (0 calls) gets --slo-ms.
     */
    private long slo(int calls) { return p.integer("slo-ms") * Math.max(1, calls); }

    // ---- the external service at its highest load -------------------------------------------------------

    private void notePeak(String cell, String step, int fork, JsonNode backendStats, double seconds) {
        if (!backendStats.has("count") || !backendStats.path("p50Ms").isNumber()) return;
        double rate = backendStats.get("count").asDouble() / seconds;
        if (rate <= peakBackendRate) return;
        peakBackendRate = rate;
        peakBackend = JSON.createObjectNode().put("cell", cell).put("step", step).put("fork", fork).put("callsPerSecond", Math.round(rate))
                .put("p50Ms", backendStats.get("p50Ms").asDouble()).put("p99Ms", backendStats.path("p99Ms").asDouble())
                .put("delayMs", p.integer("backend-delay-ms"));
    }

    /** The delay must be honoured where the external service was busiest: its own p50 within 2 ms of the delay. */
    private void checkBackend(ObjectNode notes) {
        if (peakBackend == null) return;
        double off = peakBackend.get("p50Ms").asDouble() - p.integer("backend-delay-ms");
        boolean ok = Math.abs(off) <= BACKEND_TOLERANCE_MS;
        peakBackend.put("withinToleranceMs", BACKEND_TOLERANCE_MS).put("honoured", ok);
        notes.set("backendAtPeak", peakBackend);
        String what = String.format(Locale.ROOT, "external service p50 %.2f ms at its busiest step (%s %s, %d calls/s) for a %d ms delay",
                peakBackend.get("p50Ms").asDouble(), peakBackend.get("cell").asText(), peakBackend.get("step").asText(),
                peakBackend.get("callsPerSecond").asLong(), p.integer("backend-delay-ms"));
        if (ok) run.progress().say(what + ": delay honoured");
        else run.invalid(what + ": more than " + BACKEND_TOLERANCE_MS + " ms off, so the external service itself added latency");
    }

    private static Double num(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isNumber() ? v.asDouble() : null;
    }

    private static double orNaN(Double d) { return d == null ? Double.NaN : d; }
}
