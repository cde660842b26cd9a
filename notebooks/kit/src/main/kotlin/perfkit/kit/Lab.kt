package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.io.DisplayConfiguration
import org.jetbrains.kotlinx.dataframe.io.toHTML
import org.jetbrains.letsPlot.commons.geometry.DoubleVector
import org.jetbrains.letsPlot.core.util.PlotHtmlHelper
import java.nio.file.Files
import java.nio.file.Path

/**
 * What the kernel shows for a figure, a plot and a frame (the renderers in perfkit.json).
 *
 * Headless runs (`./bench notebooks` sets PERFKIT_HEADLESS=1) get static output only: SVG and Markdown, which
 * is what a post publishes. In the lab a figure is also an interactive Lets-Plot (tooltips, zoom) and a frame
 * is DataFrame's own HTML table. The interactive plot needs Lets-Plot's JavaScript, of the same version as the
 * kit's lets-plot-common: ./bench installs it (the PyPI `lets-plot` wheel carries it) and the kernel spec names
 * the file in PERFKIT_LETS_PLOT_JS. It is sent inline with the kernel's first interactive figure, as Lets-Plot's
 * own offline mode does, so the lab needs no network. A figure keeps its SVG until the script has drawn it.
 */
object Lab {
    /** A figure's caption as Markdown that reads as itself ([mdText]), read by notebooks/tools/publish.py. */
    const val CAPTION_MIME = "text/x-perfkit-caption"

    private val headless: Boolean get() = System.getenv("PERFKIT_HEADLESS") == "1"

    private val letsPlotJs: String? by lazy {
        System.getenv("PERFKIT_LETS_PLOT_JS")?.let { runCatching { Files.readString(Path.of(it)) }.getOrNull() }
    }

    @Volatile private var scriptSent = false

    /** True when a figure renders interactively here: in the lab, with Lets-Plot's JavaScript at hand. */
    val interactive: Boolean get() = !headless && letsPlotJs != null

    fun figure(f: Figure): Map<String, String> {
        // the caption as Markdown too, for the publisher: the kit is the one place that escapes data for Markdown
        val static = mapOf("image/svg+xml" to f.svg, "text/plain" to f.caption, CAPTION_MIME to mdText(f.caption))
        val spec = f.spec ?: return static
        if (!interactive) return static
        val script = if (scriptSent) null else letsPlotJs.also { scriptSent = true }
        return static + ("text/html" to interactiveHtml(f, spec, script))
    }

    fun markdown(m: Markdown): Map<String, String> =
        mapOf("text/markdown" to m.text, "text/plain" to m.text) + (m.claimsJson?.let { mapOf("text/x-perfkit-claims" to it) } ?: emptyMap())

    fun frame(df: AnyFrame): Map<String, String> {
        val markdown = df.preview().text
        if (headless) return mapOf("text/markdown" to markdown, "text/plain" to df.toString())
        return mapOf("text/html" to df.toHTML(DisplayConfiguration.DEFAULT).toString(), "text/markdown" to markdown, "text/plain" to df.toString())
    }

    /** The figure's HTML in the lab: [library] (Lets-Plot's JavaScript) when this kernel has not sent it yet. */
    internal fun interactiveHtml(f: Figure, spec: Map<String, Any>, library: String?): String {
        val id = "perfkit-static-" + java.util.UUID.randomUUID().toString().take(8)
        // "</" cannot end the inline script early: the library's own text never needs it
        val script = library?.let { "<script type=\"text/javascript\">${inScript(it)}</script>\n" } ?: ""
        val plot = scriptSafe(PlotHtmlHelper.getStaticDisplayHtmlForRawSpec(
            spec.toMutableMap(), DoubleVector(f.width.toDouble(), f.height.toDouble()), true, false))
        // the SVG stays when the library is not in this page (a reloaded lab page): a static figure, not a blank
        return script +
            "<div id=\"$id\">${f.svg}</div>\n" +
            "<script type=\"text/javascript\">if (window.LetsPlot) document.getElementById(\"$id\").remove();</script>\n" +
            plot
    }

    /**
     * Lets-Plot writes the plot's data into its one script as JavaScript literals without escaping "</", so a run's
     * text such as a tag "</script><img …>" would end the script and become markup. Escaped here, between the
     * script's opening tag and its last closing tag (the helper's own).
     */
    private fun scriptSafe(html: String): String {
        val open = html.indexOf("<script")
        val close = html.lastIndexOf("</script>")
        if (open < 0 || close < open) return html
        val body = html.indexOf('>', open) + 1
        return html.substring(0, body) + inScript(html.substring(body, close)) + html.substring(close)
    }

    /** Text that cannot end or comment out the script it sits in; `<\/` and `<\!` read the same in JavaScript strings. */
    private fun inScript(js: String) = js.replace("</", "<\\/").replace("<!--", "<\\!--")
}
