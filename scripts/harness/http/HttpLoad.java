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

    /** One phase of a closed-model sweep: {@code users} users at once, each doing {@code repeats} requests back to back. */
    public record ClosedStep(String phase, int users, int repeats) {}

    private HttpLoad() {}

    /** The driver script: {@code <kit>/scripts/loaddriver/LoadDriver.java}. */
    public static Path driverScript() {
        return Run.kitRoot().resolve("scripts/loaddriver/LoadDriver.java");
    }

    /** The JBang launcher this JVM was started by (JBANG_LAUNCH_CMD), else the kit's own, else jbang on PATH. */
    static String jbang() {
        String launch = System.getenv("JBANG_LAUNCH_CMD");
        if (launch != null && !launch.isBlank() && Files.isExecutable(Path.of(launch))) return launch;
        Path kit = Run.kitRoot().resolve("env/setup/jbang");
        return Files.isExecutable(kit) ? kit.toString() : "jbang";
    }

    /** Compiles the driver (and resolves Hyperfoil on first use) before anything is measured. */
    public static void prepare(Run run) throws IOException, InterruptedException {
        Path script = driverScript();
        if (!Files.isRegularFile(script)) throw new IllegalStateException("load driver not found at " + script + " (set PERFKIT_HOME to the kit's checkout)");
        run.progress().say("preparing the HTTP load driver (Hyperfoil; the first time downloads it)");
        Path log = Files.createDirectories(run.dir().resolve(DIR)).resolve("driver-build.log");
        Process p = new ProcessBuilder(jbang(), "--quiet", "build", script.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(900, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("building the load driver took over 15 minutes; see " + log);
        }
        if (p.exitValue() != 0) {
            List<String> lines = Files.readAllLines(log);
            throw new IllegalStateException("could not build the load driver (" + (lines.isEmpty() ? "exit " + p.exitValue() : lines.get(lines.size() - 1)) + ")");
        }
        Files.deleteIfExists(log);
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
        List<String> cmd = new ArrayList<>(List.of(jbang(), "--quiet", driverScript().toString(),
                "--benchmark", bench.toString(), "--hlog-dir", run.dir().resolve("latency").toString(), "--result", result.toString()));
        List<String> w = new ArrayList<>(List.of("driver=self"));
        watch.forEach((k, pid) -> w.add(k + "=" + pid));
        cmd.addAll(List.of("--watch", String.join(",", w)));
        if (!probes.isEmpty()) {
            List<String> p = new ArrayList<>();
            probes.forEach((k, url) -> p.add(k + "=" + url));
            cmd.addAll(List.of("--probe", String.join(",", p)));
        }
        Supervisor.Child child = run.startProgram("load-driver", cmd, log, "TERM", 5, List.of());
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
     * A closed-model sweep, the shape of {@code siege -b -c N -r R}: an optional warm-up ({@code users} looping for
     * {@code warmupSeconds}), then one {@code atOnce} phase per step, each starting when the previous one has
     * terminated. {@code sharedConnections} is the largest step's user count, so no request waits for a connection.
     */
    public static String closedYaml(String name, String url, int warmupUsers, double warmupSeconds, List<ClosedStep> steps) {
        Target t = Target.of(url);
        int peak = Math.max(warmupUsers, steps.stream().mapToInt(ClosedStep::users).max().orElse(1));
        StringBuilder y = header(name, t, peak);
        String previous = null;
        if (warmupSeconds > 0) {
            y.append("- warmup:\n    always:\n      users: ").append(warmupUsers).append("\n      duration: ").append(millis(warmupSeconds))
                    .append("\n      isWarmup: true\n      scenario:\n").append(scenario(t, 1, "        "));
            previous = "warmup";
        }
        for (ClosedStep s : steps) {
            y.append("- ").append(s.phase()).append(":\n    atOnce:\n      users: ").append(s.users()).append('\n');
            if (previous != null) y.append("      startAfterStrict: ").append(previous).append('\n');
            y.append("      scenario:\n").append(scenario(t, s.repeats(), "        "));
            previous = s.phase();
        }
        return y.toString();
    }

    /**
     * One open-model step: {@code rate} new requests per second (each its own session) for {@code warmupSeconds}, then
     * for {@code measureSeconds} in phase {@code phase}. {@code concurrency} bounds both the sessions and the
     * connections: a step that needs more is invalid (blocked or out of sessions), never silently throttled.
     */
    public static String openYaml(String name, String url, double rate, double warmupSeconds, double measureSeconds, String phase, int concurrency) {
        Target t = Target.of(url);
        StringBuilder y = header(name, t, concurrency);
        String r = String.format(Locale.ROOT, "%.3f", rate);
        if (warmupSeconds > 0) {
            y.append("- warmup:\n    constantRate:\n      usersPerSec: ").append(r).append("\n      duration: ").append(millis(warmupSeconds))
                    .append("\n      maxSessions: ").append(concurrency).append("\n      isWarmup: true\n      scenario:\n").append(scenario(t, 1, "        "));
        }
        y.append("- ").append(phase).append(":\n    constantRate:\n      usersPerSec: ").append(r).append("\n      duration: ").append(millis(measureSeconds))
                .append("\n      maxSessions: ").append(concurrency).append('\n');
        // startAfter (not strict): arrivals go on without a gap while the warm-up's last requests complete
        if (warmupSeconds > 0) y.append("      startAfter: warmup\n");
        y.append("      scenario:\n").append(scenario(t, 1, "        "));
        return y.toString();
    }

    private static StringBuilder header(String name, Target t, int connections) {
        return new StringBuilder("# generated by perfkit (scripts/harness/http/HttpLoad.java); run with Hyperfoil 0.25\n")
                .append("name: ").append(name).append("\nhttp:\n  host: ").append(t.origin()).append("\n  sharedConnections: ").append(connections)
                .append("\n  requestTimeout: 60s\nphases:\n");
    }

    /** One sequence: {@code repeats} synchronous GETs back to back (a loop when more than one). */
    private static String scenario(Target t, int repeats, String indent) {
        StringBuilder s = new StringBuilder(indent).append("- user:\n");
        if (repeats == 1) return s.append(request(t, indent + "  ")).toString();
        String in = indent + "  ";
        return s.append(in).append("- loop:\n")
                .append(in).append("    counterVar: repetition\n")
                .append(in).append("    repeats: ").append(repeats).append('\n')
                .append(in).append("    steps:\n")
                .append(request(t, in + "    ")).toString();
    }

    private static String request(Target t, String indent) {
        String in = indent + "    ";
        return indent + "- httpRequest:\n"
                + in + "GET: " + t.pathAndQuery() + "\n"
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
