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
