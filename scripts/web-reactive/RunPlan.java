package perfkit.webreactive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.cli.Cli;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.http.HttpService;
import perfkit.harness.os.Jdk;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.http.LoadResult;
import perfkit.harness.http.OpenStep;
import perfkit.harness.cli.Params;
import perfkit.harness.http.RateCapacity;
import perfkit.harness.run.Run;
import perfkit.harness.http.ServerWarmup;
import perfkit.harness.measure.StepVerdict;
import perfkit.harness.run.Table;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plan of a run. The external service once; then per fork a fresh JVM per stack, all started together, each warmed
 * up by rule ({@link ServerWarmup}: JIT quiet, throughput steady) before any is measured; then per stack and calls
 * count, in an order rotated per fork, the closed-model sweep (one driver run whose phases are the N steps, N in an
 * order rotated per fork too) and the open model (one driver run per offered rate: fixed rates, or the capacity
 * search). A cell is {@code <stack>/<calls>call}, e.g. {@code mvc/2call}.
 */
final class RunPlan {
    static final List<String> STACKS = List.of("mvc", "webflux", "mvc-virtual");
    /**
     * The parts --place can put on other hosts: the load driver (its clock times every request), the app under test
     * and the external service.
     */
    static final List<String> PARTS = List.of("driver", "app", "backend");
    /** The external service's p50 must stay this close to its delay at the highest load, or the run is invalid. */
    static final double BACKEND_TOLERANCE_MS = 2.0;
    /** Beyond this much above its delay at p99, the external service queued too: said in the manifest, not invalid. */
    static final double BACKEND_P99_QUEUEING_MS = 10.0;
    /** Closed-model warm-up users before each sweep: enough to warm the driver's own JVM and open its connections. */
    static final int WARMUP_USERS = 50;
    /** Users of the warm-up by rule per app: its request pool's size, so every thread and code path gets used. */
    static final int SERVER_WARMUP_USERS = 200;
    /** Seconds an MVC app's idle client connection to the external service is kept (the JDK 17 default is 20 min). */
    static final int MVC_CLIENT_IDLE_S = 30;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Run run;
    private final WebReactive.Options o;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Table closed, open, capacity;
    private HttpService backend;
    private String target;
    /** The step with the highest rate of calls to the external service, and its latency there. */
    private double peakBackendRate = -1;
    /** With --profile: whether what recording costs has been measured yet (once per run). */
    private boolean costMeasured;
    private Peers peers;
    /** The driver's closed-model throughput per cell, fork and N, for the peers' comparison. */
    private final Map<String, Double> closedRps = new java.util.HashMap<>();
    private ObjectNode peakBackend;

    RunPlan(Run run) {
        this.run = run;
        this.o = WebReactive.Options.of(run.typed());
    }

    static String cell(String stack, int calls) { return stack + "/" + calls + "call"; }

    /** File stem and Hyperfoil phase name of one step: {@code mvc.1call.n10.fork1}. */
    static String stem(String cell, String step, int fork) { return cell.replace('/', '.') + "." + step + ".fork" + fork; }

