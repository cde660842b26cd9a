package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.add
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows

// The three-tier post's tables, from the run tables of data/README.md (saturation.csv, open.csv, capacity.csv,
// inserts.csv). Each returns Markdown that states only what the forks support, or says that a round did not run.

private fun Estimate.text(unit: String = ""): String =
    formatNumber(mean) + unit + if (n > 1) " (${interval} ${formatNumber(low)}..${formatNumber(high)})" else " (1 fork)"

/**
 * Rows of the run table [path], stacked over the runs that have it (a round that did not run leaves no file), of
 * one [round] when given, and only valid rows measured on warm servers (the step's `warm` column: every server's JIT
 * under 50 ms/s) unless [validOnly] is false. Empty when no run has the table.
 */
fun List<RecordedRun>.roundRows(path: String, round: String? = null, validOnly: Boolean = true, warmOnly: Boolean = validOnly): AnyFrame {
    val having = filter { r -> r.has(path) }
    if (having.isEmpty()) return dataFrameOf(emptyList<org.jetbrains.kotlinx.dataframe.AnyCol>())
    val t = having.table(path)
    val hasWarm = "warm" in t.columnNames()
    return t.filter { (round == null || it["round"] == round) && (!validOnly || it["valid"] == true) && (!warmOnly || !hasWarm || it["warm"] != false) }
}

/**
 * Why a round has nothing to show: it did not run in the selected runs, or it ran but every step was invalid or
 * measured while a server's JIT still compiled (a quick run's warm-up is too short for the JIT on a small host).
 */
fun List<RecordedRun>.nothingToShow(path: String, round: String?): Markdown {
    val all = roundRows(path, round, validOnly = false)
    val name = round ?: path.removeSuffix(".csv")
    if (all.isEmptyFrame()) return md("The $name round did not run in the selected runs.")
    val cold = coldSteps(path, round)
    return md("The $name round ran, but none of its ${all.rowsCount()} step(s) can be shown: " +
        (if (cold > 0) "$cold were measured while a server's JIT still compiled, the rest were invalid." else "every one was invalid.") +
        " A longer warm-up (--server-warmup-max) and a full-scale run give steps to compare.")
}

/** How many valid steps of [path] were left out because a server's JIT was still busy during them. */
fun List<RecordedRun>.coldSteps(path: String, round: String? = null): Int {
    val all = roundRows(path, round, validOnly = false)
    if (all.isEmptyFrame() || "warm" !in all.columnNames()) return 0
    return all.rows().count { it["valid"] == true && it["warm"] == false }
}

private fun AnyFrame.isEmptyFrame() = rowsCount() == 0 || columnNames().isEmpty()

/** What the newest run can and cannot say: a quick run, invalid steps, the run marked invalid. */
fun threeTierCaveats(run: RecordedRun, runs: List<RecordedRun>): Markdown {
    val invalid = listOf("saturation.csv", "open.csv", "inserts.csv")
        .sumOf { t -> runs.filter { it.id == run.id }.roundRows(t, validOnly = false).let { f -> if (f.isEmptyFrame()) 0 else f.rows().count { it["valid"] != true } } }
    return md(listOfNotNull(
        if (run.quick) "**Quick run:** ${formatNumber(run.measureSeconds)} s windows after a ${formatNumber(run.warmupSeconds)} s warm-up and ${run.repetitions} fork(s), " +
            "one durability setting, two chain variants and no capacity search. The servers are barely warm and one fork gives no interval: read the shapes, not the numbers." else null,
        if (!run.valid) "**This run is marked invalid:** " + run.invalidReasons.joinToString("; ") { escapeHtml(it) } + "." else null,
        if (invalid > 0) "$invalid step(s) are invalid (the driver fell behind, requests failed, or row counts did not match); they are left out below." else null,
    ).joinToString("\n\n").ifEmpty { "Every step is valid." })
}

