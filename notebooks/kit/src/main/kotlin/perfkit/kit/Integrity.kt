package perfkit.kit

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.HdrHistogram.HistogramLogReader
import org.jetbrains.kotlinx.dataframe.api.columnNames
import java.io.ByteArrayInputStream
import java.io.RandomAccessFile
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.ConcurrentHashMap
import kotlin.io.path.exists

/**
 * The tables a study writes, as declared in `data/schema/tables/<study>.json`: for each table file, its columns and
 * their types. Notebooks rely on these columns; a run whose tables lack one is damaged (or from another kit). A column
 * added later names the instant it came in ([since], ISO-8601 UTC): runs started before it lack it and are whole. A
 * status or verdict column lists the only values it may hold ([values], the declaration's `enum`).
 */
class TableDeclarations(
    val study: String, val tables: Map<String, Map<String, String>>, val since: Map<String, Map<String, String>> = emptyMap(),
    val values: Map<String, Map<String, List<String>>> = emptyMap(), val compare: List<CompareRule> = emptyList(),
    val capacity: CompareMetric? = null,
) {
    /** The columns of [table] a run started at [startedAt] (ISO-8601) must have. */
    fun required(table: String, startedAt: String): Set<String> =
        tables[table].orEmpty().keys.filter { c -> since[table]?.get(c)?.let { startedAt.isEmpty() || startedAt >= it } ?: true }.toSet()

    companion object {
        private fun metricOf(r: JsonNode) = CompareMetric(r.path("table").asText(), r.path("value").asText(), r.path("unit").asText(),
            r.path("higherIsBetter").asBoolean(true), r.path("keys").takeIf { it.isArray }?.map { it.asText() } ?: listOf("cell"))

        private val cache = ConcurrentHashMap<Path, TableDeclarations>()

        /** The declarations of [study] under [root] (the kit's data folder); empty when the study declares none. */
        fun of(study: String, root: Path = dataRoot()): TableDeclarations {
            val file = root.resolve("schema/tables/$study.json").toAbsolutePath().normalize()
            return cache.computeIfAbsent(file) {
                if (!file.exists()) return@computeIfAbsent TableDeclarations(study, emptyMap())
                val doc: JsonNode = ObjectMapper().readTree(file.toFile())
                val tables = doc.path("tables").properties()
                TableDeclarations(study, tables.associate { (table, spec) ->
                    table to spec.path("columns").properties().associate { (column, c) -> column to c.path("type").asText() }
                }, tables.associate { (table, spec) ->
                    table to spec.path("columns").properties().filter { it.value.has("since") }.associate { (column, c) -> column to c.path("since").asText() }
                }, tables.associate { (table, spec) ->
                    table to spec.path("columns").properties().filter { it.value.has("enum") }.associate { (column, c) -> column to c.path("enum").map { it.asText() } }
                }, doc.path("compare").map { r -> CompareRule(r.path("mode").takeIf { it.isTextual }?.asText(), r.path("hasRows").takeIf { it.isTextual }?.asText(), metricOf(r)) },
                    doc.path("capacity").takeIf { it.isObject }?.let { metricOf(it) })
            }
        }
    }
}

/**
 * What is wrong with the run's data files, in one line, or null when they are whole: a listed file that is missing,
 * a table that does not parse, lacks a declared column or holds a value not of its declared type (or not one of its
 * declared values), a latency log cut short. Cheap enough to ask of every
 * candidate run: tables are small, and of a latency log only its end is read (a copy or a write cut short leaves a
 * partial last line).
 */
fun RecordedRun.damage(root: Path = dataRoot()): String? {
    val declared = TableDeclarations.of(study, root)
    for (f in files) {
        val path = dir.resolve(f.path)
        if (!path.exists()) return "lists ${f.path} but it is missing"
        if (f.path.endsWith(".gz")) gzipProblem(path)?.let { return "${f.path}: $it" }
        when (f.kind) {
            "table" -> {
                val name = f.path.removeSuffix(".gz") // declared by its name, stored compressed or not
                val table = try { readCsv(path, declared.tables[name].orEmpty(), declared.values[name].orEmpty()) } catch (e: RunFormatException) { return e.message }
                val missing = declared.required(name, startedAt) - table.columnNames().toSet()
                if (missing.isNotEmpty()) return "table ${f.path} has no column ${missing.joinToString { "'$it'" }}"
            }
            "hlog" -> lastIntervalProblem(path)?.let { return "latency log ${f.path}: $it" }
        }
    }
    return null
}

/** Why a gzip-compressed file does not decompress to its end (cut short, or not gzip), or null when it does. */
internal fun gzipProblem(file: Path): String? = try {
    java.util.zip.GZIPInputStream(java.nio.file.Files.newInputStream(file)).use { it.transferTo(java.io.OutputStream.nullOutputStream()) }
    null
} catch (e: java.io.IOException) {
    "does not decompress (${e.message ?: e.javaClass.simpleName})"
}

/** Why the last interval of an HdrHistogram log cannot be read, or null when it can. */
internal fun lastIntervalProblem(file: Path): String? {
    val size = Files.size(file)
    if (size == 0L) return "empty"
    RandomAccessFile(file.toFile(), "r").use { raf ->
        raf.seek(size - 1)
        if (raf.read() != '\n'.code) return "cut short (no newline at its end)"
        // the last line: read backwards from the end in blocks until the newline before it
        var start = size - 1
        val block = 4096
        var found = false
        while (start > 0 && !found) {
            val from = maxOf(0L, start - block)
            val buf = ByteArray((start - from).toInt())
            raf.seek(from)
            raf.readFully(buf)
            val nl = buf.lastIndexOf('\n'.code.toByte())
            if (nl >= 0) { start = from + nl + 1; found = true } else start = from
        }
        val line = ByteArray((size - start).toInt())
        raf.seek(start)
        raf.readFully(line)
        if (line.first() == '#'.code.toByte() || String(line).startsWith("\"StartTimestamp\"")) return null // no interval at all
        // the reader needs the log's header lines (format version, base time) to read an interval
        val header = Files.newBufferedReader(file).use { r ->
            generateSequence { r.readLine() }.takeWhile { it.startsWith("#") || it.startsWith("\"") }.joinToString("") { it + "\n" }
        }
        return try {
            val last = HistogramLogReader(ByteArrayInputStream(header.toByteArray() + line)).use { it.nextIntervalHistogram() }
            if (last == null) "its last interval does not decode" else null
        } catch (e: Exception) {
            "its last interval does not decode (${e.javaClass.simpleName})"
        }
    }
}
