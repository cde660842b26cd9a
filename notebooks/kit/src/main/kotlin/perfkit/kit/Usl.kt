package perfkit.kit

import org.hipparchus.linear.Array2DRowRealMatrix
import org.hipparchus.linear.ArrayRealVector
import org.hipparchus.linear.RealMatrix
import org.hipparchus.linear.RealVector
import org.hipparchus.optim.nonlinear.vector.leastsquares.LeastSquaresBuilder
import org.hipparchus.optim.nonlinear.vector.leastsquares.LevenbergMarquardtOptimizer
import org.hipparchus.optim.nonlinear.vector.leastsquares.MultivariateJacobianFunction
import org.hipparchus.util.Pair
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows
import kotlin.math.max
import kotlin.math.sqrt

/**
 * Gunther's Universal Scalability Law: the throughput of [n] workers (instances, chains, users, consumers) is
 * `X(n) = lambda n / (1 + sigma (n - 1) + kappa n (n - 1))`. [lambda] is one worker's throughput alone, [sigma] the
 * share of the work that queues for something shared (contention), [kappa] the cost of keeping workers consistent
 * with each other (coherency), which makes throughput fall past a peak.
 */
data class UslModel(val lambda: Double, val sigma: Double, val kappa: Double) {
    fun throughput(n: Double): Double = lambda * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))

    /** Where throughput peaks, sqrt((1 - sigma) / kappa); null without coherency (it only levels off, at lambda / sigma). */
    val peakN: Double? get() = if (kappa > 0 && sigma < 1) sqrt((1 - sigma) / kappa) else null
}

/**
 * A USL fitted to one throughput curve: [model] from every point, [sigma] and [kappa] as intervals over the forks
 * (each fork's curve fitted alone), and [r2] of the fit on the points. [trusted] is false, with [why], when the curve
 * cannot carry a model: too few points, a bad fit, or points at the machine's CPU wall (where the curve bends
 * because the host ran out of cores, not because of what the model describes). An untrusted fit predicts nothing.
 */
data class UslFit(
    val model: UslModel?, val sigma: Estimate?, val kappa: Estimate?, val r2: Double, val points: Int,
    val trusted: Boolean, val why: String?, val largestN: Double = Double.NaN, val smallestN: Double = Double.NaN,
) {
    /** The predicted throughput at [n], or null when the fit is not trusted. */
    fun predict(n: Double): Double? = if (trusted) model?.throughput(n) else null

    /** The fitted curve from [from] to [to] workers, for drawing beside the points; empty when the fit is not trusted. */
    fun curve(from: Double, to: Double, steps: Int = 60): AnyFrame {
        val m = model?.takeIf { trusted } ?: return frameOf(listOf(USL_N, USL_X), emptyList())
        return frameOf(listOf(USL_N, USL_X), (0..steps).map { i -> from + (to - from) * i / steps }.map { listOf(it, m.throughput(it)) })
    }

    /** One sentence for a post: the two coefficients with their intervals and the peak, or why there is no model. */
    fun summary(what: String, unit: String): Markdown {
        if (!trusted || model == null) return md("No scalability model for $what: ${mdText(why ?: "no fit", atLineStart = false)}.")
        return md("Universal Scalability Law for $what (R² ${formatNumber(r2, 3)} over $points points): contention σ ${interval(sigma)}, " +
            "coherency κ ${interval(kappa)}; it ${shape(unit)}. A prediction from this host's data, not a measurement.")
    }

    /**
     * Where the curve goes: on in a straight line while both costs are too small to matter at the counts measured, else
     * to a peak (past the counts measured, said so), down from the smallest count measured (a peak at or below it, or
     * none: sigma of 1 or more with coherency), or towards a ceiling of lambda / sigma (no coherency).
     */
    fun shape(unit: String): String {
        val m = model ?: return "has no model"
        val beyond = { n: Double -> if (largestN.isFinite() && n > largestN) ", beyond the ${formatNumber(largestN, 3)} $unit measured" else "" }
        if (largestN.isFinite() && 1 - m.throughput(largestN) / (m.lambda * largestN) < USL_LINEAR_WITHIN)
            return "scales linearly: within ${formatNumber(USL_LINEAR_WITHIN * 100, 2)}% of one worker's rate times $unit up to ${formatNumber(largestN, 3)} $unit"
        val peak = m.peakN
        val first = if (smallestN.isFinite()) smallestN else 1.0
        if (m.kappa > 0 && (peak == null || peak <= first))
            return "falls from the smallest count measured (${formatNumber(first, 3)} $unit): past it each added worker costs more than it adds"
        peak?.let { n -> return "peaks at about ${formatNumber(n, 2)} $unit (${formatNumber(m.throughput(n), 3)} predicted${beyond(n)})" }
        return "levels off towards ${formatNumber(m.lambda / m.sigma, 3)} (no coherency cost)"
    }

    /** The coefficient's mean over the forks with its interval, for tables. */
    fun interval(e: Estimate?): String = when {
        e == null -> "?"
        else -> "${formatNumber(e.mean, 3)} (${e.interval} ${formatNumber(e.low, 3)}..${formatNumber(e.high, 3)}, ${e.n} forks)"
    }
}

