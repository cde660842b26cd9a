package perfkit.kit

import org.jetbrains.letsPlot.geom.geomLine
import org.jetbrains.letsPlot.geom.geomPoint
import org.jetbrains.letsPlot.gggrid
import org.jetbrains.letsPlot.letsPlot
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.junit.jupiter.api.Test
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

class LabTest {
    private val hostile = "</script><img src=x onerror=alert(1)>"

    private fun hostileFigure(): Figure {
        val data = mapOf("host" to listOf(hostile, "vm"), "x" to listOf(1, 2), "y" to listOf(3, 4))
        return figure("lab-test", "caption", letsPlot(data) + geomPoint { x = "x"; y = "y"; color = "host" })
    }

    @Test
    fun `a figure carries its plot for the lab and keeps its svg`() {
        val f = hostileFigure()
        assertTrue(f.spec!!.isNotEmpty())
        val html = Lab.interactiveHtml(f, f.spec!!, "var LetsPlot = {};")
        assertTrue(html.startsWith("<script type=\"text/javascript\">var LetsPlot = {};</script>"), html.take(200))
        assertTrue("buildPlotFromProcessedSpecs" in html)
        assertTrue(f.svg in html, "the static SVG stays until the library draws the plot")
        assertFalse("<script" in Lab.interactiveHtml(f, f.spec!!, null).substringBefore("<div"), "the library is sent once")
    }

    @Test
    fun `plots side by side are a figure too, for the post and for the lab`() {
        val data = mapOf("x" to listOf(1, 2), "y" to listOf(3, 4))
        val grid = gggrid(listOf(letsPlot(data) + geomPoint { x = "x"; y = "y" }, letsPlot(data) + geomLine { x = "x"; y = "y" }), ncol = 2)
        val f = figure("lab-grid", "two plots", grid, 600, 300)
        assertTrue(f.svg.startsWith("<svg data-perfkit-figure=\"lab-grid\" "), f.svg.take(120))
        assertEquals("subplots", f.spec!!["kind"], "the lab draws the grid, not one plot")
        assertTrue("buildPlotFromProcessedSpecs" in Lab.interactiveHtml(f, f.spec!!, null))
    }

    @Test
    fun `data in the lab's script cannot close it`() {
        val f = hostileFigure()
        val html = Lab.interactiveHtml(f, f.spec!!, "x = '</script>'")
        assertFalse("</script><img" in html, "a run's text ends no script and starts no element")
        assertEquals(html.split("<script").size, html.split("</script>").size, "every script opened is closed by us")
    }

    @Test
    fun `headless output is static`() {
        // the kit's tests run without PERFKIT_LETS_PLOT_JS: no interactive output, only SVG and text
        val bundle = Lab.figure(hostileFigure())
        assertEquals(setOf("image/svg+xml", "text/plain", Lab.CAPTION_MIME), bundle.keys)
        val frame = Lab.frame(dataFrameOf("a")(1, 2))
        assertTrue("text/markdown" in frame.keys)
    }

    @Test
    fun `a caption reaches the publisher as Markdown that reads as itself`() {
        val data = mapOf("x" to listOf(1, 2), "y" to listOf(3, 4))
        val caption = "p99 of [mvc](javascript:x) <b>*fast*</b>"
        val bundle = Lab.figure(figure("lab-caption", caption, letsPlot(data) + geomPoint { x = "x"; y = "y" }))
        assertEquals(caption, bundle["text/plain"], "the lab shows the caption as it is")
        val md = bundle.getValue(Lab.CAPTION_MIME)
        assertEquals(mdText(caption), md)
        assertFalse(listOf("[", "<", "*").any { it in md }, md)
    }
}
