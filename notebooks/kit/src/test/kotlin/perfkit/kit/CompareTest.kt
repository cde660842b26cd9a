package perfkit.kit

import org.HdrHistogram.Histogram
import org.HdrHistogram.HistogramLogWriter
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import kotlin.random.Random
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

class CompareTest {
    @TempDir lateinit var root: Path

    /** A schema-2 queues run with one throughput row per fork, and optionally a latency log per fork. */
    private fun run(id: String, rates: List<Double>, tag: String = "", forkJdk: String? = null, kernel: String = "6.1",
                    forkFlags: List<String> = listOf("-Djava.io.tmpdir=/runs/queues/$id/scratch/tmp"), params: Map<String, String> = emptyMap(), latencyNs: List<Long>? = null,
                    mode: String = "throughput"): Path {
        val dir = root.resolve("runs/queues/$id")
        Files.createDirectories(dir.resolve("latency"))
        Files.writeString(dir.resolve("throughput.csv"), "cell,fork,events_per_s\n" + rates.mapIndexed { i, r -> "abq-1,${i + 1},$r" }.joinToString("\n") + "\n")
        val files = mutableListOf("""{"path":"throughput.csv","kind":"table","description":"t","cell":null,"series":null,"fork":null}""")
        if (latencyNs != null) rates.indices.forEach { i ->
            val path = "latency/abq-1.fork${i + 1}.corrected.hlog"
            writeLog(dir.resolve(path), latencyNs)
            files += """{"path":"$path","kind":"hlog","description":"l","cell":"abq-1","series":"abq-1","fork":${i + 1},"timing":"corrected","window":null}"""
        }
        val fork = forkJdk?.let { ""","fork":{"vendor":"Eclipse Adoptium","version":"$it","vmName":"OpenJDK 64-Bit Server VM"}""" } ?: ""
        val allParams = mapOf("variants" to "abq-1", "forks" to "${rates.size}", "tag" to tag) + params
        Files.writeString(dir.resolve("run.json"), completeManifest("""
            {"schemaVersion":2,"study":"queues","runId":"$id","mode":"$mode","tag":"$tag","quick":true,"variants":["abq-1"],
             "params":{${allParams.entries.joinToString(",") { (k, v) -> "\"$k\":\"$v\"" }}},
             "status":"complete","error":null,"startedAt":"2026-01-01T00:00:00Z","endedAt":null,"pid":1,
             "host":{"hostname":"h1","cpuModel":"cpu","logicalCores":2,"memoryBytes":1073741824,"os":"Linux","kernel":"$kernel","containerCpuLimit":null},
             "jvm":{"vendor":"x","version":"17.0.15","inputArguments":[],"forkInputArguments":[${forkFlags.joinToString(",") { "\"$it\"" }}]$fork},"kit":{"commit":"abc","dirty":false},
             "measurement":{"warmupSeconds":1,"measureSeconds":2,"repetitions":${rates.size},"repetitionKind":"jvm-fork","warmupExcluded":true},
             "valid":true,"invalidReasons":[],"notes":{},"files":[${files.joinToString(",")}]}""".trimIndent()))
        return dir
    }

    private fun writeLog(file: Path, values: List<Long>) = PrintStream(file.toFile()).use { out ->
        val w = HistogramLogWriter(out)
        val t0 = 1_795_000_000_000L
        w.outputLogFormatVersion(); w.outputStartTime(t0); w.setBaseTime(t0); w.outputBaseTime(t0); w.outputLegend()
        val h = Histogram(3)
        values.forEach { h.recordValue(it) }
        h.startTimeStamp = t0; h.endTimeStamp = t0 + 1000
        w.outputIntervalHistogram(h)
    }

    private val a1 = "20260101T000000Z-h1-aaaaaa"
    private val a2 = "20260101T000001Z-h1-aaaaab"
    private val b1 = "20260102T000000Z-h1-bbbbbb"

    @Test
    fun `a spec names a study and two or more groups`() {
        assertEquals(CompareSpec("queues", listOf("tag=jdk17", "tag=jdk25 & mode=throughput")), parseCompareSpec("queues: tag=jdk17 vs tag=jdk25 & mode=throughput"))
        assertTrue(parseCompareSpec("queues").auto && parseCompareSpec("queues: auto").auto)
        for (bad in listOf("Queues!: a vs b", "queues: tag=a", "queues: tag=a vs ", "queues: tag=a vs tag=a"))
            assertThrows<IllegalArgumentException>(bad) { parseCompareSpec(bad) }
    }

