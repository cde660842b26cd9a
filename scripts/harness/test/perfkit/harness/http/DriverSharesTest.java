package perfkit.harness.http;

import perfkit.harness.record.Manifest;
import perfkit.harness.os.Ssh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.*;

/** Several driver hosts sharing one plan: each gets its share, and their results merge into what one driver would report. */
class DriverSharesTest {

    @Test
    void eachHostGetsItsShareOfEveryRateAndTheUsersAddUpExactly() throws Exception {
        HttpLoad.Plan plan = new HttpLoad.Plan("t", "http://10.0.0.1:8080/x")
                .always("warmup", "/x", 5, 2, HttpLoad.Plan.Counts.WARMUP)
                .closed("n5", "/x", 5, 20)
                .ramp("ramp", "/x", 100, 1000, 2, 81)
                .open("m", "/x", 1000, 5, 81, HttpLoad.Plan.Counts.MEASURED, HttpLoad.Plan.Follows.WITHOUT_GAP);
        String first = plan.yaml(0, 2, 3), second = plan.yaml(1, 2, 1);
        assertEquals(List.of(3, 3), numbers(first, "users: (\\d+)"), "5 users dealt out one by one: 3 here");
        assertEquals(List.of(2, 2), numbers(second, "users: (\\d+)"), "and 2 there, 5 in all");
        for (String share : List.of(first, second)) {
            JsonNode phases = HttpLoad.YAML.readTree(share).path("phases");
            assertEquals(500, phases.get(3).path("m").path("constantRate").path("usersPerSec").asDouble(), share);
            assertEquals(50, phases.get(2).path("ramp").path("increasingRate").path("initialUsersPerSec").asDouble(), share);
            assertEquals(500, phases.get(2).path("ramp").path("increasingRate").path("targetUsersPerSec").asDouble(), share);
            assertEquals(41, phases.get(3).path("m").path("constantRate").path("maxSessions").asInt(), share);
            assertEquals(20, phases.get(1).path("n5").path("atOnce").path("scenario").get(0).path("user").get(0).path("loop").path("repeats").asInt(), share);
        }
        assertEquals(3, HttpLoad.YAML.readTree(first).path("threads").asInt(), "each host's own event loops");
        assertEquals(1, HttpLoad.YAML.readTree(second).path("threads").asInt());
        for (String share : List.of(first, second))
            assertEquals(41, HttpLoad.YAML.readTree(share).path("http").path("sharedConnections").asInt(), "the largest concurrency of its share");
        assertEquals(5, plan.fewestUsers());
        assertEquals(81, plan.connections(), "the whole plan is unchanged");
        JsonNode whole = HttpLoad.YAML.readTree(plan.yaml()).path("phases");
        assertEquals(1000, whole.get(3).path("m").path("constantRate").path("usersPerSec").asDouble());
        assertEquals(5, whole.get(0).path("warmup").path("always").path("users").asInt());
        assertNotNull(HttpLoad.sharingProblem(6, 5, "users"));
        assertNull(HttpLoad.sharingProblem(5, 5, "users"));
    }

