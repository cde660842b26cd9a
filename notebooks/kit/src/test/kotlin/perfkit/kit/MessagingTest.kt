package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

class MessagingTest {
    private val pub = dataFrameOf("study", "source", "variant", "metric", "value")(
        "messaging", "original write-up", "kafka-n1", "p99_9_ms", 30.0,
        "messaging", "original write-up", "kafka-n1", "cpu_pct", 670.0,
        "messaging", "original write-up", "chronicle-n1", "cpu_pct", 5.2,
        "messaging", "original write-up", "chronicle-n10", "p99_9_ms", 0.9,
        "messaging", "original write-up", "kafka", "capacity_instances", 1.0,
        "messaging", "original write-up", "chronicle", "capacity_instances", 500.0,
        "messaging", "original write-up", "chronicle/kafka", "capacity_ratio", 400.0,
        "messaging", "original write-up", "chronicle/kafka", "cost_saving_percent", 99.8)

    /** capacity.csv rows at [rate] msg/s per chain: (cell, last met chains, first missed chains, status) per repetition. */
    private fun capacity(rate: Long, vararg searches: List<Any?>): AnyFrame {
        val rows = searches.toList().groupBy { it[0] }.flatMap { (_, reps) ->
            reps.mapIndexed { i, s ->
                val met = s[1] as Int?; val missed = s[2] as Int?
                listOf(s[0], i + 1, rate, met, met?.let { it * rate }, missed, missed?.let { it * rate }, s[3])
            }
        }
        return dataFrameOf("cell", "repetition", "rate_per_chain", "capacity_instances", "capacity_msgs_per_s",
            "first_missed_instances", "first_missed_msgs_per_s", "capacity_status")(*rows.flatten().toTypedArray())
    }

    /** sweep.csv rows at one chain: (variant, CPU-us per message) per repetition, on a machine at its wall or not. */
    private fun sweep(vararg steps: Pair<String, Double>, saturated: Set<String> = emptySet()): AnyFrame =
        dataFrameOf("variant", "repetition", "instances", "valid", "cpu_us_per_msg", "target_rate", "p99_9_ms", "cpu_app_pct", "cpu_broker_pct", "p50_ms",
            "p99_ms", "cpu_system_pct", "saturated", "warmup_settled")(*steps.toList().groupBy { it.first }.flatMap { (_, reps) -> reps.mapIndexed { i, (v, us) ->
                listOf(v, i + 1, 1, true, us, 450.0, 20.0, 40.0, 50.0, 1.0, 10.0, if (v in saturated) 199.0 else 90.0, v in saturated, true) } }
                .flatten().toTypedArray<Any?>())

    @Test
    fun `capacity claims follow the brackets over every repetition`() {
        val cap = capacity(450,
            listOf("kafka/blocking", 1, 2, "wall"), listOf("kafka/blocking", 1, 2, "wall"), listOf("kafka/blocking", 1, 2, "wall"),
            listOf("chronicle/original", 10, 12, "wall"), listOf("chronicle/original", 12, 15, "wall"), listOf("chronicle/original", 10, 13, "wall"))
        val claims = messagingClaims(sweep("kafka/blocking" to 2000.0, "kafka/blocking" to 2100.0, "kafka/blocking" to 1900.0,
            "chronicle/original" to 200.0, "chronicle/original" to 210.0, "chronicle/original" to 190.0), cap, pub)
        assertEquals(Answer.HOLDS, claims[0].answer, claims[0].why)
        val ratio = claims.single { "`kafka/blocking`" in it.original && "chains Kafka does" in it.original }
        // Chronicle 4500..6750 msg/s over Kafka 450..900: 5x..15x, far below 400x
        assertEquals(Answer.DOES_NOT_HOLD, ratio.answer, ratio.why)
        assertTrue("between 5x and 15x" in ratio.here, ratio.here)
        val cpu = claims.single { "CPU" in it.original }
        // 10x is far more CPU, but less than half the original's 129x (whose Kafka consumers spun)
        assertEquals(Answer.DOES_NOT_HOLD, cpu.answer, cpu.why)
        assertTrue("short of 64.4x, half the original's 129x" in cpu.why, cpu.why)
        assertEquals(Answer.DOES_NOT_HOLD, claims.last().answer, claims.last().why)
        assertTrue("80% to 93.3%" in claims.last().here, claims.last().here)
    }