/** Round 1: the page check the study made before any load: size per engine and whether it equals plain HTML's, whitespace collapsed. */
fun templatePageCheck(runs: List<RecordedRun>): Markdown {
    val t = runs.sortedBy { it.id }.map { it.manifest.path("notes").path("templates") }.lastOrNull { !it.isMissingNode }
        ?: return md("The templates round did not run in the selected runs.")
    val pages = t.path("pages")
    return md(escapeHtml(t.path("page").asText("")) + ".\n\n| engine | bytes | same as plain, whitespace collapsed | SHA-256 of the collapsed page |\n|---|---|---|---|\n" +
        pages.properties().joinToString("\n") { (engine, p) ->
            "| `${escapeHtml(engine)}` | ${p.path("bytes").asLong()} | ${if (p.path("sameAsPlain").asBoolean()) "yes" else "**no**"} | `${escapeHtml(p.path("sha256Collapsed").asText().take(16))}…` |"
        })
}

/** Round 3: how each chain variant is built, as the study recorded it. */
fun chainStacks(runs: List<RecordedRun>): Markdown {
    val v = runs.sortedBy { it.id }.map { it.manifest.path("notes").path("chain").path("variants") }.lastOrNull { !it.isMissingNode }
        ?: return md("The chain round did not run in the selected runs.")
    return md("| variant | how it is built |\n|---|---|\n" + v.properties().joinToString("\n") { (name, text) -> "| `${escapeHtml(name)}` | ${escapeHtml(text.asText())} |" })
}

/** Round 2: every database setting that decides durability, per cell, as the database reported it. */
fun durabilitySettings(runs: List<RecordedRun>): Markdown {
    val rows = runs.roundRows("inserts.csv", validOnly = false)
    if (rows.isEmptyFrame()) return md("The inserts round did not run in the selected runs.")
    val settings = rows.rows().map { it["cell"] as String to (it["settings"]?.toString() ?: "") }.distinctBy { it.first }
    return md("| cell | settings (as the database reported them) |\n|---|---|\n" + settings.joinToString("\n") { (cell, text) -> "| `${escapeHtml(cell)}` | ${escapeHtml(text)} |" })
}

/** Round 1: each engine's saturation throughput as a share of plain HTML's, beside the published shares. */
fun templateShares(runs: List<RecordedRun>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("saturation.csv", "templates")
    if (rows.isEmptyFrame()) return runs.nothingToShow("saturation.csv", "templates")
    val plainPub = pub.publishedValue("plain", "throughput")
    val engines = rows.rows().map { it["variant"] as String }.distinct()
    val tp = estimates(rows, listOf("variant"), "throughput_rps")
    return md("| engine | throughput here (req/s) | share of plain here | published (req/s) | published share of plain |\n|---|---|---|---|---|\n" +
        engines.joinToString("\n") { e ->
            val share = ratioOf(rows, "variant", "throughput_rps", e, "plain")
            val p = runCatching { pub.publishedValue(e, "throughput") }.getOrNull()
            "| `$e` | ${tp.getValue(listOf(e)).text()} | ${share?.text() ?: "no plain cell"} | ${p?.let { formatNumber(it) } ?: "-"} | ${p?.let { formatNumber(it / plainPub) } ?: "-"} |"
        })
}

/** Round 2: inserts per second and latency per database and durability, with the row-count check. */
fun insertsTable(runs: List<RecordedRun>): Markdown {
    val rows = runs.roundRows("inserts.csv")
    if (rows.isEmptyFrame()) return runs.nothingToShow("inserts.csv", null)
    val keys = rows.rows().map { it["store"] as String to it["durability"] as String }.distinct()
    fun of(k: Pair<String, String>) = rows.filter { it["store"] == k.first && it["durability"] == k.second }
    fun mean(f: AnyFrame, col: String) = f.rows().mapNotNull { num(it[col]) }.takeIf { it.isNotEmpty() }?.average()
    return md("| database | durability | inserts/s | p50 (ms) | p99 (ms) | rows counted / acknowledged |\n|---|---|---|---|---|---|\n" +
        keys.joinToString("\n") { k ->
            val f = of(k)
            val counted = f.rows().sumOf { num(it["rows_counted"])?.toLong() ?: 0L }
            val acked = f.rows().sumOf { num(it["acknowledged"])?.toLong() ?: 0L }
            "| ${k.first} | ${k.second} | ${meanInterval(f.rows().map { num(it["tps"])!! }).text()} | ${mean(f, "latency_p50_ms")?.let { formatNumber(it) } ?: "-"} | " +
                "${mean(f, "latency_p99_ms")?.let { formatNumber(it) } ?: "-"} | ${String.format(java.util.Locale.ROOT, "%,d / %,d", counted, acked)} |"
        })
}

