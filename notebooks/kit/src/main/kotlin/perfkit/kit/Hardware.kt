package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.values
import java.util.Locale

/** The hypervisor's share of a run's seconds, from its `system` series (percent of one core). */
data class Steal(val meanPct: Double, val maxPct: Double)

/**
 * Steal over the run's whole time series; null when the run has no such series. [series] is `system` for the run's
 * host, `host:<part>` for a part placed on another (`--place`); [measuredSteal] is the machine measured's.
 */
fun RecordedRun.steal(series: String = "system"): Steal? = steal(listOf(series))

/** Steal on the machine the run measured ([RecordedRun.hostSeries]): this host's, or an `--on` target's. */
fun RecordedRun.measuredSteal(): Steal? = steal(hostSeries)

private fun RecordedRun.steal(series: List<String>): Steal? {
    if (!has("timeseries.csv")) return null
    val values = table("timeseries.csv").filter { it["series"].toString() in series && it["metric"] == "steal_pct" }["value"].values()
        .mapNotNull { (it as? Number)?.toDouble()?.takeIf { v -> v.isFinite() } }
    return if (values.isEmpty()) null else Steal(values.average(), values.max())
}

/**
 * The machine the runs measured, as a phrase for a post's caveats that stays true whichever host made the runs:
 * cores, CPU model, memory, any container limit, and the steal its time series saw. One phrase per host.
 */
fun List<RecordedRun>.hardware(): String = groupBy { it.hostname }.entries.joinToString("; ") { (host, runs) ->
    val first = runs.first()
    val memory = first.measuredHost.path("memoryBytes").asDouble(0.0).takeIf { it >= (1L shl 30) }?.let { String.format(Locale.ROOT, ", %.0f GiB", it / (1L shl 30)) } ?: ""
    val limit = first.containerCpuLimit?.let { ", limited to ${formatNumber(it)} CPUs by its container" } ?: ""
    val steals = runs.mapNotNull { it.measuredSteal() }
    val steal = if (steals.isEmpty()) "steal not recorded" else
        "steal ${formatNumber(steals.map { it.meanPct }.average(), 2)}% of a core on average, at most ${formatNumber(steals.maxOf { it.maxPct }, 2)}% in a second" +
            (if (steals.maxOf { it.maxPct } >= VISIBLE_STEAL_PCT) " (visible: other guests took CPU during the runs)" else "")
    "${mdText(host, atLineStart = false)}: ${first.cores} logical cores (${mdText(first.cpuModel.ifBlank { "CPU model unknown" }, atLineStart = false)}$memory$limit), $steal"
}

/** Steal in any one second at or above this share of a core is worth a reader's attention. */
private const val VISIBLE_STEAL_PCT = 5.0

/** A part of a run placed on another host (the manifest's `placement`, written with `--place part=user@host`). */
data class PlacedPart(val part: String, val host: String, val hostname: String, val cores: Int, val cpuModel: String, val address: String,
                      val rttMinMs: Double?, val rttMedianMs: Double?, val clockOffsetMs: List<Double>, val clockUncertaintyMs: Double?)

/** The run's parts on other hosts, in the order placed; empty when every part ran on the run's host. */
val RecordedRun.placement: List<PlacedPart> get() = manifest.path("placement").map { p ->
    val clock = listOf("start", "end").map { p.path("clock").path(it) }.filter { it.path("offsetMs").isNumber }
    PlacedPart(p.path("part").asText(), p.path("host").asText(), p.path("fingerprint").path("hostname").asText(),
        p.path("fingerprint").path("logicalCores").asInt(0), p.path("fingerprint").path("cpuModel").asText(), p.path("address").asText(),
        p.path("rttMs").path("min").takeIf { it.isNumber }?.asDouble(), p.path("rttMs").path("median").takeIf { it.isNumber }?.asDouble(),
        clock.map { it.path("offsetMs").asDouble() }, clock.maxOfOrNull { it.path("uncertaintyMs").asDouble() })
}

/**
 * The runs whose parts ran on more than one host, by id: their per-process CPU is not all on one machine. A run made
 * with `--on` whose every part ran on its target is not one: that machine held them all.
 */
val List<RecordedRun>.placedRunIds: Set<String> get() = filter { r -> r.placement.isNotEmpty() && !r.placement.all { it.host == r.on } }.map { it.id }.toSet()

/**
 * Where the runs' parts ran, as a phrase for a post: "every part on the run's host", or each placed part with its
 * host, the round trip to it and how far its clock was from the run host's (latencies are timed on the run host's).
 */
fun List<RecordedRun>.topology(): String {
    val placed = flatMap { run -> run.placement.map { run.manifest["host"].path("hostname").asText("") to it } }.distinctBy { (_, p) -> p.part to p.host }
    if (placed.isEmpty()) return "every part on the run's host"
    return placed.joinToString("; ") { (runHost, p) ->
        val steals = filter { r -> r.placement.any { it.part == p.part && it.host == p.host } }.mapNotNull { it.steal("host:${p.part}") }
        val steal = if (steals.isEmpty()) "" else ", steal ${formatNumber(steals.map { it.meanPct }.average(), 2)}% of a core on average " +
            "(at most ${formatNumber(steals.maxOf { it.maxPct }, 2)}%)"
        val rtt = p.rttMinMs?.let { ", round trip ${formatNumber(it, 2)} ms (median ${formatNumber(p.rttMedianMs ?: it, 2)})" } ?: ", round trip not measured"
        val clock = if (p.clockOffsetMs.isEmpty()) ", clock offset not measured"
            else ", its clock ${formatNumber(p.clockOffsetMs.maxOf { kotlin.math.abs(it) }, 2)} ms from ${mdText(runHost, atLineStart = false)}'s at most (± ${formatNumber(p.clockUncertaintyMs ?: 0.0, 2)})"
        "${mdText(p.part, atLineStart = false)} on ${mdText(p.host, atLineStart = false)} (${mdText(p.hostname, atLineStart = false)}, ${p.cores} logical cores$rtt$clock$steal)"
    } + "; every other part on the run's host"
}
