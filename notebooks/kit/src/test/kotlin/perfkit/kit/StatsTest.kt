package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.math.PI
import kotlin.math.cos
import kotlin.math.exp
import kotlin.math.ln
import kotlin.math.sqrt
import kotlin.random.Random
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

class StatsTest {
    @Test
    fun `identical repetitions give a zero-width interval`() {
        assertEquals(Estimate(3, 5.0, 5.0, 5.0, 0.0), meanInterval(listOf(5.0, 5.0, 5.0)))
    }

    @Test
    fun `student t quantiles match the tables`() {
        for ((df, t) in listOf(1.0 to 12.706, 2.0 to 4.303, 4.0 to 2.776, 10.0 to 2.228, 30.0 to 2.042, 1e6 to 1.960))
            assertEquals(t, tQuantile(0.975, df), 0.001, "t(0.975, $df)")
        assertEquals(0.5, tCdf(0.0, 3.0), 1e-12)
        assertEquals(-tQuantile(0.9, 5.0), tQuantile(0.1, 5.0), 1e-9)
    }

    @Test
    fun `the mean interval is the textbook t interval`() {
        val xs = listOf(9.1, 10.4, 9.8, 10.9, 10.2)
        val e = meanInterval(xs)
        val sd = sqrt(xs.sumOf { (it - xs.average()).let { d -> d * d } } / (xs.size - 1))
        assertEquals(xs.average(), e.mean, 1e-12)
        assertEquals(2.776 * sd / sqrt(5.0), (e.high - e.low) / 2, 1e-3)
        assertEquals("95% t", e.interval)
    }

    @Test
    fun `under three forks the interval is only a range and claims nothing`() {
        val two = meanInterval(listOf(10.0, 12.0))
        assertTrue(two.range); assertEquals("range", two.interval)
        assertEquals(10.0, two.low); assertEquals(12.0, two.high)
        assertEquals(Estimate(1, 7.0, 7.0, 7.0), meanInterval(listOf(7.0)))
        val far = meanInterval(listOf(100.0, 101.0))
        assertFalse(differs(two, far), "ranges never support a claim, however far apart")
        assertTrue(describeDifference("a", far, "b", two).contains("not enough forks to claim a difference"))
    }

    @Test
    fun `more repetitions narrow the interval`() {
        val noise = listOf(-1.0, 1.0, -0.5, 0.5, 0.0)
        val few = meanInterval(noise.map { 10 + it })
        val many = meanInterval(List(8) { noise }.flatten().map { 10 + it })
        assertTrue(many.high - many.low < few.high - few.low)
    }

    /** Share of simulated experiments in which [claim] says the variants differ. */
    private fun claimRate(n: Int, trials: Int, seed: Int, sample: (Random) -> Double, scaleB: Double = 1.0): Double {
        val random = Random(seed)
        return (1..trials).count {
            val a = List(n) { sample(random) }; val b = List(n) { sample(random) * scaleB }
            differs(meanInterval(a), meanInterval(b))
        }.toDouble() / trials
    }

    private fun normal(r: Random) = sqrt(-2 * ln(1 - r.nextDouble())) * cos(2 * PI * r.nextDouble())

    @Test
    fun `equal variants are claimed different less than 6 percent of the time`() {
        val noises = mapOf<String, (Random) -> Double>(
            "normal" to { r -> 100 + 10 * normal(r) },
            "lognormal" to { r -> 100 * exp(0.3 * normal(r)) },
        )
        for ((name, noise) in noises) for (n in listOf(3, 5)) {
            val rate = claimRate(n, 4000, 11 * n + name.length, noise)
            assertTrue(rate < 0.06, "$name noise, n=$n: false claims $rate")
            assertTrue(rate > 0.01, "$name noise, n=$n: $rate is suspiciously low for a 5% test")
        }
    }

    @Test
    fun `a real twofold difference is found at five forks`() {
        val power = claimRate(5, 2000, 3, { r -> 100 * exp(0.3 * normal(r)) }, scaleB = 2.0)
        assertTrue(power > 0.8, "power $power")
    }