/** What a post says once, above its fits: the model, how it was fitted, and when a curve gets none. */
val USL_EXPLAINED = "Gunther's Universal Scalability Law models throughput at N workers as λN / (1 + σ(N − 1) + κN(N − 1)): " +
    "λ is one worker alone, σ (contention) the share of the work that queues for something shared, and κ (coherency) the cost " +
    "of workers keeping each other consistent, which makes throughput fall past a peak. Each curve is fitted over every step, " +
    "and over each fork alone for the intervals. A curve with too few points, one that reached the machine's CPU wall (its bend " +
    "is then this host's), or one the model fits badly (R² under $USL_MIN_R2) gets no model. A model's peak or ceiling is a " +
    "prediction from this host's data, not a measurement."

const val USL_N = "usl_n"
const val USL_X = "usl_throughput"

/** The least a fit needs: more points than its three coefficients, at four or more worker counts. */
const val USL_MIN_POINTS = 5
const val USL_MIN_LEVELS = 4

/** A model that loses less than this share of linear scaling at the largest count measured is called linear. */
const val USL_LINEAR_WITHIN = 0.02

/** A fit explaining less of the points' spread than this is called bad, and predicts nothing. */
const val USL_MIN_R2 = 0.9

/** System CPU at or above this share of the cores is the machine's wall ([belowWall]'s threshold). */
const val USL_WALL_SHARE = 0.9

/**
 * Fits the USL to [df]'s throughput column [x] against worker count [n], all forks pooled for the model and each
 * [fork] alone for the intervals (a fork of each run, where [df] stacks several runs with their `run_id`). With [cpuPct] (system CPU, % of one core) and [cores], a point at 90% or more of
 * the machine marks the curve as at the wall, and the fit is not trusted.
 */
fun uslFit(df: AnyFrame, n: String, x: String, fork: String = "fork", cpuPct: String? = null, cores: Int? = null): UslFit {
    // forks of several runs pooled under one label are each their own: fork 1 of one run is not fork 1 of another
    val ofRun = "run_id" in df.columnNames()
    val rows = df.rows().mapNotNull { r ->
        val nv = num(r[n]); val xv = num(r[x])
        val forkKey = (if (ofRun) "${r["run_id"]}/" else "") + (r[fork]?.toString() ?: "")
        if (nv == null || xv == null || nv <= 0 || xv.isNaN()) null else Triple(forkKey, nv, xv) to cpuPct?.let { num(r[it]) }
    }
    val points = rows.map { it.first.second to it.first.third }
    val fitted = fitUsl(points)
    val r2 = fitted?.let { rSquared(points, it) } ?: Double.NaN
    val byFork = rows.map { it.first }.groupBy({ it.first }, { it.second to it.third })
        .mapNotNull { (_, pts) -> if (pts.map { it.first }.distinct().size >= USL_MIN_LEVELS) fitUsl(pts) else null }
    val sigma = byFork.takeIf { it.isNotEmpty() }?.let { fits -> meanInterval(fits.map { it.sigma }) }
    val kappa = byFork.takeIf { it.isNotEmpty() }?.let { fits -> meanInterval(fits.map { it.kappa }) }
    val wall = if (cores != null && cores > 0) rows.filter { (it.second ?: 0.0) >= USL_WALL_SHARE * cores * 100 }.map { it.first.second } else emptyList()
    val why = when {
        points.size < USL_MIN_POINTS || points.map { it.first }.distinct().size < USL_MIN_LEVELS ->
            "${points.size} points at ${points.map { it.first }.distinct().size} worker counts; a fit needs $USL_MIN_POINTS at $USL_MIN_LEVELS or more"
        fitted == null -> "the least-squares fit did not converge"
        wall.isNotEmpty() -> "the curve reached the machine's CPU wall (${formatNumber(USL_WALL_SHARE * 100, 2)}% of its $cores cores) at " +
            "${wall.distinct().sorted().joinToString { formatNumber(it, 3) }} workers, so its bend is this host's, not the system's"
        r2 < USL_MIN_R2 -> "the fit explains too little of the points (R² ${formatNumber(r2, 3)}, under $USL_MIN_R2)"
        else -> null
    }
    return UslFit(fitted, sigma, kappa, r2, points.size, why == null, why, points.maxOfOrNull { it.first } ?: Double.NaN,
        points.minOfOrNull { it.first } ?: Double.NaN)
}

