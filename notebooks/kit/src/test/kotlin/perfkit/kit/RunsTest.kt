package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertTrue

class RunsTest {
    @TempDir lateinit var root: Path

    /** The kit's own data folder, for tests against the committed reference runs. */
    private val repoData: Path = generateSequence(Path.of("").toAbsolutePath()) { it.parent }
        .first { Files.exists(it.resolve("data/schema/run.schema.json")) }.resolve("data")

    private fun run(where: String, id: String, status: String = "complete", mode: String = "max-throughput",
                    files: Map<String, String> = mapOf("t.csv" to "variant,fork,value\na,1,1.5\n")): Path {
        val dir = root.resolve(where).resolve("queues").resolve(id)
        Files.createDirectories(dir)
        files.forEach { (name, text) -> Files.createDirectories(dir.resolve(name).parent); Files.writeString(dir.resolve(name), text) }
        val listed = files.keys.joinToString(",") { """{"path":"$it","kind":"table","description":"test"}""" }
        Files.writeString(dir.resolve("run.json"), """
            {"schemaVersion":1,"study":"queues","runId":"$id","tag":"","quick":false,"variants":["a"],"params":{},
             "status":"$status","error":null,"startedAt":"2026-01-01T00:00:00Z","endedAt":null,"pid":1,
             "host":{"hostname":"h1","cpuModel":"cpu","logicalCores":2,"memoryBytes":1,"os":"Linux","kernel":"6","containerCpuLimit":null},
             "jvm":{"vendor":"x","version":"17.0.15","inputArguments":[]},"kit":{"commit":"abc","dirty":false},
             "measurement":{"warmupSeconds":1,"measureSeconds":2,"repetitions":1,"repetitionKind":"jvm-fork","warmupExcluded":true},
             "valid":true,"invalidReasons":[],"notes":{"mode":"$mode"},"files":[$listed]}""".trimIndent())
        return dir
    }

    private val id1 = "20260101T000000Z-h1-aaaaaa"
    private val id2 = "20260102T000000Z-h1-bbbbbb"
    private val id3 = "20260103T000000Z-h1-cccccc"

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
        val e = assertThrows<RunFormatException> { findRuns("queues", "latest", root) }
        assertTrue(e.message!!.startsWith("corrupt manifest ") && e.message!!.contains(dir.resolve("run.json").toString()), e.message)
    }

    @Test
    fun `a manifest of another schema version is refused`() {
        val dir = run("runs", id1)
        Files.writeString(dir.resolve("run.json"), Files.readString(dir.resolve("run.json")).replace("\"schemaVersion\":1", "\"schemaVersion\":2"))
        assertTrue(assertThrows<RunFormatException> { loadRun(dir) }.message!!.contains("schemaVersion 2"))
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
