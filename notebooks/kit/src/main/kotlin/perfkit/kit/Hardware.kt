package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.values
import java.util.Locale

/** The hypervisor's share of a run's seconds, from its `system` series (percent of one core). */
data class Steal(val meanPct: Double, val maxPct: Double)

/** Steal over the run's whole time series; null when the run has no `system` steal series. */
fun RecordedRun.steal(): Steal? {
    if (!has("timeseries.csv")) return null
    val values = table("timeseries.csv").filter { it["series"] == "system" && it["metric"] == "steal_pct" }["value"].values()
        .mapNotNull { (it as? Number)?.toDouble()?.takeIf { v -> v.isFinite() } }
    return if (values.isEmpty()) null else Steal(values.average(), values.max())
}

/**
 * The machine the runs measured, as a phrase for a post's caveats that stays true whichever host made the runs:
 * cores, CPU model, memory, any container limit, and the steal its time series saw. One phrase per host.
 */
fun List<RecordedRun>.hardware(): String = groupBy { it.hostname }.entries.joinToString("; ") { (host, runs) ->
    val first = runs.first()
    val memory = first.manifest["host"].path("memoryBytes").asDouble(0.0).takeIf { it >= (1L shl 30) }?.let { String.format(Locale.ROOT, ", %.0f GiB", it / (1L shl 30)) } ?: ""
    val limit = first.containerCpuLimit?.let { ", limited to ${formatNumber(it)} CPUs by its container" } ?: ""
    val steals = runs.mapNotNull { it.steal() }
    val steal = if (steals.isEmpty()) "steal not recorded" else
        "steal ${formatNumber(steals.map { it.meanPct }.average(), 2)}% of a core on average, at most ${formatNumber(steals.maxOf { it.maxPct }, 2)}% in a second" +
            (if (steals.maxOf { it.maxPct } >= VISIBLE_STEAL_PCT) " (visible: other guests took CPU during the runs)" else "")
    "${mdText(host, atLineStart = false)}: ${first.cores} logical cores (${mdText(first.cpuModel.ifBlank { "CPU model unknown" }, atLineStart = false)}$memory$limit), $steal"
}

/** Steal in any one second at or above this share of a core is worth a reader's attention. */
private const val VISIBLE_STEAL_PCT = 5.0