/**
 * One fit per curve of [df]: the rows that share the values of [by] (a stack and a call count, say), each fitted by
 * [uslFit], its wall judged against [coresOf] its key (the cores of the runs a label names, say), else [cores].
 */
fun uslFits(df: AnyFrame, by: List<String>, n: String, x: String, fork: String = "fork", cpuPct: String? = null, cores: Int? = null,
            coresOf: ((List<Any?>) -> Int?)? = null): Map<List<Any?>, UslFit> =
    df.rows().map { r -> by.map { r[it] } }.distinct().associateWith { key ->
        uslFit(df.filter { r -> by.indices.all { r[by[it]] == key[it] } }, n, x, fork, cpuPct, coresOf?.invoke(key) ?: cores)
    }

/** The logical cores of the runs labelled [label] (runs under one label share a host), or null when none is. */
fun List<RecordedRun>.coresOfLabel(label: Any?): Int? = firstOrNull { it.label == label }?.cores

/**
 * The trusted fits' curves in one frame from [from] to [to] workers, with [by]'s values and a column for each of
 * [also] made from a curve's values (a facet label, say), to draw through the points.
 */
fun uslCurves(fits: Map<List<Any?>, UslFit>, by: List<String>, from: Double, to: Double,
              also: Map<String, (Map<String, Any?>) -> Any?> = emptyMap()): AnyFrame =
    frameOf(by + also.keys + listOf(USL_N, USL_X), fits.flatMap { (key, fit) ->
        val named = by.zip(key).toMap()
        fit.curve(from, to).rows().map { r -> key + also.values.map { it(named) } + listOf(r[USL_N], r[USL_X]) }
    })

/** The fits as a post's table: per curve its points, fit, contention and coherency over the forks, and its shape; or why it has none. */
fun uslTable(fits: Map<List<Any?>, UslFit>, by: List<String>, unit: String): Markdown =
    md("| ${by.joinToString(" | ")} | points | R² | contention σ | coherency κ | the model says |\n" +
        "|${"---|".repeat(by.size + 5)}\n" +
        fits.entries.joinToString("\n") { (key, fit) ->
            "| ${key.joinToString(" | ") { v -> v?.let { mdText(it.toString(), atLineStart = false) } ?: "-" }} | ${fit.points} | " +
                (if (fit.trusted) "${formatNumber(fit.r2, 3)} | ${fit.interval(fit.sigma)} | ${fit.interval(fit.kappa)} | it ${fit.shape(unit)} |"
                else "${if (fit.r2.isFinite()) formatNumber(fit.r2, 3) else "-"} | - | - | no model: ${mdText(fit.why ?: "no fit", atLineStart = false)} |")
        })

