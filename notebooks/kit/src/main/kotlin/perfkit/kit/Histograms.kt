package perfkit.kit

import org.HdrHistogram.Histogram
import org.HdrHistogram.HistogramLogReader
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.toColumn
import java.nio.file.Path
import kotlin.io.path.exists
import kotlin.math.log10

/** The points a latency table reports. Percentiles only ever come from merged histograms. */
val STANDARD_PERCENTILES = listOf(50.0, 90.0, 99.0, 99.9, 99.99, 100.0)

/** Every interval histogram in an HdrHistogram log (values in ns), oldest first. */
fun readIntervals(file: Path): List<Histogram> {
    if (!file.exists()) throw RunFormatException("missing latency log: $file")
    try {
        HistogramLogReader(file.toFile()).use { reader ->
            val out = mutableListOf<Histogram>()
            while (true) {
                val h = reader.nextIntervalHistogram() ?: break
                out += h as Histogram
            }
            return out
        }
    } catch (e: RunFormatException) {
        throw e
    } catch (e: Exception) {
        throw RunFormatException("corrupt latency log $file: ${e.message ?: e.javaClass.simpleName}", e)
    }
}

/** Adds histograms together: the only correct way to combine intervals, forks or series. */
fun merge(histograms: Iterable<Histogram>): Histogram =
    histograms.fold(Histogram(3)) { acc, h -> acc.add(h); acc }

/**
 * The intervals of the measurement window: drops warm-up intervals (logs written with --keep-warmup), cutting
 * at the end of warm-up, [windowStartMs] (epoch ms, the file's `window.startMs`). An interval belongs to the
 * side of the cut its midpoint falls on, so the first measured interval, which the writer may open a
 * millisecond before the window, is kept.
 */
fun trimWarmup(intervals: List<Histogram>, windowStartMs: Long): List<Histogram> =
    intervals.filter { (it.startTimeStamp + it.endTimeStamp) / 2 >= windowStartMs }

/** Latency at each percentile, in milliseconds. */
fun Histogram.percentilesMs(points: List<Double> = STANDARD_PERCENTILES): Map<Double, Double> =
    points.associateWith { p -> (if (p >= 100.0) maxValue else getValueAtPercentile(p)) / 1e6 }

/**
 * The full percentile spectrum for plotting on the "nines" axis: x = log10(1 / (1 - p)), latency in ms.
 * The maximum (p = 100%) has no place on that axis; it is drawn at the sample count's own resolution,
 * x = log10(total count) (and always right of the last percentile), with the exact maximum value, so the
 * line ends at the worst sample.
 */
fun Histogram.spectrum(): List<Pair<Double, Double>> {
    if (totalCount == 0L) return emptyList()
    // the iterator reuses one value object: read each step before filtering
    val points = percentiles(5).map { it.percentileLevelIteratedTo to it.valueIteratedTo }.filter { it.first < 100.0 }.map { (level, value) ->
        log10(1.0 / (1.0 - level / 100.0)) to value / 1e6
    }.let { pts -> pts.filterIndexed { i, pt -> i == 0 || pt.first > pts[i - 1].first } }
    val lastX = points.lastOrNull()?.first ?: 0.0
    val maxX = maxOf(log10(totalCount.toDouble()), lastX + 0.05)
    return points + (maxX to maxValue / 1e6)
}

/**
 * One latency log a run lists: its [series] (e.g. `abq-1`, `kafka-original-n2/e2e`), the measured [cell],
 * the 1-based [fork], corrected or not, and the measurement [window] (null: every interval is measured).
 */
class HlogFile(val run: RecordedRun, val series: String, val cell: String?, val fork: Int, val corrected: Boolean, val window: Window?, val file: Path) {
    /** The intervals of the measurement window, warm-up dropped when the log kept it. */
    fun measuredIntervals(): List<Histogram> = readIntervals(file).let { if (window == null) it else trimWarmup(it, window.startMs) }
}

/** The latency logs a run lists, described by the manifest's fields (series, cell, fork, timing, window). */
fun RecordedRun.latencyLogs(): List<HlogFile> = files.filter { it.kind == "hlog" }.map { f ->
    val series = f.series ?: throw RunFormatException("run $id: hlog ${f.path} has no series in run.json")
    val timing = f.timing ?: throw RunFormatException("run $id: hlog ${f.path} has no timing in run.json")
    HlogFile(this, series, f.cell, f.fork ?: 1, timing == "corrected", f.window, file(f.path))
}

/** Merged histogram per (run label, series, corrected): all measured intervals of all forks added together. */
fun List<RecordedRun>.mergedLatency(): Map<Triple<String, String, Boolean>, Histogram> =
    flatMap { it.latencyLogs() }
        .groupBy { Triple(it.run.label, it.series, it.corrected) }
        .mapValues { (_, logs) -> merge(logs.flatMap { it.measuredIntervals() }) }

/** A percentile table from merged histograms: one row per series, one column per percentile (ms). */
fun latencyTable(merged: Map<Triple<String, String, Boolean>, Histogram>): AnyFrame {
    val keys = merged.keys.sortedWith(compareBy({ it.first }, { it.second }, { !it.third }))
    val cols = mutableListOf<org.jetbrains.kotlinx.dataframe.AnyCol>(
        keys.map { it.first }.toColumn("label"),
        keys.map { it.second }.toColumn("series"),
        keys.map { if (it.third) "corrected" else "uncorrected" }.toColumn("timing"),
        keys.map { merged.getValue(it).totalCount }.toColumn("samples"),
    )
    for (p in STANDARD_PERCENTILES) cols += keys.map { merged.getValue(it).percentilesMs()[p] }.toColumn(percentileName(p), Infer.Type)
    return dataFrameOf(cols)
}

/** Spectrum points of every series, stacked, for [spectrumPlot]; `max` marks each series' worst sample. */
fun spectra(merged: Map<Triple<String, String, Boolean>, Histogram>): AnyFrame {
    val rows = merged.flatMap { (k, h) ->
        val points = h.spectrum()
        points.mapIndexed { i, (nines, ms) -> listOf(k.first, k.second, if (k.third) "corrected" else "uncorrected", nines, ms, i == points.lastIndex) }
    }
    return frameOf(listOf("label", "series", "timing", "nines", "latency_ms", "max"), rows)
}

fun percentileName(p: Double): String = if (p >= 100.0) "max_ms" else "p" + p.toString().removeSuffix(".0").replace('.', '_') + "_ms"
