package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toList
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertTrue

class RunsTest {
    @TempDir lateinit var root: Path

    /** The kit's own data folder, for tests against the committed reference runs. */
    private val repoData: Path = generateSequence(Path.of("").toAbsolutePath()) { it.parent }
        .first { Files.exists(it.resolve("data/schema/run.schema.json")) }.resolve("data")

    private fun run(where: String, id: String, status: String = "complete", mode: String = "max-throughput",
                    files: Map<String, String> = mapOf("t.csv" to "variant,fork,value\na,1,1.5\n"),
                    params: String = "{}", tag: String = "", quick: Boolean = false): Path {
        val dir = root.resolve(where).resolve("queues").resolve(id)
        Files.createDirectories(dir)
        files.forEach { (name, text) -> Files.createDirectories(dir.resolve(name).parent); Files.writeString(dir.resolve(name), text) }
        val listed = files.keys.joinToString(",") { """{"path":"$it","kind":"table","description":"test"}""" }
        Files.writeString(dir.resolve("run.json"), completeManifest("""
            {"schemaVersion":2,"study":"queues","runId":"$id","mode":"$mode","tag":"$tag","quick":$quick,"variants":["a"],"params":$params,
             "status":"$status","error":null,"startedAt":"2026-01-01T00:00:00Z","endedAt":null,"pid":1,
             "host":{"hostname":"h1","cpuModel":"cpu","logicalCores":2,"memoryBytes":1,"os":"Linux","kernel":"6","containerCpuLimit":null},
             "jvm":{"vendor":"x","version":"17.0.15","inputArguments":[]},"kit":{"commit":"abc","dirty":false},
             "measurement":{"warmupSeconds":1,"measureSeconds":2,"repetitions":1,"repetitionKind":"jvm-fork","warmupExcluded":true},
             "valid":true,"invalidReasons":[],"notes":{},"files":[$listed]}""".trimIndent()))
        return dir
    }

    private val id1 = "20260101T000000Z-h1-aaaaaa"
    private val id2 = "20260102T000000Z-h1-bbbbbb"
    private val id3 = "20260103T000000Z-h1-cccccc"

    @Test
    fun `the hardware phrase comes from the manifest and the steal series`() {
        val series = "epoch_ms,elapsed_s,phase,series,metric,value\n1,1,measure,system,steal_pct,0.5\n2,2,measure,system,steal_pct,6.5\n" +
            "3,3,measure,system,cpu_pct,150\n4,4,measure,proc:x,cpu_pct,80\n"
        run("runs", id1, files = mapOf("timeseries.csv" to series))
        val phrase = findRuns("queues", id1, root).hardware()
        assertEquals("h1: 2 logical cores (cpu), steal 3.5% of a core on average, at most 6.5% in a second " +
            "(visible: other guests took CPU during the runs)", phrase)
        run("runs", id2)
        assertTrue(findRuns("queues", id2, root).hardware().endsWith("steal not recorded"))
    }

    @Test
    fun `the topology names each placed part with its host, round trip and clock, and says when nothing was placed`() {
        run("runs", id1)
        assertEquals("every part on the run's host", findRuns("queues", id1, root).topology())
        val series = "epoch_ms,elapsed_s,phase,series,metric,value\n1,1,measure,host:db,steal_pct,1\n2,2,measure,host:db,steal_pct,3\n" +
            "3,3,measure,system,steal_pct,0\n"
        val dir = run("runs", id2, files = mapOf("timeseries.csv" to series))
        val manifest = dir.resolve("run.json")
        val placement = """
            "placement":[{"part":"db","host":"ops@db-1","address":"10.0.0.2","fingerprint":{"hostname":"db-1","cpuModel":"cpu","logicalCores":8},
              "rttMs":{"method":"TCP connect","samples":20,"min":0.21,"median":0.3},"link":{"interface":"eth1","speedMbps":10000},
              "clock":{"start":{"at":"x","offsetMs":-1.5,"uncertaintyMs":0.1},"end":{"at":"y","offsetMs":2.25,"uncertaintyMs":0.2}}}],""".trimIndent()
        Files.writeString(manifest, Files.readString(manifest).replace("\"status\":", placement + "\"status\":"))
        val runs = findRuns("queues", id2, root)
        assertEquals(listOf(-1.5, 2.25), runs.single().placement.single().clockOffsetMs)
        assertEquals("db on ops@db-1 (db-1, 8 logical cores, round trip 0.21 ms (median 0.3), its clock 2.3 ms from h1's at most (± 0.2), " +
            "steal 2% of a core on average (at most 3%)); " +
            "every other part on the run's host", runs.topology())
    }

