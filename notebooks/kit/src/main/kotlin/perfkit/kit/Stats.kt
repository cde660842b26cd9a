package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn
import org.apache.commons.statistics.distribution.TDistribution
import org.apache.commons.statistics.inference.TTest
import kotlin.math.abs
import kotlin.math.sqrt

/** Fewer repetitions than this give a range, never an interval, and never support a claim. */
const val MIN_REPETITIONS_FOR_CLAIM = 3

/** The significance level of every claim the kit makes: a 5% chance of claiming a difference that is not there. */
const val ALPHA = 0.05

/**
 * A mean with its interval over [n] repetitions (JVM forks). With at least 3 repetitions, [low]..[high] is
 * a Student-t confidence interval; with fewer it is only the [range] of the values, min to max, and
 * supports no claim. [sd] is the sample standard deviation (NaN under 2 values).
 */
data class Estimate(val n: Int, val mean: Double, val low: Double, val high: Double, val sd: Double = Double.NaN) {
    /** True when [low]..[high] is only the spread of fewer than 3 values, not a confidence interval. */
    val range: Boolean get() = n < MIN_REPETITIONS_FOR_CLAIM

    /** What the interval is, for tables: "95% t" or "range". */
    val interval: String get() = if (range) "range" else "95% t"

    /** True when the two intervals share any value (descriptive only: claims come from [welchTest]). */
    fun overlaps(other: Estimate) = low <= other.high && other.low <= high
}

/** Student-t interval of the mean; under 3 values, the range (min..max). */
fun meanInterval(values: List<Double>, level: Double = 0.95): Estimate {
    require(values.isNotEmpty()) { "no values to estimate from" }
    val n = values.size
    val mean = values.average()
    val sd = if (n > 1) sqrt(values.sumOf { (it - mean) * (it - mean) } / (n - 1)) else Double.NaN
    if (n < MIN_REPETITIONS_FOR_CLAIM) return Estimate(n, mean, values.min(), values.max(), sd)
    val half = tQuantile(1 - (1 - level) / 2, (n - 1).toDouble()) * sd / sqrt(n.toDouble())
    // a quantity that cannot be negative (a rate, a latency, a capacity) never gets an interval below 0
    val low = if (values.all { it >= 0 }) maxOf(0.0, mean - half) else mean - half
    return Estimate(n, mean, low, mean + half, sd)
}

/**
 * Interval of mean(numerator) / mean(denominator) from independent repetitions (separate forks): Fieller's
 * interval with a Welch-type degrees of freedom. Unbounded (infinite) when the denominator's mean is not
 * clearly away from zero. Under 3 values on either side, the range of possible ratios (min/max..max/min).
 */
fun ratioInterval(numerator: List<Double>, denominator: List<Double>, level: Double = 0.95): Estimate {
    require(numerator.isNotEmpty() && denominator.isNotEmpty()) { "no values to estimate from" }
    val a = meanInterval(numerator, level); val b = meanInterval(denominator, level)
    val ratio = a.mean / b.mean
    val n = minOf(a.n, b.n)
    if (a.range || b.range) {
        val candidates = listOf(numerator.min() / denominator.max(), numerator.max() / denominator.min())
        return Estimate(n, ratio, candidates.min(), candidates.max())
    }
    val va = a.sd * a.sd / a.n; val vb = b.sd * b.sd / b.n
    val df = welchDf(va, a.n, ratio * ratio * vb, b.n)
    val t = tQuantile(1 - (1 - level) / 2, df)
    val qa = b.mean * b.mean - t * t * vb
    if (qa <= 0) return Estimate(n, ratio, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY)
    val qb = -2 * a.mean * b.mean
    val qc = a.mean * a.mean - t * t * va
    val disc = sqrt(maxOf(0.0, qb * qb - 4 * qa * qc))
    return Estimate(n, ratio, (-qb - disc) / (2 * qa), (-qb + disc) / (2 * qa))
}

/**
 * mean([value]) of the rows whose [key] is [numerator] over that of the rows whose [key] is [denominator], with
 * its Fieller interval ([ratioInterval]: each row one independent repetition); null when either side has no rows.
 */
fun ratioOf(df: AnyFrame, key: String, value: String, numerator: Any?, denominator: Any?): Estimate? {
    groupsUnderOneLabel(df, listOf(key))
    fun values(k: Any?) = df.rows().filter { it[key] == k }.mapNotNull { (it[value] as Number?)?.toDouble() }
    val a = values(numerator); val b = values(denominator)
    return if (a.isEmpty() || b.isEmpty()) null else ratioInterval(a, b)
}

/**
 * Every group's mean of [value] as a ratio to the [baseline] group's (groups are the values of [key]): columns
 * [key], n, ratio, ci_low, ci_high and interval ("95% t", or "range" under 3 repetitions).
 */
fun ratiosTo(df: AnyFrame, key: String, value: String, baseline: Any?): AnyFrame {
    val groups = df.rows().map { it[key] }.distinct()
    val est = groups.associateWith { ratioOf(df, key, value, it, baseline) }.filterValues { it != null }.mapValues { it.value!! }
    return dataFrameOf(listOf(
        est.keys.toList().toColumn(key, Infer.Type),
        est.values.map { it.n }.toColumn("n"),
        est.values.map { it.mean }.toColumn("ratio"),
        est.values.map { it.low }.toColumn("ci_low"),
        est.values.map { it.high }.toColumn("ci_high"),
        est.values.map { it.interval }.toColumn("interval"),
    ))
}

/** A Welch two-sample t-test: [p] is the two-sided p-value for "the means are equal". */
data class WelchTest(val t: Double, val df: Double, val p: Double)

