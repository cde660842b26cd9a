package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.add
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows

// The three-tier post's tables, from the run tables of data/README.md (saturation.csv, open.csv, capacity.csv,
// inserts.csv). Each returns Markdown that states only what the forks support, or says that a round did not run.

private fun num(v: Any?): Double? = (v as? Number)?.toDouble()

private fun Estimate.text(unit: String = ""): String =
    formatNumber(mean) + unit + if (n > 1) " (${interval} ${formatNumber(low)}..${formatNumber(high)})" else " (1 fork)"

/**
 * Rows of the run table [path], stacked over the runs that have it (a round that did not run leaves no file), of
 * one [round] when given, and only valid rows measured on warm servers (the step's `warm` column: every server's JIT
 * under 50 ms/s) unless [validOnly] is false. Empty when no run has the table.
 */
fun List<RecordedRun>.roundRows(path: String, round: String? = null, validOnly: Boolean = true): AnyFrame {
    val having = filter { r -> r.has(path) }
    if (having.isEmpty()) return dataFrameOf(emptyList<org.jetbrains.kotlinx.dataframe.AnyCol>())
    val t = having.table(path)
    val hasWarm = "warm" in t.columnNames()
    return t.filter { (round == null || it["round"] == round) && (!validOnly || (it["valid"] == true && (!hasWarm || it["warm"] != false))) }
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
    val rate = if (compare.isEmptyFrame()) null else compare.rows().mapNotNull { num(it["rate_rps"]) }.distinct()
    val latency = if (compare.isEmptyFrame()) "No variant was measured at a common rate in the selected runs."
    else "At ${rate!!.joinToString(" / ") { formatNumber(it) }} req/s offered to every variant (half the slowest variant's capacity in each fork), " +
        "latency from the scheduled start, each fork one value:\n\n| variant | mean (ms) | p95 (ms) | p99 (ms) |\n|---|---|---|---|\n" +
        variants.joinToString("\n") { v ->
            fun e(col: String) = compare.filter { it["variant"] == v }.rows().mapNotNull { num(it[col]) }.takeIf { it.isNotEmpty() }?.let { meanInterval(it).text(" ms") } ?: "-"
            "| `$v` | ${e("mean_ms")} | ${e("p95_ms")} | ${e("p99_ms")} |"
        }
    return md("| throughput at saturation | here | published |\n|---|---|---|\n$ratios\n\n$latency")
}

/**
 * The original's claims, round by round, with this host's answer: holds, does not hold, or cannot tell here, and why.
 * Each answer follows from an interval over forks (3 or more; fewer give a range, which answers nothing).
 */