    /** {@code list} rotated left by {@code by}: fork 1 keeps the order, fork 2 starts with the second item, ... */
    static <T> List<T> rotated(List<T> list, int by) {
        List<T> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) out.add(list.get((i + by) % list.size()));
        return out;
    }

    void run() throws Exception {
        run.mode("sweep");
        target = o.targetUrl();
        List<String> stacks = new ArrayList<>(o.stacks());
        ObjectNode notes = run.notes();
        appJava = appJava();
        int appJdk = target.isEmpty() ? appJava.feature() : 0;
        if (target.isEmpty()) {
            ObjectNode jdks = notes.putObject("jdks");
            jdks.put("apps", appJava.version() + " (" + appJava.java() + ")");
            jdks.put("externalService", System.getProperty("java.version") + " (the run's own)");
            jdks.put("loadDriver", System.getProperty("java.version") + " (the run's own)");
            jdks.put("how", appJava.how());
        }
        if (stacks.contains("mvc-virtual") && appJdk < 21 && target.isEmpty()) {
            stacks.remove("mvc-virtual");
            notes.put("mvcVirtualSkipped", "mvc-virtual needs JDK 21+ (virtual threads); the apps run on JDK " + appJdk
                    + " and no JDK 21+ was found under /usr/lib/jvm, so it was not run (--app-java chooses one)");
            run.progress().say("mvc-virtual skipped: needs JDK 21+");
        }
        List<Integer> calls = o.calls();
        List<String> cells = new ArrayList<>();
        if (!target.isEmpty()) cells.add("target");
        else for (String s : stacks) for (int c : calls) cells.add(cell(s, c));
        run.variants(cells);
        run.measurement(o.warmup(), o.measure(), o.forks(), "jvm-fork"); // a fork here is a fresh app JVM per stack
        describe(notes, stacks);
        run.writeManifest();

        HttpLoad.prepare(run, Params.hostsOf(o.placement(), "driver"));
        peers = new Peers(run, o);
        closed = new Table(run, "closed.csv", "closed model (siege -c N -r R shape): one row per cell, fork and N: requests, errors, "
                + "throughput, response time, the external service's own latency, CPU per process, JIT and GC of the servers, verdict",
                "cell", "stack", "calls", "fork", "users", "repeats", "requests", "expected_requests", "responses", "errors", "blocked_ms", "seconds",
                "throughput_rps", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "backend_p50_ms", "backend_p99_ms", "backend_calls",
                "cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct", "jit_ms_per_s", "gc_ms_per_s", "warm", "verdict", "valid", "invalid_reason");
        open = new Table(run, "open.csv", "open model: one row per cell, fork and offered rate: response time from the scheduled start and as "
                + "Hyperfoil saw it, the driver's lateness, errors, CPU per process and per 1000 requests, JIT and GC of the servers, verdict against the SLO",
                "cell", "stack", "calls", "fork", "rate_rps", "requests", "achieved_rps", "errors", "blocked_ms", "mean_ms", "p50_ms", "p90_ms", "p95_ms",
                "p99_ms", "p99_9_ms", "max_ms", "uncorrected_p99_ms", "lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms", "connections",
                "driver_threads", "backend_p50_ms", "backend_p99_ms", "cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct",
                "app_cpu_ms_per_1k", "sut_cpu_ms_per_1k", "jit_ms_per_s", "gc_ms_per_s", "warm", "slo_ms", "verdict", "meets_slo", "valid", "invalid_reason");
        capacity = new Table(run, "capacity.csv", "open model: capacity per cell and fork as a bracket on the rates tried: the last rate whose p99 "
                + "met the SLO with no errors, and the first above it that did not", "cell", "stack", "calls", "fork", "slo_ms", "last_met_rps",
                "first_missed_rps", "status", "stop_reason", "steps");

        // a cell's fork: its closed sweep (a step of --step-seconds or so for each N) and its capacity search (about
        // a dozen steps, at most --budget), and per fork each stack's warm-up by rule (some 40 s)
        double closedSeconds = o.closedModel() ? o.users().size() * (Math.max(o.stepSeconds(), 1) + 4) : 0;
        double openSeconds = o.openModel() ? Math.min(o.budget(), 12 * (o.warmup() + o.measure() + 8)) : 0;
        // with --profile, one cell's open step is run again in --forks pairs to measure what recording costs
        double costSeconds = run.profiling() && target.isEmpty() ? 2.0 * o.forks() * (o.warmup() + o.measure() + 8) : 0;
        run.progress().plan("cell", cells.size() * o.forks(), o.forks() * (cells.size() * (closedSeconds + openSeconds) + 40.0 * cells.size()) + costSeconds);
        if (!target.isEmpty()) {
            if (run.profiling()) notes.put("profilingCost", "not measured: --target-url's server is not a JVM this run started, so nothing records it");
            for (int fork = 1; fork <= o.forks(); fork++) {
                ServerWarmup.warm(run, "target", fork, List.of(target), Map.of(), warmupRule(16));
                closedSweep("target", "target", 0, fork, null);
                if (fork == 1) peers.cell("target", 1, target, o.repeatsFor(0), n -> driverRps("target", 1, n));
                openModel("target", "target", 0, fork, null);
                run.progress().unitDone();
            }
        } else {
            backend = HttpService.start(run, "backend", "backend", o.placement().get("backend"), null, List.of("-Xmx256m"),
                    List.of(WebReactive.SERVICE, "backend", String.valueOf(o.backendDelayMs()), run.dir().toString()), Map.of());
            for (int fork = 1; fork <= o.forks(); fork++) {
                List<String> order = rotated(stacks, fork - 1);
                Map<String, HttpService> apps = new LinkedHashMap<>();
                try {
                    for (String stack : order) apps.put(stack, startApp(stack, fork));
                    // every stack warm before any is measured: none of them is measured while compiling, and none gains from going last
                    for (String stack : order) {
                        List<String> urls = calls.stream().map(c -> url(apps.get(stack)) + "?calls=" + c).toList();
                        ServerWarmup.warm(run, stack, fork, urls, servers(apps.get(stack)), warmupRule(SERVER_WARMUP_USERS));
                    }
                    for (String stack : order) {
                        HttpService app = apps.get(stack);
                        for (int c : rotated(calls, fork - 1)) {
                            closedSweep(cell(stack, c), stack, c, fork, app);
                            CapacitySearch.Result res = openModel(cell(stack, c), stack, c, fork, app);
                            if (run.profiling() && !costMeasured) costMeasured = profilingCost(cell(stack, c), c, fork, app, res);
                            run.progress().unitDone();
                        }
                        if (fork == 1) {
                            // thread pools as the sweeps left them; then the peers, on the first calls count
                            (notes.has("apps") ? (ObjectNode) notes.get("apps") : notes.putObject("apps")).set(stack, info(app));
                            int c = calls.get(0);
                            peers.cell(cell(stack, c), 1, url(app) + "?calls=" + c, o.repeatsFor(c), n -> driverRps(cell(stack, c), 1, n));
                        }
                    }
                } finally {
                    for (HttpService app : apps.values()) app.stop(run);
                }
            }
            backend.stop(run);
            checkBackend(notes);
            if (run.profiling() && !costMeasured)
                notes.put("profilingCost", "not measured: " + (o.openModel() ? "no cell met its SLO at any rate tried"
                        : "it is measured on an open-model step at a rate a cell met, and --models ran none"));
        }
        peers.close();
        closed.close();
        open.close();
        capacity.close();
        run.writeManifest();
    }

    private ServerWarmup.Rule warmupRule(int users) {
        return new ServerWarmup.Rule(Math.max(10, o.warmup()), o.serverWarmupMax(), users);
    }

    /** The servers whose JIT a step records: the app and the external service. */
    private Map<String, JvmActivity.Listener> servers(HttpService app) {
        Map<String, JvmActivity.Listener> s = new LinkedHashMap<>();
        if (app != null) s.put(app.name(), app.activity());
        if (backend != null) s.put(backend.name(), backend.activity());
        return s;
    }

    /** The JVM the apps run on, and how it was chosen. */
    record AppJava(String java, int feature, String version, String how) {}

    private AppJava appJava;

    /**
     * The apps' JVM: --app-java when given; else --java (the run's choice for every part); else the newest JDK 21+
     * installed beside this one, so that MVC on virtual threads runs wherever the machine has one; else this JVM.
     */
    private AppJava appJava() {
        String chosen = o.appJava(), runJava = o.runJava();
        if (!chosen.equals("auto")) return describeJava(givenJava(chosen), "--app-java");
        if (!runJava.isEmpty()) return describeJava(runJava, "--java");
        return Jdk.newest(21).map(j -> new AppJava(j.java().toString(), j.feature(), j.version(), "the newest JDK 21+ under /usr/lib/jvm (--app-java auto)"))
                .orElseGet(() -> new AppJava(null, Runtime.version().feature(), System.getProperty("java.version"), "the run's own JVM (no JDK 21+ found)"));
    }

    /** The java executable --app-java names (a JDK folder or the executable itself). */
    private static String givenJava(String appJava) {
        java.nio.file.Path given = java.nio.file.Path.of(appJava).toAbsolutePath().normalize();
        return (java.nio.file.Files.isDirectory(given) ? given.resolve("bin/java") : given).toString();
    }

    /** The java the apps will run on, as {@link #appJava} chooses it, for checking a placed app's host first; blank: the run's own. */
    static String appJavaPath(String appJava, String runJava) {
        if (!appJava.equals("auto")) return givenJava(appJava);
        if (!runJava.isEmpty()) return runJava;
        return Jdk.newest(21).map(j -> j.java().toString()).orElse("");
    }

    private static AppJava describeJava(String exe, String how) {
        try {
            Process v = new ProcessBuilder(exe, "-version").redirectErrorStream(true).start();
            String out = new String(v.getInputStream().readAllBytes());
            v.waitFor();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("version \"((1\\.)?(\\d+)[^\"]*)\"").matcher(out);
            if (m.find()) return new AppJava(exe, Integer.parseInt(m.group(3)), m.group(1), how);
        } catch (IOException | InterruptedException | NumberFormatException ignored) {
            // checked by Cli already; fall through
        }
        return new AppJava(exe, Runtime.version().feature(), "?", how);
    }

    /** The largest rate the open model may offer: the top fixed rate, or the search's limit. */
    private double highestRate() {
        return o.searching() ? o.maxRate() : o.rates().get(o.rates().size() - 1);
    }

    /**
     * WebFlux's client pool: by Little's law the calls in flight at the highest rate (a request makes its calls one
     * after the other, so calls arrive at rate x calls, each waiting the delay), twice over for the queueing near
     * saturation; at least WebClient's default 500.
     */
    int fluxClientConnections() {
        int calls = o.calls().stream().mapToInt(Integer::intValue).max().orElse(1);
        return (int) Math.max(500, Math.ceil(highestRate() * calls * o.backendDelayMs() / 1000.0 * 2));
    }

    private void describe(ObjectNode n, List<String> stacks) {
        n.putObject("versions").put("springBoot", org.springframework.boot.SpringBootVersion.getVersion());
        n.put("externalService", "Reactor Netty server " + (o.placement().containsKey("backend") ? "on " + o.placement().get("backend") : "on 127.0.0.1") + " answering GET /1/0/customer/customers/{c}/users/{u} with a small JSON user after "
                + o.backendDelayMs() + " ms (Mono.delay: a timer, no thread held); its own latency is probed at every step's start and end");
        n.put("mvc", "Spring Boot " + org.springframework.boot.SpringBootVersion.getVersion() + " MVC on Tomcat, default pool (server.tomcat.threads.max 200); RestClient on the JDK HttpClient (blocking, "
                + "HTTP/1.1 keep-alive, no limit on connections in use, at most " + fluxClientConnections() + " kept idle and each closed after "
                + MVC_CLIENT_IDLE_S + " s idle, by jdk.httpclient.connectionPoolSize and keepalive.timeout); server.tomcat.max-keep-alive-requests=-1 and keep-alive-timeout 10 min, so Tomcat "
                + "neither closes the driver's connections every 100 requests nor resets them after a minute idle");
        n.put("webflux", "Spring Boot " + org.springframework.boot.SpringBootVersion.getVersion() + " WebFlux on Reactor Netty, default event loops (max(cores, 4)); WebClient (Reactor Netty) on the same loops, "
                + "its pool sized by Little's law for the highest rate offered: " + fluxClientConnections() + " connections, unbounded waiting acquires "
                + "(the default, 500 and 1,000, fails requests with HTTP 500 beyond that)");
        n.put("mvc-virtual", "as mvc, with spring.threads.virtual.enabled=true: one virtual thread per request instead of the 200-thread pool");
        n.put("callsPerRequest", "1 or 2 calls to the external service per request, the second after the first answered");
        n.put("warmup", "per fork every stack's app starts, and each is warmed up by rule before any is measured: " + SERVER_WARMUP_USERS
                + " requests in flight over every endpoint until each server's JIT compiles under " + (int) ServerWarmup.JIT_QUIET_MS_PER_S
                + " ms/s over 10 s and the throughput is steady, at most --server-warmup-max " + Cli.plain(o.serverWarmupMax())
                + " s (notes.serverWarmup says how each ended); every step records the servers' JIT during it (jit_ms_per_s, warm)");
        n.put("order", "stacks, calls counts and the N of the closed model run in an order rotated by one per fork, so order and age effects spread");
        String perCell = o.calls().stream().map(c -> c + " call" + (c == 1 ? "" : "s") + ": " + o.repeatsFor(c)).collect(java.util.stream.Collectors.joining(", "));
        n.put("closedModel", "Hyperfoil atOnce: N users, each doing R requests back to back (a loop), the shape of siege -b -c N -r R; R is --repeats "
                + o.repeats() + ", or more where a step would last under --step-seconds " + Cli.plain(o.stepSeconds()) + " s at the external service's delay ("
                + perCell + "; closed.csv repeats); one driver run per cell, its steps one after another after a driver warm-up of " + Cli.plain(o.warmup())
                + " s with up to " + WARMUP_USERS + " users looping; each step's requests must equal N x R; a step with steal above "
                + (int) StepVerdict.Rule.DEFAULT.maxStealPct() + "% of a core is not measurable on this host");
        n.put("openModel", "Hyperfoil constantRate on a fixed schedule (arrival k at k / rate), one driver run per offered rate: a warm-up of "
                + Cli.plain(o.warmup()) + " s at the rate, then the window, without a gap; latency from each arrival's scheduled start (the driver times it, "
                + "see load/*.result.json latenessMs); a step is invalid when the driver waited for a connection, ran out of sessions, started fewer "
                + "requests than its schedule (in the window, or under 90% in some second), or ran late by more than 10% of the SLO at p99; capacity = "
                + "the bracket between the last rate with p99 <= " + o.sloMs() + " ms per external call (so " + slo(2) + " ms with 2 calls) and "
                + "no errors and the first rate that did not, by doubling multiples of " + o.rateStep() + " req/s then bisecting"
                + (o.searching() ? "" : "; this run measured the fixed rates " + o.ratesText() + " instead of searching"));
        n.put("driver", "Hyperfoil 0.25.2 (io.hyperfoil:hyperfoil-http) in its own JVM (scripts/loaddriver/LoadDriver.java), an event loop per core "
                + "of its host, at most 4 (open.csv driver_threads, all its hosts' together); connections per open step by Little's law from the "
                + "latency the previous step showed (open.csv connections); YAML in load/");
        n.put("littlesLaw", "a pool of T threads whose requests each wait D = calls x delay holds at most T/D requests per second; in the closed "
                + "model latency stays near D up to N = T users and then grows linearly, N/T x D");
        n.put("processes", o.placement().isEmpty()
                ? "external service, each app and the load driver each run in a JVM of their own on this host (loopback only); CPU columns "
                        + "are % of one core between each step's edges"
                : "each in a JVM of its own: " + PARTS.stream().map(p -> (p.equals("backend") ? "external service" : p.equals("driver") ? "load driver" : p) + " on "
                        + (p.equals("driver") ? HttpLoad.where(Params.hostsOf(o.placement(), p)) : o.placement().containsKey(p) ? o.placement().get(p).toString() : "this host")
                        + (o.placement().containsKey(p) ? " (placement in the manifest)" : "")).collect(java.util.stream.Collectors.joining(", "))
                        + "; the load driver times every request on its host's clock, and a driver elsewhere sends its results and hlogs back when "
                        + "each of its runs ends; a placed server binds the address SSH reached its host on; a placed part's CPU columns come from "
                        + "its host's /proc between each step's edges (% of one of its cores), and cpu_system_pct and steal_pct are the driver's host's "
                        + "(with several driver hosts, the busiest one's share of its cores, and cpu_driver_pct the busiest driver's)");
    }

    // ---- services ---------------------------------------------------------------------------------------

    private HttpService startApp(String stack, int fork) throws Exception {
        List<String> args = new ArrayList<>(List.of(WebReactive.SERVICE, stack.equals("webflux") ? "webflux" : "mvc",
                "--perfkit.run-dir=" + run.dir(), "--server.port=0", "--perfkit.backend-url=" + backend.url(),
                "--spring.main.banner-mode=off", "--logging.level.root=WARN", "--server.tomcat.max-keep-alive-requests=-1",
                "--server.tomcat.keep-alive-timeout=10m", "--perfkit.client-connections=" + fluxClientConnections()));
        if (stack.equals("mvc-virtual")) args.add("--spring.threads.virtual.enabled=true");
        List<String> jvm = new ArrayList<>(stack.equals("webflux") ? List.of() : mvcClientPool());
        jvm.addAll(o.appJvmArgs()); // the user's options last, so they win
        return HttpService.start(run, stack + "/fork" + fork, "app", o.placement().get("app"), appJava.java(), jvm, args, Map.of());
    }

    /**
     * The JDK HttpClient keeps every connection it ever opened, idle, for 20 minutes (JDK 17): an MVC app on virtual
     * threads opened one per concurrent call and, by the third fork, held 15,700 of them, filled its heap and spun in GC
     * beside the stacks being measured. So its idle pool is bounded like WebFlux's (a connection returned to a full pool
     * is closed) and an idle connection closes after 30 s.
     */
    private List<String> mvcClientPool() {
        return List.of("-Djdk.httpclient.connectionPoolSize=" + fluxClientConnections(), "-Djdk.httpclient.keepalive.timeout=" + MVC_CLIENT_IDLE_S);
    }

    private JsonNode info(HttpService app) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(app.url() + "/__info"))
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
        return backend == null ? Map.of() : Map.of("backend", backend.url() + "/__stats");
    }

    private String url(HttpService app) {
        return app == null ? target : app.url() + "/users/42";
    }

    private String path(HttpService app, int calls) {
        return app == null ? HttpLoad.Target.of(target).pathAndQuery() : "/users/42?calls=" + calls;
    }

    private double driverRps(String cell, int fork, int users) {
        return closedRps.getOrDefault(cell + "|" + fork + "|" + users, Double.NaN);
    }

    // ---- closed model -----------------------------------------------------------------------------------

    /** One driver run per cell: a warm-up of the driver itself, then the N steps in an order rotated per fork. */
    private void closedSweep(String cell, String stack, int calls, int fork, HttpService app) throws Exception {
        if (!o.closedModel()) return;
        int repeats = o.repeatsFor(calls);
        List<Integer> users = rotated(o.users(), fork - 1);
        double warmup = o.warmup(), delay = o.backendDelayMs() / 1000.0;
        HttpLoad.Plan plan = new HttpLoad.Plan("web-reactive " + cell + " closed model fork " + fork, url(app));
        double planned = warmup;
        int maxUsers = users.stream().mapToInt(Integer::intValue).max().orElse(1);
        if (warmup > 0) plan.always("warmup", path(app, calls), Math.min(WARMUP_USERS, maxUsers), warmup, HttpLoad.Plan.Counts.WARMUP);
        for (int n : users) {
            plan.closed(stem(cell, "n" + n, fork), path(app, calls), n, repeats);
            planned += 2 + repeats * Math.max(1, calls) * delay * Math.max(1.0, n / 100.0);
        }
        run.progress().say(cell + " fork " + fork + ": closed model N = " + users);
        // generous: only a broken system needs the driver's 60 s request timeout on every step
        JsonNode r = HttpLoad.run(run, cell.replace('/', '.') + ".closed.fork" + fork, plan, watch(app), probes(), 180 + 4 * planned);
        if (warmup > 0) for (String pr : LoadResult.problems(LoadResult.phase(r, "warmup"))) run.invalid(cell + " fork " + fork + " closed-model warm-up: " + pr);
        for (int n : users) closedRow(LoadResult.phase(r, stem(cell, "n" + n, fork)), cell, stack, calls, fork, n, repeats, app);
    }

    private void closedRow(JsonNode ph, String cell, String stack, int calls, int fork, int users, int repeats, HttpService app) throws IOException {
        long expected = (long) users * repeats, requests = ph.path("requests").asLong(), responses = ph.path("responses").asLong();
        List<String> problems = new ArrayList<>(LoadResult.problems(ph));
        if (requests != expected) problems.add(requests + " requests sent, expected " + expected);
        double seconds = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0;
        JsonNode lat = ph.path("latencyMs"), be = ph.path("probes").path("backend"), cpu = ph.path("cpuPct");
        double jit = server(app, ph, false), gc = server(app, ph, true);
        Double steal = num(ph, "stealPct");
        // a closed step has no SLO to meet, but heavy steal still makes it the host's number rather than the system's
        String verdict = !problems.isEmpty() ? StepVerdict.Status.INVALID.label
                : steal != null && steal > StepVerdict.Rule.DEFAULT.maxStealPct() ? StepVerdict.Status.NOT_MEASURABLE.label : "measured";
        closed.write(Table.row().set("cell", cell).set("stack", stack).set("calls", calls).set("fork", fork).set("users", users)
                .set("repeats", repeats).set("requests", requests).set("expected_requests", expected).set("responses", responses).set("errors", ph.path("errors").asLong())
                .set("blocked_ms", ph.path("blockedTimeNs").asLong() / 1e6).set("seconds", seconds).set("throughput_rps", responses / seconds)
                .set("mean_ms", num(lat, "mean")).set("p50_ms", num(lat, "p50")).set("p90_ms", num(lat, "p90")).set("p99_ms", num(lat, "p99"))
                .set("max_ms", num(lat, "max")).set("backend_p50_ms", num(be, "p50Ms")).set("backend_p99_ms", num(be, "p99Ms"))
                .set("backend_calls", be.has("count") ? be.get("count").asLong() : null)
                .set("cpu_app_pct", num(cpu, "app")).set("cpu_backend_pct", num(cpu, "backend")).set("cpu_driver_pct", num(cpu, "driver"))
                .set("cpu_system_pct", num(ph, "systemCpuPct")).set("steal_pct", num(ph, "stealPct"))
                .set("jit_ms_per_s", Double.isNaN(jit) ? null : jit).set("gc_ms_per_s", Double.isNaN(gc) ? null : gc)
                .set("warm", !(jit > ServerWarmup.JIT_QUIET_MS_PER_S)).set("verdict", verdict)
                .set("valid", problems.isEmpty()).set("invalid_reason", String.join("; ", problems)));
        closedRps.put(cell + "|" + fork + "|" + users, responses / seconds);
        HttpLoad.addHlogs(run, ph, cell, cell + "/n" + users, fork, cell + ", closed model, " + users + " users x " + repeats + " requests, fork " + fork);
        notePeak(cell, "N=" + users, fork, be, seconds);
        if (!problems.isEmpty()) run.invalid(cell + " fork " + fork + " N=" + users + ": " + String.join("; ", problems));
        run.progress().say(String.format(Locale.ROOT, "%s fork %d N=%d: %d/%d answered, %d errors, %.0f req/s, p50 %s ms, p99 %s ms, external service p50 %s ms%s",
                cell, fork, users, responses, expected, ph.path("errors").asLong(), responses / seconds, lat.path("p50").asText("-"),
                lat.path("p99").asText("-"), be.path("p50Ms").asText("-"), jit > ServerWarmup.JIT_QUIET_MS_PER_S ? String.format(Locale.ROOT, ", JIT %.0f ms/s", jit) : ""));
    }

    /** The busiest JIT (or GC time) among the app and the external service during a phase, ms/s; NaN when neither reported. */
    private double server(HttpService app, JsonNode phase, boolean gc) {
        return JvmActivity.busiest(servers(app).values(), phase.path("startMs").asLong(), phase.path("endMs").asLong(), gc);
    }

    // ---- open model -------------------------------------------------------------------------------------

    /** Fixed rates, each its own step, or the capacity search; either way a capacity bracket per cell and fork. */
    private CapacitySearch.Result openModel(String cell, String stack, int calls, int fork, HttpService app) throws Exception {
        if (!o.openModel()) return null;
        double[] hint = {app == null ? OpenStep.probeLatencyMs(target, 20) : Math.max(1, calls) * (double) o.backendDelayMs()};
        RateCapacity.Trial trial = rate -> {
            OpenStep.Result r = openStep(cell, stack, calls, fork, app, rate, hint[0]);
            if (r.verdict().valid() && Double.isFinite(r.latency().p99())) hint[0] = r.latency().p99();
            return r.verdict();
        };
        CapacitySearch.Result res;
        if (o.searching()) {
            double stepSeconds = o.warmup() + o.measure() + 8; // + the driver's start-up
            res = RateCapacity.search(o.rateStep(), o.maxRate(), o.budget(), stepSeconds, trial);
        } else {
            List<CapacitySearch.Step> steps = new ArrayList<>();
            for (double rate : o.rates()) steps.add(new CapacitySearch.Step((int) Math.round(rate), trial.run((int) Math.round(rate))));
            res = CapacitySearch.Result.ofFixedSteps(steps, "fixed rates " + o.ratesText());
        }
        capacity.write(RateCapacity.row(cell, fork, slo(calls), res).set("stack", stack).set("calls", calls));
        run.progress().say(cell + " fork " + fork + ": capacity at p99 <= " + slo(calls) + " ms: " + RateCapacity.describe(res) + "; " + res.stopReason());
        return res;
    }

    /**
     * With --profile, once per run (the first cell that met its SLO at some rate): what recording cost, at half the
     * highest rate the cell met it at, where the app has headroom and its CPU per request is not the queueing at the
     * knee. False when the cell met it at no rate (or ran no open model): the next cell is tried.
     */
    private boolean profilingCost(String cell, int calls, int fork, HttpService app, CapacitySearch.Result res) throws Exception {
        Integer met = res == null ? null : res.capacity();
        if (met == null) return false;
        double rate = Math.max(1, met / 2);
        OpenStep.profilingCost(run, new OpenStep.Spec(cell, cell + "/r" + OpenStep.rateLabel(rate), fork, url(app), path(app, calls), rate, o.warmup(),
                o.measure(), slo(calls), Math.max(1, calls) * (double) o.backendDelayMs(), watch(app), probes(), servers(app),
                "web-reactive " + cell + ", open model at " + OpenStep.rateLabel(rate) + " req/s, fork " + fork), o.forks());
        return true;
    }

    private OpenStep.Result openStep(String cell, String stack, int calls, int fork, HttpService app, double rate, double latencyHintMs) throws Exception {
        String series = cell + "/r" + OpenStep.rateLabel(rate);
        OpenStep.Result r = OpenStep.run(run, new OpenStep.Spec(cell, series, fork, url(app), path(app, calls), rate, o.warmup(), o.measure(),
                slo(calls), latencyHintMs, watch(app), probes(), servers(app),
                "web-reactive " + cell + ", open model at " + OpenStep.rateLabel(rate) + " req/s, fork " + fork));
        JsonNode be = r.phase().path("probes").path("backend");
        Double appCpu = r.cpu("app"), beCpu = r.cpu("backend");
        // CPU milliseconds per 1000 answered requests, over the phase's edges
        Double appPer1k = appCpu == null || r.responses() == 0 ? null : appCpu / 100 * r.seconds() * 1000 / r.responses() * 1000;
        open.write(r.row().set("stack", stack).set("calls", calls).set("backend_p50_ms", num(be, "p50Ms")).set("backend_p99_ms", num(be, "p99Ms"))
                .set("cpu_app_pct", appCpu).set("cpu_backend_pct", beCpu).set("app_cpu_ms_per_1k", appPer1k).set("sut_cpu_ms_per_1k", appPer1k == null ? null : r.sutCpuMsPer1k()));
        if (r.verdict().valid()) notePeak(cell, OpenStep.rateLabel(rate) + " req/s", fork, be, r.seconds());
        return r;
    }

    /**
     * The p99 SLO of a cell: --slo-ms per call to the external service, since a request that must wait 2 x 100 ms
     * can never answer within 200 ms; a --target-url cell (0 calls) gets --slo-ms.
     */
    private long slo(int calls) { return o.sloMs() * Math.max(1, calls); }

    // ---- the external service at its highest load -------------------------------------------------------

    private void notePeak(String cell, String step, int fork, JsonNode backendStats, double seconds) {
        if (!backendStats.has("count") || !backendStats.path("p50Ms").isNumber()) return;
        double rate = backendStats.get("count").asDouble() / seconds;
        if (rate <= peakBackendRate) return;
        peakBackendRate = rate;
        peakBackend = JSON.createObjectNode().put("cell", cell).put("step", step).put("fork", fork).put("callsPerSecond", Math.round(rate))
                .put("p50Ms", backendStats.get("p50Ms").asDouble()).put("p99Ms", backendStats.path("p99Ms").asDouble())
                .put("delayMs", o.backendDelayMs());
    }

    /**
     * The delay must be honoured where the external service was busiest: its own p50 within 2 ms of the delay, or the
     * run is invalid. Its p99 is reported beside it: more than 10 ms above the delay means it queued too (on a small
     * host it shares the CPU), so the apps' latency there is not only their own queueing.
     */
    private void checkBackend(ObjectNode notes) {
        if (peakBackend == null) return;
        double delay = o.backendDelayMs(), off = peakBackend.get("p50Ms").asDouble() - delay, p99 = peakBackend.get("p99Ms").asDouble();
        boolean ok = Math.abs(off) <= BACKEND_TOLERANCE_MS;
        peakBackend.put("withinToleranceMs", BACKEND_TOLERANCE_MS).put("honoured", ok).put("p99QueuedMs", Math.round((p99 - delay) * 100) / 100.0)
                .put("p99Queued", p99 - delay > BACKEND_P99_QUEUEING_MS);
        notes.set("backendAtPeak", peakBackend);
        String what = String.format(Locale.ROOT, "external service p50 %.2f ms, p99 %.2f ms at its busiest step (%s %s, %d calls/s) for a %d ms delay",
                peakBackend.get("p50Ms").asDouble(), p99, peakBackend.get("cell").asText(), peakBackend.get("step").asText(),
                peakBackend.get("callsPerSecond").asLong(), (long) delay);
        if (!ok) run.invalid(what + ": p50 more than " + BACKEND_TOLERANCE_MS + " ms off, so the external service itself added latency");
        else if (p99 - delay > BACKEND_P99_QUEUEING_MS)
            run.progress().say(what + ": delay honoured at p50, but its p99 queued " + Math.round(p99 - delay) + " ms: the apps' tail there is not only their own");
        else run.progress().say(what + ": delay honoured");
    }

    private static Double num(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isNumber() ? v.asDouble() : null;
    }
}
