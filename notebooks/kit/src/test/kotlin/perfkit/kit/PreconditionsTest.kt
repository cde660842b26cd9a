package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

class PreconditionsTest {
    @Test
    fun `a ratio is judged against its published figure, within a factor of two and on the claimed side of 1`() {
        // "about 2.75x": inside the band, far above it, far below it, on the wrong side, across 1
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 2.6, 2.2, 3.0), 2.75))
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 7.0, 6.0, 8.0), 2.75), "a larger effect than published still shows it")
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(Estimate(3, 1.2, 1.1, 1.3), 2.75), "faster, but under half of 2.75x")
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(Estimate(3, 0.8, 0.7, 0.9), 2.75))
        assertEquals(Answer.CANNOT_TELL, answerAgainstPublished(Estimate(3, 1.3, 0.9, 1.8), 2.75), "reaches across 1 and into the band")
        // the same rule for a claim below 1, turned: "lock off falls to 1/6" is on/off about 6, or off/on about 1/6
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 0.2, 0.15, 0.25), 1 / 6.0))
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(Estimate(3, 0.98, 0.95, 1.02), 1 / 6.0), "1.02x excludes 1/6")
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 5.0, 4.0, 6.0), 6.0))
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 0.2, 1 / 6.0, 0.25), 1 / 6.0), "the same interval, turned")
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(Estimate(3, 0.5, 0.4, 0.6), 1 / 6.0), "lock off at half of lock on: under half of 6x")
        // a small published ratio's band reaches below 1: then only the direction can be judged
        assertEquals(Answer.HOLDS, answerAgainstPublished(Estimate(3, 1.05, 1.02, 1.08), 1.28))
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(Estimate(3, 0.43, 0.38, 0.49), 1.28))
        assertEquals(Answer.CANNOT_TELL, answerAgainstPublished(Estimate(2, 2.7, 2.6, 2.8), 2.75), "two forks are a range")
        assertEquals(Answer.CANNOT_TELL, answerAgainstPublished(Estimate(3, 2.0, 1.5, 2.5), Double.NaN), "no published figure answers nothing")
        // the why names the limit that decided it: half the figure, or 1
        assertTrue("reaches 1.38x, half the original's 2.75x or more" in publishedRuleWhy(Answer.HOLDS, 2.75, 2.2, 3.0))
        assertTrue("short of 1.38x, half the original's 2.75x" in publishedRuleWhy(Answer.DOES_NOT_HOLD, 2.75, 1.1, 1.3))
        assertTrue("at or beyond 1 on the other side" in publishedRuleWhy(Answer.DOES_NOT_HOLD, 2.75, 0.7, 0.9))
        assertTrue("short of 1/3, half the original's 1/6" in publishedRuleWhy(Answer.DOES_NOT_HOLD, 1 / 6.0, 0.4, 0.6))
        assertTrue("at or beyond 1" in publishedRuleWhy(Answer.DOES_NOT_HOLD, 1.28, 0.38, 0.49), "under 2 only the direction decides")
    }

    @Test
    fun `a side at the machine's wall, or under heavy steal, fails the wall check, and the numbers are named`() {
        val clear = belowWall(mapOf("lock on" to listOf(26.0, 29.0), "lock off" to listOf(25.0, 30.0)), cores = 2)
        assertEquals(true, clear.met, clear.detail)
        val wall = belowWall(mapOf("lock on" to listOf(199.8, 120.0), "lock off" to listOf(150.0)), cores = 2)
        assertEquals(false, wall.met)
        assertTrue("lock on up to 200% (1 of 2 at the wall)" in wall.detail && "the wall: 180%" in wall.detail, wall.detail)
        val stolen = belowWall(mapOf("a" to listOf(50.0), "b" to listOf(50.0)), cores = 2, stealBySide = mapOf("b" to listOf(35.0)))
        assertEquals(false, stolen.met, stolen.detail)
        assertNull(belowWall(mapOf("a" to emptyList()), cores = 2).met, "nothing recorded is not checked, not passed")
        assertNull(belowWall(mapOf("a" to listOf(50.0), "b" to emptyList()), cores = 2).met, "a side without CPU leaves the check open")
        assertEquals(false, belowWall(mapOf("a" to listOf(190.0), "b" to emptyList()), cores = 2).met, "but a recorded wall fails it")
        assertEquals(false, belowWallJudged(mapOf("a" to listOf(Triple(50.0, false, 35.0)))).met, "heavy steal is a wall too")
        assertNull(belowWall(mapOf("a" to listOf(50.0)), cores = 0).met)
        val judged = belowWallJudged(mapOf("Kafka" to listOf(Triple(198.9, true, 0.1)), "Chronicle" to listOf(Triple(10.7, false, 0.1))))
        assertEquals(false, judged.met)
        assertTrue("Kafka 1 of 1 step(s) at it (system CPU up to 199%)" in judged.detail, judged.detail)
    }

    @Test
    fun `CPU no process of the step accounts for fails the check, unless parts ran elsewhere or nothing per process was recorded`() {
        // the web-reactive reference's fork 3: an idle app spinning in GC beside the measured MVC steps
        val steps = dataFrameOf("run_id", "cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct", "cpu_other_pct", "cpu_system_pct")(
            "here", 60.0, 20.0, 30.0, 500.0, 113.8, // 3.8% outside: the harness's own sampling; cpu_other_pct is not a process
            "here", 15.0, 10.0, 20.0, 500.0, 196.0, // 151% outside
            "placed", 15.0, 10.0, 20.0, 500.0, 196.0) // the app on another host: this host's total does not hold it
        val rows = steps.rows().toList()
        val processes = listOf("cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct")
        val busy = nothingElseBusy(mapOf("MVC" to rows.take(2), "WebFlux" to rows.take(1)), processes)
        assertEquals(false, busy.met)
        assertTrue("MVC up to 151% (1 of 2 step(s) above 30% of a core)" in busy.detail && "WebFlux up to 3.8%" in busy.detail, busy.detail)
        assertEquals(true, nothingElseBusy(mapOf("a" to rows.take(1)), processes).met)
        assertEquals(true, nothingElseBusy(mapOf("a" to rows.take(1) + rows.drop(2)), processes, placedRuns = setOf("placed")).met, "a placed run is not judged")
        val elsewhere = nothingElseBusy(mapOf("a" to rows.drop(2)), processes, placedRuns = setOf("placed"))
        assertNull(elsewhere.met)
        assertTrue("other hosts" in elsewhere.detail, elsewhere.detail)
        // three-tier's tiers: whichever process columns a row fills are its own
        val tiers = dataFrameOf("cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_system_pct")(null, 40.0, 50.0, 100.0)
        assertEquals(true, nothingElseBusy(mapOf("sync" to tiers.rows().toList()), listOf("cpu_app_pct", "cpu_a_pct", "cpu_b_pct")).met)
        assertNull(nothingElseBusy(mapOf("a" to dataFrameOf("cpu_system_pct")(150.0).rows().toList()), processes).met)
    }

    @Test
    fun `a late driver fails the check whether its step met the SLO or missed it`() {
        // the case: the async chain's fork 2 missed its SLO with the driver 62 ms late at p99
        val late = driverOnTime(mapOf("async fork 1 (met)" to 4.9, "async fork 2 (missed)" to 62.0), sloMs = 100.0)
        assertEquals(false, late.met)
        assertTrue("async fork 2 (missed) late by 62 ms" in late.detail, late.detail)
        assertEquals(false, driverOnTime(mapOf("met" to 12.0), sloMs = 100.0).met, "a met step is judged the same way")
        assertEquals(true, driverOnTime(mapOf("a" to 9.0, "b" to 3.5), sloMs = 100.0).met)
        assertNull(driverOnTime(mapOf("a" to null), sloMs = 100.0).met)
        assertEquals(false, sameOfferedLoad(mapOf("all forks" to listOf(902.0, 1035.0, 863.0))).met, "forks pooled at different rates")
        assertEquals(true, sameOfferedLoad(mapOf("fork 1" to listOf(902.0, 902.0), "fork 2" to listOf(1035.0, 1035.0))).met, "each pair at its own rate")
        assertEquals(false, sameOfferedLoad(mapOf("fork 1" to listOf(902.0, 1035.0))).met)
    }

    @Test
    fun `a cold flag drops a step only over a window long enough to judge, and the other answer is said`() {
        val cold = listOf("`freemarker` fork 2 (JIT 111 ms/s)")
        // 10 s steps: the flag is ten samples, so the step is left out and the warm answer given
        val (long, warmOnly, longCheck) = judgeWarmth(Answer.DOES_NOT_HOLD, Answer.CANNOT_TELL, cold, listOf(10.0, 10.02))
        assertEquals(Answer.CANNOT_TELL, long)
        assertTrue(warmOnly)
        assertEquals(true, longCheck.met)
        assertTrue("JIT 111 ms/s" in longCheck.detail && "with them the answer would be \"does not hold\"" in longCheck.detail, longCheck.detail)
        // sub-second steps: one sample, so no step is dropped on it, and warmth is listed as not checked
        val (short, _, shortCheck) = judgeWarmth(Answer.HOLDS, Answer.CANNOT_TELL, listOf("mvc fork 1 at N = 250 (JIT 99.6 ms/s)"), listOf(0.57, 2.7))
        assertEquals(Answer.HOLDS, short)
        assertNull(shortCheck.met)
        assertTrue("too short to judge" in shortCheck.detail && "without them the answer would be \"cannot tell here\"" in shortCheck.detail, shortCheck.detail)
        // but a refutation never rests on steps the JIT flagged: where warmth decides the verdict, the check fails
        val (_, _, refuting) = judgeWarmth(Answer.DOES_NOT_HOLD, Answer.CANNOT_TELL, listOf("x"), listOf(0.6))
        assertEquals(false, refuting.met, refuting.detail)
        assertEquals(false, judgeWarmth(Answer.HOLDS, Answer.DOES_NOT_HOLD, listOf("x"), listOf(0.6)).third.met)
        assertEquals(true, judgeWarmth(Answer.HOLDS, Answer.HOLDS, emptyList(), listOf(0.5)).third.met, "nothing flagged")
        assertNull(warmthNotRecorded("time").met)
        assertEquals(false, warmupSettled(mapOf("a" to listOf(true, false)), "rate stable").met)
    }

    @Test
    fun `a failed precondition turns any answer into cannot tell, naming it, and keeps what the interval said`() {
        val wall = Precondition("below the machine's wall", false, "system CPU 199.8% of 200%")
        val c = claim("x", "1.02x", Answer.DOES_NOT_HOLD, "The interval excludes 6x.", listOf(enoughForks(mapOf("a" to 3, "b" to 3)), wall))
        assertEquals(Answer.CANNOT_TELL, c.answer)
        assertTrue(c.why.startsWith("Not a question this host could answer here: below the machine's wall (system CPU 199.8% of 200%)"), c.why)
        assertTrue("\"does not hold\": The interval excludes 6x." in c.why, c.why)
        val unchecked = claim("x", "y", Answer.HOLDS, "z", listOf(warmthNotRecorded("time")))
        assertEquals(Answer.HOLDS, unchecked.answer, "a precondition these runs cannot check is listed, not failed")
        val table = claimsTable(listOf(c, unchecked)).text
        assertTrue("| checked first |" in table, table)
        assertTrue("✓ enough forks: a 3, b 3" in table && "✗ below the machine's wall" in table && "? JVMs warm" in table, table)
    }

    /** throughput.csv rows for the factor checks: (lock, bottleneck, queued_mean) per drain, 4 instances, queue 128. */
    private fun drains(vararg d: Triple<String, String, Double>): AnyFrame = dataFrameOf("job_type", "instances", "acquire_size", "lock", "jobs_per_s",
        "steady_jobs_per_s", "pct_of_max", "valid", "cpu_system_pct", "cores", "bottleneck", "queue_size", "queued_mean")(
        *d.flatMap { (lock, neck, queued) -> listOf("fixed", 4, 512, lock, if (lock == "on") 60.0 else 10.0, if (lock == "on") 61.0 else 10.1, 50.0, true,
            40.0, 2, neck, 128, queued) }.toTypedArray<Any?>())

    @Test
    fun `an inert factor answers nothing, executor threads busy on both sides or a queue too full for a larger batch`() {
        val pub = dataFrameOf("study", "source", "variant", "metric", "value")(
            "workflow", "original write-up", "fixed", "pct_of_theoretical_max", 82.0,
            "workflow", "original write-up", "lock-off/lock-on", "throughput_ratio", 1 / 6.0)
        val threadsBound = List(3) { Triple("on", "executor-threads", 121.0) } + List(3) { Triple("off", "executor-threads", 121.0) }
        val inert = workflowClaims(drains(*threadsBound.toTypedArray()), pub).single { "lock off" in it.original }
        assertEquals(Answer.CANNOT_TELL, inert.answer, inert.why)
        assertTrue("lock live" in inert.why && "executor-threads 3" in inert.why, inert.why)
        val contended = List(3) { Triple("on", "executor-threads", 60.0) } + List(3) { Triple("off", "database-locks", 20.0) }
        val live = workflowClaims(drains(*contended.toTypedArray()), pub).single { "lock off" in it.original }
        assertEquals(Answer.HOLDS, live.answer, live.why)
        assertTrue(live.checks.single { it.name == "lock live" }.met == true)
        // a queue that stays nearly full lets no acquisition take more than a few jobs, whatever the acquire size
        val full = acquireSizeLive(drains(Triple("on", "acquisition", 121.0)).rowsList(), 32)
        assertFalse(full.met!!, full.detail)
        assertTrue("7 free places" in full.detail, full.detail)
        assertEquals(true, acquireSizeLive(drains(Triple("on", "acquisition", 20.0)).rowsList(), 32).met)
        assertEquals(false, acquireSizeLive(drains(Triple("on", "acquisition", 95.0)).rowsList(), 32).met, "33 free places are not room for more than 32")
    }

    private fun AnyFrame.rowsList() = rows().toList()

    /** Steps of one side: cell, JIT over the measured window (ms/s, null = not recorded) and the window's seconds. */
    private fun jitSteps(window: Double, vararg jit: Double?) = mapOf("kafka" to dataFrameOf("cell", "jit_ms_per_s", "jit_window_s")(
        *jit.mapIndexed { i, j -> listOf<Any?>("kafka/blocking/n${i + 1}", j, if (j == null) null else window) }.flatten().toTypedArray()).rows().toList())

    @Test
    fun `warmth by the JIT fails on a compiling step, leaves short windows unjudged, and keeps the rule where nothing was recorded`() {
        val settled = Precondition(WARM, true, "warm-up settled by its rule")
        val warm = warmByJit(jitSteps(30.0, 4.0, 12.0), "steps", settled)
        assertEquals(true, warm.met, warm.detail)
        val cold = warmByJit(jitSteps(30.0, 4.0, 180.0), "steps", settled)
        assertEquals(false, cold.met)
        assertTrue("kafka, kafka/blocking/n2 (JIT 180 ms/s)" in cold.detail, cold.detail)
        val short = warmByJit(jitSteps(2.0, 4.0, 180.0), "steps", settled)
        assertNull(short.met, "two samples judge nothing")
        assertTrue("too short to judge" in short.detail && "warm-up settled" in short.detail, short.detail)
        assertEquals(settled, warmByJit(jitSteps(30.0, null, 180.0), "steps", settled), "a step without the series keeps the study's rule")
        val unsettled = Precondition(WARM, false, "kafka: 1 step(s) whose warm-up never settled")
        assertEquals(false, warmByJit(jitSteps(30.0, 4.0, 12.0), "steps", unsettled).met, "a warm JIT does not excuse a warm-up that never settled")
    }
}