    @Test
    fun `a run made with --on describes its target as the machine measured, and a part elsewhere makes it a placed run`() {
        val series = "epoch_ms,elapsed_s,phase,series,metric,value\n1,1,measure,system,steal_pct,0\n2,2,measure,host:forks,steal_pct,4\n"
        fun onRun(id: String, parts: List<Pair<String, String>>): Path {
            val dir = run("runs", id, files = mapOf("timeseries.csv" to series),
                params = """{"on":"me@lab","place":"${parts.joinToString(",") { "${it.first}=${it.second}" }}"}""")
            val placement = parts.joinToString(",", "\"placement\":[", "],") { (part, host) ->
                """{"part":"$part","host":"$host","address":"10.0.0.2","fingerprint":{"hostname":"${host.substringAfter('@')}-box","cpuModel":"big cpu","logicalCores":16,"memoryBytes":68719476736},
                   "rttMs":{"method":"TCP connect","samples":1,"min":0.2,"median":0.3},"link":{"interface":"eth0","speedMbps":1000},
                   "clock":{"start":{"at":"x","offsetMs":0,"uncertaintyMs":0.1}}}""" }
            val manifest = dir.resolve("run.json")
            Files.writeString(manifest, Files.readString(manifest).replace("\"status\":", placement + "\"status\":"))
            return dir
        }
        onRun(id1, listOf("forks" to "me@lab"))
        val all = findRuns("queues", id1, root)
        val run = all.single()
        assertEquals("me@lab", run.on)
        assertEquals(16, run.cores, "the target's cores, not the run host's 2")
        assertEquals("lab-box", run.hostname)
        assertEquals(listOf("host:forks"), run.hostSeries)
        assertEquals(4.0, run.measuredSteal()?.meanPct, "the target's steal")
        assertEquals(0.0, run.steal()?.meanPct, "this host's, asked for by name")
        assertTrue(all.hardware().startsWith("lab-box: 16 logical cores (big cpu, 64 GiB)"), all.hardware())
        assertEquals(emptySet(), all.placedRunIds, "every part on one machine: judged as a run made there")
        onRun(id2, listOf("db" to "me@db", "engines" to "me@lab"))
        val mixed = findRuns("queues", id2, root)
        assertEquals(16, mixed.single().cores)
        assertEquals(setOf(id2), mixed.placedRunIds, "a part on another host: this machine's CPU does not hold it")
        run("runs", id3)
        assertEquals(2, findRuns("queues", id3, root).single().cores, "a run made here keeps its own host")
    }

    @Test
    fun `a time series stored gzip-compressed reads as the plain one, and one cut short is a format error`() {
        val series = "epoch_ms,elapsed_s,phase,series,metric,value\n1,1,measure,system,steal_pct,0.5\n2,2,measure,system,steal_pct,6.5\n"
        run("runs", id1, files = mapOf("timeseries.csv" to series))
        val plain = findRuns("queues", id1, root)
        val phrase = plain.hardware()
        val dir = run("runs", id2, files = mapOf("timeseries.csv" to series))
        val gz = dir.resolve("timeseries.csv.gz")
        java.util.zip.GZIPOutputStream(Files.newOutputStream(gz)).use { it.write(series.toByteArray()) }
        Files.delete(dir.resolve("timeseries.csv"))
        val manifest = dir.resolve("run.json")
        Files.writeString(manifest, Files.readString(manifest).replace("\"path\":\"timeseries.csv\"", "\"path\":\"timeseries.csv.gz\""))
        val compressed = findRuns("queues", id2, root)
        assertEquals(phrase, compressed.hardware())
        val run = compressed.single()
        assertTrue(run.has("timeseries.csv"))
        assertEquals(plain.single().table("timeseries.csv"), run.table("timeseries.csv"))
        Files.write(gz, Files.readAllBytes(gz).copyOf(20))
        val e = assertThrows<RunFormatException> { run.table("timeseries.csv") }
        assertTrue(e.message!!.contains("corrupt table") && e.message!!.contains("timeseries.csv.gz"), e.message)
        val damage = run.damage(root)
        assertTrue(damage != null && damage.startsWith("timeseries.csv.gz: does not decompress"), damage)
    }

