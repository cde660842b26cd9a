package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.toColumn
import org.apache.commons.csv.CSVFormat
import java.nio.file.Files
import java.nio.file.Path

/**
 * Reads one of the kit's CSV tables into a DataFrame, parsed by Apache Commons CSV (RFC 4180: a quoted field may
 * hold commas, quotes and newlines, as Table.java writes them). A column [types] declares (its type in
 * `data/schema/tables/<study>.json`: integer, number, boolean, string) becomes Long, Double, Boolean or String, and a
 * value that is not of that type is a format error, as is a value outside a column's declared [values] (its `enum`:
 * a status or verdict). Any other column becomes whichever of those fits every value. Empty cells are null. Errors
 * name the file and line.
 */
fun readCsv(file: Path, types: Map<String, String> = emptyMap(), values: Map<String, List<String>> = emptyMap()): AnyFrame {
    if (!Files.isRegularFile(file)) throw RunFormatException("missing table: $file")
    val records = try {
        // each record with the line it ends on (a quoted newline makes one record span lines)
        textOf(file).use { reader -> CSV.parse(reader).use { parser -> parser.map { r -> r.toList() to parser.currentLineNumber } } }
    } catch (e: java.io.IOException) { // a compressed table cut short or not gzip at all, or a file we may not read
        throw RunFormatException("cannot read table $file: ${e.message}", e)
    } catch (e: java.io.UncheckedIOException) {
        throw RunFormatException("corrupt table $file: ${e.cause?.message ?: e.message}", e)
    } catch (e: IllegalStateException) { // an unterminated quote, for one
        throw RunFormatException("corrupt table $file: ${e.message}", e)
    }
    if (records.isEmpty()) throw RunFormatException("empty table (no header): $file")
    val header = records[0].first
    val rows = records.drop(1).map { (fields, number) ->
        fields.also {
            if (it.size != header.size)
                throw RunFormatException("corrupt table $file line $number: ${it.size} fields, header has ${header.size}")
        }
    }
    return dataFrameOf(header.mapIndexed { c, name ->
        val raw = rows.map { it[c] }
        values[name]?.let { allowed ->
            raw.firstOrNull { it.isNotEmpty() && it !in allowed }?.let { v -> throw RunFormatException("table $file column '$name' holds '$v', not one of its declared values $allowed") }
        }
        val typed = types[name]?.let { type -> declaredValues(raw, type) { v -> "table $file column '$name' is declared $type, but holds '$v'" } } ?: typedValues(raw)
        typed.toColumn(name, Infer.Type)
    })
}

/** The values of a column of a declared type; [wrong] says why one value is not of it. */
private fun declaredValues(raw: List<String>, type: String, wrong: (String) -> String): List<Any?>? {
    val parse: (String) -> Any? = when (type) {
        "integer" -> String::toLongOrNull
        "number" -> String::toDoubleOrNull
        "boolean" -> { v -> v.toBooleanStrictOrNull() }
        "string" -> { v -> v }
        else -> return null
    }
    return raw.map { v -> if (v.isEmpty()) null else parse(v) ?: throw RunFormatException(wrong(v)) }
}

/** A table's text; a file named `*.gz` is gzip-compressed (data/README.md). */
private fun textOf(file: Path): java.io.Reader {
    if (!file.fileName.toString().endsWith(".gz")) return Files.newBufferedReader(file)
    val raw = Files.newInputStream(file)
    return try {
        java.io.InputStreamReader(java.util.zip.GZIPInputStream(raw), Charsets.UTF_8).buffered()
    } catch (e: java.io.IOException) { // not gzip, or too short to be
        raw.close()
        throw e
    }
}

/** RFC 4180 with blank lines skipped: the format Table.java writes. */
private val CSV: CSVFormat = CSVFormat.RFC4180.builder().setIgnoreEmptyLines(true).build()

private fun typedValues(raw: List<String>): List<Any?> {
    val present = raw.filter { it.isNotEmpty() }
    return when {
        present.all { it.toLongOrNull() != null } -> raw.map { it.toLongOrNull() }
        present.all { it.toDoubleOrNull() != null } -> raw.map { it.toDoubleOrNull() }
        present.isNotEmpty() && present.all { it == "true" || it == "false" } -> raw.map { if (it.isEmpty()) null else it.toBoolean() }
        else -> raw.map { it.ifEmpty { null } }
    }
}
