///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
// Spring Boot's BOM pins the framework and what it manages (Tomcat, Netty, Reactor, Jackson 3)
// Netty before Boot's BOM, so it wins: the BOM's 4.2.19 has no native epoll or QUIC files on the Maven repository the
// kit is built against, and 4.2.18 is the newest that has them
//DEPS io.netty:netty-bom:4.2.18.Final@pom
//DEPS org.springframework.boot:spring-boot-dependencies:4.1.2@pom
//DEPS org.springframework.boot:spring-boot-starter-web
//DEPS org.springframework.boot:spring-boot-starter-webflux
//SOURCES Backend.java Dto.java RunPlan.java Peers.java mvc/MvcApp.java flux/FluxApp.java
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//SOURCES ../harness/src/perfkit/harness/http/*.java
//DESCRIPTION Spring MVC vs WebFlux calling a slow external service: closed-model sweep over concurrent users and open-model capacity at a p99 SLO
package perfkit.webreactive;

import perfkit.harness.cli.Cli;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.cli.Opt;
import perfkit.harness.cli.Params;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;
import perfkit.harness.run.Study;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * The web-reactive study: an imperative app (Spring MVC, Tomcat's 200 threads, blocking RestClient) and a reactive
 * app (Spring WebFlux, Reactor Netty's event loops, WebClient) each call a slow external service 1 or 2 times per
 * request. Every part runs in a JVM of its own: the external service, one app at a time, and the load driver
 * (Hyperfoil, {@link HttpLoad}). Two load models: the original's closed model ({@code siege -b -c N -r 5}: N users,
 * 5 requests each, back to back) over N, and an open model (a constant arrival rate) whose capacity at a p99 SLO is
 * found by doubling then bisecting. See {@link RunPlan}.
 * <p>
 * One JBang script holds every JVM's code: the parent runs the study, and {@code --service backend|mvc|webflux}
 * starts a part (through the harness, which ties it to the run's life). Spring MVC and WebFlux share the classpath;
 * each app sets its web application type, and lives in a package of its own so component scanning sees only it.
 */
public class WebReactive {
    static final String SERVICE = "--service";

    // the options, each declared once: the Cli lists them, and Options reads each by its constant, never by name
    static final Opt<List<String>> VARIANTS = Opt.choices("variants", RunPlan.STACKS, "mvc,webflux,mvc-virtual", "mvc,webflux",
            "stacks: mvc = Tomcat with its default 200 threads; webflux = Reactor Netty event loops; mvc-virtual = MVC on virtual threads "
                    + "(JDK 21+, skipped with a note on older JDKs)");
    static final Opt<List<Integer>> CALLS = Opt.integers("calls", "1,2", null, 1, 4, "external calls per request, made one after the other (the original's two categories: 1 and 2)");
    static final Opt<List<String>> MODELS = Opt.choices("models", List.of("closed", "open"), "closed,open", null,
            "closed = the original's siege shape over --users; open = constant rate, capacity at --slo-ms");
    static final Opt<List<Integer>> USERS = Opt.integers("users", "10,25,50,100,150,200,250,500,1000", "10,50", 1, 10_000, "closed model: concurrent users per step (siege -c N)");
    static final Opt<Integer> REPEATS = Opt.integer("repeats", 5, null, 1, 10_000, "closed model: requests each user makes back to back per step (siege -r), at least")
            .map(Math::toIntExact);
    static final Opt<Double> STEP_SECONDS = Opt.seconds("step-seconds", 10, 0.0, 0, "closed model: least time a step lasts at the external service's delay: "
            + "a cell whose --repeats x calls x delay is shorter repeats more, so a step is long enough to judge warmth over it (0 = always --repeats)");
    static final Opt<Integer> BACKEND_DELAY_MS = Opt.millis("backend-delay-ms", 100, null, "the external service's delay per call, milliseconds (it holds no "
            + "thread while waiting)").map(Math::toIntExact);
    static final Opt<Double> WARMUP = Opt.seconds("warmup", 10, 1.0, 0, "the driver's own warm-up before each closed sweep and each open-model step (at the "
            + "step's rate), seconds; also the least time the servers are warmed up by rule");
    static final Opt<Double> SERVER_WARMUP_MAX = Opt.seconds("server-warmup-max", 180, 10.0, 1, "longest warm-up by rule per app before anything is measured "
            + "(JIT under 50 ms/s over 10 s and steady throughput), seconds; an app that never settles is recorded as such");
    static final Opt<Double> MEASURE = Opt.seconds("measure", 15, 2.0, 0.1, "open model: measurement window per step, seconds");
    static final Opt<List<Double>> RATES = Opt.numbers("rates", "", "100,200", 10_000_000, List.of(""), "rates in (0, 10000000] req/s, comma-separated",
            "open model: fixed arrival rates (req/s) to measure instead of the capacity search, measured in ascending order; empty = search");
    static final Opt<Integer> RATE_STEP = Opt.integer("rate-step", 100, null, 1, 1_000_000, "open model: the search tries multiples of this rate (req/s): "
            + "1x, 2x, 4x ... then bisects").map(Math::toIntExact);
    static final Opt<Integer> MAX_RATE = Opt.integer("max-rate", 20_000, null, 1, 10_000_000, "open model: highest arrival rate the search may try, req/s")
            .map(Math::toIntExact);
    static final Opt<Double> BUDGET = Opt.seconds("budget", 900, 300.0, 1, "open model: time budget of one capacity search (one cell and fork), seconds");
    static final Opt<Integer> FORKS = Opt.integer("forks", 3, 1L, 1, 100, "repetitions: each gets fresh app JVMs, so the spread across forks shows")
            .map(Math::toIntExact);
    static final Opt<List<String>> APP_JVM_ARGS = Opt.jvmOptions("app-jvm-args", "-Xmx1g", "JVM options of each app JVM (space-separated)");
    static final Opt<String> APP_JAVA = Opt.text("app-java", "auto", null, "JDK (folder or java executable) of the apps; auto = --java when given, else the "
            + "newest JDK 21+ under /usr/lib/jvm (so mvc-virtual runs), else the run's own").map(String::trim);
    static final Opt<String> TARGET_URL = Opt.text("target-url", "", null, "load this URL (http://host:port/path?query) instead of starting the apps and "
            + "the external service; the closed and open models run against it as the cell 'target'").map(String::trim);
    /** Whether siege and wrk run beside the driver when installed. */
    enum Peers { AUTO, OFF }
    static final Opt<Peers> PEERS = Opt.choice("peers", Peers.class, Peers.AUTO, "auto = also run siege (the exact original command, for a few N) and wrk "
            + "(saturation) when installed");

    static final Cli CLI = new Cli("web-reactive", "Spring MVC (Tomcat, 200 threads, blocking RestClient) vs WebFlux (Reactor Netty, WebClient), each\n"
            + "calling an external service that answers after --backend-delay-ms, 1 or 2 times per request. Closed model: N users x R requests\n"
            + "(siege -b -c N -r R; R = 5, or more so a step lasts --step-seconds) over --users. Open model: constant arrival rate, capacity at a p99 SLO by doubling then bisecting.\n"
            + "Load driver: Hyperfoil 0.25.2 in its own JVM; its benchmark YAML is kept in the run's load/ folder.")
            .with(VARIANTS, CALLS, MODELS, USERS, REPEATS, STEP_SECONDS, BACKEND_DELAY_MS, WARMUP, SERVER_WARMUP_MAX, MEASURE)
            .sloMs(200, new Cli.Slo("p99", "response time (open model)", "each request's scheduled start (corrected)",
                    "call to the external service: a request making 2 calls must answer within 2 x this"))
            .with(RATES, RATE_STEP, MAX_RATE, BUDGET, FORKS, APP_JVM_ARGS, APP_JAVA)
            .rule(p -> checkAppJava(APP_JAVA.in(p)))
            .with(TARGET_URL, PEERS)
            .rule(p -> checkTarget(TARGET_URL.in(p)))
            .rule(p -> MAX_RATE.in(p) < RATE_STEP.in(p) ? "--max-rate must be at least --rate-step" : null)
            .place(RunPlan.PARTS, List.of("driver")) // the load driver, the app and the external service on hosts of their own
            .rule(p -> !p.placement().isEmpty() && !TARGET_URL.in(p).isBlank() ? "--place (and --on) and --target-url exclude each other: a target is not started by the run" : null)
            .rule(p -> p.placement().containsKey("driver") && !(p.placement().containsKey("app") && p.placement().containsKey("backend"))
                    ? "--place driver needs app and backend placed too: a part on this host listens on loopback only, which a driver elsewhere cannot reach" : null)
            .rule(p -> p.placement().containsKey("app") && !p.placement().containsKey("backend")
                    ? "--place app needs backend placed too: the external service here listens on loopback only, which the app elsewhere cannot reach" : null)
            .rule(p -> HttpLoad.sharingProblem(Params.hostsOf(p.placement(), "driver").size(), java.util.Collections.min(USERS.in(p)), "users"))
            .rule(p -> p.placement().entrySet().stream().map(e -> RemoteJvm.problem(e.getKey(), e.getValue(), e.getKey().startsWith("driver") ? perfkit.harness.run.ScriptJvm.scriptJava()
                            : e.getKey().equals("app") ? RunPlan.appJavaPath(APP_JAVA.in(p), Cli.JAVA.in(p).trim()) : Cli.JAVA.in(p)))
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null));

    /** A run's options, read once from the checked command line, each by its declaration. */
    record Options(List<String> stacks, List<Integer> calls, boolean closedModel, boolean openModel, List<Integer> users, int repeats,
                   double stepSeconds, int backendDelayMs, double warmup, double serverWarmupMax, double measure, long sloMs, List<Double> rates, int rateStep,
                   int maxRate, double budget, int forks, List<String> appJvmArgs, String appJava, String runJava, String targetUrl, boolean peers,
                   java.util.Map<String, Ssh> placement) {
        static Options of(Params p) {
            return new Options(VARIANTS.in(p), CALLS.in(p), MODELS.in(p).contains("closed"), MODELS.in(p).contains("open"),
                    USERS.in(p), REPEATS.in(p), STEP_SECONDS.in(p), BACKEND_DELAY_MS.in(p), WARMUP.in(p), SERVER_WARMUP_MAX.in(p),
                    MEASURE.in(p), CLI.sloMs(p), RATES.in(p), RATE_STEP.in(p), MAX_RATE.in(p), BUDGET.in(p),
                    FORKS.in(p), APP_JVM_ARGS.in(p), APP_JAVA.in(p), Cli.JAVA.in(p).trim(), TARGET_URL.in(p), PEERS.in(p) != Peers.OFF, p.placement());
        }

        /**
         * Requests per user in a closed step of a cell making {@code calls} external calls: --repeats, or more when
         * that many would last under --step-seconds at the external service's delay (a target's cell, 0 calls, keeps --repeats).
         */
        int repeatsFor(int calls) {
            double perRequest = calls * backendDelayMs / 1000.0;
            return perRequest <= 0 ? repeats : Math.max(repeats, (int) Math.ceil(stepSeconds / perRequest - 1e-9));
        }

        /** The open model searches for the capacity, unless --rates fixed the rates to measure. */
        boolean searching() { return rates.isEmpty(); }

        /** The fixed rates as given (ascending): 100,200. */
        String ratesText() { return String.join(",", rates.stream().map(Cli::plain).toList()); }
    }

    public static void main(String[] args) {
        if (args.length >= 2 && args[0].equals(SERVICE)) {
            service(args[1], Arrays.copyOfRange(args, 2, args.length));
            return;
        }
        Study.main(args, CLI, WebReactive.class, run -> new RunPlan(run).run(), fork -> {
            throw new IllegalStateException("web-reactive has no fork body: its parts run as services");
        });
    }

    /** A part of the system under test, in its own JVM (started by {@link Run#startService}). */
    static void service(String role, String[] args) {
        try {
            switch (role) {
                case "backend" -> Backend.main(Long.parseLong(args[0])); // args[1], the run directory, only marks the process as the run's
                case "mvc" -> perfkit.webreactive.mvc.MvcApp.start(args);
                case "webflux" -> perfkit.webreactive.flux.FluxApp.start(args);
                default -> throw new IllegalArgumentException("unknown service " + role);
            }
        } catch (Throwable t) {
            System.err.println("service " + role + " failed: " + t);
            t.printStackTrace();
            System.exit(1);
        }
    }

    /** A well-formed URL that answers, checked before the run folder exists: a typo or a server that is down is the user's to fix. */
    /** auto, or a JDK 21+ folder or java executable (what mvc-virtual needs; older JDKs run the other stacks through --java). */
    static String checkAppJava(String v) {
        if (v.isBlank() || v.trim().equals("auto")) return null;
        java.nio.file.Path p = java.nio.file.Path.of(v.trim()).toAbsolutePath().normalize();
        java.nio.file.Path exe = java.nio.file.Files.isDirectory(p) ? p.resolve("bin/java") : p;
        return java.nio.file.Files.isExecutable(exe) ? null : "option --app-java expects auto or a JDK folder or java executable, got '" + v.trim() + "'";
    }

    static String checkTarget(String url) {
        if (url.isBlank()) return null;
        try {
            HttpLoad.Target.of(url.trim());
        } catch (IllegalArgumentException e) {
            return "option --target-url " + e.getMessage();
        }
        String why = unreachable(url.trim());
        return why == null ? null : "option --target-url " + url.trim() + " is unreachable: " + why;
    }

    /** A GET that must answer (any status) within 5 s: the check that a --target-url is reachable before anything runs. */
    static String unreachable(String url) {
        try {
            HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            c.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).header("cache-control", "no-store").build(),
                    HttpResponse.BodyHandlers.discarding());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        } catch (java.net.ConnectException e) {
            for (Throwable c = e; c != null; c = c.getCause())
                if (c instanceof java.nio.channels.UnresolvedAddressException || c instanceof java.net.UnknownHostException) return "unknown host";
            return "connection refused";
        } catch (java.net.http.HttpTimeoutException e) {
            return "no answer within 5 s";
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) root = root.getCause();
            if (root instanceof java.net.UnknownHostException) return "unknown host " + root.getMessage();
            if (root instanceof java.net.ConnectException) return "connection refused";
            return root.getMessage() == null ? "no answer (" + root.getClass().getSimpleName().replace("Exception", "") + ")" : root.getMessage();
        }
    }
}
