package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.toList
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import kotlin.io.path.name
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

/** Damaged runs (a copy cut short, a table from another kit): skipped with a line in the runs' summary, unless the user named them. */
class IntegrityTest {
    @TempDir lateinit var root: Path

    private val repoData: Path = generateSequence(Path.of("").toAbsolutePath()) { it.parent }
        .first { Files.exists(it.resolve("data/schema/run.schema.json")) }.resolve("data")

    /** A copy of a committed queues reference run of [mode] under root/runs, with a new id. */
    private fun copy(mode: String, id: String): Path {
        val source = Files.list(repoData.resolve("reference/queues")).use { s -> s.toList() }.first { loadRun(it).mode == mode }
        val dest = root.resolve("runs/queues/$id")
        Files.createDirectories(dest.parent)
        Files.walk(source).use { all ->
            all.forEach { p -> Files.copy(p, dest.resolve(source.relativize(p).toString()), StandardCopyOption.REPLACE_EXISTING) }
        }
        Files.writeString(dest.resolve("run.json"), Files.readString(dest.resolve("run.json")).replace(source.name, id))
        return dest
    }

    private fun schema() {
        Files.createDirectories(root.resolve("schema/tables"))
        Files.copy(repoData.resolve("schema/tables/queues.json"), root.resolve("schema/tables/queues.json"))
    }

    private val older = "20260101T000000Z-h1-aaaaaa"
    private val newer = "20260102T000000Z-h1-bbbbbb"

    @Test
    fun `a table without a declared column is skipped by latest and fails when named`() {
        schema()
        copy("throughput", older)
        val damaged = copy("throughput", newer)
        val table = damaged.resolve("throughput.csv")
        Files.writeString(table, Files.readString(table).replace("events_per_s", "events_per_second"))
        val found = findRuns("queues", "latest", root)
        assertEquals(listOf(older), found.map { it.id })
        assertEquals(listOf("skipping a damaged run $newer: table throughput.csv has no column 'events_per_s'"), found.skipped)
        // said where a post keeps it: a line under the runs' table, with its markup escaped
        assertTrue(found.summary().markdown.endsWith("\n\n- perfkit: skipping a damaged run $newer: table throughput.csv has no column 'events&#95;per&#95;s'"),
            found.summary().markdown)
        assertEquals(listOf(older), findRuns("queues", "all", root).map { it.id })
        val e = assertThrows<RunFormatException> { findRuns("queues", newer, root) }
        assertEquals("run $newer is damaged: table throughput.csv has no column 'events_per_s'", e.message)
        assertThrows<RunFormatException> { findRuns("queues", damaged.toString(), root) }
    }

    @Test
    fun `a value that is not of its column's declared type is damage`() {
        schema()
        copy("throughput", older)
        val damaged = copy("throughput", newer)
        val table = damaged.resolve("throughput.csv")
        val lines = Files.readAllLines(table)
        val fork = lines[0].split(',').indexOf("fork")
        Files.write(table, listOf(lines[0], lines[1].split(',').toMutableList().also { it[fork] = "first" }.joinToString(",")) + lines.drop(2))
        val found = findRuns("queues", "latest", root)
        assertEquals(listOf(older), found.map { it.id })
        assertEquals(listOf("skipping a damaged run $newer: table $table column 'fork' is declared integer, but holds 'first'"), found.skipped)
    }

    @Test
    fun `a status outside its column's declared values is damage`() {
        val declared = TableDeclarations.of("messaging", repoData)
        val allowed = declared.values.getValue("sweep.csv").getValue("verdict")
        assertEquals(listOf("met", "missed", "not measurable on this host", "invalid"), allowed)
        val file = root.resolve("sweep.csv")
        Files.writeString(file, "cell,verdict\na,met\nb,\nc,not measurable on this host\n")
        assertEquals(listOf("met", null, "not measurable on this host"), readCsv(file, mapOf("verdict" to "string"), mapOf("verdict" to allowed))["verdict"].toList())
        Files.writeString(file, "cell,verdict\na,met\nb,Met\n")
        val e = assertThrows<RunFormatException> { readCsv(file, mapOf("verdict" to "string"), mapOf("verdict" to allowed)) }
        assertEquals("table $file column 'verdict' holds 'Met', not one of its declared values $allowed", e.message)
    }

