package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

class WebReactiveTest {
    /** Closed-model rows: per stack and N, the mean response time of each warm fork given. */
    private fun closed(vararg cells: Pair<Pair<String, Long>, List<Double>>) = dataFrameOf("stack", "calls", "users", "mean_ms", "cpu_system_pct")(
        *cells.flatMap { (key, means) -> means.map { listOf(key.first, 1L, key.second, it, 150.0) } }.flatten().toTypedArray())

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
}
