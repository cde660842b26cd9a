package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.rows
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertSame
import kotlin.test.assertTrue

class SloOverrideTest {
    private val steps = listOf(SearchStep(100.0, 50.0), SearchStep(200.0, 80.0), SearchStep(400.0, 150.0), SearchStep(800.0, 90.0))

    @Test
    fun `a stricter slo moves the wall down and a lucky step after the wall does not count`() {
        assertEquals(ForkBracket(1, 200.0, 400.0, "wall"), forkBracketAtSlo(1, steps, 100.0, 100.0))
        assertEquals(ForkBracket(1, 100.0, 200.0, "wall"), forkBracketAtSlo(1, steps, 60.0, 100.0))
        assertEquals(ForkBracket(1, null, 100.0, "wall"), forkBracketAtSlo(1, steps, 40.0, 100.0))
    }

    @Test
    fun `a looser slo than the search's own is a lower bound that says why`() {
        val b = forkBracketAtSlo(2, steps, 200.0, 100.0)
        assertEquals(800.0, b.lastMet)
        assertEquals(null, b.firstMissed)
        assertTrue("stopped at the run's own SLO, 100 ms" in b.status, b.status)
        assertTrue(capacityBracket(listOf(b), "req/s").text.startsWith("at least 800 req/s"))
    }

    @Test
    fun `a driver late by more than a tenth of the slo misses it`() {
        val late = listOf(SearchStep(100.0, 50.0, latenessMs = 5.0), SearchStep(200.0, 60.0, latenessMs = 15.0))
        assertEquals(ForkBracket(1, 200.0, null, "lower bound"), forkBracketAtSlo(1, late, 200.0, 200.0))
        assertEquals(ForkBracket(1, 100.0, 200.0, "wall"), forkBracketAtSlo(1, late, 100.0, 200.0))
    }

    private val open = frameOf(
        listOf("run_id", "cell", "stack", "calls", "fork", "rate_rps", "p99_ms", "lateness_p99_ms", "slo_ms", "verdict", "meets_slo", "valid"),
        listOf(
            listOf("r1", "mvc/2call", "mvc", 2, 1, 100.0, 205.0, 1.0, 400.0, "met", true, true),
            listOf("r1", "mvc/2call", "mvc", 2, 1, 200.0, 230.0, 1.0, 400.0, "met", true, true),
            listOf("r1", "mvc/2call", "mvc", 2, 1, 400.0, 900.0, 80.0, 400.0, "missed", false, true),
            listOf("r1", "mvc/2call", "mvc", 2, 1, 300.0, 390.0, 2.0, 400.0, "met", true, true),
        ))

    @Test
    fun `web-reactive steps and brackets re-read at another slo per call`() {
        val cap = frameOf(listOf("run_id", "cell"), listOf(listOf("r1", "mvc/2call")))
        val same = webReactiveAtSlo(open, 200.0, 200.0, cap)
        assertSame(open, same.first)
        assertSame(cap, same.second)
        val (steps, brackets) = webReactiveAtSlo(open, 110.0, 200.0, cap)
        assertEquals(listOf(true, false, false, false), steps.rows().map { it["meets_slo"] })
        assertEquals(listOf(220.0), steps.rows().map { it["slo_ms"] }.distinct(), "2 calls: twice the SLO per call")
        val b = brackets.capacityBrackets()["mvc/2call"]!!
        assertEquals(100.0, b.low)
        assertEquals(200.0, b.high)
        assertTrue("re-read at p99 <= 220 ms" in brackets.rows().single()["stop_reason"].toString())
    }

    @Test
    fun `messaging searches re-read at another p99_9 slo, a saturated step still a miss`() {
        val sweep = frameOf(
            listOf("run_id", "variant", "system", "policy", "repetition", "instances", "rate_per_chain", "target_rate", "p99_9_ms", "valid", "saturated", "meets_slo"),
            listOf(
                listOf("r1", "chronicle/busy", "chronicle", "busy", 1, 1, 350, 350.0, 2.0, true, false, true),
                listOf("r1", "chronicle/busy", "chronicle", "busy", 1, 2, 350, 700.0, 40.0, true, false, true),
                listOf("r1", "chronicle/busy", "chronicle", "busy", 1, 4, 350, 1400.0, 20.0, true, true, false),
            ))
        val (steps, capacity) = messagingAtSlo(sweep, sweep, 10.0, 100.0)
        assertEquals(listOf(true, false, false), steps.rows().map { it["meets_slo"] })
        val row = capacity.rows().single()
        assertEquals(350.0, row["capacity_msgs_per_s"])
        assertEquals(1, row["capacity_instances"])
        assertEquals(2, row["first_missed_instances"])
        val looser = messagingAtSlo(sweep, sweep, 500.0, 100.0).second.rows().single()
        assertEquals(700.0, looser["capacity_msgs_per_s"], "a saturated machine is a miss at any SLO")
        assertEquals(1400.0, looser["first_missed_msgs_per_s"])
    }
}
