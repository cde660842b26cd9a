package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.values
import org.jetbrains.kotlinx.dataframe.api.map
import org.jetbrains.kotlinx.dataframe.api.toMap
import org.jetbrains.letsPlot.Stat
import org.jetbrains.letsPlot.geom.geomBar
import org.jetbrains.letsPlot.geom.geomErrorBar
import org.jetbrains.letsPlot.geom.geomHLine
import org.jetbrains.letsPlot.geom.geomLine
import org.jetbrains.letsPlot.geom.geomPoint
import org.jetbrains.letsPlot.geom.geomVLine
import org.jetbrains.letsPlot.intern.Plot
import org.jetbrains.letsPlot.label.labs
import org.jetbrains.letsPlot.letsPlot
import org.jetbrains.letsPlot.pos.positionDodge
import org.jetbrains.letsPlot.scale.scaleXContinuous
import org.jetbrains.letsPlot.scale.scaleYLog10
import org.jetbrains.letsPlot.themes.theme
import org.jetbrains.letsPlot.themes.themeLight

/** One look for every figure the kit draws; the legend sits on the right, where a long one grows down, never off the figure. */
fun houseTheme() = themeLight() + theme().legendPositionRight()

/** Where the "nines" axis puts its labels: x = log10(1 / (1 - p)). */
private val NINES_BREAKS = listOf(0.30103, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
private val NINES_LABELS = listOf("50%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%", "99.999999%")

/** The right end of the nines axis: past the furthest point (the maxima), so no point is cut off. */
internal fun ninesAxisEnd(spectra: AnyFrame): Double =
    maxOf(5.2, (spectra["nines"].values().maxOfOrNull { (it as Number).toDouble() } ?: 0.0) + 0.2)

/**
 * Latency against percentile on the nines axis, log latency; one line per variant, dashed when uncorrected.
 * Each line ends at its maximum, marked with a point.
 */
fun spectrumPlot(spectra: AnyFrame, title: String = "Latency by percentile"): Plot {
    val end = ninesAxisEnd(spectra)
    val breaks = NINES_BREAKS.indices.filter { NINES_BREAKS[it] <= end }
    var p = letsPlot(spectra.toMap()) +
        geomLine { x = "nines"; y = "latency_ms"; color = "series"; linetype = "timing" } +
        scaleXContinuous(name = "percentile (points: maximum)", breaks = breaks.map { NINES_BREAKS[it] },
            labels = breaks.map { NINES_LABELS[it] }, limits = 0 to end) +
        scaleYLog10(name = "latency (ms, log scale)") +
        labs(title = title) + houseTheme()
    if ("max" in spectra.columnNames())
        p += geomPoint(data = spectra.filter { it["max"] == true }.toMap(), showLegend = false) { x = "nines"; y = "latency_ms"; color = "series" }
    return p
}

/**
 * Mean per group as bars, with the confidence interval (or the range, under 3 repetitions) as error bars (columns of
 * [summarize]). A group of one repetition has no spread, so it gets no error bar rather than a flat line.
 * [published] marks the original's values as hollow diamonds at their category of [x] (see [publishedMarks]).
 */
fun throughputBars(summary: AnyFrame, x: String = "variant", fill: String = "label",
                   title: String = "Throughput", yLabel: String = "events per second",
                   published: Map<String, Double> = emptyMap()): Plot {
    val bars = summary.toMap().toMutableMap()
    val hasN = "n" in summary.columnNames()
    val withSpread = summary.map { row -> !hasN || ((row["n"] as? Number)?.toInt() ?: 2) >= 2 }
    for (bound in listOf("ci_low", "ci_high")) bars[bound] = bars.getValue(bound).mapIndexed { i, v -> if (withSpread[i]) v else null }
    var p = letsPlot(bars) +
        geomBar(stat = Stat.identity, position = positionDodge(0.9)) { this.x = x; y = "mean"; this.fill = fill } +
        geomErrorBar(width = 0.3, position = positionDodge(0.9)) { this.x = x; ymin = "ci_low"; ymax = "ci_high"; group = fill } +
        labs(title = title, x = x, y = yLabel, fill = "") + houseTheme()
    // a published value marks only a category the figure shows: a new one would add an empty bar
    val shown = summary[x].values().map { it.toString() }.toSet()
    published.filterKeys { it in shown }.takeIf { it.isNotEmpty() }?.let { p += publishedMarks(x, it) }
    return p
}

/**
 * The original's values as hollow black diamonds over categorical bars, one per category of [x]; a figure's
 * caption says "diamonds: published". Categories the plot does not show are left out by the caller.
 */
fun publishedMarks(x: String, values: Map<String, Double>) =
    geomPoint(data = mapOf(x to values.keys.toList(), "published" to values.values.toList()), shape = 23, size = 4.0,
        color = "black", fill = "white", showLegend = false) { this.x = x; y = "published" }

/** Small whole-number x values (instances 1, 2, 4) get ticks at the values themselves, never at 1.5. */
private fun wholeNumberTicks(values: List<Any?>) = values.mapNotNull { (it as? Number)?.toDouble() }.distinct().sorted()
    .takeIf { xs -> xs.isNotEmpty() && xs.last() <= 16 && xs.all { it == Math.rint(it) } }
    ?.let { xs -> scaleXContinuous(breaks = xs, labels = xs.map { formatNumber(it) }) }

/**
 * A metric against a swept parameter, one line per [color] group, with the SLO as a dashed line and
 * the capacity (largest x meeting the SLO, see [capacityAtSlo]) as a dotted vertical line per group.
 */
fun scalingCurve(df: AnyFrame, x: String, y: String, color: String, slo: Double? = null,
                 title: String = "", xLabel: String = x, yLabel: String = y, logY: Boolean = false): Plot {
    var p = letsPlot(df.toMap()) +
        geomLine { this.x = x; this.y = y; this.color = color } +
        geomPoint { this.x = x; this.y = y; this.color = color } +
        labs(title = title, x = xLabel, y = yLabel, color = "") + houseTheme()
    wholeNumberTicks(df[x].values().toList())?.let { p += it }
    if (logY) p += scaleYLog10()
    if (slo != null) {
        p += geomHLine(yintercept = slo, linetype = "dashed", color = "#b22222")
        val rows = df.toMap()
        val groups = rows.getValue(color).indices.groupBy { rows.getValue(color)[it] }
        for ((_, idx) in groups) {
            val points = idx.mapNotNull { i ->
                val px = rows.getValue(x)[i] as? Number; val py = rows.getValue(y)[i] as? Number
                if (px == null || py == null) null else px.toDouble() to py.toDouble()
            }
            capacityAtSlo(points, slo)?.let { p += geomVLine(xintercept = it, linetype = "dotted", color = "#555555") }
        }
    }
    return p
}

/** One metric of timeseries.csv over time, one line per series. */
fun timeSeriesPlot(timeseries: AnyFrame, metric: String, title: String = metric, yLabel: String = metric): Plot =
    letsPlot(timeseries.filter { it["metric"] == metric }.toMap()) +
        geomLine { x = "elapsed_s"; y = "value"; color = "series" } +
        labs(title = title, x = "seconds since start", y = yLabel, color = "") + houseTheme()