    @Test
    fun `groups select by tag, by the JVM that ran the forks, and by a parameter`() {
        run(a1, listOf(1.0), tag = "jdk17"); run(a2, listOf(1.0), tag = "jdk17"); run(b1, listOf(1.0), tag = "jdk25", forkJdk = "25.0.1")
        val pool = findRuns("queues", "all", root)
        assertEquals(listOf(a1, a2), selectGroup("queues", pool, "tag=jdk17", root).map { it.id })
        assertEquals(listOf(b1), selectGroup("queues", pool, "jdk=25", root).map { it.id })
        assertEquals(listOf(a1, a2), selectGroup("queues", pool, "jdk=17", root).map { it.id }, "no jvm.fork: the run's own JVM ran the forks")
        assertEquals(listOf(a2), selectGroup("queues", pool, "tag=jdk17 & $a2", root).map { it.id })
        assertEquals(listOf(b1), selectGroup("queues", pool, "forks=1 & tag=jdk25", root).map { it.id })
        val e = assertThrows<RunFormatException> { selectGroup("queues", pool, "tag=nosuch", root) }
        assertTrue("tag=nosuch" in e.message!!, e.message)
        val groups = compareGroups(parseCompareSpec("queues"), root = root)
        assertEquals(2, groups.size, "auto: the two newest labels")
        assertEquals(listOf(b1), groups.last().runs.map { it.id })
    }

    @Test
    fun `the fingerprint diff shows what differs and warns when more than the intended factor does`() {
        run(a1, listOf(1.0), tag = "a"); run(b1, listOf(1.0), tag = "b", forkJdk = "25.0.1", params = mapOf("java" to "/jdk25"))
        val pool = findRuns("queues", "all", root)
        val clean = fingerprintDiff(listOf(Group("jdk=17", selectGroup("queues", pool, "jdk=17", root)), Group("jdk=25", selectGroup("queues", pool, "jdk=25", root))))
        assertEquals(listOf("JVM"), clean.factors, "each run's own temp folder is not a JVM flag that differs")
        assertEquals(emptyList(), clean.unintended)
        assertTrue(clean.table().rows().any { it["field"] == "JVM (forks)" && it["jdk=25"].toString().contains("25.0.1") })
        assertTrue("clean comparison" in clean.warning().text)

        run("20260103T000000Z-h1-cccccc", listOf(1.0), tag = "c", kernel = "6.12")
        val pool2 = findRuns("queues", "all", root)
        val messy = fingerprintDiff(listOf(Group("tag=a", selectGroup("queues", pool2, "tag=a", root)), Group("tag=c", selectGroup("queues", pool2, "tag=c", root))))
        assertEquals(listOf("host"), messy.factors, "tags differ in nothing measured but the kernel")
        assertEquals(emptyList(), messy.unintended, "one factor differs: the tag names it")
        val twoFactors = fingerprintDiff(listOf(Group("tag=b", selectGroup("queues", pool2, "tag=b", root)), Group("tag=c", selectGroup("queues", pool2, "tag=c", root))))
        assertEquals(setOf("host", "JVM"), twoFactors.unintended.toSet())
        assertTrue("Warning" in twoFactors.warning().text)

        run("20260104T000000Z-h1-dddddd", listOf(1.0), tag = "d", forkFlags = listOf("-Djava.io.tmpdir=/runs/x/scratch/tmp", "-XX:+UseSerialGC"))
        val pool3 = findRuns("queues", "all", root)
        val flags = fingerprintDiff(listOf(Group("tag=a", selectGroup("queues", pool3, "tag=a", root)), Group("tag=d", selectGroup("queues", pool3, "tag=d", root))))
        assertEquals(listOf("JVM flags"), flags.factors)
        // each run's GC log is in its own folder: that flag names the run, not a setting
        run("20260105T000000Z-h1-eeeeee", listOf(1.0), tag = "e", forkFlags = listOf("-Djava.io.tmpdir=/runs/y/scratch/tmp",
            "-Xlog:gc:file=/runs/queues/20260105T000000Z-h1-eeeeee/logs/gc/abq-1_fork1.1.log:time,uptime,level,tags:filecount=0"))
        run("20260106T000000Z-h1-ffffff", listOf(1.0), tag = "f", forkFlags = listOf("-Djava.io.tmpdir=/runs/z/scratch/tmp",
            "-Xlog:gc:file=\\\"/my runs/queues/20260106T000000Z-h1-ffffff/logs/gc/abq-1_fork1.1.log\\\":time,uptime,level,tags:filecount=0"))
        val pool4 = findRuns("queues", "all", root)
        val gcLogs = fingerprintDiff(listOf(Group("tag=e", selectGroup("queues", pool4, "tag=e", root)), Group("tag=f", selectGroup("queues", pool4, "tag=f", root))))
        assertEquals(emptyList(), gcLogs.factors, "the runs differ in nothing measured, their GC logs' folders included")
    }