    @Test
    void theMergedResultCountsEveryRequestAndItsPercentilesAreThoseOfEveryResponse(@TempDir Path tmp) throws Exception {
        Random random = new Random(7);
        Histogram[] corrected = {new Histogram(3), new Histogram(3)};
        for (int i = 0; i < 2; i++) {
            Path dir = Files.createDirectories(tmp.resolve("d" + (i + 1)));
            for (int k = 0; k < 1000 * (i + 1); k++) corrected[i].recordValue(1_000_000L * (i + 1) + random.nextInt(5_000_000 * (i + 1)));
            long start = 10_000 + 1000L * i; // each on its own clock
            hlog(dir.resolve("m.corrected.hlog"), corrected[i], start);
            hlog(dir.resolve("m.uncorrected.hlog"), corrected[i], start);
            hlog(dir.resolve("m.lateness.hlog"), single(1000 * (i + 1)), start);
        }
        List<JsonNode> results = List.of(result(1000, 10_000, 15_000, 30.0, 120.0, List.of(500, 500, 500)),
                result(2000, 11_000, 16_500, 45.0, null, List.of(500, 499)));
        List<LongUnaryOperator> clocks = List.of(t -> t, t -> t - 1000); // the second host's clock runs 1 s ahead
        Path latency = tmp.resolve("latency");
        ObjectNode merged = DriverShares.merged(results, clocks, List.of(Ssh.of("ops@h1"), Ssh.of("h2")), new int[]{2, 8}, 0, java.util.Set.of("m"), i -> tmp.resolve("d" + (i + 1)), latency);

        assertEquals(5, merged.path("threads").asInt());
        assertEquals(List.of("driver", "driver2"), merged.path("drivers").findValuesAsText("part"));
        JsonNode warm = merged.path("phases").get(0), m = merged.path("phases").get(1);
        assertTrue(warm.path("latencyMs").isNull(), "no summary of summaries for a warm-up");
        assertEquals(3000, m.path("requests").asLong());
        assertEquals(3000, m.path("correctedCount").asLong());
        assertEquals(10_000, m.path("startMs").asLong(), "the earliest start, on this host's clock");
        assertEquals(15_500, m.path("endMs").asLong(), "the latest end, on this host's clock");
        assertEquals(List.of(1000L, 999L), longs(m.path("startedPerSecond")), "the seconds both ran, added up");
        assertEquals(45.0, m.path("cpuPct").path("driver").asDouble(), "the busiest driver");
        assertTrue(m.path("systemCpuPct").isNull(), "unknown when one host could not read it");
        assertTrue(m.path("sessionLimitExceeded").asBoolean(), "one host out of sessions is the step's problem");
        assertEquals(0, m.path("hostSkewMs").asLong(), "both started at 10 s on this host's clock");
        assertTrue(m.path("error").isNull());

        Histogram all = corrected[0].copy();
        all.add(corrected[1]);
        assertEquals(Math.round(all.getValueAtPercentile(99) / 1e3) / 1e3, m.path("latencyMs").path("p99").asDouble(), 1e-9);
        assertEquals(Math.round(all.getMaxValue() / 1e3) / 1e3, m.path("latencyMs").path("max").asDouble(), 1e-9);
        assertNotEquals(m.path("latencyMs").path("p99").asDouble(), Math.round(corrected[0].getValueAtPercentile(99) / 1e3) / 1e3, "not one host's");

        Histogram written = (Histogram) new HistogramLogReader(latency.resolve("m.corrected.hlog").toFile()).nextIntervalHistogram();
        assertEquals(3000, written.getTotalCount(), "the merged hlog holds every response");
        assertEquals(all.getValueAtPercentile(99.9), written.getValueAtPercentile(99.9));
        assertEquals(10_000, written.getStartTimeStamp());
        assertEquals(3000, ((Histogram) new HistogramLogReader(latency.resolve("m.lateness.hlog").toFile()).nextIntervalHistogram()).getTotalCount());
    }

