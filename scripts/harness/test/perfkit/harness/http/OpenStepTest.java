package perfkit.harness.http;

import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.measure.StepVerdict;

import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** The open-model step's rules: its verdict with the driver's lateness, its connections, its capacity bracket in words. */
class OpenStepTest {
    /** A step at 1000 req/s for 10 s against a 100 ms SLO on a 2-core host with room to spare. */
    private static OpenStep.Facts facts(long requests, double p99, double latenessP99, List<Long> perSecond, long errors) {
        return new OpenStep.Facts(1000, requests, 10, errors, List.of(), requests, p99, 100, 80, 0, 2, latenessP99, perSecond);
    }

    private static final List<Long> KEPT_UP = Collections.nCopies(10, 1000L);

    @Test
    void aStepWithinItsSloWhoseDriverKeptUpIsMet() {
        assertEquals(StepVerdict.Status.MET, OpenStep.verdict(facts(10_000, 40, 1.5, KEPT_UP, 0)).status());
    }

    @Test
    void aLateDriverMakesAMetStepInvalidButLeavesAMissSound() {
        StepVerdict met = OpenStep.verdict(facts(10_000, 40, 12, KEPT_UP, 0));
        assertEquals(StepVerdict.Status.INVALID, met.status(), "12 ms late at p99 is more than 10% of a 100 ms SLO");
        assertTrue(met.reason().contains("driver late by 12.0 ms at p99"), met.reason());
        StepVerdict missed = OpenStep.verdict(facts(10_000, 300, 12, KEPT_UP, 0));
        assertEquals(StepVerdict.Status.MISSED, missed.status(), "requests sent late would only have been slower");
        assertTrue(missed.reason().contains("already miss the SLO"), missed.reason());
    }

    @Test
    void aDriverThatFailsMakesItsStepInvalidAndTheBracketALowerBound() {
        OpenStep.Spec spec = new OpenStep.Spec("plain", "plain/r34101", 3, "http://127.0.0.1:1", "/", 34_101, 5, 10, 100, 2,
                Map.of(), Map.of(), Map.of(), "test");
        OpenStep.Result r = OpenStep.driverFailed(spec, 10_247, "load driver plain.r34101.fork3 did not finish within 225 s");
        assertEquals(StepVerdict.Status.INVALID, r.verdict().status());
        assertTrue(r.verdict().reason().startsWith("the load driver failed: load driver plain.r34101.fork3 did not finish"), r.verdict().reason());
        assertEquals(0, r.requests());
        assertTrue(Double.isNaN(r.latency().p99()));
        // the rate below it was met: capacity is at least that, not a wall and not a failed run
        CapacitySearch.Result bracket = CapacitySearch.Result.ofFixedSteps(List.of(
                new CapacitySearch.Step(22_734, OpenStep.verdict(facts(10_000, 40, 1.5, KEPT_UP, 0))),
                new CapacitySearch.Step(34_101, r.verdict())), "fixed rates");
        assertEquals(CapacitySearch.Status.LOWER_BOUND, bracket.status());
        assertEquals(22_734, bracket.lastMet());
    }

    @Test
    void aSecondWithTooFewArrivalsIsTheDriverFallingBehindEvenWhenTheTotalIsRight() {
        List<Long> stalled = new java.util.ArrayList<>(KEPT_UP);
        stalled.set(4, 700L);
        stalled.set(5, 1300L); // the catch-up keeps the count right
        StepVerdict v = OpenStep.verdict(facts(10_000, 40, 2, stalled, 0));
        assertEquals(StepVerdict.Status.INVALID, v.status());
        assertTrue(v.reason().contains("started 700 of 1000 requests in second 5"), v.reason());
    }

    @Test
    void errorsMissTheSloAndASaturatedMissIsNotMeasurable() {
        assertEquals(StepVerdict.Status.MISSED, OpenStep.verdict(facts(10_000, 40, 2, KEPT_UP, 3)).status());
        OpenStep.Facts saturated = new OpenStep.Facts(1000, 10_000, 10, 0, List.of(), 10_000, 300, 100, 195, 0, 2, 2, KEPT_UP);
        assertEquals(StepVerdict.Status.NOT_MEASURABLE, OpenStep.verdict(saturated).status());
    }

    @Test
    void connectionsFollowTheLatencyTheTargetShowedNotTheRateAlone() {
        int fast = OpenStep.connections(16_000, 200, 0.2);
        // 20 ms of arrivals at least: a short stall at 16k req/s must not run out of connections
        assertEquals(496, fast, "a static file server at 16k req/s needs no 16,016 connections");
        assertEquals(1456, OpenStep.connections(2400, 200, 100), "an app waiting 100 ms: arrivals during two SLOs, with headroom");
        assertEquals(OpenStep.connections(2400, 200, 400), OpenStep.connections(2400, 200, Double.NaN), "no hint: as slow as two SLOs");
    }