    @Test
    fun `describeDifference claims only what the test supports`() {
        val a = meanInterval(listOf(100.0, 102.0, 98.0)); val b = meanInterval(listOf(50.0, 51.0, 49.0))
        assertTrue(describeDifference("a", a, "b", b).startsWith("a is 100% faster than b (Welch t-test"))
        val c = meanInterval(listOf(99.0, 103.0, 97.0))
        assertTrue(describeDifference("a", a, "c", c).contains("cannot be told apart"))
    }

    @Test
    fun `overlap flags claims the data does not support`() {
        assertTrue(Estimate(3, 10.0, 9.0, 11.0).overlaps(Estimate(3, 10.5, 10.8, 12.0)))
        assertFalse(Estimate(3, 10.0, 9.0, 10.0).overlaps(Estimate(3, 12.0, 11.0, 13.0)))
    }

    @Test
    fun `ratio interval brackets the ratio of means and covers it at its level`() {
        val r = ratioInterval(listOf(20.0, 22.0, 21.0), listOf(10.0, 10.5, 9.5))
        assertEquals(2.1, r.mean, 1e-12)
        assertTrue(r.low < 2.1 && 2.1 < r.high)
        val random = Random(5)
        val covered = (1..2000).count {
            val num = List(4) { 200 + 20 * normal(random) }; val den = List(4) { 100 + 10 * normal(random) }
            ratioInterval(num, den).let { it.low <= 2.0 && 2.0 <= it.high }
        } / 2000.0
        assertTrue(covered in 0.93..0.98, "coverage $covered")
        assertTrue(ratioInterval(listOf(2.0, 3.0), listOf(1.0)).range)
    }

    @Test
    fun `summarize estimates per group and says what it pooled`() {
        val df = dataFrameOf("variant", "value")("a", 1.0, "a", 3.0, "b", 10.0)
        val rows = summarize(df, listOf("variant"), "value").rows().associateBy { it["variant"] }
        assertEquals(2.0, rows["a"]!!["mean"])
        assertEquals(2, rows["a"]!!["n"])
        assertEquals("range", rows["a"]!!["interval"])
        assertEquals(10.0, rows["b"]!!["ci_low"])
        val stacked = dataFrameOf("run_id", "variant", "value")("r1", "a", 1.0, "r2", "a", 2.0, "r2", "a", 3.0, "r2", "b", 4.0)
        val pooled = summarize(stacked, listOf("variant"), "value").rows().associateBy { it["variant"] }
        assertEquals(2, pooled["a"]!!["pooled_runs"]); assertEquals(1, pooled["b"]!!["pooled_runs"])
    }

