package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

class QueuesTest {
    @TempDir lateinit var root: Path

    /** Rows of throughput.csv: one per cell and fork, under one label. */
    private fun throughput(vararg cells: Pair<String, List<Double>>): AnyFrame {
        val rows = cells.flatMap { (cell, xs) -> xs.mapIndexed { i, x -> listOf<Any?>("h1", "r1", cell, i + 1, x) } }
        return dataFrameOf("label", "run_id", "cell", "fork", "events_per_s")(*rows.flatten().toTypedArray())
    }

    private val pub = dataFrameOf("study", "source", "variant", "metric", "value")(
        "queues", "original write-up", "abq-1", "events_in_window", 5_000_000.0,
        "queues", "original write-up", "abq-3", "events_in_window", 3_300_000.0,
        "queues", "original write-up", "abq-3", "events_per_consumer_in_window", 1_100_000.0,
        "queues", "original write-up", "abq-5", "events_in_window", 2_400_000.0,
        "queues", "original write-up", "abq-5", "events_per_consumer_in_window", 500_000.0)

    @Test
    fun `the consumers claim holds only when both ratios clear 1`() {
        val falling = throughput("abq-1" to listOf(10.0, 11.0, 10.5), "abq-3" to listOf(6.0, 6.2, 6.1), "abq-5" to listOf(4.0, 4.1, 3.9))
        assertEquals(Answer.HOLDS, queueClaims(falling, emptyList()).single().answer)
        val flat = throughput("abq-1" to listOf(10.0, 11.0, 10.5), "abq-3" to listOf(6.0, 6.2, 6.1), "abq-5" to listOf(6.5, 6.6, 6.4))
        assertEquals(Answer.DOES_NOT_HOLD, queueClaims(flat, emptyList()).single().answer)
        val twoForks = throughput("abq-1" to listOf(10.0, 11.0), "abq-3" to listOf(6.0, 6.2), "abq-5" to listOf(4.0, 4.1))
        val c = queueClaims(twoForks, emptyList()).single()
        assertEquals(Answer.CANNOT_TELL, c.answer)
        assertTrue("ranges" in c.why, c.why)
    }

    @Test
    fun `the Disruptor claim is asked per wait strategy against the original's figure`() {
        val t = throughput("abq-1" to listOf(10.0, 10.2, 9.9), "abq-3" to listOf(6.0, 6.2, 6.1), "abq-5" to listOf(4.0, 4.1, 3.9),
            "disruptor-1/yielding" to listOf(60.0, 62.0, 58.0), "disruptor-1/blocking" to listOf(12.0, 12.5, 12.2))
        val claims = queueClaims(t, listOf("blocking", "yielding", "busy-spin")).drop(1)
        assertEquals(2, claims.size, "a strategy that was not run asks nothing")
        assertEquals(Answer.DOES_NOT_HOLD, claims[0].answer)
        assertTrue("faster, not 3.4x" in claims[0].why, claims[0].why)
        assertEquals(Answer.HOLDS, claims[1].answer)
    }

    @Test
    fun `consumers are put beside the original's counts as ratios to one consumer`() {
        val t = throughput("abq-1" to listOf(10.0, 10.0, 10.0), "abq-3" to listOf(6.0, 6.0, 6.0), "abq-5" to listOf(5.0, 5.0, 5.0))
        val consumers = dataFrameOf("label", "run_id", "cell", "fork", "consumer", "events")(
            "h1", "r1", "abq-3", 1, 1, 100L, "h1", "r1", "abq-3", 1, 2, 50L, "h1", "r1", "abq-3", 1, 3, 100L)
        val rows = consumersBesidePublished(t, consumers, pub).rows().toList()
        assertEquals(listOf("abq-3", "abq-5"), rows.map { it["cell"] })
        assertTrue((rows[0]["total_vs_1_consumer"] as String).startsWith("0.6x"), rows[0].toString())
        assertEquals("0.66", rows[0]["published_total_vs_1"])
        assertTrue((rows[0]["per_consumer_vs_1_consumer"] as String).startsWith("0.2x"), rows[0].toString())
        assertEquals("0.22", rows[0]["published_per_consumer_vs_1"])
        assertEquals("0.5", rows[0]["fairness_min_over_max"], "the least-served consumer had half the most-served one's events")
        assertEquals("0.48", rows[1]["published_total_vs_1"])
    }

