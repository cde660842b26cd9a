package perfkit.kit

import jdk.jfr.Configuration
import jdk.jfr.Recording
import org.jetbrains.letsPlot.intern.toSpec
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.single
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue

class ProfilesTest {
    @TempDir lateinit var root: Path

    /** Hashes and allocates for [millis]: the method a profile of this window must find. */
    private fun spinHere(millis: Long): Long {
        var h = 0L
        val end = System.nanoTime() + millis * 1_000_000
        while (System.nanoTime() < end) {
            val a = LongArray(256) { it * 31L + h }
            h = h * 17 + a.sum()
        }
        return h
    }

    /** A recording made here, of [millis] spinning, and the window it covered. */
    private fun recorded(file: Path, millis: Long): Window {
        val r = Recording(Configuration.getConfiguration("profile"))
        r.setDestination(file)
        r.start()
        val t0 = System.currentTimeMillis()
        spinHere(millis)
        val t1 = System.currentTimeMillis()
        r.stop()
        r.close()
        return Window(t0, t1)
    }

    @Test
    fun `a recording made in the test shows the method that burned the CPU, what it allocated, and nothing outside its window`() {
        val file = root.resolve("busy.jfr")
        val w = recorded(file, 1500)
        val p = readProfile(file, "busy", w)
        assertTrue(p.samples >= 20, "${p.samples} samples in 1.5 s at one per 10 ms")
        val (self, total) = assertNotNull(p.frameShares().entries.firstOrNull { it.key.endsWith(".spinHere") }?.value, p.frameShares().keys.take(10).toString())
        assertTrue(total >= 0.3 && self <= total, "spinHere: self $self, total $total")
        assertTrue(p.allocationMBps > 1, "LongArray(256) per turn: ${p.allocationMBps} MB/s")
        assertEquals(p.frameShares().size.coerceAtMost(3), p.topFrames(3).rowsCount())
        val elsewhere = readProfile(file, "idle", Window(w.endMs + 60_000, w.endMs + 61_000))
        assertEquals(0, elsewhere.samples)
        val table = whereTimeWent(p, elsewhere, methods = 4, minSamples = 0).text
        assertTrue(table.lines().any { it.contains("spinHere") && it.endsWith("| 0% / 0% |") }, table)
        // shares of a handful of samples are noise: a side under the floor ranks no frame, and the table says why
        val unranked = whereTimeWent(p, elsewhere, methods = 4, minSamples = p.samples.toInt()).text
        assertFalse(unranked.contains("spinHere"), unranked)
        assertTrue(unranked.lines().any { it.contains("too few samples") && it.contains("idle") && !it.contains("busy") }, unranked)
        assertTrue(unranked.contains("allocation (MB/s)"), "the rest of the table stays")
        // two JVMs recorded over the same window are one window of wall time, and so are windows a few ms apart
        assertEquals(p.seconds, (p + p).seconds)
        val late = p.copy(windows = setOf(Window(w.startMs + 5, w.endMs + 5)))
        assertEquals(p.seconds + 0.005, (p + late).seconds, 1e-9)
        val apart = p.copy(windows = setOf(Window(w.endMs + 1000, w.endMs + 2000)))
        assertEquals(p.seconds + 1.0, (p + apart).seconds, 1e-9, "separate windows add up")
        assertEquals(2 * p.samples, (p + p).samples)
        // the icicle has a bar per frame of 0.5% or more, spinHere among them, and it draws
        val spec = flameGraph(p).toSpec()
        assertTrue(spec.toString().contains("spinHere"), "the flame graph names the hot method")
    }

