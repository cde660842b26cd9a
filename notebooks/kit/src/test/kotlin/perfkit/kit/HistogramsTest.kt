package perfkit.kit

import org.HdrHistogram.Histogram
import org.HdrHistogram.HistogramLogWriter
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import kotlin.random.Random
import kotlin.test.assertEquals
import kotlin.test.assertNotEquals
import kotlin.test.assertTrue

/** A realistic epoch (ms): HdrHistogram reads base times under a year as relative. */
private const val T0 = 1_795_000_000_000L

class HistogramsTest {
    @TempDir lateinit var dir: Path

    /** Writes intervals the way the harness does and returns what HdrHistogram itself holds for the same data. */
    private fun writeLog(file: Path, intervals: List<List<Long>>): Histogram {
        val direct = Histogram(3)
        PrintStream(file.toFile()).use { out ->
            val w = HistogramLogWriter(out)
            w.outputLogFormatVersion(); w.outputStartTime(T0); w.setBaseTime(T0); w.outputBaseTime(T0); w.outputLegend()
            intervals.forEachIndexed { i, values ->
                val h = Histogram(3)
                values.forEach { h.recordValue(it); direct.recordValue(it) }
                h.startTimeStamp = T0 + i * 1000L
                h.endTimeStamp = T0 + (i + 1) * 1000L
                w.outputIntervalHistogram(h)
            }
        }
        return direct
    }

    @Test
    fun `percentiles of the merged log equal HdrHistogram's own numbers`() {
        val random = Random(7)
        val intervals = List(5) { List(2000) { (random.nextDouble() * random.nextDouble() * 50_000_000).toLong() + 1000 } }
        val direct = writeLog(dir.resolve("x.hlog"), intervals)
        val merged = merge(readIntervals(dir.resolve("x.hlog")))
        assertEquals(direct.totalCount, merged.totalCount)
        for ((p, ms) in merged.percentilesMs()) {
            val expected = (if (p >= 100.0) direct.maxValue else direct.getValueAtPercentile(p)) / 1e6
            assertEquals(expected, ms, 1e-12, "p$p")
        }
    }

    @Test
    fun `merging is not averaging percentiles`() {
        // one quiet interval and one with a stall: the merged p99 sits in the stall, the average of p99s does not
        val direct = writeLog(dir.resolve("stall.hlog"), listOf(List(990) { 1_000_000L }, List(990) { 1_000_000L } + List(30) { 500_000_000L }))
        val intervals = readIntervals(dir.resolve("stall.hlog"))
        val averaged = intervals.map { it.getValueAtPercentile(99.0) / 1e6 }.average()
        val merged = merge(intervals).percentilesMs()[99.0]!!
        assertEquals(direct.getValueAtPercentile(99.0) / 1e6, merged, 1e-12)
        assertNotEquals(averaged, merged)
        assertTrue(merged > 400)
    }

    @Test
    fun `trimming warm-up cuts at the end of warm-up, not at log creation`() {
        writeLog(dir.resolve("w.hlog"), List(6) { i -> List(10) { (i + 1) * 1000L } })
        val intervals = readIntervals(dir.resolve("w.hlog"))
        assertEquals(T0, intervals.first().startTimeStamp, "absolute epoch ms")
        // the window opens 1 ms after the third interval: that interval is still the first measured one
        val trimmed = trimWarmup(intervals, T0 + 2001)
        assertEquals(4, trimmed.size)
        assertEquals(3000L, trimmed.first().minValue, "the third interval is the first kept")
        assertEquals(6, trimWarmup(intervals, 0L).size)
    }

    @Test
    fun `a version 2 log with warm-up kept is measured from its window`() {
        val run = dir.resolve("queues/20260101T000000Z-h1-aaaaaa")
        Files.createDirectories(run.resolve("latency"))
        writeLog(run.resolve("latency/x.hlog"), List(5) { i -> List(10) { if (i < 2) 99_000_000L else 1_000_000L } })
        Files.writeString(run.resolve("run.json"), completeManifest("""
            {"schemaVersion":2,"mode":"fixed-rate","study":"queues","runId":"20260101T000000Z-h1-aaaaaa","status":"complete","params":{},
             "host":{"hostname":"h1","logicalCores":2},"jvm":{"version":"17"},
             "files":[{"path":"latency/x.hlog","kind":"hlog","description":"d","cell":"abq-1@10000","series":"abq-1","fork":2,
                       "timing":"corrected","window":{"startMs":${T0 + 2000},"endMs":${T0 + 5000}}}]}"""))
        val log = loadRun(run).latencyLogs().single()
        assertEquals("abq-1", log.series); assertEquals("abq-1@10000", log.cell); assertEquals(2, log.fork); assertTrue(log.corrected)
        assertEquals(3, log.measuredIntervals().size)
        val merged = listOf(loadRun(run)).mergedLatency().values.single()
        assertEquals(30L, merged.totalCount, "warm-up intervals are not merged")
        assertEquals(1.0, merged.percentilesMs()[100.0]!!, 0.01)
    }

    @Test
    fun `spectrum runs up the nines axis`() {
        writeLog(dir.resolve("s.hlog"), listOf(List(100_000) { it.toLong() + 1 }))
        val points = merge(readIntervals(dir.resolve("s.hlog"))).spectrum()
        assertTrue(points.first().first < 0.1)
        assertTrue(points.last().first > 4.0, "reaches past 99.99%")
        assertTrue(points.zipWithNext().all { (a, b) -> b.first >= a.first && b.second >= a.second })
    }

    @Test
    fun `the spectrum ends at the maximum and the axis shows it`() {
        val h = Histogram(3)
        h.recordValueWithCount(1_000_000, 2_000_000)
        h.recordValue(5_000_000_000)
        val points = h.spectrum()
        assertEquals(h.maxValue / 1e6, points.last().second, "the last point is the maximum itself")
        assertTrue(points.dropLast(1).all { it.first < points.last().first && it.second <= points.last().second })
        val frame = spectra(mapOf(Triple("l", "v", true) to h))
        assertTrue(ninesAxisEnd(frame) > points.last().first, "the axis runs past the maximum at x=${points.last().first}")
        val svg = figure("spectrum", "s", spectrumPlot(frame)).svg
        assertTrue(svg.contains("99.9999%"), "the axis is labelled up to the maximum")
    }

    @Test
    fun `a corrupt or missing log is named in the error`() {
        val bad = dir.resolve("bad.hlog")
        Files.writeString(bad, "#[StartTime: 1.0 (seconds since epoch)]\n0.1,1.0,2.0,NOT-BASE64!!\n")
        val e = assertThrows<RunFormatException> { readIntervals(bad) }
        assertTrue(e.message!!.contains("bad.hlog"), e.message)
        assertTrue(assertThrows<RunFormatException> { readIntervals(dir.resolve("none.hlog")) }.message!!.contains("none.hlog"))
    }

    @Test
    fun `percentile column names`() {
        assertEquals(listOf("p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "p99_99_ms", "max_ms"), STANDARD_PERCENTILES.map { percentileName(it) })
    }
}