    private fun calibrationRun(id: String, rows: List<Triple<String, Double, Double>>, tables: Map<String, String> = emptyMap()): Path {
        val dir = Files.createDirectories(root.resolve("runs/queues/$id"))
        Files.writeString(dir.resolve("calibration.csv"), "cell,variant,wait_strategy,fork,harness_events_per_s,minimal_events_per_s,harness_over_minimal,minimal_exactly_once\n" +
            rows.mapIndexed { i, (cell, h, m) -> "$cell,${cell.substringBefore('/')},${cell.substringAfter('/', "")},${i + 1},$h,$m,${h / m},true" }.joinToString("\n") + "\n")
        tables.forEach { (name, text) -> Files.writeString(dir.resolve(name), text) }
        val listed = (listOf("calibration.csv") + tables.keys).joinToString(",") { """{"path":"$it","kind":"table","description":"test"}""" }
        Files.writeString(dir.resolve("run.json"), completeManifest("""
            {"schemaVersion":2,"study":"queues","runId":"$id","mode":"throughput","tag":"","quick":false,"variants":["a"],"params":{},
             "status":"complete","error":null,"startedAt":"2026-01-01T00:00:00Z","endedAt":"2026-01-01T00:01:00Z","pid":1,
             "host":{"hostname":"h1","cpuModel":"cpu","logicalCores":2,"memoryBytes":1,"os":"Linux","kernel":"6","containerCpuLimit":null},
             "jvm":{"vendor":"x","version":"17.0.15","inputArguments":[]},"kit":{"commit":"abc","dirty":false},
             "measurement":{"warmupSeconds":1,"measureSeconds":2,"repetitions":3,"repetitionKind":"jvm-fork","warmupExcluded":true},
             "valid":true,"invalidReasons":[],"notes":{},
             "files":[$listed]}""".trimIndent()))
        return dir
    }

    @Test
    fun `the harness is within 10 percent of the minimal program only when its whole interval is`() {
        val dir = calibrationRun("20260101T000000Z-h1-aaaaaa", listOf(
            Triple("disruptor-1/yielding", 21.0, 135.0), Triple("disruptor-1/yielding", 20.0, 131.0), Triple("disruptor-1/yielding", 23.0, 138.0),
            Triple("abq-1", 16.9, 17.0), Triple("abq-1", 17.1, 17.2), Triple("abq-1", 17.0, 16.9)))
        val t = harnessCalibration(listOf(loadRun(dir))).rows().associateBy { it["cell"] }
        assertEquals("the harness costs throughput", t["disruptor-1/yielding"]!!["verdict"])
        assertEquals(0.158, t["disruptor-1/yielding"]!!["harness_over_minimal"] as Double, 0.005)
        assertEquals("within 10%", t["abq-1"]!!["verdict"])
        assertEquals(3, t["abq-1"]!!["forks"])
    }

    @Test
    fun `what profiling cost is the profiled forks over their plain twins, with its interval`() {
        fun costRun(id: String, rows: List<Pair<Double, Double>>): RecordedRun = loadRun(calibrationRun(id, listOf(Triple("abq-1", 17.0, 17.0)),
            mapOf("profiling.csv" to "cell,variant,wait_strategy,fork,profiled_events_per_s,plain_events_per_s,profiled_over_plain\n" +
                rows.mapIndexed { i, (p, q) -> "abq-1,abq-1,,${i + 1},$p,$q,${p / q}" }.joinToString("\n") + "\n")))
        val costly = profilingCost(listOf(costRun("20260101T000000Z-h1-cccccc", listOf(9.0 to 10.0, 9.1 to 10.1, 8.9 to 9.9)))).rows().single()
        assertEquals("profiling costs throughput", costly["verdict"])
        assertEquals(0.9, costly["profiled_over_plain"] as Double, 0.005)
        assertEquals(3, costly["pairs"])
        assertEquals("events/s", costly["unit"])
        val free = profilingCost(listOf(costRun("20260101T000000Z-h1-dddddd", listOf(10.0 to 10.1, 10.2 to 10.0, 9.9 to 10.0)))).rows().single()
        assertEquals("no cost seen", free["verdict"])
        assertEquals(0, profilingCost(listOf(loadRun(calibrationRun("20260101T000000Z-h1-eeeeee", listOf(Triple("abq-1", 1.0, 1.0)))))).rowsCount(),
            "a run made without --profile has no line")
    }

