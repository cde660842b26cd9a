package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.toColumn
import java.nio.file.Files
import java.nio.file.Path

/**
 * Reads one of the kit's CSV tables into a DataFrame. Columns become Long, Double, Boolean or String,
 * whichever fits every value; empty cells are null. Errors name the file and line.
 */
fun readCsv(file: Path): AnyFrame {
    if (!Files.isRegularFile(file)) throw RunFormatException("missing table: $file")
    val lines = Files.readAllLines(file).filter { it.isNotEmpty() }
    if (lines.isEmpty()) throw RunFormatException("empty table (no header): $file")
    val header = splitCsvLine(lines[0])
    val rows = lines.drop(1).mapIndexed { i, line ->
        splitCsvLine(line).also {
            if (it.size != header.size)
                throw RunFormatException("corrupt table $file line ${i + 2}: ${it.size} fields, header has ${header.size}")
        }
    }
    return dataFrameOf(header.mapIndexed { c, name -> typedValues(rows.map { it[c] }).toColumn(name, Infer.Type) })
}

/** Splits one CSV line; fields may be quoted with "" as an escaped quote. */
internal fun splitCsvLine(line: String): List<String> {
    val fields = mutableListOf<String>()
    val field = StringBuilder()
    var quoted = false
    var i = 0
    while (i < line.length) {
        val ch = line[i]
        when {
            quoted && ch == '"' && i + 1 < line.length && line[i + 1] == '"' -> { field.append('"'); i++ }
            ch == '"' -> quoted = !quoted
            ch == ',' && !quoted -> { fields += field.toString(); field.clear() }
            else -> field.append(ch)
        }
        i++
    }
    fields += field.toString()
    return fields
}

private fun typedValues(raw: List<String>): List<Any?> {
    val present = raw.filter { it.isNotEmpty() }
    return when {
        present.all { it.toLongOrNull() != null } -> raw.map { it.toLongOrNull() }
        present.all { it.toDoubleOrNull() != null } -> raw.map { it.toDoubleOrNull() }
        present.isNotEmpty() && present.all { it == "true" || it == "false" } -> raw.map { if (it.isEmpty()) null else it.toBoolean() }
        else -> raw.map { it.ifEmpty { null } }
    }
}