    @Test
    fun `a post's scale comes from its runs`() {
        run("runs", id1); run("reference", id2)
        assertEquals(mapOf("scale" to "full", "forks" to 1), scaleFields(findRuns("queues", id1, root)))
        assertEquals("reference", scaleFields(findRuns("queues", "reference", root))["scale"])
        run("runs", id3, quick = true)
        assertEquals("quick", scaleFields(findRuns("queues", "all", root))["scale"], "one quick run makes the post quick")
    }

    @Test
    fun `a post is dated by the day its newest run ended, not the day it is published`() {
        run("runs", id1)
        val later = run("runs", id2).resolve("run.json")
        Files.writeString(later, Files.readString(later).replace("\"endedAt\":\"2026-01-01T00:01:00Z\"", "\"endedAt\":\"2026-01-02T23:59:00Z\""))
        val json = com.fasterxml.jackson.databind.ObjectMapper()
        assertEquals("2026-01-02", json.readTree(findRuns("queues", "all", root).summary().json)["ended"].asText())
        assertEquals("2026-01-01", json.readTree(findRuns("queues", id1, root).summary().json)["ended"].asText())
    }

    @Test
    fun `the runs a notebook can read are listed newest first with their labels`() {
        run("runs", id1); run("reference", id2); run("runs", id3, status = "interrupted")
        val listed = availableRuns("queues", root)
        assertEquals(listOf(id2, id1), listed["run_id"].toList(), "an interrupted run is not offered")
        assertEquals(listOf(true, false), listed["reference"].toList())
        assertTrue(listed.columnNames().containsAll(listOf("label", "mode", "quick")))
    }

    @Test
    fun `the lab's parameters cell wins, headless runs take the environment, and each says so`() {
        val lab = chooseParam("PERFKIT_RUNS", "latest", mapOf("PERFKIT_RUNS" to "reference"))
        assertEquals("latest", lab.value)
        assertTrue("ignored" in lab.source, lab.toString())
        val headless = chooseParam("PERFKIT_RUNS", "latest", mapOf("PERFKIT_RUNS" to "reference", "PERFKIT_HEADLESS" to "1"))
        assertEquals("reference", headless.value)
        assertEquals("PERFKIT_RUNS = \"latest\" (this cell)", chooseParam("PERFKIT_RUNS", "latest", emptyMap()).toString())
    }

    @Test
    fun `the parameters cell's result says each value once, the last one chosen, as text`() {
        param("PERFKIT_TEST_ONE", "first")
        param("PERFKIT_TEST_TWO", "<b>two</b>")
        param("PERFKIT_TEST_ONE", "again")
        val lines = parameters().text.lines().filter { "TEST" in it }
        assertEquals(listOf("- PERFKIT&#95;TEST&#95;ONE = \"again\" (this cell)", "- PERFKIT&#95;TEST&#95;TWO = \"&lt;b&gt;two&lt;/b&gt;\" (this cell)"), lines)
        param("PERFKIT_TEST_ONE", "edited")
        assertEquals(listOf("- PERFKIT&#95;TEST&#95;ONE = \"edited\" (this cell)"), parameters().text.lines().filter { "TEST" in it },
            "the cell run again shows what it chose this time, not a parameter it no longer has")
    }