    @Test
    fun `a bistable minimal program leaves the verdict open and says how far it spread`() {
        // both programs in the slow mode in one fork and the fast one in the others, as under yielding on 2 vCPUs
        val dir = calibrationRun("20260101T000000Z-h1-bbbbbb", listOf(
            Triple("disruptor-1/yielding", 106.0, 108.0), Triple("disruptor-1/yielding", 24.0, 25.0), Triple("disruptor-1/yielding", 112.0, 114.0),
            Triple("disruptor-1/yielding", 101.0, 117.0)))
        val row = harnessCalibration(listOf(loadRun(dir))).rows().single()
        assertEquals("cannot tell: the minimal program itself spans 4.68x across forks", row["verdict"])
    }

    @Test
    fun `a harness that costs throughput against the minimal program makes the Disruptor claim cannot tell`() {
        val t = throughput("abq-1" to listOf(10.0, 10.2, 9.9), "abq-3" to listOf(6.0, 6.2, 6.1), "abq-5" to listOf(4.0, 4.1, 3.9),
            "disruptor-1/yielding" to listOf(60.0, 62.0, 58.0))
        fun calibration(verdict: String) = dataFrameOf("label", "cell", "harness_over_minimal", "verdict")(
            "h1", "abq-1", 1.02, "within 10%", "h1", "disruptor-1/yielding", 0.5, verdict)
        val off = queueClaims(t, listOf("yielding"), calibration("the harness costs throughput")).last()
        assertEquals(Answer.CANNOT_TELL, off.answer, off.why)
        assertTrue("the harness matches a minimal program" in off.why && "0.5x" in off.why, off.why)
        val within = queueClaims(t, listOf("yielding"), calibration("within 10%")).last()
        assertEquals(Answer.HOLDS, within.answer, within.why)
        val bimodal = queueClaims(t, listOf("yielding"), calibration("cannot tell: the minimal program itself spans 4.68x across forks")).last()
        assertEquals(Answer.HOLDS, bimodal.answer, "a calibration that cannot tell is listed as not checked")
        assertEquals(null, bimodal.checks.single { it.name == "the harness matches a minimal program" }.met)
    }

