package perfkit.kit

import org.jetbrains.kotlinx.dataframe.DataFrame
import org.jetbrains.kotlinx.dataframe.api.rows

/**
 * One published number from a table of [published]: the row with this [variant] and [metric] (and
 * [source], needed when several publications give the same number). A clear error when there is no such
 * row or more than one.
 */
fun DataFrame<*>.publishedValue(variant: String, metric: String, source: String? = null): Double {
    val matches = rows().filter { it["variant"] == variant && it["metric"] == metric && (source == null || it["source"] == source) }
    val what = "variant '$variant', metric '$metric'" + (source?.let { ", source '$it'" } ?: "")
    return when (matches.size) {
        0 -> throw RunFormatException("no published number for $what")
        1 -> (matches.single()["value"] as? Number)?.toDouble() ?: throw RunFormatException("published number for $what is not a number")
        else -> throw RunFormatException("${matches.size} published numbers for $what (sources: ${matches.map { it["source"] }.distinct().joinToString()}): name the source")
    }
}

/**
 * The published [metric] of each of [variants] that has one (variant -> value), for [publishedMarks]: a
 * figure marks only what was published, and says so in its caption.
 */
fun DataFrame<*>.publishedFor(metric: String, variants: Collection<String>): Map<String, Double> =
    rows().filter { it["metric"] == metric && it["variant"] in variants }
        .mapNotNull { r -> (r["value"] as? Number)?.toDouble()?.let { r["variant"] as String to it } }.toMap()