    @Test
    fun `a run's tables are typed by the declarations of the data folder it was found under`() {
        Files.createDirectories(root.resolve("schema/tables"))
        val doc = com.fasterxml.jackson.databind.ObjectMapper().readTree(repoData.resolve("schema/tables/queues.json").toFile())
        (doc.path("tables").path("throughput.csv").path("columns").path("fork") as com.fasterxml.jackson.databind.node.ObjectNode).put("type", "string")
        Files.writeString(root.resolve("schema/tables/queues.json"), doc.toString())
        copy("throughput", older)
        val run = findRuns("queues", "latest", root).single()
        assertTrue(run.table("throughput.csv")["fork"].toList().all { it is String }, "this root declares fork a string")
        assertTrue(loadRun(repoData.resolve("reference/queues").let { r -> Files.list(r).use { it.toList() }.first { loadRun(it).mode == "throughput" } })
            .table("throughput.csv")["fork"].toList().all { it is Long }, "a run loaded alone is read by the kit's own declarations")
    }

    @Test
    fun `declared columns are read as their type, the rest as whatever fits`(@TempDir dir: Path) {
        val file = dir.resolve("t.csv")
        Files.writeString(file, "cell,jdk,rate,n,ok,other\na,17,200,3,true,1\nb,21,250.5,,false,2\n")
        val t = readCsv(file, mapOf("jdk" to "string", "rate" to "number", "n" to "integer", "ok" to "boolean"))
        assertEquals(listOf("17", "21"), t["jdk"].toList(), "a version is text even when it looks like a number")
        assertEquals(listOf(200.0, 250.5), t["rate"].toList())
        assertEquals(listOf(3L, null), t["n"].toList())
        assertEquals(listOf(true, false), t["ok"].toList())
        assertEquals(listOf(1L, 2L), t["other"].toList(), "an undeclared column is inferred")
        val e = assertThrows<RunFormatException> { readCsv(file, mapOf("rate" to "integer")) }
        assertEquals("table $file column 'rate' is declared integer, but holds '250.5'", e.message)
    }

    @Test
    fun `a latency log cut short is found from its end`() {
        schema()
        val good = loadRun(copy("fixed-rate", older))
        assertNull(good.damage(root), "every committed reference run is whole")
        val damaged = copy("fixed-rate", newer)
        val log = damaged.resolve(good.filesOfKind("hlog").first())
        val bytes = Files.readAllBytes(log)
        Files.write(log, bytes.copyOf(bytes.size - 40))
        assertTrue(loadRun(damaged).damage(root)!!.contains("cut short"), loadRun(damaged).damage(root))
        Files.write(log, bytes.copyOf(bytes.size - 40) + "\n".toByteArray())
        assertTrue(loadRun(damaged).damage(root)!!.contains("does not decode"), loadRun(damaged).damage(root))
        val found = findRuns("queues", "latest", root)
        assertEquals(listOf(older), found.map { it.id })
        assertTrue(found.skipped.single().startsWith("skipping a damaged run $newer: latency log "), found.skipped.toString())
    }

    @Test
    fun `a listed file that is missing is damage`() {
        val run = copy("throughput", older)
        Files.delete(run.resolve("throughput.csv"))
        assertEquals("lists throughput.csv but it is missing", loadRun(run).damage(root))
    }

    @Test
    fun `a column added later is required only of runs started after it came in`() {
        val run = loadRun(copy("throughput", older))
        /** A data root whose queues schema declares one more column in throughput.csv, added at [since]. */
        fun declaredSince(since: String): Path {
            val dataRoot = Files.createDirectories(root.resolve("schema-$since".replace(":", "")))
            val doc = com.fasterxml.jackson.databind.ObjectMapper().readTree(repoData.resolve("schema/tables/queues.json").toFile())
            (doc.path("tables").path("throughput.csv").path("columns") as com.fasterxml.jackson.databind.node.ObjectNode)
                .putObject("added_later").put("type", "integer").put("since", since)
            Files.createDirectories(dataRoot.resolve("schema/tables"))
            Files.writeString(dataRoot.resolve("schema/tables/queues.json"), doc.toString())
            return dataRoot
        }
        val started = java.time.Instant.parse(run.startedAt)
        val hourAfter = started.plusSeconds(3600).toString()
        val hourBefore = started.minusSeconds(3600).toString()
        assertNull(run.damage(declaredSince(hourAfter)), "started before the column came in: whole without it")
        assertEquals("table throughput.csv has no column 'added_later'", run.damage(declaredSince(hourBefore)))
    }
}