    @Test
    void hostsThatStartedApartOrRanBusyAreJudgedAsTheyRan(@TempDir Path tmp) throws Exception {
        for (int i = 0; i < 2; i++) hlog(Files.createDirectories(tmp.resolve("d" + (i + 1))).resolve("m.corrected.hlog"), single(10), 10_000);
        List<JsonNode> results = List.of(result(1000, 10_000, 15_000, 30.0, 120.0, List.of(500)), result(1000, 10_000, 15_000, 30.0, 300.0, List.of(500)));
        List<Ssh> hosts = List.of(Ssh.of("h1"), Ssh.of("h2"));
        JsonNode told = DriverShares.merged(results, List.of(t -> t, t -> t + 20), hosts, new int[]{2, 8}, 20, java.util.Set.of("m"), i -> tmp.resolve("d" + (i + 1)), tmp.resolve("l")).path("phases").get(1);
        assertEquals(0, told.path("hostSkewMs").asLong(), "20 ms apart, as told (the interleave)");
        assertEquals(120.0, told.path("systemCpuPct").asDouble(), 1e-9, "60% of 2 cores beats 37.5% of 8: the busiest share, in cores of the smaller host");
        JsonNode apart = DriverShares.merged(results, List.of(t -> t, t -> t + 400), hosts, new int[]{2, 8}, 0, java.util.Set.of("warmup", "m"),
                i -> tmp.resolve("d" + (i + 1)), tmp.resolve("l")).path("phases");
        assertEquals(400, apart.get(1).path("hostSkewMs").asLong());
        assertTrue(apart.get(1).path("error").asText().contains("400 ms apart"), apart.toString());
        assertTrue(apart.get(0).path("error").isNull(), "a warm-up is not judged");
        JsonNode drained = DriverShares.merged(results, List.of(t -> t, t -> t + 400), hosts, new int[]{2, 8}, 0, java.util.Set.of(),
                i -> tmp.resolve("d" + (i + 1)), tmp.resolve("l")).path("phases").get(1);
        assertEquals(400, drained.path("hostSkewMs").asLong(), "recorded");
        assertTrue(drained.path("error").isNull(), "not judged where each host starts once its own share drained");
        HttpLoad.Plan plan = new HttpLoad.Plan("t", "http://h/x").open("m", "/x", 250, 5, 10, HttpLoad.Plan.Counts.MEASURED, HttpLoad.Plan.Follows.AFTER_DRAIN);
        assertEquals(4.0, plan.interleaveMs(), 1e-9, "at 250 req/s an arrival every 4 ms: the second host 4 ms after the first");
        HttpLoad.Plan open = new HttpLoad.Plan("t", "http://h/x").ramp("r", "/x", 10, 100, 2, 10).open("w", "/x", 100, 2, 10, HttpLoad.Plan.Counts.WARMUP, HttpLoad.Plan.Follows.WITHOUT_GAP)
                .open("m", "/x", 100, 2, 10, HttpLoad.Plan.Counts.MEASURED, HttpLoad.Plan.Follows.WITHOUT_GAP);
        assertEquals(java.util.Set.of("r", "w", "m"), open.onSchedule(), "an open step's phases run on the shared start's schedule");
        HttpLoad.Plan closed = new HttpLoad.Plan("t", "http://h/x").always("w", "/x", 5, 2, HttpLoad.Plan.Counts.WARMUP).closed("n5", "/x", 5, 10).closed("n10", "/x", 10, 10);
        assertEquals(java.util.Set.of("w"), closed.onSchedule(), "a closed step starts on each host when its share of the one before drained");
    }

    private static JsonNode result(long requests, long startMs, long endMs, double driverCpu, Double systemCpu, List<Integer> perSecond) {
        ObjectNode r = Manifest.JSON.createObjectNode().put("benchmark", "t").put("threads", requests == 1000 ? 3 : 2);
        var phases = r.putArray("phases");
        phases.addObject().put("name", "warmup").put("warmup", true).put("startMs", startMs - 2000).put("endMs", startMs).put("requests", 10)
                .put("sessionLimitExceeded", false).putNull("error").putNull("schedule").putObject("latencyMs").put("p99", 1.0);
        ObjectNode m = phases.addObject().put("name", "m").put("warmup", false).put("startMs", startMs).put("endMs", endMs).put("requests", requests)
                .put("correctedCount", requests).put("started", requests).put("sessionLimitExceeded", requests == 2000).putNull("error").put("schedule", "fixed");
        m.putObject("latencyMs").put("p99", 1.0);
        m.putObject("latenessMs").put("p99", 0.1);
        perSecond.forEach(m.putArray("startedPerSecond")::add);
        m.putObject("cpuPct").put("driver", driverCpu);
        if (systemCpu == null) m.putNull("systemCpuPct");
        else m.put("systemCpuPct", systemCpu);
        m.put("stealPct", 0.0).putObject("probes");
        return r;
    }

    private static Histogram single(int count) {
        Histogram h = new Histogram(3);
        for (int i = 0; i < count; i++) h.recordValue(50_000);
        return h;
    }

    private static void hlog(Path file, Histogram h, long startMs) throws Exception {
        h.setStartTimeStamp(startMs);
        h.setEndTimeStamp(startMs + 5000);
        try (PrintStream out = new PrintStream(file.toFile())) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputStartTime(startMs);
            w.setBaseTime(startMs);
            w.outputIntervalHistogram(h);
        }
    }

    private static List<Integer> numbers(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        List<Integer> out = new java.util.ArrayList<>();
        while (m.find()) out.add(Integer.parseInt(m.group(1)));
        return out;
    }

    private static List<Long> longs(JsonNode array) {
        List<Long> out = new java.util.ArrayList<>();
        array.forEach(n -> out.add(n.asLong()));
        return out;
    }
}
