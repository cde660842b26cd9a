package perfkit.kit

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

/** One fork's capacity at the SLO, as a capacity search reports it: the value (null when none) and how it ended. */
data class ForkCapacity(val fork: Int, val capacity: Double?, val status: String)

/** Capacity over forks for a table: [text], and the [mean] to price, null when no single number stands for the forks. */
data class CapacityOverForks(val text: String, val mean: Double?)

/**
 * One cell's capacity over its forks. A mean with its interval only when every fork has a capacity above 0 and
 * every search ended the same way (all walls, or all lower bounds); otherwise each fork's own result, because a
 * mean of a wall, a lower bound and "no rate met" (a 0) is not a capacity of anything.
 */
fun capacityOverForks(forks: List<ForkCapacity>, unit: String): CapacityOverForks {
    if (forks.isEmpty()) return CapacityOverForks("not run", null)
    val values = forks.mapNotNull { it.capacity }
    if (values.size == forks.size && values.all { it > 0 } && forks.map { it.status }.distinct().size == 1) {
        val e = meanInterval(values)
        return CapacityOverForks("${formatNumber(e.mean)} $unit" + (if (e.n > 1) " (${e.interval} ${formatNumber(e.low)}..${formatNumber(e.high)})" else "") +
            " — ${escapeHtml(forks.first().status)}", e.mean)
    }
    return CapacityOverForks(forks.sortedBy { it.fork }.joinToString("; ") { f ->
        val value = when (val c = f.capacity) { null -> "none"; 0.0 -> "no rate met"; else -> "${formatNumber(c)} $unit" }
        "fork ${f.fork}: $value (${escapeHtml(f.status)})"
    }, null)
}