/** Least squares (Levenberg-Marquardt) over (n, throughput) points, sigma and kappa held at 0 or above; null when it fails. */
internal fun fitUsl(points: List<kotlin.Pair<Double, Double>>): UslModel? {
    if (points.size < 3) return null
    val ns = points.map { it.first }.toDoubleArray()
    val xs = points.map { it.second }.toDoubleArray()
    // lambda from the smallest worker count, as if it scaled perfectly up to there
    val smallest = points.minBy { it.first }
    val lambda0 = max(smallest.second / smallest.first, 1e-9)
    val function = MultivariateJacobianFunction { p: RealVector ->
        val lambda = p.getEntry(0); val sigma = p.getEntry(1); val kappa = p.getEntry(2)
        val value = ArrayRealVector(ns.size)
        val jacobian: RealMatrix = Array2DRowRealMatrix(ns.size, 3)
        for (i in ns.indices) {
            val nn = ns[i]
            val d = 1 + sigma * (nn - 1) + kappa * nn * (nn - 1)
            value.setEntry(i, lambda * nn / d)
            jacobian.setEntry(i, 0, nn / d)
            jacobian.setEntry(i, 1, -lambda * nn * (nn - 1) / (d * d))
            jacobian.setEntry(i, 2, -lambda * nn * nn * (nn - 1) / (d * d))
        }
        Pair<RealVector, RealMatrix>(value, jacobian)
    }
    // from perfect scaling and from a little of both costs, keeping the closer fit: a start with costs can stall far
    // from a nearly linear curve (at N = 1000, sigma 0.01 already divides by 11), one without them on a flat one
    return listOf(doubleArrayOf(lambda0, 0.0, 0.0), doubleArrayOf(lambda0, 0.01, 0.0001))
        .mapNotNull { leastSquares(function, xs, it) }
        .minByOrNull { m -> points.sumOf { (it.second - m.throughput(it.first)).let { r -> r * r } } }
}

private fun leastSquares(function: MultivariateJacobianFunction, xs: DoubleArray, start: DoubleArray): UslModel? {
    val problem = LeastSquaresBuilder()
        .start(start).model(function).target(xs)
        // contention and coherency are costs: a negative one has no meaning, so the search stays at 0 or above
        .parameterValidator { p -> ArrayRealVector(doubleArrayOf(max(p.getEntry(0), 1e-12), max(p.getEntry(1), 0.0), max(p.getEntry(2), 0.0))) }
        .maxEvaluations(10_000).maxIterations(10_000)
        .build()
    return try {
        val optimum = LevenbergMarquardtOptimizer().optimize(problem).point
        UslModel(optimum.getEntry(0), optimum.getEntry(1), optimum.getEntry(2))
    } catch (e: RuntimeException) {
        null // Hipparchus's MathIllegalStateException: too many evaluations, or a singular problem
    }
}

/** The share of the points' variance the model explains. */
internal fun rSquared(points: List<kotlin.Pair<Double, Double>>, m: UslModel): Double {
    val mean = points.map { it.second }.average()
    val total = points.sumOf { (it.second - mean) * (it.second - mean) }
    val residual = points.sumOf { (it.second - m.throughput(it.first)).let { r -> r * r } }
    return if (total == 0.0) (if (residual == 0.0) 1.0 else 0.0) else 1 - residual / total
}

/**
 * The price per million [per] at the original's scale, [n] [unit] on [vcpus] vCPUs, as [fit] predicts it: the
 * throughput the fitted curve gives there over the price of those vCPUs; labelled as a prediction, or why there is none.
 */
fun uslPriceAt(fit: UslFit?, n: Double, unit: String, vcpus: Double, pricePerVcpuHour: Double, per: String): String {
    val scale = "${formatNumber(n, 3)} $unit on ${formatNumber(vcpus, 3)} vCPUs"
    val x = fit?.predict(n)
    if (fit == null || x == null || x <= 0) return "At the original's scale ($scale) no price is predicted: ${fit?.why ?: "no curve of that configuration"}."
    val beyond = if (fit.largestN.isFinite() && n > fit.largestN) ", beyond the ${formatNumber(fit.largestN, 3)} $unit measured" else ""
    return "At the original's scale ($scale) this host's fitted curve predicts ${formatNumber(x, 3)} $per/s at ${formatNumber(n, 3)} $unit$beyond, so " +
        "\$${formatNumber(costPerMillion(pricePerVcpuHour * vcpus, x), 3)} per million $per at the price of those vCPUs: a prediction from this " +
        "host's data, whose $unit ran on this host's cores, not a measurement."
}
