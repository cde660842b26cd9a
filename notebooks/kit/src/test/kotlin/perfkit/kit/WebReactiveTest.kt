package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.filter
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

class WebReactiveTest {
    /** Closed-model rows: per stack and N, the mean response time of each warm fork given. */
    private fun closed(vararg cells: Pair<Pair<String, Long>, List<Double>>) = dataFrameOf("stack", "calls", "users", "mean_ms", "cpu_system_pct")(
        *cells.flatMap { (key, means) -> means.map { listOf(key.first, 1L, key.second, it, 150.0) } }.flatten().toTypedArray<Any?>())

    @Test
    fun `an N with too few warm forks is left out rather than deciding the claim`() {
        val three = listOf(0.0, 1.0, 2.0)
        val df = closed(
            ("mvc" to 100L) to three.map { 110 + it }, ("webflux" to 100L) to three.map { 102 + it },
            ("mvc" to 500L) to three.map { 270 + it }, ("webflux" to 500L) to three.map { 140 + it },
            // at N = 1000 only one WebFlux fork was warm: a range, not an interval
            ("mvc" to 1000L) to three.map { 520 + it }, ("webflux" to 1000L) to listOf(230.0),
        )
        val claim = webReactiveClaims(df, 100.0, 200, 2).first()
        assertEquals(Answer.HOLDS, claim.answer, claim.why)
        assertTrue("N = 500" in claim.here && "N = 1000 left out" in claim.why, claim.here + " / " + claim.why)
    }

    private val three = listOf(0.0, 1.0, 2.0)

    @Test
    fun `virtual threads that match WebFlux where the pool queued answer both questions from the forks`() {
        val df = closed(
            ("mvc" to 100L) to three.map { 104 + it }, ("webflux" to 100L) to three.map { 103 + it }, ("mvc-virtual" to 100L) to three.map { 103 + it },
            ("mvc" to 500L) to three.map { 260 + it }, ("webflux" to 500L) to three.map { 140 + it }, ("mvc-virtual" to 500L) to three.map { 120 + it },
        )
        val (race, noPool) = virtualThreadClaims(df, 100.0, 2)
        assertEquals(Answer.DOES_NOT_HOLD, race.answer, race.why) // virtual threads are the faster ones at N = 500
        assertTrue("N = 500" in race.here, race.here)
        assertEquals(Answer.HOLDS, noPool.answer, noPool.why)
        assertTrue("up to N = 500" in noPool.here && "the pool first at N = 500" in noPool.here, noPool.here)
    }

    @Test
    fun `virtual threads that queue as early as the pool, and lose to WebFlux, answer the other way`() {
        val df = closed(
            ("mvc" to 100L) to three.map { 104 + it }, ("webflux" to 100L) to three.map { 103 + it }, ("mvc-virtual" to 100L) to three.map { 150 + it },
            ("mvc" to 500L) to three.map { 260 + it }, ("webflux" to 500L) to three.map { 140 + it }, ("mvc-virtual" to 500L) to three.map { 300 + it },
        )
        val (race, noPool) = virtualThreadClaims(df, 100.0, 2)
        assertEquals(Answer.HOLDS, race.answer, race.why)
        assertEquals(Answer.DOES_NOT_HOLD, noPool.answer, noPool.why)
        assertTrue("N = 100" in noPool.why, noPool.why)
    }

