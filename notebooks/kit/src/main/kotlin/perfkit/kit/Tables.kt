package perfkit.kit

import com.fasterxml.jackson.databind.ObjectMapper
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.values
import java.nio.file.Files

/**
 * How a table reads in a post: the data keeps its machine names (`cpu_engines_pct`, `p99_ms`) so that code can use
 * them, and [toMarkdown] shows them as titles with units ("CPU, engines (% of one core)", "p99 (µs)"). The unit is the
 * one the studies' table declarations give the column ([declaredUnit]), else the one its name's suffix says; a unit
 * the title already names ("bytes per sample") is not said twice. A name that is already a title (it has a space, a
 * capital or a bracket) is shown as it is.
 */
fun columnTitle(name: String, unit: String? = declaredUnit(name)): String {
    if (!Regex("[a-z0-9_]+").matches(name)) return name
    COLUMN_TITLES[name]?.let { return it }
    Regex("cpu_(.+)_pct").matchEntire(name)?.let { return "CPU, ${words(it.groupValues[1])} (${unit ?: "% of one core"})" }
    if (name.endsWith("_per_s") && name.length > 6) return words(name.removeSuffix("_per_s")) + " per second"
    val suffix = UNIT_SUFFIXES.entries.firstOrNull { name.endsWith(it.key) && name.length > it.key.length }
    val stem = words(if (suffix == null) name else name.removeSuffix(suffix.key))
    val shown = (unit ?: suffix?.value)?.takeUnless { it.split('/', ' ').first() in stem.split(' ') }
    return stem + (shown?.let { " ($it)" } ?: "")
}

/**
 * The unit the studies' declarations (`data/schema/tables/<study>.json`) give [column], when all that declare it agree
 * and it is one a reader needs (not a count or a ratio); null for a column none declares or where they differ.
 */
fun declaredUnit(column: String): String? = DECLARED_UNITS[column]

private val DECLARED_UNITS: Map<String, String> by lazy {
    val folder = try { dataRoot().resolve("schema/tables") } catch (e: RunFormatException) { return@lazy emptyMap() }
    if (!Files.isDirectory(folder)) return@lazy emptyMap()
    val units = mutableMapOf<String, MutableSet<String>>()
    Files.list(folder).use { files ->
        for (file in files.filter { it.toString().endsWith(".json") }.sorted()) {
            for ((_, table) in ObjectMapper().readTree(file.toFile()).path("tables").properties())
                for ((column, c) in table.path("columns").properties())
                    units.getOrPut(column) { mutableSetOf() } += c.path("unit").asText()
        }
    }
    units.filterValues { it.size == 1 && it.single() !in setOf("", "count", "ratio") }.mapValues { it.value.single() }
}

private val COLUMN_TITLES = mapOf(
    "run_id" to "run", "ci_low" to "interval low", "ci_high" to "interval high",
    "pooled_runs" to "runs pooled", "pct_of_max" to "% of the maximum", "warmup_s" to "warm-up (s)",
    "fairness_min_over_max" to "fairness (slowest / fastest consumer)", "cpu_us_per_msg" to "CPU per message (µs)",
    "fork_jdk" to "fork JDK", "db_lock_waiters_mean" to "DB lock waiters (mean)", "jobs_per_s_per_vcpu" to "jobs per second per vCPU",
    "thread_ms_per_job" to "busy thread time per job (ms)", "seconds" to "seconds", "tps" to "inserts per second",
    "app_cpu_ms_per_1k" to "CPU, app, per 1,000 requests (ms)", "sut_cpu_ms_per_1k" to "CPU, system under test, per 1,000 requests (ms)",
)

/** Units shown in brackets; a rate per second reads "jobs per second" instead. */
private val UNIT_SUFFIXES = linkedMapOf(
    "_rps" to "req/s", "_pct" to "%",
    "_ms" to "ms", "_us" to "µs", "_ns" to "ns", "_seconds" to "s", "_s" to "s", "_bytes" to "bytes",
)