/**
 * Round 2: Cassandra over PostgreSQL at matched durability, and the original's own pairing (Cassandra at its
 * default, relaxed, against each PostgreSQL setting), beside the published ratio.
 */
fun durabilityRatios(runs: List<RecordedRun>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("inserts.csv")
    if (rows.isEmptyFrame()) return runs.nothingToShow("inserts.csv", null)
    val keyed = rows.add("setting") { "${it["store"]}/${it["durability"]}" }
    val published = pub.publishedValue("cassandra", "inserts") / pub.publishedValue("postgres", "inserts")
    val pairs = listOf(
        Triple("strict vs strict (matched)", "cassandra/strict", "postgres/strict"),
        Triple("relaxed vs relaxed (matched)", "cassandra/relaxed", "postgres/relaxed"),
        Triple("Cassandra default vs PostgreSQL default (unmatched)", "cassandra/relaxed", "postgres/strict"),
    )
    return md("| comparison | Cassandra / PostgreSQL inserts/s here | published (Cassandra default vs a \"tuned\" PostgreSQL) |\n|---|---|---|\n" +
        pairs.joinToString("\n") { (what, a, b) ->
            val r = ratioOf(keyed, "setting", "tps", a, b)
            "| $what | ${r?.let { it.text("×") + "; " + claimRatio(it) } ?: "not run"} | ${formatNumber(published)}× |"
        })
}

/** A ratio's claim: above or below 1 only when its interval excludes 1 (a Fieller interval from 3+ forks). */
private fun claimRatio(r: Estimate): String = when {
    r.range -> "too few forks to claim a difference"
    r.low > 1 -> "Cassandra faster"
    r.high < 1 -> "PostgreSQL faster"
    else -> "cannot be told apart"
}

/**
 * Round 3: throughput at saturation per variant as a ratio to sync (the original's 2.75× for async), separating style
 * from framework with the matched pair (webflux: Spring's reactive stack against sync's Spring MVC), and latency at
 * the one offered rate every variant ran at, below the slowest one's capacity (the original's latency claim was about
 * the same load; at saturation, mean = users / throughput only restates throughput).
 */
fun chainClaims(runs: List<RecordedRun>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("saturation.csv", "chain")
    if (rows.isEmptyFrame()) return runs.nothingToShow("saturation.csv", "chain")
    val publishedRatio = pub.publishedValue("async", "throughput") / pub.publishedValue("sync", "throughput")
    val variants = rows.rows().map { it["variant"] as String }.distinct()
    val ratios = variants.filter { it != "sync" }.joinToString("\n") { v ->
        "| `$v` / `sync` | ${ratioText(ratioOf(rows, "variant", "throughput_rps", v, "sync"))} | " +
            (if (v == "async") "${formatNumber(publishedRatio)}×" else if (v == "mixed") "no gain over sync (mixing did not help)" else "not in the original") + " |"
    }
    val compare = runs.roundRows("open.csv", "chain").let { if (it.isEmptyFrame()) it else it.filter { r -> r["purpose"] == "compare" } }
    val rate = if (compare.isEmptyFrame()) null else compare.rows().mapNotNull { num(it.opt("rate_rps")) }.distinct()
    val latency = if (compare.isEmptyFrame()) "No variant was measured at a common rate in the selected runs."
    else "At ${rate!!.joinToString(" / ") { formatNumber(it) }} req/s offered to every variant (half the slowest variant's capacity in each fork), " +
        "latency from the scheduled start, each fork one value:\n\n| variant | mean (ms) | p95 (ms) | p99 (ms) |\n|---|---|---|---|\n" +
        variants.joinToString("\n") { v ->
            fun e(col: String) = compare.filter { it["variant"] == v }.rows().mapNotNull { num(it[col]) }.takeIf { it.isNotEmpty() }?.let { meanInterval(it).text(" ms") } ?: "-"
            "| `$v` | ${e("mean_ms")} | ${e("p95_ms")} | ${e("p99_ms")} |"
        }
    return md("| throughput at saturation | here | published |\n|---|---|---|\n$ratios\n\n$latency")
}

