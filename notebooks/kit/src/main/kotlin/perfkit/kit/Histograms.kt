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

/** Drops the intervals that started within [seconds] of the first one (for logs written with warm-up kept). */
fun trimWarmup(intervals: List<Histogram>, seconds: Double): List<Histogram> {
    if (intervals.isEmpty()) return intervals
    val cutoff = intervals.first().startTimeStamp + (seconds * 1000).toLong()
    return intervals.filter { it.startTimeStamp >= cutoff }
}

/** Latency at each percentile, in milliseconds. */
fun Histogram.percentilesMs(points: List<Double> = STANDARD_PERCENTILES): Map<Double, Double> =
    points.associateWith { p -> (if (p >= 100.0) maxValue else getValueAtPercentile(p)) / 1e6 }

/**
 * The full percentile spectrum for plotting on the "nines" axis: x = log10(1 / (1 - p)), latency in ms.
 * The maximum (p = 100%) has no place on that axis; it is drawn at the sample count's own resolution,
 * x = log10(total count), so the line ends at the worst sample.
 */
fun Histogram.spectrum(): List<Pair<Double, Double>> = percentiles(5).map { v ->
    val p = v.percentileLevelIteratedTo / 100.0
    val nines = if (p >= 1.0) log10(totalCount.toDouble().coerceAtLeast(1.0)) else log10(1.0 / (1.0 - p))
    nines to v.valueIteratedTo / 1e6
}.let { points -> points.filterIndexed { i, pt -> i == 0 || pt.first > points[i - 1].first } }

/** One latency log of a run: which variant and fork, corrected or not. */
class LatencyLog(val run: Run, val variant: String, val fork: Int, val corrected: Boolean, val file: Path)

private val LOG_NAME = Regex("""latency/(.+)\.fork(\d+)\.(corrected|uncorrected)\.hlog""")

/** The latency logs a run lists, parsed from their names (latency/<variant>.fork<k>.<corrected|uncorrected>.hlog). */
fun Run.latencyLogs(): List<LatencyLog> = filesOfKind("hlog").mapNotNull { path ->
    LOG_NAME.matchEntire(path)?.let { m -> LatencyLog(this, m.groupValues[1], m.groupValues[2].toInt(), m.groupValues[3] == "corrected", file(path)) }
}

/** Merged histogram per (run label, variant, corrected): all intervals of all forks added together. */
fun List<Run>.mergedLatency(): Map<Triple<String, String, Boolean>, Histogram> =
    flatMap { it.latencyLogs() }
        .groupBy { Triple(it.run.label, it.variant, it.corrected) }
        .mapValues { (_, logs) -> merge(logs.flatMap { readIntervals(it.file) }) }

/** A percentile table from merged histograms: one row per series, one column per percentile (ms). */
fun latencyTable(merged: Map<Triple<String, String, Boolean>, Histogram>): AnyFrame {
    val keys = merged.keys.sortedWith(compareBy({ it.first }, { it.second }, { !it.third }))
    val cols = mutableListOf<org.jetbrains.kotlinx.dataframe.AnyCol>(
        keys.map { it.first }.toColumn("label"),
        keys.map { it.second }.toColumn("variant"),
        keys.map { if (it.third) "corrected" else "uncorrected" }.toColumn("timing"),
        keys.map { merged.getValue(it).totalCount }.toColumn("samples"),
    )
    for (p in STANDARD_PERCENTILES) cols += keys.map { merged.getValue(it).percentilesMs()[p] }.toColumn(percentileName(p), Infer.Type)
    return dataFrameOf(cols)
}

/** Spectrum points of every series, stacked, for [spectrumPlot]. */
fun spectra(merged: Map<Triple<String, String, Boolean>, Histogram>): AnyFrame {
    val rows = merged.flatMap { (k, h) -> h.spectrum().map { (nines, ms) -> listOf(k.first, k.second, if (k.third) "corrected" else "uncorrected", nines, ms) } }
    return dataFrameOf(listOf("label", "variant", "timing", "nines", "latency_ms").mapIndexed { i, name -> rows.map { it[i] }.toColumn(name, Infer.Type) })
}

fun percentileName(p: Double): String = if (p >= 100.0) "max_ms" else "p" + p.toString().removeSuffix(".0").replace('.', '_') + "_ms"