private val WORDS = mapOf("cpu" to "CPU", "db" to "DB", "jdk" to "JDK", "vcpu" to "vCPU", "vcpus" to "vCPUs", "slo" to "SLO",
    "jit" to "JIT", "gc" to "GC", "pct" to "%", "rps" to "req/s", "vs" to "vs", "over" to "/", "p99_9" to "p99.9", "p99_99" to "p99.99")

private fun words(stem: String): String =
    stem.replace("p99_99", "p99.99").replace("p99_9", "p99.9").replace("_per_s_", "_per_second_").split('_').joinToString(" ") { WORDS[it] ?: it }

/** Nanoseconds per unit, for the time units a table may carry. */
private val NANOS = mapOf("ns" to 1.0, "µs" to 1e3, "ms" to 1e6)

/**
 * The time unit a column of latencies reads best in: the one that puts its typical (median) value at 1 or more,
 * from ns to ms. A 99 ns latency recorded in ms reads "99 ns", not "0.000099 ms". Null when it has no values.
 */
internal fun readableTimeUnit(values: List<Double>, unit: String): String? {
    val factor = NANOS[unit] ?: return null
    val typical = values.map { kotlin.math.abs(it) }.filter { it > 0 && it.isFinite() }.sorted().let { if (it.isEmpty()) return null else it[it.size / 2] } * factor
    return when { typical < 1e3 -> "ns"; typical < 1e6 -> "µs"; else -> "ms" }
}

/**
 * The frame's columns as a post shows them: a title with its unit, the values rescaled where the unit changed, and the
 * run `label` cut to the parts in which its rows differ (dropped when every row has the same label: the runs table
 * above says it once).
 */
internal class ShownColumn(val title: String, val values: List<Any?>)

internal fun AnyFrame.shownColumns(): List<ShownColumn> = columnNames().mapNotNull { name ->
    val values = this[name].values().toList()
    if (name == "label") return@mapNotNull distinctParts(values.map { it?.toString() ?: "" })?.let { ShownColumn("runs", it) }
    // a time unit the name's suffix says, rescaled only where no declaration says otherwise (epoch ms stay as they are)
    val unit = Regex("_(ms|us|ns)$").find(name)?.groupValues?.get(1)?.let { if (it == "us") "µs" else it }
        ?.takeIf { declaredUnit(name).let { d -> d == null || d == it } }
    val numbers = values.filterIsInstance<Number>().map { it.toDouble() }
    val shownUnit = unit?.let { readableTimeUnit(numbers, it) }
    if (unit == null || shownUnit == null || shownUnit == unit) return@mapNotNull ShownColumn(columnTitle(name), values)
    val scale = NANOS.getValue(unit) / NANOS.getValue(shownUnit)
    val title = columnTitle(name).replace("($unit)", "($shownUnit)")
    ShownColumn(title, values.map { if (it is Number) it.toDouble() * scale else it })
}

/** Labels made of " · " parts, cut to the parts that differ between rows; null when all rows share one label. */
internal fun distinctParts(labels: List<String>): List<String>? {
    if (labels.distinct().size < 2) return null
    val parts = labels.map { it.split(" · ") }
    val common = parts.first().filter { part -> parts.all { part in it } }.toSet()
    return parts.map { p -> p.filter { it !in common }.joinToString(" · ").ifEmpty { "(same)" } }
}

/** A DataFrame as a Markdown table with [columnTitle]s; numbers get thousands separators and [digits] significant digits. */
fun AnyFrame.toMarkdown(digits: Int = 3): Markdown {
    val columns = shownColumns()
    val sb = StringBuilder()
    sb.append("| ").append(columns.joinToString(" | ") { formatCell(it.title) }).append(" |\n")
    sb.append("|").append(columns.joinToString("|") { "---" }).append("|\n")
    for (i in 0 until rowsCount()) sb.append("| ").append(columns.joinToString(" | ") { formatCell(it.values[i], digits) }).append(" |\n")
    return Markdown(sb.toString())
}
