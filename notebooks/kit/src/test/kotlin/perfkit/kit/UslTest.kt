package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import kotlin.random.Random
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue

class UslTest {
    private val counts = listOf(1, 2, 4, 8, 16, 32, 48)

    /** Three forks of a curve of known coefficients, each point off by up to [noise] of itself. */
    private fun curve(truth: UslModel, noise: Double = 0.01, cpu: (Int) -> Double = { 50.0 }) = frameOf(
        listOf("fork", "n", "x", "cpu"),
        (1..3).flatMap { fork ->
            val random = Random(fork)
            counts.map { n -> listOf(fork, n, truth.throughput(n.toDouble()) * (1 + noise * (2 * random.nextDouble() - 1)), cpu(n)) }
        })

    @Test
    fun `a curve of known contention and coherency gives them back, with its peak`() {
        val truth = UslModel(1000.0, 0.05, 0.002)
        val fit = uslFit(curve(truth), n = "n", x = "x", cpuPct = "cpu", cores = 2)
        assertTrue(fit.trusted, fit.why)
        val model = assertNotNull(fit.model)
        assertEquals(0.05, model.sigma, 0.01)
        assertEquals(0.002, model.kappa, 0.0003)
        assertEquals(truth.peakN!!, model.peakN!!, 2.0)
        // over the forks: each interval holds the truth, from 3 forks
        val sigma = assertNotNull(fit.sigma); val kappa = assertNotNull(fit.kappa)
        assertEquals(3, sigma.n)
        assertTrue(sigma.low <= 0.05 + 0.005 && 0.05 - 0.005 <= sigma.high, "$sigma")
        assertTrue(kappa.low <= 0.002 + 0.0002 && 0.002 - 0.0002 <= kappa.high, "$kappa")
        assertTrue(fit.r2 > 0.99)
        assertEquals(truth.throughput(20.0), fit.predict(20.0)!!, truth.throughput(20.0) * 0.03)
        assertEquals(61, fit.curve(1.0, 48.0).rowsCount())
    }

    @Test
    fun `without coherency the curve levels off and has no peak`() {
        val fit = uslFit(curve(UslModel(500.0, 0.1, 0.0), noise = 0.005), n = "n", x = "x")
        assertTrue(fit.trusted, fit.why)
        assertEquals(0.0, fit.model!!.kappa, 1e-4)
        assertNull(UslModel(500.0, 0.1, 0.0).peakN)
    }

    @Test
    fun `a curve that reached the machine's wall predicts nothing`() {
        val fit = uslFit(curve(UslModel(1000.0, 0.05, 0.002)) { n -> if (n >= 16) 195.0 else 120.0 }, n = "n", x = "x", cpuPct = "cpu", cores = 2)
        assertFalse(fit.trusted)
        assertTrue(fit.why!!.contains("CPU wall") && fit.why!!.contains("16"), fit.why)
        assertNull(fit.predict(8.0))
        assertEquals(0, fit.curve(1.0, 48.0).rowsCount())
        assertTrue(fit.summary("the queues", "consumers").text.startsWith("No scalability model for the queues: the curve reached"))
    }

    @Test
    fun `too few points or a bad fit predict nothing`() {
        val few = frameOf(listOf("fork", "n", "x"), listOf(listOf(1, 1, 10.0), listOf(1, 2, 19.0), listOf(1, 4, 30.0)))
        val fit = uslFit(few, n = "n", x = "x")
        assertFalse(fit.trusted)
        assertTrue(fit.why!!.startsWith("3 points at 3 worker counts"), fit.why)
        // no shape at all: throughput that jumps about whatever the count
        val noise = frameOf(listOf("fork", "n", "x"), counts.mapIndexed { i, n -> listOf(1, n, if (i % 2 == 0) 100.0 else 900.0) })
        val bad = uslFit(noise, n = "n", x = "x")
        assertFalse(bad.trusted)
        assertTrue(bad.why!!.contains("explains too little") || bad.why!!.contains("did not converge"), bad.why)
    }

    @Test
    fun `each curve of a frame gets its own fit, and only trusted ones are drawn`() {
        val good = curve(UslModel(1000.0, 0.05, 0.002))
        val walled = curve(UslModel(800.0, 0.05, 0.002)) { n -> if (n >= 32) 190.0 else 100.0 }
        fun withStack(df: org.jetbrains.kotlinx.dataframe.AnyFrame, stack: String) =
            frameOf(listOf("stack", "fork", "n", "x", "cpu"), df.rows().map { r -> listOf(stack, r["fork"], r["n"], r["x"], r["cpu"]) })
        val both = frameOf(listOf("stack", "fork", "n", "x", "cpu"),
            (withStack(good, "a").rows() + withStack(walled, "b").rows()).map { r -> listOf(r["stack"], r["fork"], r["n"], r["x"], r["cpu"]) })
        val fits = uslFits(both, by = listOf("stack"), n = "n", x = "x", cpuPct = "cpu", cores = 2)
        assertEquals(setOf(listOf<Any?>("a"), listOf<Any?>("b")), fits.keys)
        assertTrue(fits.getValue(listOf("a")).trusted)
        assertFalse(fits.getValue(listOf("b")).trusted)
        val curves = uslCurves(fits, listOf("stack"), 1.0, 48.0, also = mapOf("facet" to { v -> "stack ${v["stack"]}" }))
        assertEquals(61, curves.rowsCount())
        assertTrue(curves.rows().all { it["stack"] == "a" && it["facet"] == "stack a" })
        val table = uslTable(fits, listOf("stack"), "users").text
        val rowA = table.lines().single { it.startsWith("| a |") }
        val rowB = table.lines().single { it.startsWith("| b |") }
        assertTrue(rowA.contains("it peaks at about") && rowA.contains("| 21 |"), rowA)
        assertTrue(rowB.contains("no model: the curve reached the machine's CPU wall"), rowB)
    }