    @Test
    void theDriverHeapGrowsWithItsConnections() {
        assertTrue(HttpLoad.heapMb(16_000) > HttpLoad.heapMb(100) + 2000, HttpLoad.heapMb(16_000) + " MB");
    }

    @Test
    void theBenchmarkRunsOnAFixedScheduleWithSizedThreadsAndConnections() throws Exception {
        // a path YAML would misread if it were pasted in as text: ": " opens a mapping, " #" a comment
        String path = "/x?y=1&q=a: b #c";
        String yaml = new HttpLoad.Plan("t", "http://127.0.0.1:8080/x?y=1").open("warmup", path, 500, 2, 64, HttpLoad.Plan.Counts.WARMUP, HttpLoad.Plan.Follows.AFTER_DRAIN)
                .open("m", path, 500, 5, 80, HttpLoad.Plan.Counts.MEASURED, HttpLoad.Plan.Follows.WITHOUT_GAP).yaml();
        com.fasterxml.jackson.databind.JsonNode bench = HttpLoad.YAML.readTree(yaml);
        assertEquals(HttpLoad.threads(), bench.path("threads").asInt(), yaml);
        assertEquals(80, bench.path("http").path("sharedConnections").asInt(), yaml);
        com.fasterxml.jackson.databind.JsonNode warmup = bench.path("phases").get(0).path("warmup").path("constantRate"),
                measured = bench.path("phases").get(1).path("m").path("constantRate");
        assertFalse(warmup.path("variance").asBoolean(true) || measured.path("variance").asBoolean(true), "arrivals on a fixed schedule: " + yaml);
        assertEquals("warmup", measured.path("startAfter").asText(), yaml);
        com.fasterxml.jackson.databind.JsonNode request = measured.path("scenario").get(0).path("user").get(0).path("httpRequest");
        assertEquals(path, request.path("GET").asText(), "the path comes back as given: " + yaml);
        assertEquals("no-store", request.path("headers").path("cache-control").asText(), yaml);
    }

    @Test
    void aCapacityBracketSaysWhichBoundItIs() {
        assertEquals("600..1200 req/s (wall)", RateCapacity.describe(new CapacitySearch.Result(600, 1200, CapacitySearch.Status.WALL, "", List.of())));
        assertEquals("at least 2400 req/s (lower bound)", RateCapacity.describe(new CapacitySearch.Result(2400, null, CapacitySearch.Status.LOWER_BOUND, "", List.of())));
        assertEquals("below 300 req/s (wall)", RateCapacity.describe(new CapacitySearch.Result(null, 300, CapacitySearch.Status.WALL, "", List.of())));
    }

    @Test
    void aServersJitRateComesFromItsReportsOverTheSpanAsked() {
        JvmActivity.Listener l = new JvmActivity.Listener(null, null);
        for (int s = 0; s <= 20; s++) l.add(new JvmActivity.Report(1_000_000L + s * 1000L, s < 10 ? s * 800L : 8000 + (s - 10) * 20L, 0));
        assertEquals(800, l.jitMsPerSecond(1_000_000L, 1_009_000L), 1e-9, "compiling hard in the first 10 s");
        assertEquals(20, l.jitMsPerSecond(1_010_000L, 1_020_000L), 1e-9, "quiet after");
        assertTrue(Double.isNaN(l.jitMsPerSecond(2_000_000L, 2_001_000L)), "no report in that span");
    }

    /** A server with few files left bounds the step's connections; its name says which one did. */
    @Test
    void aServerWithFewFilesLeftCapsTheConnections() throws Exception {
        Process server = new ProcessBuilder("bash", "-c", "ulimit -n 64 && exec sleep 60").start();
        try {
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!ProcessHandle.of(server.pid()).flatMap(h -> h.info().command()).orElse("").endsWith("sleep") && System.nanoTime() < deadline)
                Thread.sleep(20);
            OpenStep.FileBudget budget = OpenStep.fileBudget(Map.of("app", server.pid()));
            assertEquals("app", budget.tightest());
            assertTrue(budget.connections() >= 16 && budget.connections() <= 32, "half of 64 less what sleep holds: " + budget.connections());
            assertEquals("the load driver", OpenStep.fileBudget(Map.of()).tightest());
        } finally {
            server.destroyForcibly().waitFor();
        }
    }
}