    @Test
    fun `a cell's profiles are the ones whose windows overlap its latency logs, merged`() {
        val dir = Files.createDirectories(root.resolve("queues/20260101T000000Z-h1-aaaaaa"))
        Files.createDirectories(dir.resolve("profiles"))
        val a = recorded(dir.resolve("profiles/abq-1_fork_1.w1.jfr"), 400)
        val b = recorded(dir.resolve("profiles/abq-3_fork_1.w1.jfr"), 400)
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"variants":["abq-1","abq-3","abq-5"],"files":[
            {"path":"latency/abq-1.hlog","kind":"hlog","cell":"abq-1","series":"abq-1","fork":1,"timing":"corrected","window":{"startMs":${a.startMs},"endMs":${a.endMs}}},
            {"path":"latency/abq-3.hlog","kind":"hlog","cell":"abq-3","series":"abq-3","fork":1,"timing":"corrected","window":{"startMs":${b.startMs},"endMs":${b.endMs}}},
            {"path":"profiles/abq-1_fork_1.w1.jfr","kind":"profile","series":"abq-1 fork 1","window":{"startMs":${a.startMs},"endMs":${a.endMs}}},
            {"path":"profiles/abq-3_fork_1.w1.jfr","kind":"profile","series":"abq-3 fork 1","window":{"startMs":${b.startMs},"endMs":${b.endMs}}}]}"""))
        val runs = listOf(loadRun(dir))
        assertEquals(listOf("abq-1 fork 1", "abq-3 fork 1"), runs.single().profiles().map { it.jvm })
        val one = assertNotNull(runs.cellProfile("abq-1"))
        assertEquals("abq-1", one.name)
        assertTrue(one.samples > 0 && one.seconds in 0.3..0.6, "${one.samples} samples over ${one.seconds} s")
        assertNull(runs.cellProfile("abq-1") { it.startsWith("broker") }, "no JVM of that name")
        assertNull(runs.cellProfile("abq-5"), "a cell without latency logs has no profile")
        assertNull(runs.cellProfile("abq-1", steps = { it.endsWith("/n10") }), "no latency log of those steps")
        assertNotNull(runs.cellProfile("abq-1", steps = { it == "abq-1" }))
        // one load's repetitions are cells of their own (messaging's n1, n1/r2, ...): a side may be several
        val both = assertNotNull(runs.cellsProfile(listOf("abq-1", "abq-3"), "both cells"))
        assertEquals("both cells", both.name)
        assertEquals(one.samples + assertNotNull(runs.cellProfile("abq-3")).samples, both.samples)
        // a run made with --profile that kept none says so, rather than telling the reader to use --profile
        assertTrue(runs.whereTimeWent("abq-5", "abq-1").text.contains("A run made with `--profile`"))
        // a side the runs never measured is said to be missing, not blamed on the recording
        val oneSided = runs.whereTimeWent("lock on", emptyList(), "lock off", listOf("abq-1")).text
        assertTrue(oneSided.contains("measured no lock on") && !oneSided.contains("--profile"), oneSided)
        // and so is a single cell neither asked for nor named by any file
        val unknown = runs.whereTimeWent("abq-7", "abq-1").text
        assertTrue(unknown.contains("measured no abq-7") && !unknown.contains("--profile"), unknown)
    }

    @Test
    fun `a cell without latency logs has the profiles of the forks that name it`() {
        val dir = Files.createDirectories(root.resolve("queues/20260101T000000Z-h1-bbbbbb"))
        Files.createDirectories(dir.resolve("profiles"))
        val a = recorded(dir.resolve("profiles/abq-1_fork1.w1.jfr"), 300)
        val b = recorded(dir.resolve("profiles/abq-1_fork2.w1.jfr"), 300)
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"files":[
            {"path":"profiles/abq-1_fork1.w1.jfr","kind":"profile","cell":"abq-1","series":"abq-1/fork1","fork":1,"window":{"startMs":${a.startMs},"endMs":${a.endMs}}},
            {"path":"profiles/abq-1_fork2.w1.jfr","kind":"profile","cell":"abq-1","series":"abq-1/fork2","fork":2,"window":{"startMs":${b.startMs},"endMs":${b.endMs}}}]}"""))
        val runs = listOf(loadRun(dir))
        assertEquals(listOf(1, 2), runs.single().profiles().map { it.fork })
        val both = assertNotNull(runs.cellProfile("abq-1"), "both forks' recordings, by the cell they name")
        assertTrue(both.seconds > 0.5, "${both.seconds} s: two windows")
        assertNull(runs.cellProfile("abq-3"), "no fork named that cell")
    }

    @Test
    fun `web-reactive's closed-model steps are told from its other latency logs by their series`() {
        assertTrue(isClosedStep("mvc/1call/n250"))
        assertFalse(isClosedStep("mvc/1call/r3200"))
        assertFalse(isClosedStep("mvc/1call/driver"))
        assertFalse(isClosedStep("mvc/1call/n"))
    }

    @Test
    fun `a side whose threads wait rather than run is shown by the native methods they sat in`() {
        val file = root.resolve("waiting.jfr")
        val child = ProcessBuilder("sleep", "5").start()
        // a thread blocked reading a pipe that stays silent: in native code for the whole recording, never running Java
        val reader = Thread { child.inputStream.read() }.apply { isDaemon = true; start() }
        val w = try { recorded(file, 1500) } finally { child.destroyForcibly(); reader.join(5000) }
        val p = readProfile(file, "spinning", w)
        assertTrue(p.nativeSamples >= 20, "${p.nativeSamples} native samples in 1.5 s at one per 20 ms")
        assertTrue(p.frameShares(native = true).keys.any { it.endsWith(".readBytes") }, p.frameShares(native = true).keys.take(10).toString())
        assertFalse(p.frameShares().keys.any { it.endsWith(".readBytes") }, "a native wait is no method sample")
        val waiting = p.copy(name = "waiting", stacks = emptyMap())
        val table = whereTimeWent(waiting, p, methods = 4, minSamples = 20).text
        assertTrue(table.contains("share of native samples") && table.contains("readBytes") && table.contains("native methods they sat in"), table)
        val neither = whereTimeWent(waiting, p.copy(nativeStacks = emptyMap()), methods = 4, minSamples = 20).text
        assertFalse(neither.contains("readBytes"), "no ranking when a side has too few native samples as well: $neither")
    }

    /** A messaging run made with --profile: its profiling.csv of (profiled, plain, valid) CPU per message, or only its note. */
    private fun costRun(id: String, pairs: List<Triple<Double, Double, Boolean>>?, note: String = "measured"): RecordedRun {
        val dir = Files.createDirectories(root.resolve("runs/messaging/$id"))
        Files.writeString(dir.resolve("sweep.csv"), "cell\nkafka/original/n1\n")
        val files = mutableListOf("""{"path":"sweep.csv","kind":"table","description":"test"}""")
        if (pairs != null) {
            Files.writeString(dir.resolve("profiling.csv"), "cell,pair,profiled_cpu_us_per_msg,plain_cpu_us_per_msg,profiled_over_plain,valid\n" +
                // a number the run could not read is an empty field, as the harness writes NaN
                pairs.mapIndexed { i, (p, q, ok) -> "kafka/original,${i + 1}," + listOf(p, q, p / q).joinToString(",") { if (it.isNaN()) "" else "$it" } + ",$ok" }
                    .joinToString("\n") + "\n")
            files += """{"path":"profiling.csv","kind":"table","description":"test"}"""
        }
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"messaging","runId":"$id","mode":"sweep","params":{"profile":"true"},
            "notes":{"profilingCost":"$note"},"files":[${files.joinToString(",")}]}"""))
        return loadRun(dir)
    }

    @Test
    fun `where a fixed load is offered, profiling costs CPU per message, and a pair with an invalid step is left out`() {
        val costly = profilingCost(listOf(costRun("20261129T000000Z-h1-0a0a0a",
            listOf(Triple(110.0, 100.0, true), Triple(112.0, 101.0, true), Triple(109.0, 99.0, true), Triple(10.0, 100.0, false))))).rows().single()
        assertEquals("profiling costs CPU", costly["verdict"], "more CPU per message recorded: a cost, the other way round from a rate")
        assertEquals(3, costly["pairs"], "the invalid pair is not counted")
        assertEquals("CPU µs/msg", costly["unit"])
        assertEquals(110.33, costly["profiled"] as Double, 0.01)
        val cheaper = profilingCost(listOf(costRun("20261129T000000Z-h1-0b0b0b",
            listOf(Triple(90.0, 100.0, true), Triple(91.0, 101.0, true), Triple(89.0, 99.0, true))))).rows().single()
        assertEquals("profiled reads low", cheaper["verdict"])
        val invalid = listOf(costRun("20261129T000000Z-h1-0c0c0c", listOf(Triple(1.0, 2.0, false))))
        assertEquals(0, profilingCost(invalid).rowsCount())
        assertTrue(invalid.profilingCostSection().text.contains("each had an invalid step"), invalid.profilingCostSection().text)
        val unread = listOf(costRun("20261129T000000Z-h1-0e0e0e", listOf(Triple(Double.NaN, 2.0, true))))
        assertTrue(unread.profilingCostSection().text.contains("no reading to compare"), unread.profilingCostSection().text)
        val unmeasured = listOf(costRun("20261129T000000Z-h1-0d0d0d", null, note = "not measured: no cell met its SLO at any rate tried"))
        assertTrue(unmeasured.profilingCostSection().text.contains("not measured: no cell met its SLO"), unmeasured.profilingCostSection().text)
    }
}