    @Test
    fun `a miss on a saturated host is this host's wall, and an open bracket leaves the ratio open`() {
        val one = capacity(1000,
            listOf("kafka/original", null, 1, "not measurable on this host"),
            listOf("chronicle/original", 4, null, "lower bound"))
        val single = messagingClaims(sweep("kafka/original" to 2000.0, "chronicle/original" to 300.0), one, pub)
        assertEquals(Answer.CANNOT_TELL, single[0].answer, "one search is an observation, not an answer")
        assertTrue("Only 1 search(es) per cell: a claim needs 3." in single[0].why && "enough forks" in single[0].why, single[0].why)
        val cap = capacity(1000,
            listOf("kafka/original", null, 1, "not measurable on this host"), listOf("kafka/original", null, 1, "not measurable on this host"),
            listOf("kafka/original", null, 1, "not measurable on this host"),
            listOf("chronicle/original", 4, null, "lower bound"), listOf("chronicle/original", 4, null, "lower bound"),
            listOf("chronicle/original", 4, null, "lower bound"))
        val claims = messagingClaims(sweep("kafka/original" to 2000.0, "chronicle/original" to 300.0, saturated = setOf("kafka/original")), cap, pub)
        // one spinning Kafka chain saturates the host: a miss at 1 chain on the wall is this host's size, not Kafka's capacity
        assertEquals(Answer.CANNOT_TELL, claims[0].answer, claims[0].why)
        assertTrue("below the machine's wall" in claims[0].why && "missed the SLO at 1 chain" in claims[0].why, claims[0].why)
        // below the wall, the same miss refutes the claim
        val below = messagingClaims(sweep("kafka/original" to 2000.0, "chronicle/original" to 300.0), cap, pub)
        assertEquals(Answer.DOES_NOT_HOLD, below[0].answer, below[0].why)
        val ratio = claims.single { "`kafka/original`" in it.original && "chains Kafka does" in it.original }
        // more than 4x could be 400x, but the bracket that bounds Kafka was closed by the machine's wall
        assertEquals(Answer.CANNOT_TELL, ratio.answer)
        assertTrue("more than 4x" in ratio.here, ratio.here)
        assertTrue("below the machine's wall" in ratio.why && "holds" in ratio.why, ratio.why)
        // a repetition here is a whole capacity search, and the bracket says so
        assertEquals("at least 4,000 msg/s (no wall found in 1 of 1 search(es))", messagingBrackets(one).getValue("chronicle/original").text)
        val cpu = claims.single { "CPU" in it.original }
        assertEquals(Answer.CANNOT_TELL, cpu.answer, "one repetition a side is a range")
    }

    @Test
    fun `a bracketed ratio is judged against the published figure, an open end leaving its size open`() {
        val a = capacityBracket(listOf(ForkBracket(1, 500.0, 600.0, "wall")), "msg/s")
        val b = capacityBracket(listOf(ForkBracket(1, 1.0, 2.0, "wall")), "msg/s")
        val r = ratioBounds(a, b)
        assertEquals(RatioBounds(250.0, 600.0), r)
        assertEquals(Answer.HOLDS, answerAgainstPublished(r.low, r.high, 400.0))
        assertEquals(Answer.DOES_NOT_HOLD, answerAgainstPublished(r.low, r.high, 1300.0), "600x is less than half of 1300x")
        val open = capacityBracket(listOf(ForkBracket(1, 500.0, null, "lower bound")), "msg/s")
        assertNull(ratioBounds(open, b).high, "a lower bound leaves the ratio open above")
        assertEquals(Answer.HOLDS, ratioBounds(open, b).let { answerAgainstPublished(it.low, it.high, 5000.0) })
        assertEquals(Answer.CANNOT_TELL, answerAgainstPublished(null, 3.0, 2.0), "open below, and reaching across 1")
    }

    @Test
    fun `the per-instance table sets the original's rows beside this host's medians`() {
        val text = perInstanceTable(sweep("kafka/blocking" to 2000.0, "kafka/blocking" to 2100.0), pub, "kafka", "kafka/blocking").text
        val one = text.lines().single { it.startsWith("| 1 |") }
        assertTrue("| 30 |" in one && "| 670 |" in one && "| 90 | 2 |" in one, one)
    }

    @TempDir lateinit var root: Path

    private fun run(id: String, notes: String, params: String = "{}") = loadRun(Files.createDirectories(root.resolve("messaging/$id")).also {
        Files.writeString(it.resolve("run.json"), completeManifest("""{"id":"$id","study":"messaging","notes":$notes,"params":$params}"""))
    })

    @Test
    fun `the post names the Kafka and Chronicle releases the runs read from their jars, or says they were not recorded`() {
        val now = run("20260101T000000Z-h1-aaaaaa", """{"versions":{"kafka":"4.4.0","chronicle":"2026.4"}}""")
        val older = run("20260101T000000Z-h1-bbbbbb", """{"kafka":"embedded single-node KRaft broker (kafka_2.13 4.3.1)"}""")
        assertEquals("Kafka 4.4.0 (KRaft) and Chronicle Queue 2026.4", listOf(now).messagingVersions())
        assertEquals("Kafka 4.4.0 (KRaft) and Chronicle Queue 2026.4", listOf(now, older).messagingVersions(), "a run that recorded none adds none")
        assertTrue(listOf(older).messagingVersions().contains("did not record"), "no version is guessed from prose")
        val external = run("20260101T000000Z-h1-cccccc", """{"versions":{"kafka":"4.4.0","chronicle":"2026.4"}}""", """{"bootstrap-servers":"k1:9092"}""")
        assertEquals("Kafka clients 4.4.0 against the user's cluster and Chronicle Queue 2026.4", listOf(external).messagingVersions(),
            "against a user's cluster the version is the clients', and its mode is not ours to name")
    }
}
