package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertTrue

class WorkflowTest {
    @TempDir lateinit var root: Path

    private fun sizedRun(id: String, params: String, notes: String, csv: String): RecordedRun {
        val dir = Files.createDirectories(root.resolve("runs/workflow/$id"))
        Files.writeString(dir.resolve("throughput.csv"), csv)
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"workflow","runId":"$id","mode":"drain","params":$params,
            "notes":$notes,"files":[{"path":"throughput.csv","kind":"table","description":"test"}]}"""))
        return loadRun(dir)
    }

    @Test
    fun `what profiling cost a workflow run is its recorded no-op drains over the plain ones beside them, in jobs per second`() {
        val dir = Files.createDirectories(root.resolve("runs/workflow/20261128T000000Z-h1-0f0f0f"))
        Files.writeString(dir.resolve("throughput.csv"), "cell\nfixed-r1\n")
        Files.writeString(dir.resolve("profiling.csv"), "cell,pair,profiled_jobs_per_s,plain_jobs_per_s,profiled_over_plain\n" +
            listOf(180.0 to 200.0, 185.0 to 201.0, 178.0 to 199.0).mapIndexed { i, (p, q) -> "noop-k1-a32-lockoff,${i + 1},$p,$q,${p / q}" }.joinToString("\n") + "\n")
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"workflow","runId":"20261128T000000Z-h1-0f0f0f","mode":"drain",
            "params":{"profile":"true"},"files":[{"path":"throughput.csv","kind":"table","description":"test"},
            {"path":"profiling.csv","kind":"table","description":"test"}]}"""))
        val cost = profilingCost(listOf(loadRun(dir))).rows().single()
        assertEquals("noop-k1-a32-lockoff", cost["cell"])
        assertEquals("jobs/s", cost["unit"])
        assertEquals(3, cost["pairs"])
        assertEquals(181.0, cost["profiled"] as Double, 0.01)
        assertEquals("profiling costs throughput", cost["verdict"])
    }

    @Test
    fun `the sizing says each run's threads and its queue per instance, read from the cells or the run's option`() {
        val sized = sizedRun("20261126T000000Z-h1-aaaaaa", """{"threads":"auto","queue-size":"auto"}""",
            """{"calibration":{"noopJobsPerS":208.4,"rateFrom":"steady","calibrationThreads":32,"bottleneck":"cpu:engines","threads":2,
            "theoreticalMaxPerInstance":20.0,"headroom":0.5}}""", "cell,threads,queue_size\nfixed-r1,2,128\nnoop-r1,2,128\n")
        val older = sizedRun("20261124T000000Z-h1-bbbbbb", """{"threads":"4","queue-size":"8192"}""", "{}", "cell,threads\nfixed-r1,4\n")
        val lines = executorSizing(listOf(sized, older)).lines()
        assertEquals(2, lines.size, lines.toString())
        assertTrue("threads per instance: **2**" in lines[0] && "queue **128** per instance (auto: 64 places per thread" in lines[0], lines[0])
        assertTrue("threads set by hand (--threads 4)" in lines[1] && "queue 8192 per instance (--queue-size)" in lines[1], lines[1])
    }
    @Test
    fun `each drain carries its busiest engine's JIT after the warm-up, from the run's own series`() {
        val dir = Files.createDirectories(root.resolve("runs/workflow/20261128T000000Z-h1-cccccc"))
        Files.writeString(dir.resolve("throughput.csv"), "cell,job_type\nfixed-k2-r1,fixed\nnoop-k1-r1,noop\n")
        // engine1 compiles hard for the 2 s of warm-up, then settles at 10 ms/s; engine2 keeps compiling at 90 ms/s
        val series = (0 until 8).flatMap { i -> listOf(
            "${1000L * i},$i,execute,jvm:fixed-k2-r1/engine1,jit_ms_per_s,${if (i < 2) 400 else 10}",
            "${1000L * i},$i,execute,jvm:fixed-k2-r1/engine2,jit_ms_per_s,90",
            "${1000L * i},$i,generate,jvm:noop-k1-r1/engine1,jit_ms_per_s,500") }
        Files.writeString(dir.resolve("timeseries.csv"), "epoch_ms,elapsed_s,phase,series,metric,value\n" + series.joinToString("\n") + "\n")
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"workflow","runId":"20261128T000000Z-h1-cccccc","mode":"drain",
            "params":{"warmup":"2"},"files":[{"path":"throughput.csv","kind":"table","description":"t"},
            {"path":"timeseries.csv","kind":"timeseries","description":"t"}]}"""))
        val run = loadRun(dir)
        val rows = listOf(run).table("throughput.csv").withEngineJit(listOf(run)).rows().toList()
        assertEquals(90.0, rows[0]["jit_ms_per_s"], "the busiest engine decides")
        assertEquals(6.0, rows[0]["jit_window_s"], "8 s of drain less 2 s of warm-up")
        assertEquals(null, rows[1]["jit_ms_per_s"], "no drain-phase report: not judged")
    }

    /** Drains of one side with their engines' JIT after warm-up (ms/s) over a window of [window] seconds. */
    private fun warmth(jit: List<Double?>, window: Double) = mapOf("side" to dataFrameOf("cell", "jit_ms_per_s", "jit_window_s")(
        *jit.mapIndexed { i, j -> listOf<Any?>("fixed-r$i", j, if (j == null) null else window) }.flatten().toTypedArray()).rows().toList())

    @Test
    fun `a drain whose engines still compiled after warm-up fails the warmth check, and a short or unrecorded one is not judged`() {
        assertEquals(true, drainsWarm(warmth(listOf(10.0, 20.0, 30.0), 60.0)).met)
        val cold = drainsWarm(warmth(listOf(10.0, 120.0, 30.0), 60.0))
        assertEquals(false, cold.met)
        assertTrue("fixed-r1 (JIT 120 ms/s)" in cold.detail, cold.detail)
        assertEquals(null, drainsWarm(warmth(listOf(10.0, 120.0, 30.0), 3.0)).met, "3 s is too short to judge")
        val unrecorded = drainsWarm(warmth(listOf(null, null, null), 60.0))
        assertEquals(null, unrecorded.met)
        assertTrue("not judged from the JIT" in unrecorded.detail, unrecorded.detail)
    }

    @Test
    fun `a share of the maximum measured on compiling engines is not answered`() {
        val t = dataFrameOf("cell", "job_type", "instances", "acquire_size", "lock", "jobs_per_s", "pct_of_max", "valid", "jit_ms_per_s", "jit_window_s")(
            *(1..3).flatMap { r -> listOf<Any?>("fixed-k1-r$r", "fixed", 1, 32, "on", 176.0 + r, 88.0 + r / 2.0, true, if (r == 2) 150.0 else 5.0, 80.0) }.toTypedArray())
        val claim = workflowClaims(t, pub)[0]
        assertEquals(Answer.CANNOT_TELL, claim.answer, claim.why)
        assertTrue("JVMs warm" in claim.why && "fixed-k1-r2" in claim.why, claim.why)
    }

    private val pub = dataFrameOf("study", "source", "variant", "metric", "value")(
        "workflow", "original write-up", "fixed", "pct_of_theoretical_max", 82.0,
        "workflow", "original write-up", "lock-off/lock-on", "throughput_ratio", 1 / 6.0)

    /** throughput.csv rows: (type, instances, acquire, lock) with jobs/s and % of max per repetition. */
    private fun cells(vararg drains: Pair<List<Any>, List<Double>>): AnyFrame {
        val rows = drains.flatMap { (c, xs) -> xs.map { x -> listOf(c[0], c[1], c[2], c[3], x, x / 2, true) } }
        return dataFrameOf("job_type", "instances", "acquire_size", "lock", "jobs_per_s", "pct_of_max", "valid")(*rows.flatten().toTypedArray())
    }

    @Test
    fun `the share of the maximum holds above 82 and stays stable only when more instances keep nine tenths of it`() {
        val claims = workflowClaims(cells(
            listOf("fixed", 1, 32, "on") to listOf(176.0, 178.0, 180.0),   // 88..90% of the maximum
            listOf("fixed", 4, 32, "on") to listOf(120.0, 124.0, 122.0)), pub)
        assertEquals(Answer.HOLDS, claims[0].answer, claims[0].why)
        assertEquals(Answer.DOES_NOT_HOLD, claims[1].answer, claims[1].why)
        assertTrue("4 instances" in claims[1].here, claims[1].here)
    }

    @Test
    fun `a lock-off drain that one engine hoarded answers nothing about the lock`() {
        val rows = (1..3).flatMap { r ->
            listOf(listOf("on-$r", "fixed", 4, 32, "on", 80.0 + r, 60.0, true), listOf("off-$r", "fixed", 4, 32, "off", 12.0 + r, 10.0, true))
        }
        val t = dataFrameOf("cell", "job_type", "instances", "acquire_size", "lock", "jobs_per_s", "pct_of_max", "valid")(*rows.flatten().toTypedArray<Any?>())
        fun engines(offCommits: List<Int>) = dataFrameOf("cell", "instance", "commit_events")(*(1..3).flatMap { r ->
            (1..4).flatMap { i -> listOf(listOf("on-$r", i, 300), listOf("off-$r", i, offCommits[i - 1])) }
        }.flatten().toTypedArray<Any?>())
        val hoarded = workflowClaims(t, pub, engines(listOf(0, 1200, 0, 0))).single { "lock off" in it.original }
        assertEquals(Answer.CANNOT_TELL, hoarded.answer, hoarded.why)
        assertTrue("the busiest engine committed 100% of the jobs" in hoarded.why, hoarded.why)
        val shared = workflowClaims(t, pub, engines(listOf(300, 300, 300, 300))).single { "lock off" in it.original }
        assertEquals(Answer.HOLDS, shared.answer, shared.why)
        assertEquals(1.0, busiestShare(engines(listOf(0, 1200, 0, 0)), t.withLockPoll(), "fixed", Triple(4, 32, "off")))
    }

    @Test
    fun `stability is not judged on a backlog too small to give every engine a batch`() {
        fun drains(jobs: Int) = (1..3).flatMap { r -> listOf(listOf("fixed", 1, 512, "on", 28.0 + r, 94.0, true, jobs), listOf("fixed", 4, 512, "on", 50.0 + r, 44.0, true, jobs)) }
        fun frame(jobs: Int) = dataFrameOf("job_type", "instances", "acquire_size", "lock", "jobs_per_s", "pct_of_max", "valid", "jobs")(*drains(jobs).flatten().toTypedArray<Any?>())
        val small = workflowClaims(frame(1200), pub)[1]
        assertEquals(Answer.CANNOT_TELL, small.answer, small.why)
        assertTrue("a batch for every engine" in small.why && "two batches of 512 for each of 4 engines" in small.why, small.why)
        assertEquals(Answer.DOES_NOT_HOLD, workflowClaims(frame(100_000), pub)[1].answer, "a large backlog lets the claim be judged")
    }

    @Test
    fun `a queue smaller than the acquire size is the batch an engine takes`() {
        // Flowable acquires at most the free queue places: with a queue of 192, acquire 512 takes 192 at a time
        fun frame(queue: Int) = dataFrameOf("job_type", "instances", "acquire_size", "lock", "jobs_per_s", "pct_of_max", "valid", "jobs", "queue_size")(
            *(1..3).flatMap { r -> listOf(listOf("fixed", 1, 512, "on", 28.0 + r, 94.0, true, 1600, queue), listOf("fixed", 4, 512, "on", 50.0 + r, 44.0, true, 1600, queue)) }
                .flatten().toTypedArray<Any?>())
        assertEquals(Answer.DOES_NOT_HOLD, workflowClaims(frame(192), pub)[1].answer, "1,600 jobs are over two batches of 192 for 4 engines")
        val big = workflowClaims(frame(8192), pub)[1]
        assertEquals(Answer.CANNOT_TELL, big.answer, big.why)
        assertTrue("two batches of 512 for each of 4 engines" in big.why, big.why)
    }

    @Test
    fun `a job's thread time is busy threads over the committed rate, per lock setting`() {
        // 2 engines of 2 threads, all busy, committing 20 jobs/s: each job held a thread for 200 ms
        val t = dataFrameOf("job_type", "instances", "acquire_size", "lock", "lock_poll_ms", "threads", "jobs_per_s", "threads_busy_pct", "db_lock_waiters_mean", "valid")(
            "timer", 2, 32, "off", null, 2, 20.0, 100.0, 0.5, true,
            "timer", 2, 32, "on", 100, 2, 200.0, 50.0, 0.0, true,
            "timer", 2, 32, "on", 100, 2, 100.0, 50.0, 0.0, true,
            "timer", 2, 32, "on", 100, 2, 1.0, 50.0, 0.0, false)
        val rows = threadTimePerJob(t).rows().associateBy { it["lock"] }
        assertEquals(200.0, rows["off"]!!["thread_ms_per_job"] as Double, 1e-9)
        assertEquals((10.0 + 20.0) / 2, rows["on, polled every 100 ms"]!!["thread_ms_per_job"] as Double, 1e-9, "the mean over drains; an invalid drain left out")
        assertEquals(2, rows["on, polled every 100 ms"]!!["n"])
    }

    @Test
    fun `two repetitions give ranges, which answer nothing`() {
        val claims = workflowClaims(cells(listOf("fixed", 1, 32, "on") to listOf(176.0, 178.0)), pub)
        assertEquals(Answer.CANNOT_TELL, claims[0].answer)
        assertTrue("ranges" in claims[0].why, claims[0].why)
    }

    @Test
    fun `the lock claim asks whether lock off is slower, per job type, and says how far from the original's 6x`() {
        val claims = workflowClaims(cells(
            listOf("noop", 2, 32, "on") to listOf(100.0, 102.0, 98.0), listOf("noop", 2, 32, "off") to listOf(150.0, 152.0, 148.0),
            listOf("timer", 2, 32, "on") to listOf(300.0, 310.0, 305.0), listOf("timer", 2, 32, "off") to listOf(55.0, 56.0, 54.0)), pub)
        val noop = claims.single { "(noop jobs)" in it.original }
        val timer = claims.single { "(timer jobs)" in it.original }
        assertEquals(Answer.DOES_NOT_HOLD, noop.answer, noop.why)
        assertEquals(Answer.HOLDS, timer.answer, timer.why)
        assertTrue("reaches 3x, half the original's 6x or more" in timer.why, timer.why)
        assertTrue("lock on / off: 5.5" in timer.here, timer.here)
    }

    @Test
    fun `lock off within a few percent of lock on rules out the original's 1 in 6`() {
        val claims = workflowClaims(cells(
            listOf("fixed", 4, 512, "on") to listOf(60.0, 61.0, 62.0), listOf("fixed", 4, 512, "off") to listOf(60.5, 61.5, 59.5)), pub)
        val lock = claims.single { "lock off" in it.original }
        assertEquals(Answer.DOES_NOT_HOLD, lock.answer, lock.why)
        assertTrue("short of 3x, half the original's 6x" in lock.why, lock.why)
    }

    @Test
    fun `the lock is judged where both sides have three valid drains, not where one has only two`() {
        val claims = workflowClaims(cells(
            listOf("timer", 4, 512, "on") to listOf(100.0, 104.0), listOf("timer", 4, 512, "off") to listOf(80.0, 90.0, 85.0),
            listOf("timer", 4, 32, "on") to listOf(90.0, 92.0, 91.0), listOf("timer", 4, 32, "off") to listOf(30.0, 31.0, 29.0)), pub)
        val lock = claims.single { "lock off" in it.original }
        assertTrue("at 4 instance(s), acquire 32" in lock.here, lock.here)
        assertEquals(Answer.HOLDS, lock.answer, lock.why)
    }

    @Test
    fun `missing configurations are named, not guessed`() {
        val claims = workflowClaims(cells(listOf("fixed", 1, 32, "off") to listOf(170.0, 171.0, 172.0)), pub)
        val acquire = claims.last()
        assertEquals(Answer.CANNOT_TELL, acquire.answer)
        assertTrue("acquire size 32 and a larger one" in acquire.why, acquire.why)
        assertTrue("more than one instance" in claims[1].why, claims[1].why)
    }

    @Test
    fun `a larger acquire size is compared at the same instances and lock`() {
        val claims = workflowClaims(cells(
            listOf("fixed", 2, 32, "on") to listOf(100.0, 101.0, 99.0), listOf("fixed", 2, 512, "on") to listOf(130.0, 131.0, 129.0),
            listOf("fixed", 1, 512, "off") to listOf(10.0, 11.0, 9.0)), pub)
        val acquire = claims.last()
        assertEquals(Answer.HOLDS, acquire.answer, acquire.why)
        assertTrue("acquire 512 / 32" in acquire.here && "2 instance(s)" in acquire.here, acquire.here)
    }

    @Test
    fun `lock-on drains are set beside one batch per poll, at each run's poll interval`() {
        val t = dataFrameOf("run_id", "job_type", "instances", "acquire_size", "lock", "jobs_per_s", "cpu_system_pct", "bottleneck", "valid")(
            "r1", "noop", 1, 32, "on", 62.0, 65.0, "acquisition", true,
            "r1", "noop", 1, 32, "on", 60.0, 64.0, "acquisition", true,
            "r1", "noop", 1, 32, "off", 217.0, 190.0, "cpu:engines", true,
            "r2", "noop", 1, 32, "on", 90.0, 186.0, "cpu:engines", true)
        val rows = lockPollCeiling(t, mapOf("r2" to 100.0)).rows().toList()
        assertEquals(2, rows.size, "lock-off drains and different polls are not pooled")
        val default = rows.single { it["lock_poll_ms"] == 500.0 }
        assertEquals(64.0, default["poll_ceiling"])
        assertEquals(95.3, (default["pct_of_ceiling"] as Double), 0.1)
        val fast = rows.single { it["lock_poll_ms"] == 100.0 }
        assertEquals(320.0, fast["poll_ceiling"])
        assertEquals("cpu:engines", fast["bottleneck"])
        val ratios = lockRatios(t).rows().toList()
        assertEquals(1, ratios.size)
        assertTrue((ratios[0]["off_over_on"] as Double) > 2.0)
    }

    /** throughput.csv rows with the lock's poll as a column: (type, instances, acquire, lock, poll) per repetition. */
    private fun polled(vararg drains: Pair<List<Any?>, List<Double>>): AnyFrame {
        val rows = drains.flatMap { (c, xs) -> xs.map { x -> listOf(c[0], c[1], c[2], c[3], c[4], x, x / 2, true) } }
        return dataFrameOf("job_type", "instances", "acquire_size", "lock", "lock_poll_ms", "jobs_per_s", "pct_of_max", "valid")(*rows.flatten().toTypedArray())
    }

    @Test
    fun `the lock's poll is a factor, so the lock claim is answered at each poll and a shorter poll's gain has an interval`() {
        val t = polled(
            listOf("noop", 1, 32, "off", null) to listOf(50.0, 51.0, 52.0),
            listOf("noop", 1, 32, "on", 500) to listOf(62.0, 63.0, 61.0),   // one batch of 32 per 500 ms poll: 64/s at most
            listOf("noop", 1, 32, "on", 100) to listOf(300.0, 310.0, 305.0))
        val lock = workflowClaims(t, pub).filter { "noop jobs" in it.original }
        assertEquals(2, lock.size, lock.toString())
        val slow = lock.single { "every 500 ms" in it.original }
        val fast = lock.single { "every 100 ms" in it.original }
        // the conclusion flips with the poll: at 500 ms lock on is barely faster, at 100 ms about 6x, the original's figure
        assertEquals(Answer.DOES_NOT_HOLD, slow.answer, slow.why)
        assertEquals(Answer.HOLDS, fast.answer, fast.why)
        val effect = lockPollEffect(t).rows().single()
        assertEquals(100, effect["lock_poll_ms"])
        assertEquals(500, effect["against_poll_ms"])
        assertEquals(243.0, effect["jobs_per_s_gained"] as Double, 0.01)
        assertTrue((effect["low"] as Double) > 4.0, effect.toString())
        assertEquals(2, lockRatios(t).rowsCount(), "one lock ratio per poll")
    }

    @Test
    fun `lock ratios and the poll's gain read the steady rates, not drains whose start-up decides them`() {
        // whole-drain rates lose the same fixed start-up on both sides; the steady middles differ by half
        val t = dataFrameOf("job_type", "instances", "acquire_size", "lock", "lock_poll_ms", "jobs_per_s", "steady_jobs_per_s", "valid")(
            *listOf(0.0, 1.0, 2.0).flatMap { d -> listOf(
                listOf("noop", 1, 32, "off", null, 40.0 + d, 100.0 + d, true),
                listOf("noop", 1, 32, "on", 100, 40.0 + d, 200.0 + d, true),
                listOf("noop", 1, 32, "on", 500, 40.0 + d, 50.0 + d, true)) }.flatten().toTypedArray<Any?>())
        val atFastPoll = lockRatios(t).rows().single { it["lock_poll_ms"] == 100 }
        assertEquals(0.5, atFastPoll["off_over_on"] as Double, 0.01)
        val gain = lockPollEffect(t).rows().single()
        assertEquals(150.0, gain["jobs_per_s_gained"] as Double, 0.01)
    }

    @Test
    fun `rows from before the poll was a column take their run's poll, and one poll gives no effect to show`() {
        val t = dataFrameOf("run_id", "job_type", "instances", "acquire_size", "lock", "jobs_per_s", "valid")(
            "r1", "noop", 1, 32, "on", 62.0, true, "r2", "noop", 1, 32, "on", 90.0, true)
        val filled = t.withLockPoll(mapOf("r2" to 100.0)).rows().map { it["lock_poll_ms"] }
        assertEquals(listOf<Any?>(500, 100), filled)
        assertEquals(1, lockPollEffect(t, mapOf("r2" to 100.0)).rowsCount())
        assertEquals(0, lockPollEffect(t).rowsCount(), "both at the default poll: nothing to compare")
    }

    @Test
    fun `the lock's where the time went compares fixed jobs at the most instances, and says how to get profiles`() {
        val cells = dataFrameOf("cell", "job_type", "instances", "acquire_size", "lock")(
            "fixed-k1-a32-lockon-r1", "fixed", 1, 32, "on", "fixed-k4-a32-lockon-r1", "fixed", 4, 32, "on",
            "fixed-k4-a32-lockoff-r1", "fixed", 4, 32, "off", "noop-k8-a32-lockoff-r1", "noop", 8, 32, "off")
        val text = emptyList<RecordedRun>().lockWhereTimeWent(cells).text
        assertTrue("lock on, 4 instance(s) and lock off, 4 instance(s)" in text, text)
        assertTrue("--profile" in text, text)
        assertEquals("", emptyList<RecordedRun>().lockWhereTimeWent(cells.filter { it["job_type"] == "noop" }).text, "no fixed jobs: nothing to say")
    }
}
