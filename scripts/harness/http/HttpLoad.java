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

    /** The JBang launcher this JVM was started by (JBANG_LAUNCH_CMD), else the kit's own, else jbang on PATH. */
    static String jbang() {
        String launch = System.getenv("JBANG_LAUNCH_CMD");
        if (launch != null && !launch.isBlank() && Files.isExecutable(Path.of(launch))) return launch;
        Path kit = RunLayout.kitRoot().resolve("env/setup/jbang");
        return Files.isExecutable(kit) ? kit.toString() : "jbang";
    }

    /** The driver's classpath, resolved once per run by {@link #prepare}; the driver JVM then starts without JBang. */
    private static volatile String driverClasspath;
    /** The driver JVM's options (what its //JAVA_OPTIONS say, for a JBang user running it by hand). */
    static final List<String> DRIVER_JVM = List.of("-Xmx512m", "-Dlog4j2.level=WARN", "-Dorg.apache.logging.log4j.level=WARN");

    /**
     * Compiles the driver (resolving Hyperfoil on first use) before anything is measured, and reads its classpath,
     * so each driver run is a plain {@code java} child: no JBang start-up per step, and nothing between the
     * run's watchdog and the driver JVM.
     */
    public static void prepare(Run run) throws IOException, InterruptedException {
        Path script = driverScript();
        if (!Files.isRegularFile(script)) throw new IllegalStateException("load driver not found at " + script + " (set PERFKIT_HOME to the kit's checkout)");
        run.progress().say("preparing the HTTP load driver (Hyperfoil; the first time downloads it)");
        Path log = Files.createDirectories(run.dir().resolve(DIR)).resolve("driver-build.log");
        jbang(log, "build", script.toString());
        Path cp = run.dir().resolve(DIR).resolve("driver-classpath.txt");
        jbang(cp, "info", "classpath", script.toString());
        String classpath = Files.readString(cp).trim();
        if (classpath.isEmpty() || classpath.contains("\n")) throw new IllegalStateException("could not read the load driver's classpath from jbang info classpath");
        driverClasspath = classpath;
        Files.deleteIfExists(log);
        Files.deleteIfExists(cp);
    }

    private static void jbang(Path out, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(jbang(), "--quiet"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(out.resolveSibling("driver-build.err").toFile()))
                .redirectOutput(out.toFile()).start();
        if (!p.waitFor(900, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("jbang " + args[0] + " of the load driver took over 15 minutes");
        }
        Path err = out.resolveSibling("driver-build.err");
        List<String> lines = Files.exists(err) ? Files.readAllLines(err) : List.of();
        if (p.exitValue() != 0)
            throw new IllegalStateException("could not " + args[0] + " the load driver (" + (lines.isEmpty() ? "exit " + p.exitValue() : lines.get(lines.size() - 1)) + ")");
        Files.deleteIfExists(err);
    }

    /** The command that starts the driver JVM with {@code args}. */
    static List<String> driverCommand(List<String> args) {
        if (driverClasspath == null) throw new IllegalStateException("HttpLoad.prepare(run) must run before the load driver");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(DRIVER_JVM);
        cmd.addAll(List.of("-cp", driverClasspath, "perfkit.loaddriver.LoadDriver"));
        cmd.addAll(args);
        return cmd;
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
        run.addFile(DIR + "/" + name + ".out", "log", "output of " + String.join(" ", command));
        return done ? Files.readString(out) : null;
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
            return add(phase, "constantRate", String.format(Locale.ROOT, "usersPerSec: %.3f\n      maxSessions: %d", rate, concurrency),
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
                    + "\n  requestTimeout: 60s\nphases:\n" + phases;
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