    @Test
    fun `a warm-up the measurement block shows is one row, and one difference`() {
        run(a1, listOf(1.0), tag = "a", params = mapOf("warmup" to "1", "measure" to "2"))
        val fields = loadRun(root.resolve("runs/queues/$a1")).fingerprint()
        assertEquals("1", fields["warm-up s"]); assertEquals("2", fields["measure s"]); assertEquals("1", fields["repetitions"])
        assertFalse("warmup" in fields || "measure" in fields || "forks" in fields, fields.keys.toString())
        // a parameter that disagrees with what the run recorded stays visible
        run(b1, listOf(1.0), tag = "b", params = mapOf("warmup" to "5"))
        assertEquals("5", loadRun(root.resolve("runs/queues/$b1")).fingerprint()["warmup"])
    }

    @Test
    fun `each fingerprint field belongs to the family declared with it, and a parameter is its own factor`() {
        run(a1, listOf(1.0), tag = "a", params = mapOf("capacity" to "1024"))
        val families = loadRun(root.resolve("runs/queues/$a1")).fingerprint().keys.associateWith { factorOf(it) }
        assertEquals(setOf("host"), families.filterKeys { it.startsWith("host") }.values.toSet(), families.toString())
        assertEquals("JVM", families["JVM (forks)"]); assertEquals("kit", families["kit commit"]); assertEquals("forks", families["repetitions"])
        assertEquals("capacity", families["capacity"])
        assertEquals("hostname-like", factorOf("hostname-like"), "a parameter named like a field family is still itself")
    }

    @Test
    fun `a group read from a folder says which of its runs it skipped`() {
        val good = run(a1, listOf(1.0), tag = "a")
        val folder = root.resolve("elsewhere")
        Files.createDirectories(folder.resolve("queues"))
        Files.move(good, folder.resolve("queues/$a1"))
        Files.createDirectories(folder.resolve("queues/$b1"))
        Files.writeString(folder.resolve("queues/$b1/run.json"), "null")
        val picked = selectGroup("queues", emptyList(), "folder=${folder.resolve("queues")}", root)
        assertEquals(listOf(a1), picked.map { it.id })
        assertTrue(picked.skipped.single().startsWith("skipping an unreadable run:"), picked.skipped.toString())
    }

    @Test
    fun `groups chosen by warm-up differ in that one factor`() {
        run(a1, listOf(1.0), params = mapOf("warmup" to "1"))
        run(b1, listOf(1.0), params = mapOf("warmup" to "5"))
        Files.writeString(root.resolve("runs/queues/$b1/run.json"), Files.readString(root.resolve("runs/queues/$b1/run.json")).replace("\"warmupSeconds\":1", "\"warmupSeconds\":5"))
        val pool = findRuns("queues", "all", root)
        val diff = fingerprintDiff(listOf(Group("warmup=1", selectGroup("queues", pool, "warmup=1", root)), Group("warmup=5", selectGroup("queues", pool, "warmup=5", root))))
        assertEquals(listOf("warm-up s"), diff.differing)
        assertEquals(listOf("warmup"), diff.factors)
        assertEquals(emptyList(), diff.unintended)
        assertTrue("clean comparison" in diff.warning().text, diff.warning().text)
    }

    @Test
    fun `ratios come with intervals and claims only where the forks support them`() {
        val random = Random(3)
        run(a1, List(5) { 1e6 * (1 + 0.01 * random.nextDouble()) }, tag = "base")
        run(b1, List(5) { 2e6 * (1 + 0.01 * random.nextDouble()) }, tag = "twice")
        run("20260103T000000Z-h1-cccccc", listOf(2e6), tag = "one-fork")
        val groups = listOf("tag=base", "tag=twice", "tag=one-fork").map { Group(it, selectGroup("queues", findRuns("queues", "all", root), it, root)) }
        val metric = compareMetric("queues", groups[0].runs[0])
        val ratios = compareRatios(compareValues(groups, metric), groups, metric).rows().associateBy { it["group"] }
        val twice = ratios.getValue("tag=twice")
        assertTrue((twice["ci_low"] as Double) < 2.0 * 1.011 && (twice["ci_high"] as Double) > 2.0 / 1.011, "interval holds the true ratio")
        assertTrue("faster" in twice["verdict"] as String && "p =" in twice["verdict"] as String)
        val one = ratios.getValue("tag=one-fork")
        assertEquals("range", one["interval"])
        assertTrue("not enough forks" in one["verdict"] as String, one["verdict"] as String)
    }