/** The rows of [variants] in [frame] (keyed by `variant`), per variant, for the preconditions. */
private fun AnyFrame.byVariant(vararg variants: String): Map<String, List<DataRow<*>>> =
    variants.associate { v -> "`$v`" to rows().filter { it["variant"] == v } }

/** The processes a three-tier step accounts for: the app or its tiers, the database and the load driver. */
val THREE_TIER_PROCESSES = listOf("cpu_app_pct", "cpu_a_pct", "cpu_b_pct", "cpu_c_pct", "cpu_db_pct", "cpu_driver_pct")

/**
 * A throughput ratio at saturation between [a] and [b], judged by [answerOf] on the steps warmth allows ([onWarmSteps]:
 * the warm valid steps of [every], or every one where windows are too short to judge), with its checks: forks, the
 * machine's wall over those steps, and warmth. Returns the answer, the steps it rests on, and the checks.
 */
private fun saturationAnswer(every: AnyFrame, cores: Int, placedRuns: Set<String>, a: String, b: String, answerOf: (AnyFrame) -> Answer): Triple<Answer, AnyFrame, List<Precondition>> {
    val (answer, steps, warmth) = onWarmSteps(every.filter { it["variant"] in setOf(a, b) }, { "`${it["variant"]}` fork ${it["fork"]}" }, answerOf = answerOf)
    val sides = steps.byVariant(a, b)
    return Triple(answer, steps, listOf(enoughForks(sides.mapValues { it.value.size }), belowWallOf(sides, cores), nothingElseBusy(sides, THREE_TIER_PROCESSES, placedRuns), warmth))
}

/**
 * The original's claims, round by round, with this host's answer: holds, does not hold, or cannot tell here, and why.
 * Each answer follows from an interval over forks (3 or more; fewer give a range, which answers nothing), a ratio
 * judged against the original's own figure ([answerAgainstPublished]), and only where its preconditions hold: enough
 * forks, neither side at the machine's wall, warm servers (the answer the same with and without the steps a JIT flagged
 * cold), and for latency a driver on time at one offered load. Inserts show the original's pairing (Cassandra's
 * default against PostgreSQL's) first, then the matched durabilities.
 */