    @Test
    fun `virtual threads judged at the machine's wall answer neither question`() {
        // the same forks as a refutation, but every step at N = 500 ran at 195% of 200%: the CPU, not a pool, queued them
        val rows = listOf(100L to 150.0, 500L to 195.0).flatMap { (n, cpu) -> listOf("mvc" to 260.0, "webflux" to 140.0, "mvc-virtual" to 300.0).flatMap { (stack, at500) ->
            three.map { listOf(stack, 1L, n, (if (n == 500L) at500 else if (stack == "mvc-virtual") 150.0 else 104.0) + it, cpu) } } }
        val df = dataFrameOf("stack", "calls", "users", "mean_ms", "cpu_system_pct")(*rows.flatten().toTypedArray<Any?>())
        val (race, noPool) = virtualThreadClaims(df, 100.0, 2)
        assertEquals(Answer.CANNOT_TELL, race.answer, race.why)
        assertEquals(false, race.checks.single { it.name == BELOW_WALL }.met, race.checks.toString())
        // virtual threads queued at N = 100, below the wall, but the pool's queue at N = 500 was the machine's
        assertEquals(Answer.CANNOT_TELL, noPool.answer, noPool.why)
        assertTrue("MVC on its pool at N = 500" in noPool.reason, noPool.reason)
        // below the wall the same forks answer
        val cool = dataFrameOf("stack", "calls", "users", "mean_ms", "cpu_system_pct")(*rows.map { it.dropLast(1) + 150.0 }.flatten().toTypedArray<Any?>())
        assertEquals(Answer.HOLDS, virtualThreadClaims(cool, 100.0, 2).first().answer)
    }

    @Test
    fun `no virtual-thread step means no virtual-thread question, and two forks give no answer`() {
        val without = closed(("mvc" to 100L) to three.map { 104 + it }, ("webflux" to 100L) to three.map { 103 + it })
        assertTrue(virtualThreadClaims(without, 100.0, 2).isEmpty())
        val twoForks = closed(("mvc" to 100L) to three.map { 300 + it }, ("webflux" to 100L) to listOf(103.0, 104.0), ("mvc-virtual" to 100L) to listOf(150.0, 151.0))
        val (race, _) = virtualThreadClaims(twoForks, 100.0, 2)
        assertEquals(Answer.CANNOT_TELL, race.answer, race.why)
        assertTrue("range" in race.why, race.why)
    }

    @Test
    fun `an empty closed-model figure says why, whether no closed model, invalid steps or cold servers`() {
        val invalid = dataFrameOf("cell", "valid", "warm", "verdict")("mvc/1call", false, true, "measured")
        assertEquals("These runs have no closed-model step (the closed model did not run), so there is nothing to plot.", invalid.filter { false }.nothingToPlot())
        assertEquals("Every closed-model step of these runs is invalid, so there is nothing to plot.", invalid.nothingToPlot())
        val cold = dataFrameOf("cell", "valid", "warm", "verdict")("mvc/1call", true, false, "measured", "webflux/1call", true, true, "not measurable")
        val said = cold.nothingToPlot()
        assertTrue("1 step(s) measured while a server's JIT still compiled and 1 step(s) with steal above 20% of a core" in said, said)
        assertTrue(said.endsWith("a longer one lets the JIT finish."), said)
    }

    @Test
    fun `over sub-second steps a JIT flag drops no fork, and the flagged steps are listed`() {
        // three forks a stack at N = 100 and 500, steps of 0.6 s; one MVC fork at N = 500 flagged cold
        val rows = listOf(100L, 500L).flatMap { n -> listOf("mvc", "webflux").flatMap { stack -> (1..3).map { f ->
            val mean = if (stack == "mvc") (if (n == 500L) 270.0 else 110.0) + f else 102.0 + f
            listOf(stack, 1L, n, f, mean, 150.0, 0.0, 0.6, true, !(stack == "mvc" && n == 500L && f == 2), "measured", if (stack == "mvc" && n == 500L && f == 2) 180.0 else 10.0)
        } } }
        val every = dataFrameOf("stack", "calls", "users", "fork", "mean_ms", "cpu_system_pct", "steal_pct", "seconds", "valid", "warm", "verdict", "jit_ms_per_s")(
            *rows.flatten().toTypedArray<Any?>())
        val claim = webReactiveClaims(every.measuredClosed(), 100.0, 200, 2, everyValid = every).first()
        assertEquals(Answer.HOLDS, claim.answer, claim.why)
        val warm = claim.checks.single { it.name == WARM }
        assertEquals(null, warm.met, warm.detail)
        assertTrue("mvc fork 2 at N = 500 (JIT 180 ms/s)" in warm.detail && "too short to judge" in warm.detail, warm.detail)
        assertEquals(true, claim.checks.single { it.name == BELOW_WALL }.met)
    }
}
