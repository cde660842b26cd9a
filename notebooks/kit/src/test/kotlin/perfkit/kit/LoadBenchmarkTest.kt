package perfkit.kit

import org.HdrHistogram.Histogram
import org.HdrHistogram.HistogramLogWriter
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals

/**
 * How long a notebook takes to load 100 runs (target: 2 s). A benchmark, not a timed test: it prints its
 * numbers and asserts only that everything loaded. Run it with `./bench notebooks --bench`
 * (mvn -Pbench test). Numbers from a shared machine are not comparable.
 */
@Tag("benchmark")
class LoadBenchmarkTest {
    private val T0 = 1_795_000_000_000L

    @TempDir lateinit var root: Path

    private val variants = listOf("abq-1", "abq-3", "abq-5", "disruptor-1", "disruptor-3", "disruptor-5")

    private fun writeRun(i: Int) {
        val id = "20260101T%06dZ-bench-%06x".format(i, i)
        val dir = root.resolve("runs/queues/$id")
        Files.createDirectories(dir.resolve("latency"))
        Files.writeString(dir.resolve("throughput.csv"), "cell,variant,fork,events_per_s\n" +
            variants.flatMap { v -> (1..3).map { f -> "$v,$v,$f,${1_000_000 + i * 10 + f}\n" } }.joinToString(""))
        Files.writeString(dir.resolve("timeseries.csv"), "epoch_ms,elapsed_s,phase,series,metric,value\n" +
            (0 until 60).joinToString("") { s -> "${1_000_000 + s * 1000},$s,measure,system,cpu_pct,150\n" })
        val hlogs = variants.take(2).map { v ->
            PrintStream(dir.resolve("latency/$v.hlog").toFile()).use { out ->
                val w = HistogramLogWriter(out)
                w.outputStartTime(T0); w.setBaseTime(T0); w.outputBaseTime(T0); w.outputLegend()
                repeat(10) { s ->
                    val h = Histogram(3)
                    repeat(1000) { h.recordValue(50_000L + it * 10) }
                    h.startTimeStamp = T0 + s * 1000; h.endTimeStamp = h.startTimeStamp + 1000
                    w.outputIntervalHistogram(h)
                }
            }
            """{"path":"latency/$v.hlog","kind":"hlog","description":"d","cell":"$v","series":"$v","fork":1,"timing":"corrected","window":{"startMs":${T0 + 2000},"endMs":${T0 + 10000}}}"""
        }
        Files.writeString(dir.resolve("run.json"), completeManifest("""
            {"schemaVersion":2,"mode":"fixed-rate","study":"queues","runId":"$id","tag":"","quick":false,"status":"complete",
             "params":{"rate":"10000"},"host":{"hostname":"bench","cpuModel":"cpu","logicalCores":2},"jvm":{"version":"17"},
             "kit":{"commit":"abc","dirty":false},"measurement":{"warmupSeconds":1,"measureSeconds":2,"repetitions":3},
             "valid":true,"invalidReasons":[],"startedAt":"2026-01-01T00:00:00Z",
             "files":[{"path":"throughput.csv","kind":"table","description":"d"},{"path":"timeseries.csv","kind":"timeseries","description":"d"},
                      ${hlogs.joinToString(",")}]}"""))
    }

    @Test
    fun `load 100 runs`() {
        (1..100).forEach(::writeRun)
        val phases = mutableListOf<List<Double>>()
        repeat(5) {
            var t = System.nanoTime()
            fun lap(): Double { val now = System.nanoTime(); return ((now - t) / 1e6).also { t = now } }
            val runs = findRuns("queues", "all", root); val find = lap()
            val throughput = runs.table("throughput.csv"); val table = lap()
            runs.manifests(); val manifests = lap()
            val merged = runs.mergedLatency(); val latency = lap()
            assertEquals(100, runs.size); assertEquals(1800, throughput.rowsCount()); assertEquals(2, merged.size)
            phases += listOf(find, table, manifests, latency)
        }
        fun describe(p: List<Double>) = "%.0f ms (find %.0f, table %.0f, manifests %.0f, latency %.0f)".format(p.sum(), p[0], p[1], p[2], p[3])
        println("[bench] 100 runs (manifests, a table of 1800 rows, 200 latency logs merged): first load " + describe(phases.first()) +
            "; then median " + describe(phases.drop(1).sortedBy { it.sum() }[2]) + " (target: 2000 ms; shared-machine timings vary)")
    }
}