fun threeTierClaims(runs: List<RecordedRun>, pub: AnyFrame): List<Claim> {
    val claims = mutableListOf<Claim>()
    val cores = runs.firstOrNull()?.cores ?: 0
    // a round that ran always answers the original's claims, even when none of its steps can be judged (then: why not)
    if (!runs.roundRows("saturation.csv", "templates", validOnly = false).isEmptyFrame()) {
        val templates = runs.roundRows("saturation.csv", "templates")
        val every = runs.roundRows("saturation.csv", "templates", warmOnly = false)
        fun ratio(f: AnyFrame, a: String, b: String) = if (f.isEmptyFrame()) null else ratioOf(f, "variant", "throughput_rps", a, b)
        val unjudged = if (templates.isEmptyFrame()) runs.nothingToShow("saturation.csv", "templates").text else null
        val plain = pub.publishedValue("plain", "throughput")
        val jspPub = pub.publishedValue("jsp", "throughput") / plain
        val fmPub = pub.publishedValue("freemarker", "throughput") / plain
        val fmOverJspPub = pub.publishedValue("freemarker", "throughput") / pub.publishedValue("jsp", "throughput")
        // a size claim against its published figure; "almost free" is a bound: within a tenth of plain
        fun sized(a: String, b: String, published: Double) = { f: AnyFrame -> answerAgainstPublished(ratio(f, a, b), published) }
        val free = { f: AnyFrame -> answerAbove(ratio(f, "freemarker", "plain"), STABLE_SHARE) }
        fun add(original: String, a: String, b: String, answerOf: (AnyFrame) -> Answer, why: (Answer, Estimate?) -> String) {
            val (answer, steps, checks) = if (every.isEmptyFrame()) Triple(Answer.CANNOT_TELL, templates, emptyList())
                else saturationAnswer(every, cores, runs.placedRunIds, a, b, answerOf)
            val e = ratio(steps, a, b)
            claims += claim(original, "${mdText(a)} / ${mdText(b)} ${ratioText(e)}", answer,
                unjudged ?: if (e == null) "Not measured in the selected runs." else if (e.range) "${e.n} fork(s) give a range, not an interval: at least " +
                    "$MIN_REPETITIONS_FOR_CLAIM are needed to answer." else why(answer, e), checks)
        }
        add("JSP renders at about ${formatNumber(jspPub)}× plain HTML's throughput: templates cost", "jsp", "plain", sized("jsp", "plain", jspPub)) { answer, e ->
            publishedRuleWhy(answer, jspPub, e!!, "The 95% Fieller interval") }
        add("FreeMarker is almost free (${formatNumber(fmPub)}× plain)", "freemarker", "plain", free) { answer, e ->
            because(e, answer, "above ${formatNumber(STABLE_SHARE)}", "it straddles ${formatNumber(STABLE_SHARE)}") }
        add("FreeMarker is faster than JSP (${formatNumber(fmOverJspPub)}×)", "freemarker", "jsp", sized("freemarker", "jsp", fmOverJspPub)) { answer, e ->
            publishedRuleWhy(answer, fmOverJspPub, e!!, "The 95% Fieller interval") }
    }
    val inserts = runs.roundRows("inserts.csv")
    if (!inserts.isEmptyFrame()) {
        val keyed = inserts.add("setting") { "${it["store"]}/${it["durability"]}" }
        val published = pub.publishedValue("cassandra", "inserts") / pub.publishedValue("postgres", "inserts")
        // the original's pairing first: each database at its default (Cassandra's periodic commit log, PostgreSQL's
        // synchronous commit), then the kit's matched durabilities
        val pairings = listOf(Triple("the original's pairing, each at its default: Cassandra relaxed, PostgreSQL strict", "cassandra/relaxed", "postgres/strict"),
            Triple("matched, strict", "cassandra/strict", "postgres/strict"), Triple("matched, relaxed", "cassandra/relaxed", "postgres/relaxed"))
        for ((what, a, b) in pairings) {
            val r = ratioOf(keyed, "setting", "tps", a, b) ?: continue
            val sides = mapOf(a to keyed.rows().filter { it["setting"] == a }, b to keyed.rows().filter { it["setting"] == b })
            val answer = answerAgainstPublished(r, published)
            claims += claim("Cassandra inserts faster than PostgreSQL (${formatNumber(published)}×, against a \"tuned\" PostgreSQL): $what",
                "Cassandra / PostgreSQL ${ratioText(r)}", answer,
                (if (r.range) because(r, answer, "", "") else publishedRuleWhy(answer, published, r, "The 95% Fieller interval")) +
                    " One embedded node on the host's shared cores, beside its own writers, is not Cassandra's home ground, while " +
                    "PostgreSQL serves 16 writers from one process tree.",
                listOf(enoughForks(sides.mapValues { it.value.size }),
                    // the database's and the writers' CPU together: the machine is at least this busy
                    belowWall(sides.mapValues { (_, rs) -> rs.mapNotNull { row -> num(row.opt("cpu_db_pct"))?.let { it + (num(row.opt("cpu_writers_pct")) ?: 0.0) } } },
                        cores, what = "database and writers' CPU"),
                    warmupSettled(sides.mapValues { (_, rs) -> rs.map { it.opt("warmup_settled") as? Boolean } }, "inserts per second steady")))
        }
    }
    val chain = runs.roundRows("saturation.csv", "chain")
    if (!chain.isEmptyFrame() || !runs.roundRows("saturation.csv", "chain", warmOnly = false).isEmptyFrame()) {
        val every = runs.roundRows("saturation.csv", "chain", warmOnly = false)
        val publishedRatio = pub.publishedValue("async", "throughput") / pub.publishedValue("sync", "throughput")
        fun ratio(f: AnyFrame, a: String, b: String) = if (f.isEmptyFrame()) null else ratioOf(f, "variant", "throughput_rps", a, b)
        val answerOf = { f: AnyFrame -> answerAgainstPublished(ratio(f, "async", "sync"), publishedRatio) }
        val (answer, steps, checks) = saturationAnswer(every, cores, runs.placedRunIds, "async", "sync", answerOf)
        val asyncSync = ratio(steps, "async", "sync")
        val fluxSync = ratio(steps, "webflux", "sync")
        claims += claim("The async chain serves about ${formatNumber(publishedRatio)}× the sync chain's throughput at saturation",
            "async / sync ${ratioText(asyncSync)}" + (fluxSync?.let { "; the matched pair, webflux / sync, ${ratioText(it)}" } ?: "") +
                (if (steps !== every) "; with every valid step ${ratioText(ratio(every, "async", "sync"))}" else ""), answer,
            when {
                asyncSync == null -> "No sync or async step to judge."
                asyncSync.range -> because(asyncSync, answer, "", "")
                else -> publishedRuleWhy(answer, publishedRatio, asyncSync, "The 95% Fieller interval")
            } + (fluxSync?.let { " With Spring on both sides (webflux vs sync) the reactive style alone gives ${ratioText(it)}: the rest of async's lead is the framework's cost." } ?: ""),
            checks)
        val mixedOf = { f: AnyFrame -> answerBelow(ratio(f, "mixed", "async"), 1.0) }
        val (mixedAnswer, mixedSteps, mixedChecks) = saturationAnswer(every, cores, runs.placedRunIds, "mixed", "async", mixedOf)
        val mixed = ratio(mixedSteps, "mixed", "async")
        if (mixed != null) claims += claim("Mixing (one sync hop in an async chain) does not help: the whole chain must be async",
            "mixed / async ${ratioText(mixed)}", mixedAnswer, because(mixed, mixedAnswer, "below 1", "it reaches 1"), mixedChecks)
        // latency at one offered rate: each fork ran every variant at the rate it chose (half its slowest variant's
        // capacity), so the comparison is paired, fork by fork: async's p95 over sync's in the same fork, an interval
        // over the forks; each step valid, met or missed, with its driver on time
        val compare = runs.roundRows("open.csv", "chain", warmOnly = false).let { if (it.isEmptyFrame()) it else it.filter { r -> r["purpose"] == "compare" } }
        val used = if (compare.isEmptyFrame()) compare else compare.filter { it["variant"] in setOf("async", "sync") }
        // a fork is named by its run too where runs are pooled, so two runs' fork 1 never stand for each other
        val pooled = !used.isEmptyFrame() && used.rows().map { it.opt("run_id") }.distinct().size > 1
        fun forkOf(r: DataRow<*>) = "${if (pooled) "${r.opt("run_id")} " else ""}fork ${r["fork"]}"
        fun paired(f: AnyFrame): List<Double> = f.rows().groupBy(::forkOf).values.mapNotNull { rs ->
            val a = rs.firstOrNull { it["variant"] == "async" }?.let { num(it.opt("p95_ms")) }
            val s = rs.firstOrNull { it["variant"] == "sync" }?.let { num(it.opt("p95_ms")) }
            if (a == null || s == null || s <= 0) null else a / s
        }
        fun latencyOf(f: AnyFrame): Answer = paired(f).takeIf { it.isNotEmpty() }?.let { meanInterval(it) }.let { e ->
            when { e == null || e.range -> Answer.CANNOT_TELL; e.low > 1 -> Answer.HOLDS; e.high < 1 -> Answer.DOES_NOT_HOLD; else -> Answer.CANNOT_TELL }
        }
        if (!used.isEmptyFrame()) {
            val (latencyAnswer, steps, warmth) = onWarmSteps(used, ::forkOf, { r -> num(r.opt("requests"))?.let { q -> num(r.opt("achieved_rps"))?.takeIf { it > 0 }?.let { q / it } } }, ::latencyOf)
            val ratios = paired(steps)
            val e = ratios.takeIf { it.isNotEmpty() }?.let { meanInterval(it) }
            val slo = steps.rows().firstNotNullOfOrNull { num(it.opt("slo_ms")) }
            val pairedRows = steps.rows().groupBy(::forkOf).filterValues { rs -> rs.map { it["variant"] }.toSet() == setOf("async", "sync") }
            claims += claim("Async answers with worse latency than sync (the original: worse mean and p95; judged here on p95)",
                e?.let { "async p95 / sync p95, fork by fork at each fork's common rate: ${ratioText(it)}" } ?: "no fork ran both at a common rate",
                latencyAnswer, when {
                    e == null -> "Both variants must run at one offered rate in the same fork."
                    e.range -> "${e.n} fork(s) give a range, not an interval: at least $MIN_REPETITIONS_FOR_CLAIM are needed."
                    latencyAnswer == Answer.HOLDS -> "The whole interval lies above 1: async's p95 is the higher at the same offered load, below every variant's capacity."
                    latencyAnswer == Answer.DOES_NOT_HOLD -> "The whole interval lies below 1: async's p95 is the lower at the same offered load."
                    else -> "The interval reaches across 1."
                }, listOfNotNull(enoughForks(mapOf("forks with both" to ratios.size)),
                    slo?.let { driverOnTime(pairedRows.values.flatten().associate { "`${it["variant"]}` ${forkOf(it)}" to num(it.opt("lateness_p99_ms")) }, it) },
                    sameOfferedLoad(pairedRows.mapValues { (_, rs) -> rs.mapNotNull { num(it.opt("rate_rps")) } }), warmth))
        }
    }
    return claims
}