    @Test
    fun `equal groups cannot be told apart`() {
        val random = Random(11)
        run(a1, List(5) { 1e6 + random.nextDouble() * 1e4 }, tag = "x"); run(b1, List(5) { 1e6 + random.nextDouble() * 1e4 }, tag = "y")
        val groups = listOf("tag=x", "tag=y").map { Group(it, selectGroup("queues", findRuns("queues", "all", root), it, root)) }
        val metric = compareMetric("queues", groups[0].runs[0])
        val verdict = compareRatios(compareValues(groups, metric), groups, metric).rows().single()["verdict"] as String
        assertTrue("cannot be told apart" in verdict, verdict)
    }

    @Test
    fun `a rebuilt kernel of the same release is the same host, and the title says what was compared`() {
        run(a1, listOf(1.0), tag = "a", kernel = "6.18.44-fc-v669"); run(b1, listOf(1.0), tag = "b", kernel = "6.18.44-fc-v670")
        val pool = findRuns("queues", "all", root)
        val groups = listOf("tag=a", "tag=b").map { Group(it, selectGroup("queues", pool, it, root)) }
        assertEquals(emptyList(), fingerprintDiff(groups).factors)
        assertEquals("Side by side: queues, tag=a vs tag=b (on one host (h1), no recorded difference)", groups.compareTitle())
        assertEquals("6.18.44", kernelRelease("6.18.44-fc-v669"))
        // the post is dated by its data (the day its newest run ended), not by the day it is published
        val ended = groups.flatMap { it.runs }.maxOf { it.endedAt }.take(10)
        assertEquals(ended, com.fasterxml.jackson.databind.ObjectMapper().readTree(groups.summaryJson()).path("ended").asText())
    }

    @Test
    fun `a fixed-rate run is compared by its latency, not by its target rate`() {
        run(a1, listOf(1000.0, 1000.0), tag = "a", latencyNs = List(100) { 1_000_000L }, mode = "fixed-rate")
        run(b1, listOf(1000.0, 1000.0), tag = "b", latencyNs = List(100) { 3_000_000L }, mode = "fixed-rate")
        val groups = listOf("tag=a", "tag=b").map { Group(it, selectGroup("queues", findRuns("queues", "all", root), it, root)) }
        val metric = compareMetric("queues", groups[0].runs[0])
        assertEquals(FORK_P99, metric.table)
        val values = compareValues(groups, metric).rows().groupBy({ it["group"] }, { it["value"] as Double })
        assertEquals(2, values.getValue("tag=a").size, "one p99 per fork")
        assertEquals(1.0, values.getValue("tag=a").first(), 0.01)
        assertEquals(3.0, values.getValue("tag=b").first(), 0.01)
    }

    @Test
    fun `latency is merged per group across runs and forks`() {
        run(a1, listOf(1.0, 1.0), tag = "a", latencyNs = List(100) { 1_000_000L })
        run(a2, listOf(1.0), tag = "a", latencyNs = List(50) { 1_000_000L })
        run(b1, listOf(1.0), tag = "b", latencyNs = List(10) { 5_000_000L })
        val groups = listOf("tag=a", "tag=b").map { Group(it, selectGroup("queues", findRuns("queues", "all", root), it, root)) }
        val merged = groupLatency(groups)
        assertEquals(250L, merged.getValue(Triple("tag=a", "abq-1", true)).totalCount)
        assertEquals(5.0, merged.getValue(Triple("tag=b", "abq-1", true)).percentilesMs()[50.0]!!, 0.01)
        assertEquals(setOf("tag=a · abq-1", "tag=b · abq-1"), groupSpectra(merged)["series"].toList().toSet())
    }

    @Test
    fun `capacity is each study's own last load met, and its cost an upper bound`() {
        val dir = root.resolve("runs/web-reactive/$a1")
        Files.createDirectories(dir)
        Files.writeString(dir.resolve("capacity.csv"), "cell,fork,slo_ms,last_met_rps,first_missed_rps,status\n" +
            "mvc/1call,1,200,1900,2000,wall\nmvc/1call,2,200,2100,2200,wall\n")
        Files.writeString(dir.resolve("run.json"), completeManifest("""{"study":"web-reactive","runId":"$a1","mode":"sweep",
            "files":[{"path":"capacity.csv","kind":"table","description":"c"}]}"""))
        val groups = listOf(Group("g", listOf(loadRun(dir))))
        val capacity = groupCapacity(groups)!!
        assertEquals(2000.0, (capacity.rows().single()["mean"] as Number).toDouble())
        val cost = groupCost(capacity, groups, "aws-c5.2xlarge")
        assertEquals(listOf("group", "cell", "cores", "usd_per_hour", "capacity_at_least_per_s", "usd_per_million_at_most"), cost.columnNames())
        assertEquals(null, groupCapacity(listOf(Group("q", listOf(loadRun(run(b1, listOf(1.0, 2.0, 3.0))))))), "queues has no capacity")
    }
}
