package perfkit.kit

/** What this host's data says of one of the original's claims. */
enum class Answer(val words: String) {
    HOLDS("holds"),
    DOES_NOT_HOLD("does not hold"),
    CANNOT_TELL("cannot tell here");

    override fun toString() = words
}

/**
 * One thing that must be true for this host's data to answer a claim (docs/method.md, "Preconditions"), checked from
 * the run's own data: [met] true or false with the number that decided it in [detail], or null when these runs do not
 * record what it needs (listed, so a reader sees it was not checked).
 */
data class Precondition(val name: String, val met: Boolean?, val detail: String) {
    val failed: Boolean get() = met == false

    /** "✓ below the wall: 26% and 29% of 200%", "✗ …", or "? …" for one these runs could not check. */
    val text: String get() = "${when (met) { true -> "✓"; false -> "✗"; null -> "?" }} $name: $detail"
}

/**
 * One of the original's claims beside this host's evidence: [original] in the original's words, [here] what was
 * measured (a number with its interval or bracket), the [answer], [why] in a sentence a reader can check, and the
 * [checks] made before answering. Build it with [claim], which never lets an answer stand on a failed check.
 */
data class Claim(val original: String, val here: String, val answer: Answer, val why: String, val checks: List<Precondition> = emptyList()) {
    /** Why it cannot be told, in short, for a post's first screen: the failed checks with their numbers, else [why]. */
    val reason: String get() = checks.filter { it.failed }.joinToString("; ") { "${it.name}: ${it.detail}" }.ifEmpty { why }
}

/**
 * A claim answered only where its [checks] allow: when one failed, the answer is [Answer.CANNOT_TELL] and the why
 * names each failed precondition with its number; what the interval alone would have said is kept after it, for
 * information, so a reader sees what the failed check stopped.
 */
fun claim(original: String, here: String, answer: Answer, why: String, checks: List<Precondition> = emptyList()): Claim {
    val failed = checks.filter { it.failed }
    if (failed.isEmpty()) return Claim(original, here, answer, why, checks)
    val stopped = failed.joinToString("; ") { "${it.name} (${it.detail})" }
    val unjudged = if (answer == Answer.CANNOT_TELL) why else "Read without this check, the interval says \"${answer.words}\": $why"
    return Claim(original, here, Answer.CANNOT_TELL, "Not a question this host could answer here: $stopped. $unjudged", checks)
}

/**
 * The table a post opens with: each of the original's claims, this host's answer to it, why, and the preconditions
 * checked before answering. Every answer follows from an interval or a bracket in the data; [Answer.CANNOT_TELL]
 * says what stood in the way. A question of the kit's own (beyond the original) names its first column with [heading].
 */
fun claimsTable(claims: List<Claim>, heading: String = ORIGINALS_CLAIM): Markdown =
    Markdown("| $heading | on this host | answer | why | checked first |\n|---|---|---|---|---|\n" + claims.joinToString("\n") { c ->
        "| ${c.original} | ${c.here} | **${c.answer.words}** | ${c.why} | ${c.checks.joinToString("; ") { it.text }.ifEmpty { "-" }} |"
    }, claims = if (heading == ORIGINALS_CLAIM) claims else emptyList()) // questions of the kit's own are not the original's

private const val ORIGINALS_CLAIM = "the original's claim"

/**
 * The answer an interval gives to "the ratio is above [threshold]" (e.g. "async serves more than sync": above 1):
 * it holds when the whole interval lies above it, does not hold when the whole interval lies at or below it, and
 * cannot tell otherwise, or with fewer than 3 forks (a range, not an interval). For claims of a bound ("at least 82%",
 * "keeps nine tenths"); a claim of a size ("about 2.75x") is judged by [answerAgainstPublished].
 */
fun answerAbove(e: Estimate?, threshold: Double): Answer = when {
    e == null || e.range || e.low.isNaN() || e.high.isNaN() -> Answer.CANNOT_TELL
    e.low > threshold -> Answer.HOLDS
    e.high <= threshold -> Answer.DOES_NOT_HOLD
    else -> Answer.CANNOT_TELL
}

/**
 * How far below the original's figure a ratio may land and still reproduce it: down to half of it. The hardware, the
 * JDK and the scale differ from the original's, so a reproduction is judged on direction and size, not on digits; an
 * effect larger than the published one still shows the claim, so there is no ceiling.
 */
