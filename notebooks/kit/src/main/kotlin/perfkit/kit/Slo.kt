package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.rows

/**
 * The capacity of a sweep: the largest x that meets the SLO (metric <= [slo]) with every smaller x
 * meeting it too. A sweep is read in order of x; the first violation ends it, so a lucky point
 * after the wall does not count. Null when even the smallest x misses.
 */
fun capacityAtSlo(points: List<Pair<Double, Double>>, slo: Double): Double? {
    var capacity: Double? = null
    for ((x, y) in points.sortedBy { it.first }) {
        if (y.isNaN() || y > slo) break
        capacity = x
    }
    return capacity
}

/**
 * One fork's capacity as a search reports it: a bracket on the grid of loads tried. [lastMet] is the largest that met
 * the SLO (null: none did), [firstMissed] the smallest above it that did not (null: the search stopped first), and
 * [status] how it ended ("wall", "lower bound", "not measurable on this host", ...).
 */
data class ForkBracket(val fork: Int, val lastMet: Double?, val firstMissed: Double?, val status: String) {
    val wall: Boolean get() = status == "wall"
}

/**
 * A cell's capacity over its forks, as a bracket: at least [low] in every fork (null: some fork met nothing), and, when
 * every fork found its wall, below [high]. Forks differ, so the bracket is their union, never a mean of grid values.
 * [text] says it in words, a bound as a bound, calling each repetition a [repetition] ("search" where a study repeats
 * a whole capacity search rather than a JVM fork).
 */
data class CapacityBracket(val low: Double?, val high: Double?, val forks: List<ForkBracket>, val unit: String, val repetition: String = "fork") {
    val wall: Boolean get() = forks.isNotEmpty() && forks.all { it.wall }
    val text: String get() = when {
        forks.isEmpty() -> "not run"
        low != null && high != null -> "${formatNumber(low)} to under ${formatNumber(high)} $unit (a wall in every $repetition)"
        low != null -> "at least ${formatNumber(low)} $unit (no wall found in ${forks.count { !it.wall }} of ${forks.size} ${repetition}${if (repetition.endsWith("ch")) "(es)" else "(s)"})"
        high != null -> "below ${formatNumber(high)} $unit (no load met the SLO)"
        else -> forks.sortedBy { it.fork }.joinToString("; ") { "$repetition ${it.fork}: ${mdText(it.status)}" }
    }

    /** Each fork's own bracket, e.g. "600..1200 (wall); 600..1200 (wall); at least 2400". */
    val perFork: String get() = forks.sortedBy { it.fork }.joinToString("; ") { f ->
        when {
            f.lastMet != null && f.firstMissed != null -> "${formatNumber(f.lastMet)}..${formatNumber(f.firstMissed)}"
            f.lastMet != null -> "at least ${formatNumber(f.lastMet)}"
            f.firstMissed != null -> "below ${formatNumber(f.firstMissed)}"
            else -> "none"
        } + " (${mdText(f.status)})"
    }
}

fun capacityBracket(forks: List<ForkBracket>, unit: String, repetition: String = "fork"): CapacityBracket {
    val low = if (forks.isNotEmpty() && forks.all { it.lastMet != null }) forks.minOf { it.lastMet!! } else null
    val high = if (forks.isNotEmpty() && forks.all { it.wall && it.firstMissed != null }) forks.maxOf { it.firstMissed!! } else null
    return CapacityBracket(low, high, forks, unit, repetition)
}

/** The brackets of a capacity.csv (columns fork, last_met_rps, first_missed_rps, status), one per value of [key]. */
fun AnyFrame.capacityBrackets(key: String = "cell", unit: String = "req/s"): Map<Any?, CapacityBracket> =
    rows().groupBy { it[key] }.mapValues { (_, rows) ->
        capacityBracket(rows.map { r ->
            ForkBracket((r["fork"] as Number).toInt(), (r["last_met_rps"] as Number?)?.toDouble(), (r["first_missed_rps"] as Number?)?.toDouble(), r["status"].toString())
        }, unit)
    }

/**
 * What a million requests cost at a capacity bracket: capacity at least [CapacityBracket.low] means a cost at most
 * price / low; with a wall below [CapacityBracket.high], more than price / high. A bound stays a bound.
 */
fun costBracket(pricePerHour: Double, c: CapacityBracket): String {
    val most = c.low?.let { costPerMillion(pricePerHour, it) } ?: return "- (no load met the SLO in every fork)"
    val least = c.high?.let { costPerMillion(pricePerHour, it) }
    return if (least != null) "\$${formatNumber(least, 3)} to \$${formatNumber(most, 3)}" else "at most \$${formatNumber(most, 3)}"
}

/** The ratio of two capacity brackets as a bracket: A / B lies in (A.low / B.high, A.high / B.low); open ends stay open. */
fun bracketRatio(a: CapacityBracket, b: CapacityBracket): String = ratioBounds(a, b).text

/**
 * One step of a recorded capacity search, to be read again at another SLO: its [load], the latency the SLO is on, and
 * the driver's own lateness where the study bounds it (a step whose driver ran late by more than a tenth of the SLO
 * cannot say whether the system met it). A step that was invalid or not measurable carries an infinite latency.
 */
data class SearchStep(val load: Double, val latencyMs: Double, val latenessMs: Double? = null) {
    fun meets(sloMs: Double) = latencyMs <= sloMs && (latenessMs == null || latenessMs <= 0.1 * sloMs)
}

/**
 * A fork's bracket at [sloMs] from the steps its search measured at [recordedSloMs], read in order of load: the first
 * step that misses is the wall. The search chose its steps for the recorded SLO, so at a looser one it may have
 * stopped before the new wall: a fork whose every step meets it is a lower bound, and says why.
 */
fun forkBracketAtSlo(fork: Int, steps: List<SearchStep>, sloMs: Double, recordedSloMs: Double): ForkBracket {
    var lastMet: Double? = null
    for (s in steps.sortedBy { it.load }) {
        if (!s.meets(sloMs)) return ForkBracket(fork, lastMet, s.load, "wall")
        lastMet = s.load
    }
    val why = if (sloMs > recordedSloMs) "lower bound (the search stopped at the run's own SLO, ${formatNumber(recordedSloMs)} ms)" else "lower bound"
    return ForkBracket(fork, lastMet, null, why)
}

/**
 * The SLO a notebook applies: its parameter ([value], "run" for the run's own) or the run's [runSloMs]. Anything else
 * is refused in one line that names the parameter.
 */
fun sloFrom(value: String, runSloMs: Double, name: String = "PERFKIT_SLO_MS"): Double {
    if (value.isBlank() || value == "run") return runSloMs
    val ms = value.toDoubleOrNull()
    require(ms != null && ms > 0 && ms.isFinite()) { "$name: '$value' is not a positive number of milliseconds (or \"run\" for the run's own SLO)" }
    return ms
}