fun welchTest(a: Estimate, b: Estimate): WelchTest {
    require(a.n >= 2 && b.n >= 2) { "a t-test needs at least 2 values per side" }
    val va = a.sd * a.sd / a.n; val vb = b.sd * b.sd / b.n
    // no spread on either side (every fork gave one grid value, say): there is nothing to test, so no p either
    if (va + vb == 0.0) return WelchTest(if (a.mean == b.mean) 0.0 else Double.POSITIVE_INFINITY, Double.NaN, if (a.mean == b.mean) 1.0 else Double.NaN)
    val r = TTest.withDefaults().test(a.mean, a.sd * a.sd, a.n.toLong(), b.mean, b.sd * b.sd, b.n.toLong()) // Welch: unequal variances
    return WelchTest(r.statistic, r.degreesOfFreedom, r.pValue)
}

fun welchTest(a: List<Double>, b: List<Double>): WelchTest = welchTest(meanInterval(a), meanInterval(b))

/** True when the data supports a difference: at least 3 repetitions each, and Welch's p below [alpha] (never when there is no p). */
fun differs(a: Estimate, b: Estimate, alpha: Double = ALPHA): Boolean =
    !a.range && !b.range && welchTest(a, b).p < alpha

private fun welchDf(va: Double, na: Int, vb: Double, nb: Int): Double {
    val den = va * va / (na - 1) + vb * vb / (nb - 1)
    return if (den == 0.0) (na + nb - 2).toDouble() else (va + vb) * (va + vb) / den
}

/**
 * Groups rows by [keys] and estimates the mean of [value] per group, keyed by the group's values. Runs are pooled only
 * under one label (a run's label says how it differs from the others: host, JDK, tag, a parameter): a group that
 * mixes labels is an error that says to add `label` to the keys.
 */
fun estimates(df: AnyFrame, keys: List<String>, value: String): Map<List<Any?>, Estimate> =
    groupsUnderOneLabel(df, keys).mapValues { (_, rows) -> meanInterval(rows.map { (it[value] as Number).toDouble() }) }

private fun groupsUnderOneLabel(df: AnyFrame, keys: List<String>) = df.rows().groupBy { row -> keys.map { row[it] } }.also { groups ->
    if ("label" !in df.columnNames() || "label" in keys) return@also
    for ((key, rows) in groups) {
        val labels = rows.map { it["label"] }.distinct()
        if (labels.size > 1) throw RunFormatException("the group $key pools runs with different labels (${labels.joinToString(" | ")}): " +
            "add \"label\" to the keys, or select runs that share one")
    }
}

/**
 * Groups rows by [keys] and estimates the mean of [value] per group: n, mean, ci_low, ci_high, interval
 * ("95% t", or "range" under 3 repetitions) and, for stacked run tables, pooled_runs (how many runs the
 * group pools).
 */
fun summarize(df: AnyFrame, keys: List<String>, value: String): AnyFrame {
    val groups = groupsUnderOneLabel(df, keys)
    val est = groups.mapValues { (_, rows) -> meanInterval(rows.map { (it[value] as Number).toDouble() }) }
    val cols = keys.mapIndexed { i, k -> est.keys.map { it[i] }.toColumn(k, Infer.Type) } + listOfNotNull(
        est.values.map { it.n }.toColumn("n"),
        est.values.map { it.mean }.toColumn("mean"),
        est.values.map { it.low }.toColumn("ci_low"),
        est.values.map { it.high }.toColumn("ci_high"),
        est.values.map { it.interval }.toColumn("interval"),
        if ("run_id" in df.columnNames()) groups.values.map { rows -> rows.map { it["run_id"] }.distinct().size }.toColumn("pooled_runs") else null,
    )
    return dataFrameOf(cols)
}

/**
 * One sentence comparing two estimates that claims only what the data supports: a difference only when
 * each side has at least 3 repetitions and a Welch t-test rejects equal means at the 5% level.
 */
fun describeDifference(nameA: String, a: Estimate, nameB: String, b: Estimate): String {
    val pct = abs(100.0 * (a.mean / b.mean - 1))
    val direction = if (a.mean >= b.mean) "faster" else "slower"
    return when {
        a.range || b.range ->
            "$nameA looks ${"%.0f".format(pct)}% $direction than $nameB, but with ${minOf(a.n, b.n)} fork(s) there are not enough forks to claim a difference (at least $MIN_REPETITIONS_FOR_CLAIM needed)"
        welchTest(a, b).p.isNaN() -> "$nameA and $nameB cannot be told apart: every fork gave the same value on each side, so there is no spread to test"
        !differs(a, b) -> "$nameA and $nameB cannot be told apart (Welch t-test, p = ${"%.2f".format(welchTest(a, b).p)})"
        else -> "$nameA is ${"%.0f".format(pct)}% $direction than $nameB (Welch t-test, p = ${formatP(welchTest(a, b).p)})"
    }
}

private fun formatP(p: Double) = if (p < 0.001) "< 0.001" else "%.3f".format(p)

// ---- Student's t distribution, from Apache Commons Statistics --------------------------------------

/** P(T <= t) for Student's t with [df] degrees of freedom. */
fun tCdf(t: Double, df: Double): Double = TDistribution.of(df).cumulativeProbability(t)

/** The [p] quantile of Student's t with [df] degrees of freedom. */
fun tQuantile(p: Double, df: Double): Double {
    require(p > 0 && p < 1) { "p must be in (0, 1)" }
    return TDistribution.of(df).inverseCumulativeProbability(p)
}
