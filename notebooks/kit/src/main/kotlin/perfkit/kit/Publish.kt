package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.take
import org.jetbrains.letsPlot.export.ggsave
import org.jetbrains.letsPlot.ggsize
import org.jetbrains.letsPlot.intern.Plot
import org.jetbrains.letsPlot.intern.figure.SubPlotsFigure
import org.jetbrains.letsPlot.intern.toSpec
import java.nio.file.Files
import java.nio.file.Path
import java.util.Locale
import org.jetbrains.letsPlot.Figure as LetsPlotFigure

/**
 * A plot rendered to static SVG (no JavaScript), with a stable [name] that the publisher uses as the
 * figure's file name. The kernel shows it through the renderer registered in perfkit.json.
 */
class Figure(
    val name: String, val caption: String, val svg: String,
    /** The plot's Lets-Plot specification, for the lab's interactive view ([Lab]); the post uses the SVG. */
    val spec: Map<String, Any>? = null, val width: Int = 720, val height: Int = 400,
) {
    override fun toString() = caption
}

/**
 * [plot] (a Plot, or several side by side: `gggrid(...)`) as a [Figure] [width] x [height] pixels named [name], its
 * SVG for the post and its specification for the lab.
 */
fun figure(name: String, caption: String, plot: LetsPlotFigure, width: Int = 720, height: Int = 400): Figure {
    require(Regex("[a-z0-9][a-z0-9-]*").matches(name)) { "figure name '$name': use lowercase letters, digits and dashes" }
    val sized = when (plot) {
        is Plot -> plot + ggsize(width, height)
        is SubPlotsFigure -> plot + ggsize(width, height)
        else -> plot // a figure of a kind the kit does not know keeps its own size
    }
    // Lets-Plot's public export (ggsave) writes files only, so the SVG passes through a private temp folder
    val dir = Files.createTempDirectory("perfkit-figure")
    val svg = try {
        Files.readString(Path.of(ggsave(sized, "$name.svg", path = dir.toString())))
    } finally {
        dir.toFile().deleteRecursively()
    }
    // The publisher finds the name in the SVG itself, so it survives any notebook tooling.
    return Figure(name, caption, svg.replaceFirst("<svg ", "<svg data-perfkit-figure=\"$name\" "), sized.toSpec(), width, height)
}

/**
 * Markdown text, shown rendered in Jupyter and copied as-is into the published post. [claims] are the original's
 * claims a claims table in it answers ([claimsTable]): the publisher lists them under the post's title, so a
 * reader's first screen says which hold here.
 */
class Markdown(val text: String, val claims: List<Claim> = emptyList()) {
    override fun toString() = text

    /** This text followed by [other], the claims of both kept. */
    operator fun plus(other: Markdown) = Markdown(text + other.text, claims + other.claims)

    /** The claims as the kernel passes them to the publisher (text/x-perfkit-claims); null when there are none. */
    val claimsJson: String? get() = if (claims.isEmpty()) null else CLAIMS_JSON.writeValueAsString(claims.map {
        mapOf("original" to it.original, "here" to it.here, "answer" to it.answer.name.lowercase().replace('_', '-'), "words" to it.answer.words,
            "reason" to it.reason)
    })
}

private val CLAIMS_JSON = com.fasterxml.jackson.databind.ObjectMapper()

/** [parts] one after another, [separator] between them, every part's claims kept. */
fun List<Markdown>.joined(separator: String = "\n\n"): Markdown =
    if (isEmpty()) Markdown("") else reduce { a, b -> a + Markdown(separator) + b }

fun md(text: String) = Markdown(text.trimIndent())

/** The first [rows] rows as a Markdown table, with a note of how many more there are: how the kernel shows a frame. */
fun AnyFrame.preview(rows: Int = 20): Markdown {
    val shown = if (rowsCount() > rows) take(rows).toMarkdown().text + "\n*… ${rowsCount() - rows} more rows (${rowsCount()} in all)*\n" else toMarkdown().text
    return Markdown(shown)
}

fun formatCell(v: Any?, digits: Int = 3): String = when (v) {
    null -> ""
    is Int, is Long -> String.format(Locale.ROOT, "%,d", v)
    is Double, is Float -> formatNumber((v as Number).toDouble(), digits)
    else -> mdText(v.toString(), atLineStart = false) // a cell never starts a line: "17.0.15" cannot open a list there
}

/**
 * Escapes `& < >` so that data (a `--tag`, a host name, a label) reads as text wherever the kit writes
 * Markdown or SVG: Markdown passes raw HTML through, and the site must never run a run's strings.
 * Use it for data interpolated into [md] text.
 */
fun escapeHtml(text: String): String = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

/**
 * Data (a `--tag`, a host name, a label) as Markdown text that reads as itself and never as markup, in Jupyter and
 * in the published post alike: `& < >` become entities (no raw HTML), and so does every character that could open
 * Markdown syntax (links, emphasis, code, table cells, headings, lists); control characters and newlines become
 * spaces, so nothing can start a new block. Use it for any data interpolated into [md] text.
 */
fun mdText(text: String, atLineStart: Boolean = true): String {
    val sb = StringBuilder(text.length + 16)
    for ((i, ch) in text.withIndex()) when {
        ch == '&' -> sb.append("&amp;")
        ch == '<' -> sb.append("&lt;")
        ch == '>' -> sb.append("&gt;")
        ch in MARKDOWN_SYNTAX || (atLineStart && i == 0 && ch in "+-=") -> sb.append("&#").append(ch.code).append(';')
        ch.isISOControl() -> sb.append(' ')
        else -> sb.append(ch)
    }
    // "1." at the start of a line would open a list
    return if (!atLineStart) sb.toString() else Regex("^(\\d+)([.)])").replace(sb.toString()) { m -> m.groupValues[1] + "&#" + m.groupValues[2][0].code + ";" }
}

// ( ) and ! only act after ] or before [, which are escaped
private const val MARKDOWN_SYNTAX = "\\`*_[]|~#"

/** Large numbers as grouped integers, small ones with [digits] significant digits. */
fun formatNumber(d: Double, digits: Int = 3): String = when {
    d.isNaN() -> ""
    kotlin.math.abs(d) >= 999.5 -> String.format(Locale.ROOT, "%,.0f", d)
    d == 0.0 -> "0"
    else -> java.math.BigDecimal(d).round(java.math.MathContext(digits)).stripTrailingZeros().toPlainString()
}
