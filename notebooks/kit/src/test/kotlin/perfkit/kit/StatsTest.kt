package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import kotlin.math.abs
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

class StatsTest {
    @Test
    fun `identical repetitions give a zero-width interval`() {
        val e = bootstrapMean(listOf(5.0, 5.0, 5.0))
        assertEquals(Estimate(3, 5.0, 5.0, 5.0), e)
    }

    @Test
    fun `the interval brackets the mean and lies within the data`() {
        val xs = listOf(9.1, 10.4, 9.8, 10.9, 10.2)
        val e = bootstrapMean(xs)
        assertEquals(xs.average(), e.mean, 1e-12)
        assertTrue(e.low < e.mean && e.mean < e.high)
        assertTrue(e.low >= xs.min() && e.high <= xs.max())
    }

    @Test
    fun `more repetitions narrow the interval`() {
        val noise = listOf(-1.0, 1.0, -0.5, 0.5, 0.0)
        val few = bootstrapMean(noise.map { 10 + it })
        val many = bootstrapMean(List(8) { noise }.flatten().map { 10 + it })
        assertTrue(many.high - many.low < few.high - few.low)
    }

    @Test
    fun `a 95 percent interval of normal-ish data is close to the textbook one`() {
        val xs = listOf(98.0, 101.0, 99.5, 100.5, 102.0, 97.0, 100.0, 99.0, 101.5, 100.5)
        val e = bootstrapMean(xs, resamples = 20_000)
        val sd = kotlin.math.sqrt(xs.sumOf { (it - xs.average()).let { d -> d * d } } / (xs.size - 1))
        val half = 1.96 * sd / kotlin.math.sqrt(xs.size.toDouble())
        assertTrue(abs((e.high - e.low) / 2 - half) < 0.25 * half, "bootstrap half-width ${(e.high - e.low) / 2} vs normal $half")
    }

    @Test
    fun `one repetition says nothing about spread`() {
        assertEquals(Estimate(1, 7.0, 7.0, 7.0), bootstrapMean(listOf(7.0)))
    }

    @Test
    fun `overlap flags claims the data does not support`() {
        assertTrue(Estimate(3, 10.0, 9.0, 11.0).overlaps(Estimate(3, 10.5, 10.8, 12.0)))
        assertFalse(Estimate(3, 10.0, 9.0, 10.0).overlaps(Estimate(3, 12.0, 11.0, 13.0)))
    }

    @Test
    fun `ratio interval brackets the ratio of means`() {
        val r = bootstrapRatio(listOf(20.0, 22.0, 21.0), listOf(10.0, 10.5, 9.5))
        assertEquals(2.1, r.mean, 1e-12)
        assertTrue(r.low < 2.1 && 2.1 < r.high)
    }

    @Test
    fun `summarize estimates per group`() {
        val df = dataFrameOf("variant", "value")("a", 1.0, "a", 3.0, "b", 10.0)
        val rows = summarize(df, listOf("variant"), "value").rows().associateBy { it["variant"] }
        assertEquals(2.0, rows["a"]!!["mean"])
        assertEquals(2, rows["a"]!!["n"])
        assertEquals(10.0, rows["b"]!!["ci_low"])
    }

    @Test
    fun `capacity is the last point before the first SLO violation`() {
        val wall = listOf(1.0 to 5.0, 2.0 to 8.0, 4.0 to 30.0, 8.0 to 120.0, 16.0 to 400.0)
        assertEquals(4.0, capacityAtSlo(wall, 100.0))
        assertEquals(8.0, capacityAtSlo(wall, 120.0), "meeting the SLO exactly counts")
        val lucky = listOf(1.0 to 5.0, 2.0 to 150.0, 3.0 to 50.0)
        assertEquals(1.0, capacityAtSlo(lucky, 100.0), "a point after the wall does not count")
        assertNull(capacityAtSlo(listOf(1.0 to 500.0), 100.0))
        assertEquals(3.0, capacityAtSlo(listOf(3.0 to 1.0, 1.0 to 1.0, 2.0 to 1.0), 100.0), "order of input does not matter")
    }
}

class FramesTest {
    @Test
    fun `longer turns columns into keyed rows`() {
        val wide = dataFrameOf("system", "n", "p50", "p99")("kafka", 1L, 2.0, 9.0, "chronicle", 1L, 0.5, 0.9)
        val long = wide.longer(listOf("system", "n"), listOf("p50", "p99"), "percentile", "ms")
        val rows = long.rows().map { listOf(it["system"], it["n"], it["percentile"], it["ms"]) }
        assertEquals(listOf(listOf("kafka", 1L, "p50", 2.0), listOf("kafka", 1L, "p99", 9.0),
            listOf("chronicle", 1L, "p50", 0.5), listOf("chronicle", 1L, "p99", 0.9)), rows)
    }
}
