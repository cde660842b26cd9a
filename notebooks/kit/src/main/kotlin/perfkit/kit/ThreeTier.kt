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
 * one [round] when given, and only valid rows unless [validOnly] is false. Empty when no run has the table.
 */
fun List<Run>.roundRows(path: String, round: String? = null, validOnly: Boolean = true): AnyFrame {
    val having = filter { r -> r.files.any { it.path == path } }
    if (having.isEmpty()) return dataFrameOf(emptyList<org.jetbrains.kotlinx.dataframe.AnyCol>())
    return having.table(path).filter { (round == null || it["round"] == round) && (!validOnly || it["valid"] == true) }
}

private fun AnyFrame.isEmptyFrame() = rowsCount() == 0 || columnNames().isEmpty()

/** What the newest run can and cannot say: a quick run, invalid steps, the run marked invalid. */
fun threeTierCaveats(run: Run, runs: List<Run>): Markdown {
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
fun templatePageCheck(runs: List<Run>): Markdown {
    val t = runs.sortedBy { it.id }.map { it.manifest.path("notes").path("templates") }.lastOrNull { !it.isMissingNode }
        ?: return md("The templates round did not run in the selected runs.")
    val pages = t.path("pages")
    return md(escapeHtml(t.path("page").asText("")) + ".\n\n| engine | bytes | same as plain, whitespace collapsed | SHA-256 of the collapsed page |\n|---|---|---|---|\n" +
        pages.properties().joinToString("\n") { (engine, p) ->
            "| `${escapeHtml(engine)}` | ${p.path("bytes").asLong()} | ${if (p.path("sameAsPlain").asBoolean()) "yes" else "**no**"} | `${escapeHtml(p.path("sha256Collapsed").asText().take(16))}…` |"
        })
}

/** Round 3: how each chain variant is built, as the study recorded it. */
fun chainStacks(runs: List<Run>): Markdown {
    val v = runs.sortedBy { it.id }.map { it.manifest.path("notes").path("chain").path("variants") }.lastOrNull { !it.isMissingNode }
        ?: return md("The chain round did not run in the selected runs.")
    return md("| variant | how it is built |\n|---|---|\n" + v.properties().joinToString("\n") { (name, text) -> "| `${escapeHtml(name)}` | ${escapeHtml(text.asText())} |" })
}

/** Round 2: every database setting that decides durability, per cell, as the database reported it. */
fun durabilitySettings(runs: List<Run>): Markdown {
    val rows = runs.roundRows("inserts.csv", validOnly = false)
    if (rows.isEmptyFrame()) return md("The inserts round did not run in the selected runs.")
    val settings = rows.rows().map { it["cell"] as String to (it["settings"]?.toString() ?: "") }.distinctBy { it.first }
    return md("| cell | settings (as the database reported them) |\n|---|---|\n" + settings.joinToString("\n") { (cell, text) -> "| `${escapeHtml(cell)}` | ${escapeHtml(text)} |" })
}

/** Round 1: each engine's saturation throughput as a share of plain HTML's, beside the published shares. */
fun templateShares(runs: List<Run>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("saturation.csv", "templates")
    if (rows.isEmptyFrame()) return md("The templates round did not run in the selected runs.")
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
fun insertsTable(runs: List<Run>): Markdown {
    val rows = runs.roundRows("inserts.csv")
    if (rows.isEmptyFrame()) return md("The inserts round did not run in the selected runs.")
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
fun durabilityRatios(runs: List<Run>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("inserts.csv")
    if (rows.isEmptyFrame()) return md("The inserts round did not run in the selected runs.")
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
 * Round 3: async over sync throughput at saturation (published 2.75×), whether async's mean and p95 are worse
 * (the original's finding), and whether the mixed chain helps.
 */
fun chainClaims(runs: List<Run>, pub: AnyFrame): Markdown {
    val rows = runs.roundRows("saturation.csv", "chain")
    if (rows.isEmptyFrame()) return md("The chain round did not run in the selected runs.")
    val publishedRatio = pub.publishedValue("async", "throughput") / pub.publishedValue("sync", "throughput")
    val tp = ratioOf(rows, "variant", "throughput_rps", "async", "sync")
    val mixed = ratioOf(rows, "variant", "throughput_rps", "mixed", "async")
    fun est(v: String, col: String) = rows.filter { it["variant"] == v }.rows().mapNotNull { num(it[col]) }.takeIf { it.isNotEmpty() }?.let { meanInterval(it) }
    // describeDifference calls the larger value "faster": negate latencies, so the lower one reads as faster
    fun neg(e: Estimate) = Estimate(e.n, -e.mean, -e.high, -e.low, e.sd)
    fun latency(col: String, label: String): String {
        val a = est("async", col) ?: return "- $label: async not run."
        val s = est("sync", col) ?: return "- $label: sync not run."
        return "- **$label at saturation:** async ${a.text(" ms")}, sync ${s.text(" ms")}: " + describeDifference("async", neg(a), "sync", neg(s)) + "."
    }
    return md(listOf(
        "- **Throughput at saturation, async / sync:** " + (tp?.let { it.text("×") + " here, against ${formatNumber(publishedRatio)}× published." } ?: "needs both variants."),
        latency("mean_ms", "Mean response time"),
        latency("p95_ms", "p95 response time"),
        "- **Mixed (async with a sync B) / async:** " + (mixed?.let { it.text("×") + " (published: mixing did not help)." } ?: "needs both variants."),
    ).joinToString("\n"))
}

/**
 * Both HTTP rounds: capacity at the SLO per cell (mean over forks where they agree, see [capacityOverForks]), CPU per process per 1000 requests at the
 * highest rate met, and the cost per million requests on [machine].
 */
fun capacityAndCost(runs: List<Run>, machine: PricedMachine): Markdown {
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
    return md(machine.description + "\n\n| cell | SLO on p99 (ms) | capacity (req/s) | how the search ended | CPU ms per 1000 requests at the highest rate met | cost per million requests |\n|---|---|---|---|---|---|\n" +
        cells.joinToString("\n") { cell ->
            val f = cap.filter { it["cell"] == cell }
            val c = capacityOverForks(f.rows().map { ForkCapacity(num(it["fork"])!!.toInt(), num(it["capacity_rps"]), it["status"].toString()) }, "req/s")
            val cost = c.mean?.let { "$" + formatNumber(costPerMillion(machine.pricePerHour, it), 3) } ?: "-"
            "| `$cell` | ${f.rows().firstNotNullOfOrNull { num(it["slo_ms"]) }?.let { formatNumber(it) } ?: "-"} | ${c.text} | " +
                "${escapeHtml(f.rows().map { it["status"].toString() }.distinct().joinToString())} | ${cpuAtBest(cell)} | $cost |"
        })
}

/** The post's conclusion: one line per round that ran, each a ratio beside the published one, claimed only as far as the forks allow. */
fun threeTierConclusion(run: Run, runs: List<Run>, pub: AnyFrame): Markdown {
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
