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
 * hold commas, quotes and newlines, as Table.java writes them). Columns become Long, Double, Boolean or String,
 * whichever fits every value; empty cells are null. Errors name the file and line.
 */
fun readCsv(file: Path): AnyFrame {
    if (!Files.isRegularFile(file)) throw RunFormatException("missing table: $file")
    val records = try {
        // each record with the line it ends on (a quoted newline makes one record span lines)
        Files.newBufferedReader(file).use { reader -> CSV.parse(reader).use { parser -> parser.map { r -> r.toList() to parser.currentLineNumber } } }
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
    return dataFrameOf(header.mapIndexed { c, name -> typedValues(rows.map { it[c] }).toColumn(name, Infer.Type) })
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
