package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertNull

class TablesTest {
    @Test
    fun `machine names read as titles with units`() {
        assertEquals("CPU, engines (% of one core)", columnTitle("cpu_engines_pct"), "the unit its declaration gives")
        assertEquals("CPU, tested (% of one core)", columnTitle("cpu_tested_pct", unit = null), "a column no study declares")
        assertEquals("inserts per second", columnTitle("tps"))
        assertEquals("jobs per second per vCPU", columnTitle("jobs_per_s_per_vcpu"))
        assertEquals("throughput (req/s)", columnTitle("throughput_rps"))
        assertEquals("p99.9 (ms)", columnTitle("p99_9_ms"))
        assertEquals("lateness p50 (µs)", columnTitle("lateness_p50_us"))
        assertEquals("harness / minimal", columnTitle("harness_over_minimal"))
        assertEquals("measure (s)", columnTitle("measure_s"))
        assertEquals("acquire size", columnTitle("acquire_size"))
        assertEquals("p99 from the send (ms)", columnTitle("p99 from the send (ms)"), "a title stays as written")
    }

    @Test
    fun `units come from the table declarations, said once`() {
        assertEquals("% of one core", declaredUnit("steal_pct"))
        assertEquals("steal (% of one core)", columnTitle("steal_pct"), "not the suffix's bare %")
        assertEquals("rate per chain (msg/s)", columnTitle("rate_per_chain"), "a unit the name does not carry")
        assertEquals("bytes per sample", columnTitle("bytes_per_sample"), "a unit the title already names")
        assertNull(declaredUnit("target_rate"), "msg/s in messaging, events/s in queues: no one unit for the name")
        assertEquals("target rate", columnTitle("target_rate"))
        assertNull(declaredUnit("capacity_instances"), "a count")
        assertNull(declaredUnit("no_such_column"))
    }

    @Test
    fun `latencies take the unit that reads best and keep their digits`() {
        val md = dataFrameOf("variant", "p50_ms", "p99_ms")("abq-1", 0.000099, 0.000250, "disruptor-1", 0.000120, 0.004).toMarkdown().text
        assertEquals("| variant | p50 (ns) | p99 (µs) |\n|---|---|---|\n| abq-1 | 99 | 0.25 |\n| disruptor-1 | 120 | 4 |\n", md)
        val slow = dataFrameOf("mean_ms")(150.4, 2400.0).toMarkdown().text
        assertEquals("| mean (ms) |\n|---|\n| 150 |\n| 2,400 |\n", slow, "milliseconds stay milliseconds")
        assertNull(readableTimeUnit(emptyList(), "ms"))
    }

    @Test
    fun `a label says only what differs between the rows`() {
        val same = dataFrameOf("label", "variant")("vm · JDK 17.0.15 · measure=2", "abq-1", "vm · JDK 17.0.15 · measure=2", "abq-3")
        assertEquals("| variant |\n|---|\n| abq-1 |\n| abq-3 |\n", same.toMarkdown().text, "one label for all rows is said once, above")
        val differ = dataFrameOf("label", "variant")("vm · JDK 17.0.15 · rate=0", "abq-1", "vm · JDK 21.0.2 · rate=0", "abq-1")
        assertEquals("| runs | variant |\n|---|---|\n| JDK 17.0.15 | abq-1 |\n| JDK 21.0.2 | abq-1 |\n", differ.toMarkdown().text)
    }
}