    @Test
    fun `a fork's JIT over its measured window decides its warmth only over a window long enough to judge`() {
        // two queue runs whose forks reported their JIT: the second abq-1 fork compiled through its window
        fun run(id: String, windowS: Int): RecordedRun {
            val dir = Files.createDirectories(root.resolve("runs/queues/$id"))
            val cells = listOf("abq-1", "abq-3", "abq-5", "disruptor-1/blocking")
            Files.writeString(dir.resolve("throughput.csv"), "cell,variant,wait_strategy,fork,events_per_s\n" + cells.flatMap { c ->
                (1..3).map { f -> "$c,${c.substringBefore('/')},${if ("/" in c) c.substringAfter('/') else ""},$f," +
                    (if (c == "abq-1" && f == 2) 30.0 else if (c == "disruptor-1/blocking") 36.0 else 12.0 - cells.indexOf(c) + f * 0.1) }
            }.joinToString("\n") + "\n")
            Files.writeString(dir.resolve("timeseries.csv"), "epoch_ms,elapsed_s,phase,series,metric,value\n" + cells.flatMap { c ->
                (1..3).flatMap { f -> (1..windowS).flatMap { t -> listOf("$t,$t,measure,jvm:$c/fork$f,jit_ms_per_s,${if (c == "abq-1" && f == 2) 400.0 else 2.0}",
                    "$t,$t,measure,jvm:$c/fork$f,gc_ms_per_s,${if (f == 3) 1.5 else 0.0}") } }
            }.joinToString("\n") + "\n")
            Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"queues","runId":"$id","mode":"throughput","params":{},
                "files":[{"path":"throughput.csv","kind":"table","description":"t"},{"path":"timeseries.csv","kind":"timeseries","description":"t"}]}"""))
            return loadRun(dir)
        }
        val first = run("20261128T000000Z-h1-aaaaaa", 10)
        assertEquals(JvmWindow(400.0, 0.0, 10), first.forkActivity().getValue("abq-1/fork2"), "JIT and GC time over the window, by fork")
        assertEquals(1.5, first.forkActivity().getValue("abq-3/fork3").gcMsPerS)
        val long = queueCells(listOf(first))
        assertEquals(400.0, long.rows().single { it["cell"] == "abq-1" && it["fork"] == 2 }["jit_ms_per_s"])
        assertEquals(10, long.rows().first()["jit_window_s"])
        // over 10 s the flag is trusted: the cold fork is left out, and with it the 3 forks abq-1 needs
        val judged = queueClaims(long, listOf("blocking")).last()
        assertEquals(Answer.CANNOT_TELL, judged.answer, judged.why)
        assertTrue("`abq-1` fork 2 (JIT 400 ms/s)" in judged.checks.single { it.name == "JVMs warm" }.detail, judged.checks.toString())
        // over 2 s it is one or two samples: every fork counts, and the flagged one is listed
        val short = queueClaims(queueCells(listOf(run("20261128T000001Z-h1-bbbbbb", 2))), listOf("blocking")).last()
        assertNull(short.checks.single { it.name == "JVMs warm" }.met, short.checks.toString())
        assertTrue("too short to judge" in short.checks.single { it.name == "JVMs warm" }.detail)
    }

    /** queueCells' columns for the scaling: [counts] consumers of each design, 3 forks each, on a known USL curve. */
    private fun scalingCells(counts: List<Int>): AnyFrame {
        val curve = UslModel(5e6, 0.1, 0.01)
        val rows = counts.flatMap { n ->
            val variants = if (n == 1) listOf("abq-1" to "none", "disruptor-1" to "yielding") else listOf("abq-$n" to "none", "disruptor-work-$n" to "yielding")
            variants.flatMap { (v, w) -> (1..3).map { f -> listOf<Any?>("h1", "r1", v, f, w, curve.throughput(n.toDouble()) * (1 + 0.002 * f)) } }
        }
        return dataFrameOf("label", "run_id", "variant", "fork", "wait_strategy", "events_per_s")(*rows.flatten().toTypedArray())
    }

    @Test
    fun `consumers that outnumber the cores give no scaling model, and enough cores give one per design`() {
        val crowded = consumerScaling(scalingCells(listOf(1, 3, 5)), cores = 2).text
        assertTrue(crowded.startsWith("No scalability model for consumers here: one producer and 3 or 5 consumers are more threads than this host's 2 cores"), crowded)
        val roomy = consumerScaling(scalingCells(listOf(1, 2, 3, 4, 6)), cores = 16).text
        val abq = roomy.lines().single { it.startsWith("| h1 | ArrayBlockingQueue |") }
        assertTrue(abq.contains("| 15 |") && abq.contains("it peaks at about"), abq)
        // the one-handler Disruptor starts the work-sharing curve; no sharded cells ran, so that curve has one count
        assertTrue(roomy.lines().single { it.startsWith("| h1 | Disruptor, work-sharing |") }.contains("it peaks at about"), roomy)
        assertTrue(roomy.lines().single { it.startsWith("| h1 | Disruptor, sharded broadcast |") }.contains("no model: 3 points at 1 worker counts"), roomy)
    }
}
