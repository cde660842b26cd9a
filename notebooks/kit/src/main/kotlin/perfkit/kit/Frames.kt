package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn

/** A table cell as a number, or null when it holds none (blank, text, missing): the one way the kit reads numbers. */
internal fun num(v: Any?): Double? = (v as? Number)?.toDouble()

/**
 * Wide to long: keeps [keep] and turns each of [columns] into rows of ([key] = column name, [value]).
 * Plots want one line per key, e.g. p50, p99 and p99.9 against instances.
 */
fun AnyFrame.longer(keep: List<String>, columns: List<String>, key: String = "series", value: String = "value"): AnyFrame {
    val rows = rows().flatMap { row -> columns.map { c -> keep.map { row[it] } + listOf(c, row[c]) } }
    return frameOf(keep + listOf(key, value), rows)
}

/**
 * One [metric] of timeseries.csv with its series renamed for a reader by [name] (null drops a series). Series that
 * take one name are summed per second: forks that run one after another become one line, "the fork running".
 */
fun AnyFrame.seriesAs(metric: String, name: (String) -> String?): AnyFrame {
    val sums = linkedMapOf<Pair<Double, String>, Double>()
    for (row in rows()) {
        if (row["metric"] != metric) continue
        val shown = name(row["series"] as String) ?: continue
        val key = (row["elapsed_s"] as Number).toDouble() to shown
        sums[key] = (sums[key] ?: 0.0) + (num(row["value"]) ?: continue)
    }
    return dataFrameOf(listOf(
        sums.keys.map { it.first }.toColumn("elapsed_s"), sums.keys.map { it.second }.toColumn("series"),
        sums.keys.map { metric }.toColumn("metric"), sums.values.toList().toColumn("value"),
    ))
}

/** A frame from [names] and rows of values in that order, each column's type inferred. */
fun frameOf(names: List<String>, rows: List<List<Any?>>): AnyFrame =
    dataFrameOf(names.mapIndexed { i, n -> rows.map { it[i] }.toColumn(n, Infer.Type) })
