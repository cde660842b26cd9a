package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn

/**
 * Wide to long: keeps [keep] and turns each of [columns] into rows of ([key] = column name, [value]).
 * Plots want one line per key, e.g. p50, p99 and p99.9 against instances.
 */
fun AnyFrame.longer(keep: List<String>, columns: List<String>, key: String = "series", value: String = "value"): AnyFrame {
    val rows = rows().flatMap { row -> columns.map { c -> keep.map { row[it] } + listOf(c, row[c]) } }
    val names = keep + listOf(key, value)
    return dataFrameOf(names.mapIndexed { i, n -> rows.map { it[i] }.toColumn(n, Infer.Type) })
}