/** "Holds" when the whole interval lies below [threshold], "does not hold" when it lies at or above it. */
fun answerBelow(e: Estimate?, threshold: Double): Answer = when {
    e == null || e.range || e.low.isNaN() || e.high.isNaN() -> Answer.CANNOT_TELL
    e.high < threshold -> Answer.HOLDS
    e.low >= threshold -> Answer.DOES_NOT_HOLD
    else -> Answer.CANNOT_TELL
}

/** Why an interval answers a claim as it does: [holds] says what a holding interval shows, [unclear] what stands in the way. */
private fun because(e: Estimate?, answer: Answer, holds: String, unclear: String): String = when {
    e == null -> "Not measured in the selected runs."
    e.range -> "${e.n} fork(s) give a range, not an interval: at least $MIN_REPETITIONS_FOR_CLAIM are needed to answer."
    answer == Answer.HOLDS -> "The 95% Fieller interval over ${e.n} forks lies wholly $holds."
    answer == Answer.DOES_NOT_HOLD -> "The 95% Fieller interval over ${e.n} forks lies wholly on the other side."
    else -> "The 95% Fieller interval over ${e.n} forks: $unclear."
}

/**
 * Both HTTP rounds: capacity at the SLO per cell as a bracket over its forks ([capacityBracket]), CPU per process per
 * 1000 requests at the highest rate met, and the cost per million requests on [machine] as a bracket too: "at most"
 * where no wall was found.
 */