fun threeTierClaims(runs: List<RecordedRun>, pub: AnyFrame): List<Claim> {
    val claims = mutableListOf<Claim>()
    // a round that ran always answers the original's claims, even when none of its steps can be judged (then: why not)
    if (!runs.roundRows("saturation.csv", "templates", validOnly = false).isEmptyFrame()) {
        val templates = runs.roundRows("saturation.csv", "templates")
        fun ratio(a: String, b: String) = if (templates.isEmptyFrame()) null else ratioOf(templates, "variant", "throughput_rps", a, b)
        val unjudged = if (templates.isEmptyFrame()) runs.nothingToShow("saturation.csv", "templates").text else null
        fun why(e: Estimate?, answer: Answer, holds: String, unclear: String) = unjudged ?: because(e, answer, holds, unclear)
        val plain = pub.publishedValue("plain", "throughput")
        val jsp = ratio("jsp", "plain")
        val fm = ratio("freemarker", "plain")
        val fmOverJsp = ratio("freemarker", "jsp")
        claims += Claim("JSP renders at about ${formatNumber(pub.publishedValue("jsp", "throughput") / plain)}× plain HTML's throughput: templates cost",
            "JSP / plain ${ratioText(jsp)}", answerBelow(jsp, 1.0), why(jsp, answerBelow(jsp, 1.0), "below 1", "it reaches 1"))
        claims += Claim("FreeMarker is almost free (${formatNumber(pub.publishedValue("freemarker", "throughput") / plain)}× plain)",
            "FreeMarker / plain ${ratioText(fm)}", answerAbove(fm, 0.9), why(fm, answerAbove(fm, 0.9), "above 0.9", "it straddles 0.9"))
        claims += Claim("FreeMarker is faster than JSP", "FreeMarker / JSP ${ratioText(fmOverJsp)}", answerAbove(fmOverJsp, 1.0),
            why(fmOverJsp, answerAbove(fmOverJsp, 1.0), "above 1", "it includes 1"))
    }
    val inserts = runs.roundRows("inserts.csv")
    if (!inserts.isEmptyFrame()) {
        val keyed = inserts.add("setting") { "${it["store"]}/${it["durability"]}" }
        val published = pub.publishedValue("cassandra", "inserts") / pub.publishedValue("postgres", "inserts")
        for (d in listOf("strict", "relaxed")) {
            val r = ratioOf(keyed, "setting", "tps", "cassandra/$d", "postgres/$d") ?: continue
            claims += Claim("Cassandra inserts faster than PostgreSQL (${formatNumber(published)}×, against a \"tuned\" PostgreSQL)",
                "Cassandra / PostgreSQL at $d durability ${ratioText(r)}", answerAbove(r, 1.0),
                because(r, answerAbove(r, 1.0), "above 1", "it includes 1") + " One embedded node on the host's shared cores, beside its own writers, is not " +
                    "Cassandra's home ground, while PostgreSQL serves 16 writers from one process tree.")
        }
    }
    val chain = runs.roundRows("saturation.csv", "chain")
    if (!chain.isEmptyFrame()) {
        val asyncSync = ratioOf(chain, "variant", "throughput_rps", "async", "sync")
        val fluxSync = ratioOf(chain, "variant", "throughput_rps", "webflux", "sync")
        // sync's steps may all have run while a tier recompiled: say so, with the unjudged ratio for information only
        val coldWhy = if (asyncSync != null) null else runs.roundRows("saturation.csv", "chain", validOnly = false)
            .let { all -> if (all.isEmptyFrame() || "warm" !in all.columnNames()) null else all.filter { it["valid"] == true } }
            ?.let { valid ->
                val cold = valid.filter { it["variant"] == "sync" && it["warm"] == false }.rowsCount()
                if (cold == 0) null else "$cold sync saturation step(s) ran while a tier's JIT compiled above " +
                    "50 ms/s, after a settled warm-up: no claim rests on them. Unjudged, async / sync read " +
                    "${ratioText(ratioOf(valid, "variant", "throughput_rps", "async", "sync"))}."
            }
        claims += Claim("The async chain serves about ${formatNumber(pub.publishedValue("async", "throughput") / pub.publishedValue("sync", "throughput"))}× " +
            "the sync chain's throughput at saturation", "async / sync ${ratioText(asyncSync)}" + (fluxSync?.let { "; the matched pair, webflux / sync, ${ratioText(it)}" } ?: ""),
            answerAbove(asyncSync, 1.0), (coldWhy ?: because(asyncSync, answerAbove(asyncSync, 1.0), "above 1", "it includes 1")) +
                (fluxSync?.let { " With Spring on both sides (webflux vs sync) the reactive style alone gives ${ratioText(it)}: the rest of async's lead is the framework's cost." } ?: ""))
        val mixed = ratioOf(chain, "variant", "throughput_rps", "mixed", "async")
        if (mixed != null) claims += Claim("Mixing (one sync hop in an async chain) does not help: the whole chain must be async",
            "mixed / async ${ratioText(mixed)}", answerBelow(mixed, 1.0), because(mixed, answerBelow(mixed, 1.0), "below 1", "it reaches 1"))
        val compare = runs.roundRows("open.csv", "chain").let { if (it.isEmptyFrame()) it else it.filter { r -> r["purpose"] == "compare" } }
        fun p95(v: String) = if (compare.isEmptyFrame()) null else compare.filter { it["variant"] == v }.rows().mapNotNull { num(it["p95_ms"]) }.takeIf { it.isNotEmpty() }?.let { meanInterval(it) }
        val a = p95("async"); val s = p95("sync")
        val answer = when {
            a == null || s == null || a.range || s.range -> Answer.CANNOT_TELL
            differs(a, s) && a.mean > s.mean -> Answer.HOLDS
            differs(a, s) && a.mean < s.mean -> Answer.DOES_NOT_HOLD
            else -> Answer.CANNOT_TELL
        }
        claims += Claim("Async answers with worse latency than sync (the original: worse mean and p95; judged here on p95)",
            if (a != null && s != null) "p95 at the common rate: async ${a.text(" ms")}, sync ${s.text(" ms")}" else "no common-rate step",
            answer, when {
                a == null || s == null -> "Both variants must run at one offered rate."
                a.range || s.range -> "Fewer than 3 forks give a range, not an interval."
                answer == Answer.CANNOT_TELL -> welchTest(a, s).p.let { p ->
                    if (p.isNaN()) "Every fork gave the same value on each side: there is no spread to test a difference against."
                    else "A Welch t-test over forks cannot tell them apart (p = ${"%.2f".format(p)})."
                }
                else -> "At the same offered load, below every variant's capacity (Welch t-test over forks, p = ${"%.3f".format(welchTest(a, s).p)})."
            })
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
        val best = open.rows().filter { it["cell"] == cell && it["meets_slo"] == true }.maxByOrNull { num(it["rate_rps"])!! } ?: return "-"
        val answered = num(best["rate_rps"])!!
        return processes.mapNotNull { p -> num(best["cpu_${p}_pct"])?.let { "$p ${formatNumber(it / 100 * 1000 / answered * 1000)}" } }.joinToString(", ")
    }
    val brackets = cap.capacityBrackets()
    return md(machine.description + "\n\n| cell | SLO on p99 (ms) | capacity | each fork (req/s) | CPU ms per 1000 requests at the highest rate met | cost per million requests |\n|---|---|---|---|---|---|\n" +
        cells.joinToString("\n") { cell ->
            val f = cap.filter { it["cell"] == cell }
            val c = brackets.getValue(cell)
            "| `$cell` | ${f.rows().firstNotNullOfOrNull { num(it["slo_ms"]) }?.let { formatNumber(it) } ?: "-"} | ${c.text} | ${c.perFork} | " +
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