    @Test
    fun `ratios to a baseline pair each group with the baseline's repetitions`() {
        val df = dataFrameOf("engine", "rps")(
            "plain", 100.0, "plain", 110.0, "plain", 90.0,
            "jsp", 70.0, "jsp", 77.0, "jsp", 63.0,
            "other", 1.0,
        )
        val r = ratiosTo(df, "engine", "rps", "plain").rows().associate { it["engine"] to it }
        assertEquals(1.0, r.getValue("plain")["ratio"] as Double, 1e-12)
        assertEquals(0.7, r.getValue("jsp")["ratio"] as Double, 1e-12)
        assertEquals(ratioInterval(listOf(70.0, 77.0, 63.0), listOf(100.0, 110.0, 90.0)).low, r.getValue("jsp")["ci_low"] as Double, 1e-12)
        assertEquals("95% t", r.getValue("jsp")["interval"])
        assertEquals("range", r.getValue("other")["interval"]) // one repetition: only a range
        assertNull(ratioOf(df, "engine", "rps", "jsp", "velocity"))
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

    @Test
    fun `a capacity over forks is a bracket on the loads tried, never a mean of grid values`() {
        val walls = capacityBracket(listOf(ForkBracket(1, 600.0, 1200.0, "wall"), ForkBracket(2, 1200.0, 2400.0, "wall"), ForkBracket(3, 600.0, 1200.0, "wall")), "req/s")
        assertEquals(600.0, walls.low); assertEquals(2400.0, walls.high)
        assertEquals("600 to under 2,400 req/s (a wall in every fork)", walls.text)
        assertEquals("600..1,200 (wall); 1,200..2,400 (wall); 600..1,200 (wall)", walls.perFork)
        val bound = capacityBracket(listOf(ForkBracket(1, 2400.0, null, "lower bound"), ForkBracket(2, 1200.0, 2400.0, "wall")), "req/s")
        assertEquals("at least 1,200 req/s (no wall found in 1 of 2 fork(s))", bound.text)
        assertNull(bound.high, "one fork never found its wall: no upper end")
        val below = capacityBracket(listOf(ForkBracket(1, null, 300.0, "wall")), "req/s")
        assertEquals("below 300 req/s (no load met the SLO)", below.text, "a miss at the only rate tried is below it, never 0")
        assertEquals("not run", capacityBracket(emptyList(), "req/s").text)
    }

    @Test
    fun `cost follows the bracket and a bound stays a bound`() {
        val walls = capacityBracket(listOf(ForkBracket(1, 1000.0, 2000.0, "wall")), "req/s")
        assertEquals("\$0.139 to \$0.278", costBracket(1.0, walls), "1 \$/h over 2000 and 1000 req/s")
        val bound = capacityBracket(listOf(ForkBracket(1, 1000.0, null, "lower bound")), "req/s")
        assertEquals("at most \$0.278", costBracket(1.0, bound))
        assertTrue(costBracket(1.0, capacityBracket(listOf(ForkBracket(1, null, 300.0, "wall")), "req/s")).startsWith("-"))
        assertEquals("more than 2x", bracketRatio(bound.copy(low = 2400.0), walls.copy(low = 600.0, high = 1200.0)),
            "a lower bound over a wall: the ratio has no upper end")
        assertEquals("between 1x and 4x", bracketRatio(walls.copy(low = 1200.0, high = 2400.0), walls.copy(low = 600.0, high = 1200.0)))
    }

    @Test
    fun `no interval of a quantity that cannot be negative reaches below 0`() {
        val e = meanInterval(listOf(600.0, 600.0, 1200.0))
        assertEquals(0.0, e.low, "the t interval would reach -60")
        assertTrue(meanInterval(listOf(-5.0, 1.0, 2.0)).low < -5, "a signed quantity keeps its interval")
    }

    @Test
    fun `two sides without spread give no p and no claim`() {
        val a = meanInterval(listOf(2400.0, 2400.0, 2400.0)); val b = meanInterval(listOf(1200.0, 1200.0, 1200.0))
        assertTrue(welchTest(a, b).p.isNaN())
        assertFalse(differs(a, b))
        assertTrue(describeDifference("a", a, "b", b).contains("no spread to test"), describeDifference("a", a, "b", b))
    }

    @Test
    fun `runs under different labels are never pooled silently`() {
        val df = dataFrameOf("label", "cell", "rps")("vm", "a", 1.0, "vm", "a", 2.0, "box", "a", 9.0)
        val e = assertThrows<RunFormatException> { estimates(df, listOf("cell"), "rps") }
        assertTrue(e.message!!.contains("add \"label\" to the keys"), e.message)
        assertEquals(2, estimates(df, listOf("label", "cell"), "rps").size)
        assertThrows<RunFormatException> { summarize(df, listOf("cell"), "rps") }
    }

    @Test
    fun `a claim answers from its interval, and fewer than 3 forks answer nothing`() {
        assertEquals(Answer.HOLDS, answerAbove(Estimate(3, 2.5, 2.1, 3.2), 1.0))
        assertEquals(Answer.DOES_NOT_HOLD, answerAbove(Estimate(3, 0.5, 0.4, 0.9), 1.0))
        assertEquals(Answer.CANNOT_TELL, answerAbove(Estimate(3, 1.2, 0.8, 1.6), 1.0))
        assertEquals(Answer.CANNOT_TELL, answerAbove(Estimate(2, 2.5, 2.1, 3.2), 1.0), "a range from 2 forks")
        assertEquals(Answer.HOLDS, answerBelow(Estimate(3, 0.7, 0.6, 0.8), 1.0))
        val table = claimsTable(listOf(Claim("a <b>", "x", Answer.HOLDS, "y"))).text
        assertTrue(table.contains("| **holds** |"), table)
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