fun capacityAndCost(runs: List<RecordedRun>, machine: PricedMachine): Markdown {
    val cap = runs.roundRows("capacity.csv", validOnly = false)
    if (cap.isEmptyFrame()) return md("No capacity was measured in the selected runs (a quick run skips the open-model search: --open-rates none).")
    val open = runs.roundRows("open.csv")
    val cells = cap.rows().map { it["cell"] as String }.distinct()
    val processes = listOf("app", "a", "b", "c", "db")
    fun cpuAtBest(cell: String): String {
        if (open.isEmptyFrame()) return "-"
        val best = open.rows().filter { it["cell"] == cell && it["meets_slo"] == true }.maxByOrNull { num(it.opt("rate_rps"))!! } ?: return "-"
        val answered = num(best["rate_rps"])!!
        return processes.mapNotNull { p -> num(best["cpu_${p}_pct"])?.let { "$p ${formatNumber(it / 100 * 1000 / answered * 1000)}" } }.joinToString(", ")
    }
    val brackets = cap.capacityBrackets()
    return md(machine.description + "\n\n| cell | SLO on p99 (ms) | capacity | each fork (req/s) | CPU ms per 1000 requests at the highest rate met | cost per million requests |\n|---|---|---|---|---|---|\n" +
        cells.joinToString("\n") { cell ->
            val f = cap.filter { it["cell"] == cell }
            val c = brackets.getValue(cell)
            "| `$cell` | ${f.rows().firstNotNullOfOrNull { num(it.opt("slo_ms")) }?.let { formatNumber(it) } ?: "-"} | ${c.text} | ${c.perFork} | " +
                "${cpuAtBest(cell)} | ${costBracket(machine.pricePerHour, c)} |"
        })
}

