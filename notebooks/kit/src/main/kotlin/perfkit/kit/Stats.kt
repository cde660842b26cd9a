package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn
import kotlin.random.Random

/** A mean with a bootstrap confidence interval, over [n] repetitions. */
data class Estimate(val n: Int, val mean: Double, val low: Double, val high: Double) {
    /** True when the two intervals share any value: then the data does not show which is larger. */
    fun overlaps(other: Estimate) = low <= other.high && other.low <= high
}

/**
 * Percentile bootstrap of the mean. With one repetition the interval is that single value: it says
 * nothing about spread, and [Estimate.n] shows it.
 */
fun bootstrapMean(values: List<Double>, level: Double = 0.95, resamples: Int = 10_000, seed: Int = 42): Estimate {
    require(values.isNotEmpty()) { "no values to estimate from" }
    val random = Random(seed)
    val means = DoubleArray(resamples) { values.indices.sumOf { values[random.nextInt(values.size)] } / values.size }
    return Estimate(values.size, values.average(), quantile(means, (1 - level) / 2), quantile(means, 1 - (1 - level) / 2))
}

/** Bootstrap of mean(numerator) / mean(denominator), resampling each side independently (separate forks). */
fun bootstrapRatio(numerator: List<Double>, denominator: List<Double>, level: Double = 0.95, resamples: Int = 10_000, seed: Int = 42): Estimate {
    require(numerator.isNotEmpty() && denominator.isNotEmpty()) { "no values to estimate from" }
    val random = Random(seed)
    fun resampledMean(xs: List<Double>) = xs.indices.sumOf { xs[random.nextInt(xs.size)] } / xs.size
    val ratios = DoubleArray(resamples) { resampledMean(numerator) / resampledMean(denominator) }
    return Estimate(minOf(numerator.size, denominator.size), numerator.average() / denominator.average(),
        quantile(ratios, (1 - level) / 2), quantile(ratios, 1 - (1 - level) / 2))
}

internal fun quantile(values: DoubleArray, q: Double): Double {
    val sorted = values.sorted()
    val pos = q * (sorted.size - 1)
    val lo = pos.toInt()
    val hi = minOf(lo + 1, sorted.size - 1)
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
}

/** Estimates the mean of [value] per group of [keys] (e.g. label and variant), keyed by the group's values. */
fun estimates(df: AnyFrame, keys: List<String>, value: String): Map<List<Any?>, Estimate> =
    df.rows().groupBy { row -> keys.map { row[it] } }
        .mapValues { (_, rows) -> bootstrapMean(rows.map { (it[value] as Number).toDouble() }) }

/** Groups rows by [keys] and estimates the mean of [value] per group: n, mean, ci_low, ci_high. */
fun summarize(df: AnyFrame, keys: List<String>, value: String): AnyFrame {
    val est = estimates(df, keys, value)
    val cols = keys.mapIndexed { i, k -> est.keys.map { it[i] }.toColumn(k, Infer.Type) } + listOf(
        est.values.map { it.n }.toColumn("n"),
        est.values.map { it.mean }.toColumn("mean"),
        est.values.map { it.low }.toColumn("ci_low"),
        est.values.map { it.high }.toColumn("ci_high"),
    )
    return dataFrameOf(cols)
}

/**
 * One sentence comparing two estimates that claims only what the data supports: a difference only
 * when the 95% intervals do not overlap, and nothing firm from single repetitions.
 */
fun describeDifference(nameA: String, a: Estimate, nameB: String, b: Estimate): String {
    val pct = kotlin.math.abs(100.0 * (a.mean / b.mean - 1))
    val direction = if (a.mean >= b.mean) "faster" else "slower"
    return when {
        a.n < 2 || b.n < 2 -> "$nameA looks ${"%.0f".format(pct)}% $direction than $nameB, from a single repetition: indicative only"
        a.overlaps(b) -> "$nameA and $nameB cannot be told apart: their 95% intervals overlap"
        else -> "$nameA is ${"%.0f".format(pct)}% $direction than $nameB (95% intervals do not overlap)"
    }
}
