package perfkit.harness.http;

import perfkit.harness.record.Manifest;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * One load-driver run shared between several hosts ({@code --place driver=user@a+user@b}): where each host's result
 * and hlogs land ({@code load/<name>.d<i>.result.json}, {@code load/<name>.d<i>/}), and their merge into the one
 * result and the one set of hlogs per phase that a single driver would have written, so nothing downstream knows
 * how many drivers there were.
 * <p>
 * The merge is exact where it can be: counts add up, and each phase's histograms are added (HdrHistogram adds
 * without loss), so the percentiles of the merged result are those of every request of every host. Each host's
 * edges move to this host's clock first; a merged phase runs from the earliest start to the latest end. What cannot
 * add up is judged by the worst host: the driver's CPU, the machine's busy time (as a share of each host's cores)
 * and steal; blocked time is summed. A phase the hosts were told to start together that they started further apart
 * ({@code hostSkewMs}, beyond 100 ms or 5% of the phase) carries an error: the system did not see the summed load.
 */
final class DriverShares {
    private static final com.fasterxml.jackson.databind.node.JsonNodeFactory NODES = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
    private final Run run;
    private final String name;
    private final int count;

    DriverShares(Run run, String name, int count) {
        this.run = run;
        this.name = name;
        this.count = count;
    }

    /** Removes what an earlier driver run of the same name left, so that a driver that sends nothing back is noticed. */
    void clear() throws IOException {
        for (int i = 0; i < count; i++) {
            Files.deleteIfExists(result(i));
            if (Files.isDirectory(hlogs(i)))
                try (var files = Files.walk(hlogs(i))) {
                    for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
                }
        }
    }

    /** Where driver {@code i}'s hlogs land. */
    Path hlogs(int i) { return run.dir().resolve(LoadResult.DIR).resolve(name + ".d" + (i + 1)); }

    /** Where driver {@code i}'s result lands. */
    Path result(int i) { return run.dir().resolve(LoadResult.DIR).resolve(name + ".d" + (i + 1) + ".result.json"); }

    /**
     * Reads every host's result (a failed host fails the run of the driver), puts its edges on this host's clock,
     * and writes the merged result to {@code into} and the merged hlogs to {@code latency/}.
     */
    void merge(List<RemoteJvm> drivers, List<Ssh> hosts, int[] cores, double interleaveMs, java.util.Set<String> onSchedule, Path into) {
        try {
            mergeFiles(drivers, hosts, cores, interleaveMs, onSchedule, into);
        } catch (IOException | RuntimeException e) {
            if (e instanceof LoadResult.DriverFailed f) throw f;
            throw new LoadResult.DriverFailed("the results of load driver " + name + "'s " + count + " hosts could not be merged: " + e.getMessage());
        }
    }

    private void mergeFiles(List<RemoteJvm> drivers, List<Ssh> hosts, int[] cores, double interleaveMs, java.util.Set<String> onSchedule,
                            Path into) throws IOException {
        List<JsonNode> results = new ArrayList<>();
        List<LongUnaryOperator> clocks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Path file = result(i);
            if (!Files.isRegularFile(file)) throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " sent back no result");
            JsonNode r = Manifest.JSON.readTree(file.toFile());
            if (r.hasNonNull("error")) throw new LoadResult.DriverFailed("load driver " + name + " on " + hosts.get(i) + " failed: " + r.get("error").asText());
            results.add(r);
            clocks.add(drivers.get(i)::localMs);
            String share = "driver " + (i + 1) + " of " + count + " (on " + hosts.get(i) + ")";
            run.addFile(run.dir().relativize(file).toString(), "other", "load driver result of " + share + ", its edges on its own clock; merged into "
                    + name + ".result.json");
            if (Files.isDirectory(hlogs(i)))
                try (var files = Files.list(hlogs(i))) {
                    for (Path h : files.sorted().toList())
                        run.addFile(run.dir().relativize(h).toString(), "other", "hlog of " + share + ", on its own clock; merged into latency/" + h.getFileName());
                }
        }
        Manifest.writeAtomically(into, merged(results, clocks, hosts, cores, interleaveMs, onSchedule, this::hlogs, run.dir().resolve("latency")));
    }

    /** The results of every host, merged (see the class); the merged hlogs of each measured phase go to {@code latency}. */
    static ObjectNode merged(List<JsonNode> results, List<LongUnaryOperator> clocks, List<Ssh> hosts, int[] cores, double interleaveMs,
                             java.util.Set<String> onSchedule, java.util.function.IntFunction<Path> hlogs, Path latency) throws IOException {
        ObjectNode out = Manifest.JSON.createObjectNode();
        out.put("benchmark", results.get(0).path("benchmark").asText());
        int threads = 0;
        ArrayNode drivers = Manifest.JSON.createArrayNode();
        for (int i = 0; i < results.size(); i++) {
            threads += results.get(i).path("threads").asInt();
            drivers.addObject().put("part", i == 0 ? "driver" : "driver" + (i + 1)).put("host", hosts.get(i).destination())
                    .put("threads", results.get(i).path("threads").asInt());
        }
        out.put("threads", threads).set("drivers", drivers);
        ArrayNode phases = out.putArray("phases");
        for (JsonNode first : results.get(0).path("phases")) {
            List<JsonNode> each = new ArrayList<>();
            for (JsonNode r : results) each.add(LoadResult.phase(r, first.path("name").asText()));
            phases.add(mergedPhase(each, clocks, cores, interleaveMs, onSchedule.contains(first.path("name").asText()), hlogs, latency));
        }
        return out;
    }

    private static final List<String> SUMS = List.of("requests", "responses", "connectionErrors", "requestTimeouts", "internalErrors", "invalid",
            "errors", "blockedTimeNs", "status2xx", "status3xx", "status4xx", "status5xx", "statusOther", "cacheHits", "histogramCount",
            "correctedCount", "started");

    private static ObjectNode mergedPhase(List<JsonNode> each, List<LongUnaryOperator> clocks, int[] cores, double interleaveMs, boolean onSchedule,
                                          java.util.function.IntFunction<Path> hlogs, Path latency) throws IOException {
        JsonNode first = each.get(0);
        String name = first.path("name").asText();
        ObjectNode p = Manifest.JSON.createObjectNode();
        p.put("name", name).put("warmup", first.path("warmup").asBoolean());
        long start = Long.MAX_VALUE, end = Long.MIN_VALUE, skew = 0;
        long[] starts = new long[each.size()];
        for (int i = 0; i < each.size(); i++) {
            if (each.get(i).path("startMs").asLong() <= 0 || each.get(i).path("endMs").asLong() <= 0)
                throw new LoadResult.DriverFailed("phase " + name + " never ran to its end on driver host " + (i + 1));
            starts[i] = clocks.get(i).applyAsLong(each.get(i).path("startMs").asLong());
            start = Math.min(start, starts[i]);
            end = Math.max(end, clocks.get(i).applyAsLong(each.get(i).path("endMs").asLong()));
            skew = Math.max(skew, Math.abs(starts[i] - Math.round(i * interleaveMs) - starts[0])); // beyond the start each was told
        }
        p.put("startMs", start).put("endMs", end).put("hostSkewMs", skew);
        for (String key : SUMS) {
            if (!first.has(key)) continue;
            long sum = 0;
            for (JsonNode ph : each) sum += ph.path(key).asLong();
            p.put(key, sum);
        }
        p.put("sessionLimitExceeded", each.stream().anyMatch(ph -> ph.path("sessionLimitExceeded").asBoolean()));
        String error = null;
        for (int i = 0; i < each.size() && error == null; i++)
            if (each.get(i).hasNonNull("error")) error = "driver " + (i + 1) + ": " + each.get(i).get("error").asText();
        // judged where the hosts were told to start together; after a drain each starts when its own share drained
        if (error == null && onSchedule && !first.path("warmup").asBoolean() && skew > Math.max(SKEW_MS, SKEW_SHARE * (end - start)))
            error = "the driver hosts started this phase " + skew + " ms apart (beyond the interleave they were told): the system did not see their summed load at once";
        if (error == null) p.putNull("error");
        else p.put("error", error);
        p.set("schedule", first.get("schedule"));
        boolean measured = !first.path("warmup").asBoolean();
        // a warm-up phase has no hlogs to add up, and a summary of summaries would be no percentile at all
        p.set("latencyMs", measured ? summary(merge(hlogs, each.size(), name, "corrected", start, end, latency)) : null);
        p.set("uncorrectedMs", measured ? summary(merge(hlogs, each.size(), name, "uncorrected", start, end, latency)) : null);
        if (first.has("latenessMs")) p.set("latenessMs", measured ? summary(merge(hlogs, each.size(), name, "lateness", start, end, latency)) : null);
        if (first.has("startedPerSecond")) {
            // each host's whole seconds from its own start: the seconds all of them ran, added up
            int seconds = each.stream().mapToInt(ph -> ph.path("startedPerSecond").size()).min().orElse(0);
            ArrayNode started = p.putArray("startedPerSecond");
            for (int s = 0; s < seconds; s++) {
                long sum = 0;
                for (JsonNode ph : each) sum += ph.path("startedPerSecond").get(s).asLong();
                started.add(sum);
            }
        }
        ObjectNode cpu = p.putObject("cpuPct");
        first.path("cpuPct").fieldNames().forEachRemaining(k -> cpu.set(k, worst(each, ph -> ph.path("cpuPct").path(k))));
        // in % of one core of the fewest-cored host, which the verdict judges against: the busiest host's share of its own cores;
        p.set("systemCpuPct", busiestShare(each, cores, "systemCpuPct"));
        p.set("stealPct", worst(each, ph -> ph.path("stealPct"))); // % of one core, whatever the host's size, as the verdict judges it
        p.set("probes", first.path("probes").deepCopy()); // the system's own view at the first host's phase end
        return p;
    }

    /** Hosts this far apart (or this share of the phase, if more) did not load the system together. */
    static final long SKEW_MS = 100;
    static final double SKEW_SHARE = 0.05;

    /** The largest share of its own cores a figure takes on any host, in % of one core of the fewest-cored host; null when one is unknown. */
    private static JsonNode busiestShare(List<JsonNode> each, int[] cores, String key) {
        double share = 0;
        int fewest = java.util.Arrays.stream(cores).min().orElse(1);
        for (int i = 0; i < each.size(); i++) {
            JsonNode v = each.get(i).path(key);
            if (!v.isNumber()) return NODES.nullNode();
            share = Math.max(share, v.asDouble() / cores[i]);
        }
        return NODES.numberNode(share * fewest);
    }

    /** The largest of a figure over the hosts, null when one host could not read it (the worst is then unknown). */
    private static JsonNode worst(List<JsonNode> each, java.util.function.Function<JsonNode, JsonNode> figure) {
        double max = Double.NEGATIVE_INFINITY;
        for (JsonNode ph : each) {
            JsonNode v = figure.apply(ph);
            if (!v.isNumber()) return NODES.nullNode();
            max = Math.max(max, v.asDouble());
        }
        return NODES.numberNode(max);
    }

    /**
     * Adds up the hosts' {@code <phase>.<kind>.hlog} into {@code latency/<phase>.<kind>.hlog}, one interval from
     * {@code startMs} to {@code endMs} on this host's clock; null when no host wrote one.
     */
    static Histogram merge(java.util.function.IntFunction<Path> hlogs, int count, String phase, String kind, long startMs, long endMs,
                           Path latency) throws IOException {
        Histogram sum = null;
        String file = phase + "." + kind + ".hlog";
        for (int i = 0; i < count; i++) {
            Path h = hlogs.apply(i).resolve(file);
            if (!Files.isRegularFile(h)) continue;
            HistogramLogReader reader = new HistogramLogReader(h.toFile());
            for (var next = reader.nextIntervalHistogram(); next != null; next = reader.nextIntervalHistogram()) {
                Histogram part = (Histogram) next;
                if (sum == null) sum = new Histogram(part.getNumberOfSignificantValueDigits());
                sum.add(part);
            }
        }
        if (sum == null) return null;
        sum.setStartTimeStamp(startMs);
        sum.setEndTimeStamp(Math.max(endMs, startMs));
        Files.createDirectories(latency);
        try (PrintStream out = new PrintStream(latency.resolve(file).toFile())) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputLogFormatVersion();
            w.outputComment("phase " + phase + ", " + kind + ": the histograms of " + count + " driver hosts added up (load/*.d<i>/" + file
                    + "), on the run host's clock");
            w.outputComment("values in nanoseconds; one interval spanning the phase");
            w.outputStartTime(startMs);
            w.setBaseTime(startMs);
            w.outputBaseTime(startMs);
            w.outputLegend();
            w.outputIntervalHistogram(sum);
        }
        return sum;
    }

    /** {mean, p50, p90, p95, p99, p99_9, max} in ms, as the driver writes it; null for no histogram. */
    static JsonNode summary(Histogram h) {
        if (h == null) return NODES.nullNode();
        ObjectNode s = Manifest.JSON.createObjectNode();
        boolean any = h.getTotalCount() > 0;
        s.set("mean", ms(any, h.getMean()));
        for (double q : new double[]{50, 90, 95, 99, 99.9})
            s.set(q == 99.9 ? "p99_9" : "p" + (int) q, ms(any, h.getValueAtPercentile(q)));
        s.set("max", ms(any, h.getMaxValue()));
        return s;
    }

    private static JsonNode ms(boolean any, double ns) {
        return any ? NODES.numberNode(Math.round(ns / 1e3) / 1e3) : NODES.nullNode();
    }
}
