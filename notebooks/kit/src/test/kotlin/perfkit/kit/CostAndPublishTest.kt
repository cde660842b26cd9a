package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.letsPlot.geom.geomPoint
import org.jetbrains.letsPlot.letsPlot
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

class CostAndPublishTest {
    @TempDir lateinit var dir: Path

    @Test
    fun `cost per million operations`() {
        // $0.34 an hour at 1000 ops/s: 3.6 million ops an hour, so $0.0944 per million
        assertEquals(0.34 / 3.6, costPerMillion(0.34, 1000.0), 1e-12)
        assertThrows<IllegalArgumentException> { costPerMillion(0.34, 0.0) }
    }

    @Test
    fun `relative cost and saving`() {
        assertEquals(0.002, relativeCost(1.0, 500.0), 1e-12)
        assertEquals(99.8, savingPercent(1.0, 500.0), 1e-9, "500x fewer hosts is the original's 99.8%")
        assertEquals(3, hostsNeeded(2500.0, 1000.0))
        assertEquals(1, hostsNeeded(1000.0, 1000.0))
    }

    @Test
    fun `host catalog of the kit loads and this machine has no price`() {
        val repo = generateSequence(Path.of("").toAbsolutePath()) { it.parent }.first { Files.exists(it.resolve("env/hosts.yaml")) }
        val hosts = loadHosts(repo.resolve("env/hosts.yaml"))
        assertNull(hosts.getValue("this-machine").pricePerHour)
        assertNull(hosts.getValue("this-machine").costPerMillion(1000.0))
        val c5 = hosts.getValue("aws-c5.2xlarge")
        assertEquals(8, c5.vcpu)
        assertEquals(costPerMillion(c5.pricePerHour!!, 1000.0), c5.costPerMillion(1000.0))
        assertTrue(hosts.values.all { it.pricePerHour == null || it.priceDate != null }, "every price says when it was taken")
    }

    @Test
    fun `a broken host catalog is named`() {
        val f = dir.resolve("hosts.yaml")
        Files.writeString(f, "machines: []\n")
        assertTrue(assertThrows<RunFormatException> { loadHosts(f) }.message!!.contains("hosts.yaml"))
    }

    @Test
    fun `figures are static named svg`() {
        val f = figure("tiny-plot", "a test", letsPlot(mapOf("x" to listOf(1, 2), "y" to listOf(2, 1))) + geomPoint { x = "x"; y = "y" }, 300, 200)
        assertTrue(f.svg.startsWith("<svg data-perfkit-figure=\"tiny-plot\" "))
        assertTrue(f.svg.contains("width=\"300"), f.svg.take(200))
        assertTrue(!f.svg.contains("<script"))
        assertThrows<IllegalArgumentException> { figure("Bad Name", "x", letsPlot()) }
    }

    @Test
    fun `tables render as markdown`() {
        val md = dataFrameOf("variant", "events", "rate")("abq-1", 12_345_678L, 0.123456, "x|y", 5L, 2500.4).toMarkdown().text
        assertEquals("| variant | events | rate |\n|---|---|---|\n| abq-1 | 12,345,678 | 0.123 |\n| x&#124;y | 5 | 2,500 |\n", md)
    }

    private val payload = "<img src=x onerror=alert(1)>"

    @Test
    fun `data in tables is escaped`() {
        val md = dataFrameOf("tag & <b>", "host")(payload, "a&b").toMarkdown().text
        assertEquals("| tag &amp; &lt;b&gt; | host |\n|---|---|\n| &lt;img src=x onerror=alert(1)&gt; | a&amp;b |\n", md)
        assertEquals("a&#124;b &lt;", formatCell("a|b <"))
    }

    @Test
    fun `a tag full of markdown stays one line of text`() {
        val tag = "line1\n\n[click me](https://example.invalid/x) | col | <b>bold</b> &amp; `code`\n# injected heading"
        val text = mdText(tag)
        assertEquals("line1  &#91;click me&#93;(https://example.invalid/x) &#124; col &#124; &lt;b&gt;bold&lt;/b&gt; &amp;amp; &#96;code&#96; &#35; injected heading", text)
        assertTrue(text.none { it in "\n[]|`<>*_" }, text)
        assertEquals("&#45; not a list", mdText("- not a list"))
        assertEquals("1&#46; not a list", mdText("1. not a list"))
        assertEquals("a-b c.d", mdText("a-b c.d"), "dashes and dots inside text stay readable")
    }

    @Test
    fun `labels, titles and legends in figures are escaped`() {
        val plot = letsPlot(mapOf("x" to listOf(1, 2), "y" to listOf(2, 1), "series" to listOf(payload, "ok"))) +
            geomPoint { x = "x"; y = "y"; color = "series" } + org.jetbrains.letsPlot.label.labs(title = payload, x = payload)
        val svg = figure("hostile", "caption", plot).svg
        assertTrue(!svg.contains("<img") && !svg.contains(payload), svg.take(300))
        javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(svg.byteInputStream())
    }

    @Test
    fun `published values by variant and metric`() {
        val pub = dataFrameOf("source", "variant", "metric", "value")("w", "a", "m", 2L, "p", "a", "m", 3.5, "w", "b", "m", 1.0)
        assertEquals(1.0, pub.publishedValue("b", "m"))
        assertEquals(3.5, pub.publishedValue("a", "m", source = "p"))
        assertTrue(assertThrows<RunFormatException> { pub.publishedValue("a", "m") }.message!!.contains("name the source"))
        assertTrue(assertThrows<RunFormatException> { pub.publishedValue("c", "m") }.message!!.contains("no published number"))
    }

    @Test
    fun `a machine priced per vCPU like a host type`() {
        val hosts = mapOf("big" to HostType("big", 8, 16.0, 0.40, "USD", "2024-06", "list <price>"),
            "free" to HostType("free", 2, 4.0, null, "USD", null, ""))
        val m = pricedMachine("big", 2, hosts)
        assertEquals(0.10, m.pricePerHour, 1e-12)
        assertEquals("big", m.name); assertEquals(8, m.host.vcpu)
        assertEquals("Priced as **big** per vCPU-hour (\$0.4/h for 8 vCPUs, list &lt;price&gt;, price of 2024-06): \$0.1/h for this 2-vCPU machine.", m.description)
        assertTrue(assertThrows<RunFormatException> { pricedMachine("free", 2, hosts) }.message!!.contains("no price"))
        assertTrue(assertThrows<RunFormatException> { pricedMachine("none", 2, hosts) }.message!!.contains("unknown host type 'none'"))
    }

    @Test
    fun `frames are shown as a short markdown preview`() {
        val df = dataFrameOf("n")(*(1..30).map { it.toLong() }.toTypedArray())
        val text = df.preview(5).text
        assertEquals(1 + 1 + 5, text.lines().count { it.startsWith("|") })
        assertTrue(text.contains("25 more rows (30 in all)"), text)
        val small = dataFrameOf("n")(1L, 2L)
        assertEquals(small.toMarkdown().text, small.preview().text, "short frames are shown whole")
    }
}