    @Test
    fun `latest is the newest complete run of each mode`() {
        run("runs", id1); run("runs", id2); run("runs", id3, status = "interrupted")
        val fixed = "20260101T000001Z-h1-dddddd"
        run("runs", fixed, mode = "fixed-rate")
        assertEquals(listOf(fixed, id2), findRuns("queues", "latest", root).map { it.id })
    }

    @Test
    fun `latest falls back to the reference runs`() {
        run("reference", id1)
        assertEquals(listOf(id1), findRuns("queues", "latest", root).map { it.id })
    }

    @Test
    fun `a run id or a folder picks runs explicitly`() {
        run("runs", id1); run("runs", id2)
        assertEquals(listOf(id1), findRuns("queues", id1, root).map { it.id })
        assertEquals(listOf(id1, id2), findRuns("queues", root.resolve("runs").toString(), root).map { it.id })
        assertEquals(listOf(id2), findRuns("queues", root.resolve("runs/queues/$id2").toString(), root).map { it.id })
    }

    @Test
    fun `a folder of links to runs reads the runs they lead to`() {
        // e.g. runs from two hosts gathered by linking, not copying
        val a = run("runs", id1); val b = run("elsewhere", id2)
        val gathered = Files.createDirectories(root.resolve("gathered"))
        Files.createSymbolicLink(gathered.resolve(id1), a)
        Files.createSymbolicLink(gathered.resolve("from-b"), b.parent)
        assertEquals(listOf(id1, id2), findRuns("queues", gathered.toString(), root).map { it.id }.sorted())
        Files.createSymbolicLink(gathered.resolve("again"), gathered)
        val loop = assertFailsWith<RunFormatException> { findRuns("queues", gathered.toString(), root) }
        assertTrue(loop.message!!.contains("leads back"), loop.message)
    }

    @Test
    fun `nothing found is a clear error`() {
        val e = assertThrows<RunFormatException> { findRuns("queues", "latest", root) }
        assertTrue(e.message!!.contains("no queues runs match 'latest'"), e.message)
        assertTrue(assertThrows<RunFormatException> { findRuns("queues", "no-such-thing", root) }.message!!.contains("no-such-thing"))
    }

    @Test
    fun `a missing manifest is named`() {
        Files.createDirectories(root.resolve("empty"))
        assertTrue(assertThrows<RunFormatException> { loadRun(root.resolve("empty")) }.message!!.contains("no run.json"))
    }

    @Test
    fun `a corrupt manifest is named`() {
        val dir = run("runs", id1)
        Files.writeString(dir.resolve("run.json"), "{\"schemaVersion\": 1, \"study\": ")
        val e = assertThrows<RunFormatException> { findRuns("queues", id1, root) }
        assertTrue(e.message!!.startsWith("corrupt manifest ") && e.message!!.contains(dir.resolve("run.json").toString()), e.message)
    }

    @Test
    fun `a manifest of another schema version is refused in one line`() {
        val dir = run("runs", id1)
        for (version in listOf(1, 3)) {
            Files.writeString(dir.resolve("run.json"), Files.readString(dir.resolve("run.json")).replace(Regex("\"schemaVersion\":\\d"), "\"schemaVersion\":$version"))
            val message = assertThrows<RunFormatException> { loadRun(dir) }.message!!
            assertTrue("schemaVersion $version" in message && "reads version 2" in message && "\n" !in message, message)
        }
    }

    @Test
    fun `latest and all skip unreadable runs, naming one fails with one line`() {
        run("runs", id1); run("runs", id2)
        val bad = listOf("null", "{\"host\":\"x\"}", "{\"schemaVersion\": 1, \"study\": ", "[]",
            Files.readString(run("runs", id3).resolve("run.json")).replace("\"host\":{", "\"host\":\"x\",\"h\":{"))
        for (text in bad) {
            Files.writeString(root.resolve("runs/queues/$id3/run.json"), text)
            val latest = findRuns("queues", "latest", root)
            val all = findRuns("queues", "all", root)
            assertEquals(listOf(id2), latest.map { it.id })
            assertEquals(listOf(id1, id2), all.map { it.id })
            for (found in listOf(latest, all)) {
                assertTrue(found.skipped.size == 1 && found.skipped[0].startsWith("skipping an unreadable run:") && id3 in found.skipped[0], found.skipped.toString())
            }
            assertFalse("perfkit: skipping" in findRuns("queues", id2, root).summary().markdown, "a whole selection says nothing of skips")
            val named = assertThrows<RunFormatException> { findRuns("queues", id3, root) }.message!!
            assertTrue(named.contains(id3) && !named.contains("\n"), named)
        }
    }