    @Test
    fun `a curve with neither cost scales linearly, and a peak past the counts measured says so`() {
        val linear = uslFit(curve(UslModel(10.0, 0.0, 0.0), noise = 0.002), n = "n", x = "x")
        // up to 48 workers: within 2% of linear however the noise sets the two small costs
        assertTrue(linear.trusted, linear.why)
        assertTrue(linear.shape("users").startsWith("scales linearly"), linear.shape("users"))
        val far = uslFit(curve(UslModel(10.0, 0.002, 0.00003), noise = 0.001), n = "n", x = "x")
        assertTrue(far.trusted, far.why)
        assertTrue(far.shape("users").contains("beyond the 48 users measured"), far.shape("users"))
    }

    @Test
    fun `a linear curve out to a thousand users is fitted as linear, not bent by the search's start`() {
        // web-reactive's shape: 100 ms per request, so N users give 10 N requests per second up to N = 1000
        val users = listOf(10, 50, 100, 250, 500, 750, 1000)
        val df = frameOf(listOf("fork", "n", "x"), (1..3).flatMap { fork ->
            val random = Random(fork)
            users.map { n -> listOf(fork, n, 10.0 * n * (1 + 0.004 * (2 * random.nextDouble() - 1))) }
        })
        val fit = uslFit(df, n = "n", x = "x")
        assertTrue(fit.trusted, fit.why)
        assertTrue(fit.r2 > 0.99, "R² ${fit.r2}")
        assertEquals(10.0, fit.model!!.lambda, 0.2)
        assertTrue(fit.shape("users").startsWith("scales linearly"), fit.shape("users"))
    }

    @Test
    fun `a model that only falls says so, rather than naming a peak below the counts measured or a ceiling`() {
        // contention of 1 or more with coherency: no peak at all
        val noPeak = UslFit(UslModel(100.0, 1.2, 0.01), null, null, 0.95, 7, true, null, largestN = 48.0, smallestN = 1.0)
        assertTrue(noPeak.shape("consumers").startsWith("falls from the smallest count measured (1 consumers)"), noPeak.shape("consumers"))
        // a peak at 0.6 workers, under the smallest count
        val early = UslFit(UslModel(100.0, 0.5, 1.4), null, null, 0.95, 7, true, null, largestN = 8.0, smallestN = 1.0)
        assertTrue(early.shape("consumers").startsWith("falls from"), early.shape("consumers"))
        // without coherency it levels off, and a peak inside the counts is named
        assertTrue(UslFit(UslModel(100.0, 0.3, 0.0), null, null, 0.95, 7, true, null, largestN = 48.0).shape("users").startsWith("levels off towards 333"))
        assertTrue(UslFit(UslModel(100.0, 0.05, 0.002), null, null, 0.95, 7, true, null, largestN = 48.0, smallestN = 1.0).shape("users").startsWith("peaks at about 22"))
    }

    @Test
    fun `the original's scale is priced by the fitted curve, or says why not`() {
        val fit = uslFit(curve(UslModel(1000.0, 0.05, 0.002)), n = "n", x = "x")
        val priced = uslPriceAt(fit, 4.0, "instances", 64.0, 0.05, "jobs")
        val predicted = UslModel(1000.0, 0.05, 0.002).throughput(4.0)
        assertTrue(priced.contains("this host's fitted curve predicts") && priced.contains("a prediction from this host's data"), priced)
        assertFalse(priced.contains("beyond"), priced)
        assertTrue(uslPriceAt(fit, 100.0, "instances", 64.0, 0.05, "jobs").contains("at 100 instances, beyond the 48 instances measured"))
        // 64 vCPUs at $0.05 an hour = $3.20 an hour, over about 3,400 jobs/s
        val dollars = Regex("""\$([0-9.]+) per million""").find(priced)!!.groupValues[1].toDouble()
        assertEquals(3.2 / (predicted * 3600) * 1e6, dollars, dollars * 0.05)
        val few = uslFit(frameOf(listOf("fork", "n", "x"), listOf(listOf(1, 1, 10.0), listOf(1, 2, 19.0))), n = "n", x = "x")
        assertTrue(uslPriceAt(few, 4.0, "instances", 64.0, 0.05, "jobs").startsWith("At the original's scale (4 instances on 64 vCPUs) no price is predicted: 2 points"))
        assertTrue(uslPriceAt(null, 4.0, "instances", 64.0, 0.05, "jobs").endsWith("no curve of that configuration."))
    }
}
