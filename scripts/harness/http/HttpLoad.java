package perfkit.harness;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The study side of the kit's HTTP load driver ({@code scripts/loaddriver/LoadDriver.java}, Hyperfoil 0.25.2 in a
 * JVM of its own): writes Hyperfoil benchmark YAML into the run directory (kept, so a Hyperfoil user can replay
 * it), runs the driver as a supervised child of the run, and reads back its per-phase result.
 * <p>
 * A study that uses it adds {@code //SOURCES ../harness/http/HttpLoad.java}. It lives in the harness package
 * because it starts the driver through the run's {@link Supervisor} (a watchdog, the live file, the janitor), so
 * a killed run leaves no driver behind.
 * <p>
 * Hyperfoil's known pitfalls are handled here, once: every request sends {@code cache-control: no-store} (its
 * HTTP cache is on by default), none sends {@code connection: close}, and {@code sharedConnections} is sized by
 * the caller at or above the peak concurrency; a phase with {@code blockedTime > 0} is invalid ({@link #problems}).
 */
public final class HttpLoad {
    /** Where the driver's YAML, results and logs go, relative to the run directory. */
    public static final String DIR = "load";

    private HttpLoad() {}

    /** The driver script: {@code <kit>/scripts/loaddriver/LoadDriver.java}. */
    public static Path driverScript() {
        return RunLayout.kitRoot().resolve("scripts/loaddriver/LoadDriver.java");
    }

    /** The driver JVM, built and its classpath read once per run by {@link #prepare}; each driver run is then a plain java child. */
    private static volatile ScriptJvm driver;
    /** The driver JVM's options (what its //JAVA_OPTIONS say, for a JBang user running it by hand). */
    static final List<String> DRIVER_JVM = List.of("-Xmx512m", "-Dlog4j2.level=WARN", "-Dorg.apache.logging.log4j.level=WARN");

    /** Compiles the driver (resolving Hyperfoil on first use) before anything is measured. */
    public static void prepare(Run run) throws IOException, InterruptedException {
        run.progress().say("preparing the HTTP load driver (Hyperfoil; the first time downloads it)");
        driver = ScriptJvm.prepare(driverScript(), "perfkit.loaddriver.LoadDriver", "the load driver", run.dir().resolve(DIR));
    }

    /** The command that starts the driver JVM with {@code args}. */
    static List<String> driverCommand(List<String> args) {
        if (driver == null) throw new IllegalStateException("HttpLoad.prepare(run) must run before the load driver");
        return driver.command(DRIVER_JVM, args);
    }

    /**
     * Belt and braces for a run stopped by a signal: the harness then stops the watchdog, and if it dies before
     * stopping its program, the program is orphaned. So remember the program's pids while it runs, and kill any
     * still alive when the run finishes.
     */
    private static void reapOnFinish(Run run, Supervisor.Child child) {
        java.util.Set<ProcessHandle> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        ChildProcess.daemon("perfkit-load-pids", () -> {
            while (child.process().isAlive()) {
                child.process().descendants().forEach(seen::add);
                try { Thread.sleep(200); } catch (InterruptedException e) { return; }
            }
        });
        run.onFinish(() -> seen.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly));
    }

    /**
     * Runs the driver on {@code yaml} (saved as {@code load/<name>.yaml}) and returns its result: {@code phases[]} with
     * counts, errors, blockedTimeNs, latency summary, CPU% of the {@code watch} processes and of the machine between
     * each phase's edges, and each probe URL's answer at the phase's end. The hlogs go to {@code latency/<phase>.*.hlog}.
     */
    public static JsonNode run(Run run, String name, String yaml, Map<String, Long> watch, Map<String, String> probes,
                               double timeoutSeconds) throws Exception {
        Path dir = Files.createDirectories(run.dir().resolve(DIR));
        Path bench = dir.resolve(name + ".yaml"), result = dir.resolve(name + ".result.json"), log = dir.resolve(name + ".log");
        Files.writeString(bench, yaml);
        run.addFile(DIR + "/" + name + ".yaml", "other", "Hyperfoil benchmark the load driver ran (replayable with Hyperfoil 0.25)");
        List<String> cmd = new ArrayList<>(List.of("--benchmark", bench.toString(), "--hlog-dir", run.dir().resolve("latency").toString(),
                "--result", result.toString()));
        List<String> w = new ArrayList<>(List.of("driver=self"));
        watch.forEach((k, pid) -> w.add(k + "=" + pid));
        cmd.addAll(List.of("--watch", String.join(",", w)));
        if (!probes.isEmpty()) {
            List<String> p = new ArrayList<>();
            probes.forEach((k, url) -> p.add(k + "=" + url));
            cmd.addAll(List.of("--probe", String.join(",", p)));
        }
        Supervisor.Child child = run.startProgram("load-driver", driverCommand(cmd), log, "TERM", 5, List.of());
        reapOnFinish(run, child);
        run.timeSeries().watchProcessTree("proc:load-driver", child.process().pid());
        try {
            if (!child.process().waitFor((long) (timeoutSeconds * 1000), TimeUnit.MILLISECONDS))
                throw new IllegalStateException("load driver " + name + " did not finish within " + Math.round(timeoutSeconds) + " s");
        } finally {
            run.timeSeries().unwatchProcess("proc:load-driver");
            run.supervisor().stop(child, 10);
        }
        if (!Files.isRegularFile(result)) throw new IllegalStateException("load driver " + name + " ended without a result; see " + run.dir().relativize(log));
        JsonNode r = Manifest.JSON.readTree(result.toFile());
        run.addFile(DIR + "/" + name + ".result.json", "other", "load driver result per phase: counts, errors, blocked time, latency summary, CPU, probes");
        run.addFile(DIR + "/" + name + ".log", "log", "load driver output");
        if (r.hasNonNull("error")) throw new IllegalStateException("load driver " + name + " failed: " + r.get("error").asText());
        return r;
    }

    /**
     * Runs another load tool (e.g. siege or wrk) as a supervised child of the run, output to {@code load/<name>.out},
     * and returns that output; null when it did not finish within the timeout (it is stopped then).
     */
    public static String runTool(Run run, String name, List<String> command, double timeoutSeconds) throws Exception {
        Path out = Files.createDirectories(run.dir().resolve(DIR)).resolve(name + ".out");
        Supervisor.Child child = run.startProgram(name, command, out, "INT", 5, List.of());
        reapOnFinish(run, child);
        run.timeSeries().watchProcessTree("proc:" + name, child.process().pid());
        boolean done;
        try {
            done = child.process().waitFor((long) (timeoutSeconds * 1000), TimeUnit.MILLISECONDS);
        } finally {
            run.timeSeries().unwatchProcess("proc:" + name);
            run.supervisor().stop(child, 10);
        }
        String runDir = run.dir().toString();
        String shown = command.stream() // paths inside the run read relative to it: the manifest names no machine's folders
                .map(a -> a.startsWith(runDir + "/") ? a.substring(runDir.length() + 1) : a).collect(Collectors.joining(" "));
        run.addFile(DIR + "/" + name + ".out", "log", "output of " + shown);
        return done ? Files.readString(out) : null;
    }

    /**
     * An open-model step's verdict. The latency rule is the harness's ({@link StepVerdict#judge}: met, missed, or not
     * measurable on a saturated host). Then:
     * <ul>
     * <li>the driver fell behind (blocked on a connection, out of sessions, or fewer requests than Poisson arrivals at
     *     its rate could explain: {@link StepVerdict#fewestKeptUp}): the requests it
     *     did not send, or sent late, would only have been slower, so a p99 already above the SLO is a sound miss;
     *     a p99 within it proves nothing, and the step is <b>invalid</b>;</li>
     * <li>errors (timeouts, failed connections, non-2xx): capacity means no errors, so the step cannot be met.</li>
     * </ul>
     */
    public static StepVerdict openVerdict(double rate, long requests, double seconds, long errors, List<String> driverProblems, long measured,
                                          double p99, double sloMs, double systemCpu, double steal, int cores) {
        StepVerdict.Rule rule = StepVerdict.Rule.DEFAULT;
        List<String> behind = new ArrayList<>(driverProblems);
        if (!(requests >= StepVerdict.fewestKeptUp(rate * seconds, rule.minRateFraction())))
            behind.add(String.format(Locale.ROOT, "driver sent %.0f of %.0f req/s", requests / seconds, rate));
        List<String> failed = errors > 0 ? List.of(errors + " errors (timeouts, failed connections or non-2xx)") : List.of();
        StepVerdict base = StepVerdict.judge(new StepVerdict.Measurement(rate, rate, measured, 0, List.of(), p99, sloMs, systemCpu, steal, cores), rule);
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
     * A capacity search over multiples of {@code rateStep} req/s ({@link CapacitySearch} counts "instances"); {@code trial}
     * gets the rate, and the stop reason and steps are told in req/s.
     */
    public static CapacitySearch.Result searchRate(int rateStep, int maxRate, double budgetSeconds, double stepSeconds,
                                                   CapacitySearch.Runner trial) throws Exception {
        long t0 = System.nanoTime();
        CapacitySearch.Result res = CapacitySearch.search(Math.max(1, maxRate / rateStep), budgetSeconds, () -> (System.nanoTime() - t0) / 1e9,
                () -> stepSeconds, n -> trial.run(n * rateStep));
        List<CapacitySearch.Step> steps = new ArrayList<>();
        for (CapacitySearch.Step s : res.steps()) steps.add(new CapacitySearch.Step(s.instances() * rateStep, s.verdict()));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) instance\\(s\\)|instance limit (\\d+)").matcher(res.stopReason());
        StringBuilder reason = new StringBuilder();
        while (m.find()) m.appendReplacement(reason, m.group(1) != null ? Long.parseLong(m.group(1)) * rateStep + " req/s"
                : "rate limit " + Long.parseLong(m.group(2)) * rateStep + " req/s");
        m.appendTail(reason);
        return new CapacitySearch.Result(res.capacity() == null ? null : res.capacity() * rateStep, res.status(), reason.toString(), steps);
    }

    /**
     * Capacity from steps at fixed rates (ascending), read as the search reads its steps: the largest rate met below
     * the first that was not. A wall when that first was missed; a lower bound when all were met.
     */
    public static CapacitySearch.Result fixedRateCapacity(List<CapacitySearch.Step> steps, String what) {
        Integer cap = null;
        StepVerdict first = null;
        for (CapacitySearch.Step s : steps) {
            if (first == null && s.verdict().meets()) cap = s.instances();
            else if (first == null) first = s.verdict();
        }
        boolean wall = first != null && first.status() == StepVerdict.Status.MISSED;
        CapacitySearch.Status status = wall ? CapacitySearch.Status.WALL : cap == null && first != null ? CapacitySearch.Status.NOT_MEASURABLE
                : CapacitySearch.Status.LOWER_BOUND;
        if (wall && cap == null) cap = 0;
        String reason = what + (first == null ? ": all met" : ": the first not met was " + first.status().label
                + (first.reason().isEmpty() ? "" : " (" + first.reason() + ")"));
        return new CapacitySearch.Result(cap, status, reason, steps);
    }

    /** The phase named {@code phase} in a driver result. */
    public static JsonNode phase(JsonNode result, String phase) {
        for (JsonNode p : result.path("phases")) if (p.path("name").asText().equals(phase)) return p;
        throw new IllegalStateException("the load driver reported no phase " + phase);
    }

    /** What makes a phase's numbers untrustworthy (empty when none): blocked time, the session limit, a phase error. */
    public static List<String> problems(JsonNode phase) {
        List<String> out = new ArrayList<>();
        long blocked = phase.path("blockedTimeNs").asLong();
        if (blocked > 0) out.add(String.format(Locale.ROOT, "driver blocked %.1f ms waiting for a connection (sharedConnections below the concurrency)", blocked / 1e6));
        if (phase.path("sessionLimitExceeded").asBoolean()) out.add("driver ran out of sessions (concurrency above maxSessions)");
        if (phase.hasNonNull("error")) out.add("phase error: " + phase.get("error").asText());
        return out;
    }

    /** Registers a phase's two hlogs (written by the driver) in the manifest, with cell, series, fork and window. */
    public static void addHlogs(Run run, JsonNode phase, String cell, String series, int fork, String description) {
        String stem = "latency/" + phase.path("name").asText();
        long start = phase.path("startMs").asLong(), end = phase.path("endMs").asLong();
        run.addFile(new RunFile(stem + LatencyLog.CORRECTED, "hlog", description + "; Hyperfoil response time, ns (same samples as uncorrected: see the driver)",
                cell, series, fork, RunFile.CORRECTED, start, end));
        run.addFile(new RunFile(stem + LatencyLog.UNCORRECTED, "hlog", description + "; Hyperfoil response time from the actual send, ns",
                cell, series, fork, RunFile.UNCORRECTED, start, end));
    }

    // ---- benchmark YAML --------------------------------------------------------------------------------

    /**
     * A benchmark of phases that run one after another in one driver JVM, against one origin. Kinds:
     * <ul>
     * <li>{@link #closed}: {@code users} users at once, each doing {@code repeats} requests back to back (a {@code loop}),
     *     the shape of {@code siege -b -c N -r R}; the phase ends when every user is done;</li>
     * <li>{@link #always}: {@code users} users looping for a duration (a closed-model warm-up);</li>
     * <li>{@link #open}: a constant arrival rate, one new session (one request) per arrival, at most {@code concurrency}
     *     in flight: a phase that needs more is invalid (blocked or out of sessions), never silently throttled.</li>
     * </ul>
     * Each phase starts when the previous one has terminated (all its requests answered), except a phase marked
     * {@code continuous}, which starts as soon as the previous stops starting requests, so arrivals go on without a
     * gap (a measurement right after its warm-up at the same rate). {@code sharedConnections} is the largest
     * concurrency of any phase, so no request waits for a connection.
     */
    public static final class Plan {
        private final String name;
        private final Target target;
        private final StringBuilder phases = new StringBuilder();
        private String previous;
        private int connections = 1;

        public Plan(String name, String url) {
            this.name = name;
            this.target = Target.of(url);
        }

        /** The path and query of the plan's URL, for phases that load it as given. */
        public String path() { return target.pathAndQuery(); }

        public Plan closed(String phase, String path, int users, int repeats) {
            return add(phase, "atOnce", "users: " + users, null, false, false, path, repeats, users);
        }

        public Plan always(String phase, String path, int users, double seconds, boolean warmup) {
            return add(phase, "always", "users: " + users, seconds, warmup, false, path, 1, users);
        }

        public Plan open(String phase, String path, double rate, double seconds, int concurrency, boolean warmup, boolean continuous) {
            // variance: arrivals at random (Poisson) instants, Hyperfoil's default, written out so a replay does the same
            return add(phase, "constantRate", String.format(Locale.ROOT, "usersPerSec: %.3f\n      variance: true\n      maxSessions: %d", rate, concurrency),
                    seconds, warmup, continuous, path, 1, concurrency);
        }

        private Plan add(String phase, String model, String load, Double seconds, boolean warmup, boolean continuous, String path, int repeats, int concurrency) {
            phases.append("- ").append(phase).append(":\n    ").append(model).append(":\n      ").append(load).append('\n');
            if (seconds != null) phases.append("      duration: ").append(millis(seconds)).append('\n');
            if (warmup) phases.append("      isWarmup: true\n");
            if (previous != null) phases.append(continuous ? "      startAfter: " : "      startAfterStrict: ").append(previous).append('\n');
            phases.append("      scenario:\n").append(scenario(path, repeats, "        "));
            previous = phase;
            connections = Math.max(connections, concurrency);
            return this;
        }

        public String yaml() {
            return "# generated by perfkit (scripts/harness/http/HttpLoad.java); run with Hyperfoil 0.25\n"
                    + "name: " + name + "\nhttp:\n  host: " + target.origin() + "\n  sharedConnections: " + connections
                    + "\n  requestTimeout: 60s\n"
                    // a user goes on after a non-2xx answer (as siege does); by default Hyperfoil stops its session,
                    // so a server shedding load would receive fewer requests than the closed model promises
                    + "ergonomics:\n  stopOnInvalid: false\nphases:\n" + phases;
        }
    }

    /** One sequence: {@code repeats} synchronous GETs back to back (a loop when more than one). */
    private static String scenario(String path, int repeats, String indent) {
        StringBuilder s = new StringBuilder(indent).append("- user:\n");
        if (repeats == 1) return s.append(request(path, indent + "  ")).toString();
        String in = indent + "  ";
        return s.append(in).append("- loop:\n")
                .append(in).append("    counterVar: repetition\n")
                .append(in).append("    repeats: ").append(repeats).append('\n')
                .append(in).append("    steps:\n")
                .append(request(path, in + "    ")).toString();
    }

    private static String request(String path, String indent) {
        String in = indent + "    ";
        return indent + "- httpRequest:\n"
                + in + "GET: " + path + "\n"
                + in + "metric: request\n"
                + in + "sync: true\n"
                + in + "headers:\n"
                + in + "  cache-control: no-store\n"; // Hyperfoil's HTTP cache is on by default; never connection: close
    }

    private static String millis(double seconds) {
        return Math.max(1, Math.round(seconds * 1000)) + "ms";
    }

    /** An http URL split the way Hyperfoil wants it: origin for {@code http.host}, path and query for the request. */
    public record Target(String origin, String pathAndQuery) {
        public static Target of(String url) {
            URI u = URI.create(url);
            if (!"http".equals(u.getScheme()) || u.getHost() == null) throw new IllegalArgumentException("expects an http://host[:port]/path URL, got " + url);
            String origin = "http://" + u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "");
            String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
            return new Target(origin, u.getRawQuery() == null ? path : path + "?" + u.getRawQuery());
        }
    }
}
