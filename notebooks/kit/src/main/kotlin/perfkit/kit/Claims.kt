package perfkit.kit

/** What this host's data says of one of the original's claims. */
enum class Answer(val words: String) {
    HOLDS("holds"),
    DOES_NOT_HOLD("does not hold"),
    CANNOT_TELL("cannot tell here");

    override fun toString() = words
}

/**
 * One of the original's claims beside this host's evidence: [original] in the original's words, [here] what was
 * measured (a number with its interval or bracket), the [answer], and [why] in a sentence a reader can check.
 */
data class Claim(val original: String, val here: String, val answer: Answer, val why: String)

/**
 * The table a post opens with: each of the original's claims, this host's answer to it, and why. Every answer must
 * follow from an interval or a bracket in the data; [Answer.CANNOT_TELL] says what stood in the way. A question of
 * the kit's own (beyond the original) names its first column with [heading].
 */
fun claimsTable(claims: List<Claim>, heading: String = ORIGINALS_CLAIM): Markdown =
    Markdown("| $heading | on this host | answer | why |\n|---|---|---|---|\n" + claims.joinToString("\n") { c ->
        "| ${c.original} | ${c.here} | **${c.answer.words}** | ${c.why} |"
    }, claims = if (heading == ORIGINALS_CLAIM) claims else emptyList()) // questions of the kit's own are not the original's

private const val ORIGINALS_CLAIM = "the original's claim"

/**
 * The answer an interval gives to "the ratio is above [threshold]" (e.g. "async serves more than sync": above 1):
 * it holds when the whole interval lies above it, does not hold when the whole interval lies at or below it, and
 * cannot tell otherwise, or with fewer than 3 forks (a range, not an interval).
 */
fun answerAbove(e: Estimate?, threshold: Double): Answer = when {
    e == null || e.range || e.low.isNaN() || e.high.isNaN() -> Answer.CANNOT_TELL
    e.low > threshold -> Answer.HOLDS
    e.high <= threshold -> Answer.DOES_NOT_HOLD
    else -> Answer.CANNOT_TELL
}

/** A ratio with its interval in words: "2.54x (95% t 2.06..3.16)", or "1.2x (range 1.1..1.3, 2 forks)". */
fun ratioText(e: Estimate?): String = when {
    e == null -> "not measured"
    e.range -> "${formatNumber(e.mean)}x (range ${formatNumber(e.low)}..${formatNumber(e.high)}, ${e.n} fork(s))"
    e.low.isInfinite() || e.high.isInfinite() -> "${formatNumber(e.mean)}x (95% t unbounded: the denominator is too uncertain)"
    else -> "${formatNumber(e.mean)}x (95% t ${formatNumber(e.low)}..${formatNumber(e.high)})"
}
