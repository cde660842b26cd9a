package perfkit.harness.http;

import perfkit.harness.measure.JvmActivity;
import perfkit.harness.run.Run;
import perfkit.harness.measure.Warmup;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Warm-up by rule for the servers under test, before any of them is measured: load them until every server's JIT has
 * gone quiet (under {@link #JIT_QUIET_MS_PER_S} ms of compilation per second over the last 10 s) and the throughput is
 * steady (the harness's {@link Warmup} rule on requests per second), with a maximum. A JVM whose JIT still compiles
 * takes CPU from the server on a small host and runs slower code: its numbers describe its age, not its design.
 * <p>
 * The load is a closed loop in the run's own JVM (the JDK's HTTP client): {@code users} requests in flight, spread
 * round-robin over every endpoint the servers will be measured on, so each code path gets compiled before any is
 * measured. The outcome, settled or not, goes into the manifest ({@code notes.serverWarmup}), and each measured step
 * records its servers' JIT activity, so a step measured while a JIT was busy is marked.
 */
public final class ServerWarmup {
    /** A server's JIT is quiet below this many milliseconds of compilation per second of wall clock. */
    public static final double JIT_QUIET_MS_PER_S = 50;
    static final double JIT_WINDOW_SECONDS = 10;
    /** A warm-up request that takes longer has failed. */
    private static final int REQUEST_TIMEOUT_S = 60;

    /**
     * @param minSeconds load at least this long
     * @param maxSeconds give up here: warm-up "never settled", recorded as such
     * @param users      requests in flight
     */
    public record Rule(double minSeconds, double maxSeconds, int users) {
        /** Throughput steady: 5 one-second samples within 10% of their mean, with no trend. */
        Warmup.Rule throughput() { return new Warmup.Rule(Math.min(minSeconds, maxSeconds), maxSeconds, 5, 0.10, 0); }
    }

    /** How a warm-up ended: JIT ms/s per server over its last 10 s, and the throughput of its last second. */
    public record Outcome(boolean settled, double seconds, Map<String, Double> jitMsPerSAtEnd, double rpsAtEnd, long errors, String reason) {}

    private ServerWarmup() {}

    /**
     * Loads {@code urls} until {@code servers} are warm by the rule, records the outcome under {@code notes.serverWarmup}
     * with {@code label} and {@code fork}, and returns it.
     */
    public static Outcome warm(Run run, String label, int fork, List<String> urls, Map<String, JvmActivity.Listener> servers, Rule rule)
            throws InterruptedException {
        run.progress().phase(label + " fork " + fork + ": warming up by rule (JIT under " + (int) JIT_QUIET_MS_PER_S + " ms/s, steady throughput)",
                rule.maxSeconds());
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        AtomicLong done = new AtomicLong(), errors = new AtomicLong(), next = new AtomicLong(), inFlight = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<HttpRequest> requests = urls.stream().map(u -> HttpRequest.newBuilder(URI.create(u)).timeout(Duration.ofSeconds(REQUEST_TIMEOUT_S))
                .header("cache-control", "no-store").build()).toList();
        for (int u = 0; u < rule.users(); u++) loop(client, requests, next, done, errors, inFlight, stop);
        Warmup throughput = new Warmup(rule.throughput());
        String before = run.timeSeries().phase();
        run.timeSeries().phase("warmup");
        long t0 = System.nanoTime();
        long lastCount = 0, lastNanos = t0;
        Outcome outcome;
        try {
            while (true) {
                Thread.sleep(1000);
                long now = System.nanoTime(), count = done.get();
                double rps = (count - lastCount) * 1e9 / (now - lastNanos), at = (now - t0) / 1e9;
                lastCount = count;
                lastNanos = now;
                throughput.add(new Warmup.Sample(at, rps, Double.NaN));
                // both judged on the same last seconds: throughput steady now, not once at some earlier moment
                String unsteady = throughput.unsteadyNow();
                Map<String, Double> jit = jitOverLast(servers, JIT_WINDOW_SECONDS);
                boolean quiet = at >= JIT_WINDOW_SECONDS && jit.values().stream().allMatch(j -> j <= JIT_QUIET_MS_PER_S);
                if (at >= rule.minSeconds() && quiet && unsteady == null) {
                    outcome = new Outcome(true, at, jit, rps, errors.get(), String.format(Locale.ROOT,
                            "every JIT under %.0f ms/s over the last %.0f s; rate stable within %.0f%% for %d s", JIT_QUIET_MS_PER_S,
                            JIT_WINDOW_SECONDS, 100 * rule.throughput().tolerance(), rule.throughput().stableSamples()));
                    break;
                }
                if (at >= rule.maxSeconds()) {
                    String why = !quiet ? "a JIT still compiling: " + busiest(jit) : "throughput not steady: " + unsteady;
                    outcome = new Outcome(false, at, jit, rps, errors.get(), "never settled within " + Warmup.seconds(rule.maxSeconds()) + " s: " + why);
                    break;
                }
            }
        } finally {
            stop.set(true);
            // the requests still in flight end before anything is measured: on a loaded machine they spilled into the
            // first steps, and the external service counted their calls as the steps' (111 calls for 50 requests)
            long drainedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(REQUEST_TIMEOUT_S + 5);
            while (inFlight.get() > 0 && System.nanoTime() < drainedBy) Thread.sleep(20);
            run.timeSeries().phase(before);
        }
        record(run, label, fork, servers.keySet(), urls, outcome);
        run.progress().say(String.format(Locale.ROOT, "%s fork %d: warm-up %s after %.0f s (%s)", label, fork, outcome.settled() ? "settled" : "NEVER SETTLED",
                outcome.seconds(), outcome.reason()));
        return outcome;
    }

    /** One user: a request, and on its answer (or failure) the next, round-robin over the endpoints, until stopped. */
    private static void loop(HttpClient client, List<HttpRequest> requests, AtomicLong next, AtomicLong done, AtomicLong errors, AtomicLong inFlight,
                             AtomicBoolean stop) {
        if (stop.get()) return;
        HttpRequest r = requests.get((int) (next.getAndIncrement() % requests.size()));
        inFlight.incrementAndGet();
        CompletableFuture<HttpResponse<Void>> f = client.sendAsync(r, HttpResponse.BodyHandlers.discarding());
        f.whenComplete((res, e) -> {
            inFlight.decrementAndGet();
            if (e != null || res.statusCode() >= 400) errors.incrementAndGet();
            else done.incrementAndGet();
            if (e != null) {
                try { Thread.sleep(100); } catch (InterruptedException ignored) { } // a refused connection is no reason to spin
            }
            loop(client, requests, next, done, errors, inFlight, stop);
        });
    }

    /** Each server's JIT ms/s over the last {@code seconds}; NaN for one that has not reported over that span. */
    static Map<String, Double> jitOverLast(Map<String, JvmActivity.Listener> servers, double seconds) {
        long now = System.currentTimeMillis();
        Map<String, Double> out = new LinkedHashMap<>();
        servers.forEach((name, l) -> out.put(name, l.jitMsPerSecond(now - (long) (seconds * 1000), now)));
        return out;
    }

    private static String busiest(Map<String, Double> jit) {
        return jit.entrySet().stream().max(Map.Entry.comparingByValue())
                .map(e -> String.format(Locale.ROOT, "%s at %.0f ms/s", e.getKey(), e.getValue())).orElse("no report");
    }

    private static synchronized void record(Run run, String label, int fork, java.util.Set<String> servers, List<String> urls, Outcome o) {
        ArrayNode all = run.notes().has("serverWarmup") ? (ArrayNode) run.notes().get("serverWarmup") : run.notes().putArray("serverWarmup");
        ObjectNode w = all.addObject().put("label", label).put("fork", fork).put("settled", o.settled()).put("seconds", Math.round(o.seconds()))
                .put("rpsAtEnd", Math.round(o.rpsAtEnd())).put("errors", o.errors()).put("reason", o.reason());
        ArrayNode s = w.putArray("servers");
        servers.forEach(s::add);
        ArrayNode e = w.putArray("endpoints");
        urls.forEach(u -> e.add(URI.create(u).getRawPath() + (URI.create(u).getRawQuery() == null ? "" : "?" + URI.create(u).getRawQuery())));
        ObjectNode jit = w.putObject("jitMsPerSAtEnd");
        o.jitMsPerSAtEnd().forEach((k, v) -> { if (Double.isNaN(v)) jit.putNull(k); else jit.put(k, Math.round(v * 10) / 10.0); });
        run.writeManifest();
    }
}