const val PUBLISHED_BAND = 2.0

/**
 * The one rule every ratio claim is judged by (docs/method.md): a claim that A is [published] times B. Turned so the
 * claimed effect is above 1 (a published 1/6 is read as 6), with the interval [low]..[high] turned with it:
 * - **holds** when the whole interval lies above 1 (the effect is there) and reaches [published] / [PUBLISHED_BAND]
 *   (its published size is not ruled out);
 * - **does not hold** when the whole interval lies at or below 1 (no effect, or the other way), or below
 *   [published] / [PUBLISHED_BAND] (the effect is less than half the published one);
 * - **cannot tell** otherwise, or without a usable published figure. A null end is an open bracket.
 */
fun answerAgainstPublished(low: Double?, high: Double?, published: Double): Answer {
    if (!(published > 0) || published == 1.0 || published.isInfinite()) return Answer.CANNOT_TELL
    val (lo, hi, size) = turned(low, high, published)
    return when {
        hi != null && (hi <= 1 || hi < size / PUBLISHED_BAND) -> Answer.DOES_NOT_HOLD
        lo != null && lo > 1 -> Answer.HOLDS
        else -> Answer.CANNOT_TELL
    }
}

/** The interval and the figure turned so the claimed effect is above 1: a claim of 1/6 is read as 6. */
private fun turned(low: Double?, high: Double?, published: Double): Triple<Double?, Double?, Double> =
    if (published >= 1) Triple(low, high, published)
    else Triple(high?.let { if (it <= 0) null else 1 / it }, low?.let { if (it <= 0) null else 1 / it }, 1 / published)

/** [answerAgainstPublished] for a ratio's interval over forks; fewer than 3 forks a side (a range) answer nothing. */
fun answerAgainstPublished(e: Estimate?, published: Double): Answer =
    if (e == null || e.range || e.low.isNaN() || e.high.isNaN()) Answer.CANNOT_TELL
    else answerAgainstPublished(e.low.takeIf { it.isFinite() }, e.high.takeIf { it.isFinite() }, published)

/**
 * Why [answerAgainstPublished] answered as it did for the interval [low]..[high], naming the end and the limit that
 * decided it: 1, or half the published figure.
 */
fun publishedRuleWhy(answer: Answer, published: Double, low: Double?, high: Double?, what: String = "The interval"): String {
    val isTurned = published < 1
    val (_, hi, size) = turned(low, high, published)
    fun shown(x: Double) = if (isTurned) "1/${formatNumber(x)}" else "${formatNumber(x)}x"
    val half = size / PUBLISHED_BAND
    return when (answer) {
        Answer.HOLDS -> "$what lies wholly on the claimed side of 1" +
            (if (half > 1) " and reaches ${shown(half)}, half the original's ${shown(size)} or more." else ", as the original's ${shown(size)} does.")
        Answer.DOES_NOT_HOLD -> if (hi != null && hi <= 1) "$what lies wholly at or beyond 1 on the other side of the claim: no effect in the original's direction."
            else "$what lies wholly short of ${shown(half)}, half the original's ${shown(size)}: the effect is there, but less than half as large."
        Answer.CANNOT_TELL -> "$what reaches across 1 (or is open), so neither the effect nor its absence is shown."
    }
}

/** [publishedRuleWhy] for a ratio's interval over forks. */
fun publishedRuleWhy(answer: Answer, published: Double, e: Estimate, what: String = "The interval"): String =
    publishedRuleWhy(answer, published, e.low.takeIf { it.isFinite() }, e.high.takeIf { it.isFinite() }, what)

/** A ratio with its interval in words: "2.54x (95% t 2.06..3.16)", or "1.2x (range 1.1..1.3, 2 forks)". */
fun ratioText(e: Estimate?): String = when {
    e == null -> "not measured"
    e.range -> "${formatNumber(e.mean)}x (range ${formatNumber(e.low)}..${formatNumber(e.high)}, ${e.n} fork(s))"
    e.low.isInfinite() || e.high.isInfinite() -> "${formatNumber(e.mean)}x (95% t unbounded: the denominator is too uncertain)"
    else -> "${formatNumber(e.mean)}x (95% t ${formatNumber(e.low)}..${formatNumber(e.high)})"
}