    @Test
    fun `runs that differ in a measurement parameter are not pooled under one label`() {
        run("runs", id1, params = """{"rate":"0","forks":"3","out":"/a"}""")
        run("runs", id2, params = """{"rate":"0","forks":"1","out":"/b"}""")
        run("runs", id3, params = """{"rate":"10000","forks":"3","out":"/a"}""")
        val labels = findRuns("queues", "all", root).associate { it.id to it.label }
        assertEquals(labels[id1], labels[id2], "forks and out are bookkeeping: pooled")
        assertEquals("h1 · JDK 17.0.15 · rate=0", labels[id1])
        assertEquals("h1 · JDK 17.0.15 · rate=10000", labels[id3])
        val t = findRuns("queues", "all", root).table("t.csv")
        val pooled = summarize(t, listOf("label", "variant"), "value").rows().associate { (it["label"] as String) to (it["pooled_runs"] as Int) }
        assertEquals(mapOf("h1 · JDK 17.0.15 · rate=0" to 2, "h1 · JDK 17.0.15 · rate=10000" to 1), pooled)
    }

    @Test
    fun `a run made before --profile existed pools with one that said profile=false, not with a profiled one`() {
        run("runs", id1, params = """{"rate":"0"}""")
        run("runs", id2, params = """{"rate":"0","profile":"false"}""")
        run("runs", id3, params = """{"rate":"0","profile":"true"}""")
        val labels = findRuns("queues", "all", root).associate { it.id to it.label }
        assertEquals("h1 · JDK 17.0.15 · profile=false", labels[id1])
        assertEquals(labels[id1], labels[id2], "the same measurement")
        assertEquals("h1 · JDK 17.0.15 · profile=true", labels[id3], "profiling costs the JVMs under test: a profiled run stands apart")
    }

    @Test
    fun `typed accessors read the manifest`() {
        val r = loadRun(run("runs", id1, tag = "jdk21"))
        assertEquals(2, r.cores); assertEquals("h1", r.hostname); assertEquals("17.0.15", r.jdk)
        assertEquals("max-throughput", r.mode); assertEquals("jdk21", r.tag)
        assertEquals(false, r.quick); assertEquals(true, r.valid); assertEquals(emptyList<String>(), r.invalidReasons)
        assertEquals(1, r.repetitions); assertEquals(2.0, r.measureSeconds); assertEquals("abc", r.commit)
        assertEquals("h1 · JDK 17.0.15 · jdk21", r.label)
    }

    @Test
    fun `manifests give mode and file fields directly`() {
        val dir = run("runs", id1, mode = "throughput")
        val complete = Files.readString(dir.resolve("run.json"))
        val r = loadRun(dir)
        assertEquals("throughput", r.mode)
        assertEquals(RecordedFile("t.csv", "table", "test", null, null, null, null, null), r.files.single())
        Files.writeString(dir.resolve("run.json"), complete.replace("\"mode\":\"throughput\",", ""))
        assertTrue(assertThrows<RunFormatException> { loadRun(dir) }.message!!.contains(": required property 'mode' not found"))
    }