/** The post's conclusion: one line per round that ran, each a ratio beside the published one, claimed only as far as the forks allow. */
fun threeTierConclusion(run: RecordedRun, runs: List<RecordedRun>, pub: AnyFrame): Markdown {
    val lines = mutableListOf<String>()
    val templates = runs.roundRows("saturation.csv", "templates")
    if (!templates.isEmptyFrame()) {
        val plainPub = pub.publishedValue("plain", "throughput")
        lines += "- **Templates:** share of plain HTML's throughput here: " + listOf("jsp", "freemarker").mapNotNull { e ->
            ratioOf(templates, "variant", "throughput_rps", e, "plain")?.let { "$e ${it.text("×")} (published ${formatNumber(pub.publishedValue(e, "throughput") / plainPub)}×)" }
        }.joinToString("; ") + "."
    }
    val inserts = runs.roundRows("inserts.csv")
    if (!inserts.isEmptyFrame()) {
        val keyed = inserts.add("setting") { "${it["store"]}/${it["durability"]}" }
        lines += "- **Inserts, Cassandra / PostgreSQL:** " + listOf("strict", "relaxed").mapNotNull { d ->
            ratioOf(keyed, "setting", "tps", "cassandra/$d", "postgres/$d")?.let { "$d vs $d ${it.text("×")}, ${claimRatio(it)}" }
        }.joinToString("; ") + " (published ${formatNumber(pub.publishedValue("cassandra", "inserts") / pub.publishedValue("postgres", "inserts"))}× against a \"tuned\" PostgreSQL)."
    }
    val chain = runs.roundRows("saturation.csv", "chain")
    if (!chain.isEmptyFrame()) {
        lines += "- **Chain, async / sync throughput at saturation:** " + (ratioOf(chain, "variant", "throughput_rps", "async", "sync")?.text("×") ?: "needs both variants") +
            " (published ${formatNumber(pub.publishedValue("async", "throughput") / pub.publishedValue("sync", "throughput"))}×)."
    }
    lines += if (run.quick) "- A quick run: short windows, one fork. Re-run at full scale (`./bench run three-tier`) before drawing conclusions."
        else "- One small host runs every tier, both databases and the load driver; re-run on your own hardware before drawing conclusions about yours."
    return md(lines.joinToString("\n"))
}

/** The common offered rates the chain's forks were compared at (`notes.chain.compareRates`), distinct, in req/s. */
val RecordedRun.chainCompareRates: List<Double>
    get() = noteAt("chain", "compareRates").properties().mapNotNull { (_, v) -> v.takeIf { it.isNumber }?.asDouble() }.distinct()

/**
 * Where the time went under the chain's claim: the async chain's tiers against the sync chain's at saturation (each
 * side's own A, B and C, named `chain-<variant>-<tier>/fork<k>` by the run; C's database is no JVM); when the runs kept
 * profiles (`--profile`).
 */
fun List<RecordedRun>.chainWhereTimeWent(): Markdown = whereTimeWent("chain/async", "chain/sync",
    { it.startsWith("chain-async-") }, { it.startsWith("chain-sync-") }, steps = { it.endsWith("/saturation") })