    @Test
    fun `a version 2 manifest is held to run schema json and each complaint names its place`() {
        val dir = run("runs", id1)
        val good = Files.readString(dir.resolve("run.json"))
        for ((broken, complaint) in listOf(
            good.replace("\"startedAt\":\"2026-01-01T00:00:00Z\"", "\"startedAt\":\"yesterday\"") to "/startedAt: does not match the date-time pattern",
            good.replace("\"logicalCores\":2", "\"logicalCores\":\"two\"") to "/host/logicalCores: string found, integer expected",
            good.replace("\"status\":\"complete\"", "\"status\":\"done\"") to "/status: does not have a value in the enumeration",
            good.replace("\"kind\":\"table\"", "\"kind\":\"spreadsheet\"") to "/files/0/kind: does not have a value in the enumeration",
        )) {
            Files.writeString(dir.resolve("run.json"), broken)
            val message = assertThrows<RunFormatException> { loadRun(dir) }.message!!
            assertTrue(message.startsWith("corrupt manifest ${dir.resolve("run.json")}: ") && complaint in message && "\n" !in message, message)
        }
        Files.writeString(dir.resolve("run.json"), good)
        assertEquals(id1, loadRun(dir).id)
    }

    @Test
    fun `missing and corrupt tables are named`() {
        val dir = run("runs", id1, files = mapOf("t.csv" to "a,b\n1,2\n3\n"))
        val r = loadRun(dir)
        assertTrue(assertThrows<RunFormatException> { r.table("other.csv") }.message!!.contains("no file 'other.csv'"))
        val e = assertThrows<RunFormatException> { r.table("t.csv") }
        assertTrue(e.message!!.contains("t.csv line 3"), e.message)
        Files.delete(dir.resolve("t.csv"))
        assertTrue(assertThrows<RunFormatException> { r.table("t.csv") }.message!!.contains("missing"))
    }

    @Test
    fun `tables stack across runs with run id and label in front`() {
        run("runs", id1); run("runs", id2)
        val t = findRuns("queues", "all", root).table("t.csv")
        assertEquals(listOf("run_id", "label", "variant", "fork", "value"), t.columnNames())
        assertEquals(2, t.rows().count())
        assertEquals(1.5, t.rows().first()["value"])
        assertEquals("h1 · JDK 17.0.15", t.rows().first()["label"])
    }

    @Test
    fun `a quoted newline is part of its field, as Table writes it`() {
        val dir = run("runs", id1, files = mapOf("q.csv" to "cell,note\nabq-1,\"two\nlines, and a comma\"\nabq-3,plain\n"))
        val rows = loadRun(dir).table("q.csv").rows().toList()
        assertEquals(2, rows.size)
        assertEquals("two\nlines, and a comma", rows[0]["note"])
        assertEquals("plain", rows[1]["note"])
        val broken = run("runs", id2, files = mapOf("q.csv" to "cell,note\nabq-1,\"never closed\n"))
        assertTrue(assertThrows<RunFormatException> { loadRun(broken).table("q.csv") }.message!!.startsWith("corrupt table"))
    }

    @Test
    fun `csv columns are typed and quotes are honoured`() {
        val dir = run("runs", id1, files = mapOf("q.csv" to "name,n,x,ok\n\"a,b\",1,0.5,true\n\"say \"\"hi\"\"\",,2,false\n"))
        val rows = loadRun(dir).table("q.csv").rows().toList()
        assertEquals("a,b", rows[0]["name"]); assertEquals("say \"hi\"", rows[1]["name"])
        assertEquals(1L, rows[0]["n"]); assertEquals(null, rows[1]["n"])
        assertEquals(2.0, rows[1]["x"]); assertEquals(true, rows[0]["ok"])
    }

    @Test
    fun `the committed reference runs load with their latency logs`() {
        val runs = findRuns("queues", "reference", repoData)
        assertTrue(runs.isNotEmpty())
        val m = runs.manifests()
        assertTrue(m.rows().all { it["status"] == "complete" && it["reference"] == true })
        val fixedRate = runs.filter { it.mode == "fixed-rate" }
        assertTrue(fixedRate.isNotEmpty())
        val merged = fixedRate.mergedLatency()
        assertTrue(merged.isNotEmpty() && merged.values.all { it.totalCount > 0 })
        assertTrue(merged.keys.any { it.third } && merged.keys.any { !it.third }, "corrected and uncorrected")
    }
}
