package perfkit.kit

import com.fasterxml.jackson.databind.JsonNode
import org.HdrHistogram.Histogram
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn
import java.nio.file.Path

// The compare notebook: two or more groups of runs of one study, side by side. Groups are chosen by what
// the manifests say (tag, host, JDK, a parameter, a run id or a folder), never by file names.

/** A comparison request, e.g. `queues: tag=jdk17 vs tag=jdk25`; `queues` alone (or `queues: auto`) picks the two newest labels. */
data class CompareSpec(val study: String, val groups: List<String>) {
    val auto: Boolean get() = groups == listOf("auto")
}

/**
 * Parses `<study>: <group> vs <group> [vs <group>...]`. A group is one or more terms joined by `&`: `tag=X`,
 * `host=X`, `jdk=X` (the JVM that ran the forks; `17` matches 17.0.15), `mode=X`, `run=<id>`, `folder=<path>`,
 * any run parameter as `<name>=X` (e.g. `fork-jvm-args=-XX:+UseSerialGC`), or a bare run id or folder.
 */
fun parseCompareSpec(text: String): CompareSpec {
    val study = text.substringBefore(":").trim()
    require(study.matches(Regex("[a-z][a-z0-9-]*"))) { "compare: '$text' does not start with a study name (e.g. queues: tag=a vs tag=b)" }
    val rest = if (":" in text) text.substringAfter(":").trim() else ""
    if (rest.isEmpty() || rest == "auto") return CompareSpec(study, listOf("auto"))
    val groups = rest.split(Regex("\\s+vs\\s+")).map { it.trim() }
    require(groups.size >= 2 && groups.all { it.isNotEmpty() }) { "compare: '$rest' needs two or more groups joined by ' vs '" }
    require(groups.distinct().size == groups.size) { "compare: the same group is named twice in '$rest'" }
    return CompareSpec(study, groups)
}

/** One side of a comparison: its [name] (the selector, or the label in auto mode) and its runs. */
/** [skipped]: the runs the comparison left out as unreadable or damaged, from its pool and its own look-ups ([FoundRuns.skipped]). */
class Group(val name: String, val runs: List<RecordedRun>, val selector: String = name, val skipped: List<String> = emptyList())

/** The JVM that ran the forks (`jvm.fork`, written with --java), else the run's own. */
val RecordedRun.forkJdk: String get() = manifest.path("jvm").path("fork").path("version").asText(null) ?: jdk

/**
 * The user@host a run measured when that is not the run's host: the target of `--on`, or where an older kit's run
 * was brought home from (`collectedFrom`); null when made here.
 */
val RecordedRun.collectedFrom: String? get() = on ?: manifest.path("collectedFrom").takeIf { it.isTextual }?.asText()

private fun term(run: RecordedRun, key: String, value: String): Boolean = when (key) {
    "tag" -> run.tag == value
    "host" -> run.hostname == value || run.collectedFrom == value || run.collectedFrom?.substringAfter("@") == value
    "jdk" -> run.forkJdk == value || run.forkJdk.startsWith("$value.") || run.forkJdk.startsWith("$value+")
    "mode" -> run.mode == value
    "run" -> run.id == value
    "label" -> run.label == value
    else -> run.param(key) == value
}

/**
 * The runs of [pool] that a group selector picks; `run=`, `folder=` and bare ids or paths are looked up with
 * [findRuns] (so they may lie outside the pool). Fails with one line when nothing matches.
 */
fun selectGroup(study: String, pool: List<RecordedRun>, selector: String, root: Path = dataRoot()): FoundRuns {
    val terms = selector.split("&").map { it.trim() }.filter { it.isNotEmpty() }
    require(terms.isNotEmpty()) { "compare: an empty group" }
    val skipped = mutableListOf<String>()
    val picked = terms.fold(pool) { runs, t ->
        val key = t.substringBefore("=", ""); val value = t.substringAfter("=")
        // run ids, folders and keywords are looked up like a notebook's selection; later terms narrow them
        val lookup = when {
            key == "folder" -> value
            key == "run" || key.isEmpty() -> value.takeIf { v -> pool.none { it.id == v } }
            else -> null
        }
        when {
            lookup != null -> findRuns(study, lookup, root).let { found ->
                skipped += found.skipped
                if (runs === pool) found else runs.filter { r -> found.any { it.id == r.id } }
            }
            key == "run" || key.isEmpty() -> runs.filter { it.id == value }
            else -> runs.filter { term(it, key, value) }
        }
    }
    if (picked.isEmpty()) throw RunFormatException("compare: no $study run matches '$selector' (runs here: ${pool.map { it.label }.distinct().joinToString(" | ")})")
    return FoundRuns(picked.sortedBy { it.id }, skipped)
}

/**
 * The groups of a comparison. The pool is every complete run of the study ([findRuns] `all`), or what
 * [selection] names when it is not `latest` (e.g. `reference`, a folder). Auto mode: the two newest labels
 * among runs of the newest run's mode (throughput beside fixed-rate compares nothing), else of any mode.
 */
fun compareGroups(spec: CompareSpec, selection: String = "latest", root: Path = dataRoot()): List<Group> {
    val pool = findRuns(spec.study, if (selection == "latest") "all" else selection, root)
    if (!spec.auto) return spec.groups.map { selector ->
        selectGroup(spec.study, pool, selector, root).let { Group(selector, it, skipped = (pool.skipped + it.skipped).distinct()) }
    }
    val sameMode = pool.filter { it.mode == pool.maxBy { r -> r.id }.mode }
    val candidates = if (sameMode.map { it.label }.distinct().size >= 2) sameMode else pool
    val byLabel = candidates.groupBy { it.label }.entries.sortedBy { (_, runs) -> runs.maxOf { it.id } }
    return byLabel.takeLast(2).map { (label, runs) -> Group(label, runs.sortedBy { it.id }, "label=$label", pool.skipped) }
}

// ---- fingerprint ----------------------------------------------------------------------------------------

/** Parameters that are bookkeeping, not a factor: where the run was written and its label. */
private val NOT_A_FACTOR = setOf("out", "tag")

/**
 * The harness points every child JVM's temp folder and GC log into its own run: flags that differ per run, never a
 * factor. (The GC log's path may be quoted, when the run's folder holds a character -Xlog reads as syntax.)
 */
private val RUN_SCRATCH_FLAG = Regex("-Djava\\.io\\.tmpdir=.*/scratch/tmp|-Xlog:gc:file=\"?.*/logs/gc/[^:]*\"?:time,uptime,level,tags:filecount=0")

/**
 * The family a fingerprint field belongs to: fields of one family change together (a new host changes its CPU and
 * kernel). Each field of the manifest's own is declared with its family where [fingerprint] makes it; a parameter is
 * its own factor.
 */
fun factorOf(field: String): String = MANIFEST_FIELDS[field] ?: field

/** The fingerprint's fields that come from the manifest rather than the parameters, each with its factor family. */
private val MANIFEST_FIELDS: Map<String, String> = linkedMapOf(
    "host name" to "host", "host CPU" to "host", "host cores" to "host", "host memory GiB" to "host", "host CPU limit" to "host",
    "host OS" to "host", "host kernel" to "host", "JVM (run)" to "JVM", "JVM (forks)" to "JVM", "java" to "JVM",
    "fork flags" to "JVM flags", "fork-jvm-args" to "JVM flags", "kit commit" to "kit", "mode" to "mode", "quick" to "quick",
    // the measurement fields are the parameters of the same name, so a group chosen by `warmup=` names this factor
    "warm-up s" to "warmup", "measure s" to "measure", "repetitions" to "forks",
)

/**
 * A kernel's release without its build string: "6.18.44-fc-v669" is 6.18.44. A rebuilt kernel of the same release
 * is the same host for a comparison; a new release is not.
 */
internal fun kernelRelease(kernel: String): String = Regex("""^\d+(\.\d+)*""").find(kernel)?.value ?: kernel

/** What a comparison should hold equal, per run: host, JVMs, flags, kit, mode and scale, and every parameter. */
fun RecordedRun.fingerprint(): Map<String, String> {
    val h = measuredHost; val j = manifest.path("jvm"); val m = manifest.path("measurement")
    fun text(n: JsonNode) = if (n.isMissingNode || n.isNull) "" else if (n.isArray) n.joinToString(" ") { it.asText() } else n.asText()
    val out = linkedMapOf( // the fields of MANIFEST_FIELDS, in its order
        "host name" to hostname, "host CPU" to text(h.path("cpuModel")), "host cores" to text(h.path("logicalCores")),
        "host memory GiB" to (h.path("memoryBytes").asDouble() / (1L shl 30)).let { "%.1f".format(java.util.Locale.ROOT, it) },
        "host CPU limit" to text(h.path("containerCpuLimit")), "host OS" to text(h.path("os")), "host kernel" to kernelRelease(text(h.path("kernel"))),
        "JVM (run)" to "${text(j.path("vendor"))} ${text(j.path("version"))}".trim(),
        "JVM (forks)" to j.path("fork").let { f -> if (f.isObject) "${text(f.path("vendor"))} ${text(f.path("version"))} ${text(f.path("vmName"))}".trim() else "same as run" },
        "fork flags" to j.path("forkInputArguments").map { it.asText() }.filterNot { RUN_SCRATCH_FLAG.matches(it) }.joinToString(" "),
        "kit commit" to (commit.take(10).ifEmpty { "unknown" } + if (dirty == true) " (dirty)" else ""),
        "mode" to mode, "quick" to quick.toString(),
        "warm-up s" to text(m.path("warmupSeconds")), "measure s" to text(m.path("measureSeconds")), "repetitions" to text(m.path("repetitions")),
    )
    check(out.keys.all { it in MANIFEST_FIELDS }) { "a fingerprint field without its factor family" }
    for ((k, v) in (ADDED_PARAM_DEFAULTS + params).toSortedMap()) {
        if (k in NOT_A_FACTOR || k in out) continue
        // a parameter the measurement fields above already show: one difference, not two rows that double-count it
        val shown = SHOWN_AS[k]?.let { out[it]?.toDoubleOrNull() }
        if (shown != null && shown == v.toDoubleOrNull()) continue
        out[k] = v
    }
    return out
}

/** Parameters whose value the manifest's measurement block records too, by the fingerprint field that shows it. */
private val SHOWN_AS = mapOf("warmup" to "warm-up s", "measure" to "measure s", "forks" to "repetitions")

/** The fields that differ between groups (or within one), with each group's value. */
class FingerprintDiff(val groups: List<Group>, val rows: List<Pair<String, List<String>>>, val differing: List<String>, val same: Int) {
    /** Factor families that differ between the groups. */
    val factors: List<String> get() = differing.map { factorOf(it) }.distinct()

    /** The factors the selectors name: `host=` means the host family, `jdk=` the JVM, a parameter itself. */
    val intended: Set<String> get() = groups.flatMap { g ->
        g.selector.split("&").map { it.substringBefore("=", "").trim() }.mapNotNull { key ->
            when (key) { "host" -> "host"; "jdk", "java" -> "JVM"; "fork-jvm-args" -> "JVM flags"; "repetitions" -> "forks"
                "", "tag", "run", "folder", "label", "mode" -> null; else -> key }
        }
    }.toSet()

    /** Factors beyond the intended one: every differing family but one when the selectors name none (tags, ids). */
    val unintended: List<String> get() = if (intended.isNotEmpty()) factors - intended else if (factors.size > 1) factors else emptyList()

    fun table(): AnyFrame = dataFrameOf(listOf(rows.map { it.first }.toColumn("field")) +
        groups.mapIndexed { i, g -> rows.map { it.second[i] }.toColumn(g.name) })

    fun warning(): Markdown = md(when {
        differing.isEmpty() -> "The groups match in all ${same} fields: whatever differs is not in the manifests (the tag says what it should be)."
        unintended.isEmpty() -> "Only **${escapeHtml(factors.joinToString())}** differs between the groups (${same} other fields match): a clean comparison."
        else -> "**Warning: more than one factor differs:** ${escapeHtml(unintended.joinToString())}" +
            (if (intended.isNotEmpty()) " besides the intended ${escapeHtml(intended.joinToString())}" else "") +
            ". A difference below cannot be put down to one of them alone."
    })
}

fun fingerprintDiff(groups: List<Group>): FingerprintDiff {
    val prints = groups.map { g -> g.runs.map { it.fingerprint() } }
    val fields = prints.flatten().flatMap { it.keys }.distinct()
    fun valueOf(runs: List<Map<String, String>>, f: String): String =
        runs.map { it[f] ?: "-" }.distinct().let { if (it.size == 1) it[0] else "varies: " + it.joinToString(" | ") }
    val rows = mutableListOf<Pair<String, List<String>>>(); val differing = mutableListOf<String>(); var same = 0
    for (f in fields) {
        val perGroup = prints.map { valueOf(it, f) }
        val across = perGroup.distinct().size > 1
        if (across) differing += f
        if (across || perGroup.any { it.startsWith("varies: ") }) rows += f to perGroup else same++
    }
    return FingerprintDiff(groups, rows, differing, same)
}

// ---- the measured value --------------------------------------------------------------------------------

/**
 * What a study's comparison reads: one row per cell and repetition in [table], the number in [value]; [keys] are
 * the columns that name a cell (a closed sweep's cell is its stack and N). [table] [FORK_P99] reads latency
 * logs instead: the p99 of each fork's corrected histogram.
 */
data class CompareMetric(val table: String, val value: String, val unit: String, val higherIsBetter: Boolean = true,
                         val keys: List<String> = listOf("cell"))

/** The metric read from latency logs, not a table: each fork's p99 from the intended start. */
const val FORK_P99 = "latency logs"

/**
 * One of a study's compare headlines, as its table declarations say (`compare`): [metric] applies to a run of [mode]
 * (any when null) whose [hasRows] table has rows (any when null). The first rule a run meets is its headline.
 */
data class CompareRule(val mode: String?, val hasRows: String?, val metric: CompareMetric)

/**
 * The number that answers each study's question, for the run's mode (throughput at saturation, latency at a fixed
 * rate, capacity at the SLO), as the study declares it in `data/schema/tables/<study>.json` (`compare`): a fixed-rate
 * run's achieved rate is its target, so it is never the headline. A study that declares none: the first table with a
 * `*_per_s` rate column (not a JIT or GC time per second).
 */
fun compareMetric(study: String, run: RecordedRun, root: Path = dataRoot()): CompareMetric =
    TableDeclarations.of(study, root).compare.firstOrNull { r -> (r.mode == null || r.mode == run.mode) && (r.hasRows == null || run.hasRows(r.hasRows)) }?.metric
        ?: run.filesOfKind("table").firstNotNullOfOrNull { t ->
            run.table(t).columnNames().firstOrNull { it.endsWith("_per_s") && !it.endsWith("ms_per_s") }?.let { CompareMetric(t, it, it.replace('_', ' ')) }
        } ?: throw RunFormatException("compare: no table with a *_per_s column in $study run ${run.id}")

private fun RecordedRun.hasRows(path: String) = has(path) && table(path).rowsCount() > 0

/** The cell a row belongs to: the metric's key columns (schema 2), else what older runs had in its place. */
private fun cellOf(row: org.jetbrains.kotlinx.dataframe.DataRow<*>, names: List<String>, keys: List<String>): String = when {
    keys.size > 1 && keys.all { it in names } -> keys.joinToString(" · ") { k -> if (k == "cell") row[k].toString() else "$k ${row[k]}" }
    "cell" in names -> row["cell"].toString()
    "variant" in names -> row["variant"].toString()
    "system" in names -> row["system"].toString()
    "benchmark" in names -> row["benchmark"].toString()
    "job_type" in names -> listOf("job_type", "instances", "acquire_size", "lock").filter { it in names }.joinToString("/") { row[it].toString() }
    else -> "all"
}

/** One row per group, run, cell and repetition: group, run_id, cell, value (runs without the table are skipped). */
fun compareValues(groups: List<Group>, metric: CompareMetric): AnyFrame {
    val rows = groups.flatMap { g ->
        if (metric.table == FORK_P99) g.runs.flatMap { run -> forkP99s(run).map { (cell, p99) -> listOf(g.name, run.id, cell, p99) } }
        else g.runs.filter { r -> r.has(metric.table) }.flatMap { run ->
            val t = run.table(metric.table); val names = t.columnNames()
            if (metric.value !in names) emptyList() else t.rows().mapNotNull { row ->
                (row[metric.value] as? Number)?.toDouble()?.takeIf { it.isFinite() }?.let { listOf(g.name, run.id, cellOf(row, names, metric.keys), it) }
            }
        }
    }
    return frameOf(listOf("group", "run_id", "cell", "value"), rows)
}

/** Each fork's p99 (ms) per series, from its corrected latency log: the producer's own lateness is not a cell. */
private fun forkP99s(run: RecordedRun): List<Pair<String, Double>> =
    run.latencyLogs().filter { it.corrected && !it.series.endsWith("/lateness") }.groupBy { it.series to it.fork }
        .mapNotNull { (key, logs) -> merge(logs.flatMap { it.measuredIntervals() }).takeIf { it.totalCount > 0 }?.let { key.first to it.percentilesMs(listOf(99.0)).getValue(99.0) } }

/** Per cell present in the baseline (the first group) and another group: the ratio other/baseline with its interval, and what the data supports. */
fun compareRatios(values: AnyFrame, groups: List<Group>, metric: CompareMetric): AnyFrame {
    val byKey = values.rows().groupBy { it["group"] as String to it["cell"] as String }.mapValues { (_, r) -> r.map { (it["value"] as Number).toDouble() } }
    val base = groups.first().name
    val rows = groups.drop(1).flatMap { g ->
        byKey.keys.filter { it.first == base }.map { it.second }.filter { (g.name to it) in byKey }.map { cell ->
            val a = byKey.getValue(g.name to cell); val b = byKey.getValue(base to cell)
            val r = ratioInterval(a, b)
            listOf(cell, g.name, r.mean, r.low, r.high, r.interval, differenceSentence(g.name, meanInterval(a), base, meanInterval(b), metric))
        }
    }
    return frameOf(listOf("cell", "group", "ratio", "ci_low", "ci_high", "interval", "verdict"), rows)
}

/**
 * One sentence that claims a difference only when the data supports it (at least 3 repetitions a side and
 * a Welch t-test at the 5% level): the kit's [describeDifference] for rates, "higher"/"lower" otherwise.
 */
fun differenceSentence(nameA: String, a: Estimate, nameB: String, b: Estimate, metric: CompareMetric): String {
    if (metric.higherIsBetter && (metric.value.endsWith("_per_s") || metric.value.endsWith("_rps"))) return describeDifference(nameA, a, nameB, b)
    val pct = kotlin.math.abs(100.0 * (a.mean / b.mean - 1))
    val dir = if (a.mean >= b.mean) "higher" else "lower"
    return when {
        a.range || b.range -> "$nameA looks ${"%.0f".format(pct)}% $dir than $nameB in ${metric.unit}, but too few repetitions to claim it"
        !differs(a, b) -> "$nameA and $nameB cannot be told apart in ${metric.unit} (Welch t-test, p = ${"%.2f".format(welchTest(a, b).p)})"
        else -> "$nameA is ${"%.0f".format(pct)}% $dir than $nameB in ${metric.unit} (Welch t-test, p = ${"%.3f".format(welchTest(a, b).p)})"
    }
}

// ---- latency and cost ------------------------------------------------------------------------------------

/**
 * Merged histograms per (group, series, corrected): every measured interval of every fork of every run in
 * the group added together, for the [series] given (default: every series all groups have, else every series; a
 * choice is the caller's to make and to say, never a silent cut).
 */
fun groupLatency(groups: List<Group>, series: List<String>? = null): Map<Triple<String, String, Boolean>, Histogram> {
    val logs = groups.associate { g -> g.name to g.runs.flatMap { it.latencyLogs() } }
    val common = logs.values.map { l -> l.map { it.series }.toSet() }.filter { it.isNotEmpty() }
    val chosen = series ?: common.reduceOrNull { a, b -> a intersect b }?.sorted()?.filterNot { it.endsWith("/lateness") }
        ?.ifEmpty { null } ?: common.flatten().distinct().sorted()
    return logs.flatMap { (g, l) -> l.filter { it.series in chosen }.map { g to it } }
        .groupBy { (g, log) -> Triple(g, log.series, log.corrected) }
        .mapValues { (_, pairs) -> merge(pairs.flatMap { it.second.measuredIntervals() }) }
}

/** Spectrum points with one line per group and series ("group · series"), for [spectrumPlot]. */
fun groupSpectra(merged: Map<Triple<String, String, Boolean>, Histogram>): AnyFrame =
    spectra(merged.mapKeys { (k, _) -> Triple(k.first, "${k.first} · ${k.second}", k.third) })

/**
 * The capacity table of a study that declares one (`capacity` in its table declarations), per group and cell; null
 * when the study has none or the runs hold none.
 */
fun groupCapacity(groups: List<Group>, root: Path = dataRoot()): AnyFrame? {
    // each study's searches record the last load that met the SLO: a lower end, so a capacity is at least it
    val study = groups.firstOrNull()?.runs?.firstOrNull()?.study ?: return null
    val metric = TableDeclarations.of(study, root).capacity ?: return null
    if (groups.none { g -> g.runs.any { r -> r.has(metric.table) } }) return null
    return summarize(compareValues(groups, metric), listOf("group", "cell"), "value")
}

/**
 * Cost per million operations per group and cell: each group's machine priced per vCPU-hour like [hostType]
 * ([pricedMachine]: the cores come from the group's manifests), divided by the mean rate in [summary].
 */
fun groupCost(summary: AnyFrame, groups: List<Group>, hostType: String): AnyFrame {
    val price = groups.associate { g -> g.name to pricedMachine(hostType, g.runs.first().cores) }
    val rows = summary.rows().map { r ->
        val m = price.getValue(r["group"] as String); val rate = (r["mean"] as Number).toDouble()
        listOf(r["group"], r["cell"], m.cores, m.pricePerHour, rate, if (rate > 0) costPerMillion(m.pricePerHour, rate) else null)
    }
    // the rate is the last load met (a capacity is at least it), so the cost is at most this
    return frameOf(listOf("group", "cell", "cores", "usd_per_hour", "capacity_at_least_per_s", "usd_per_million_at_most"), rows)
}

/** Every run of the comparison once, oldest first. */
fun List<Group>.allRuns(): List<RecordedRun> = flatMap { it.runs }.distinctBy { it.id }.sortedBy { it.id }

/** The runs as a table (the same as a study notebook's [RunsSummary]). */
fun List<Group>.summary(): RunsSummary = RunsSummary(allRuns(), flatMap { it.skipped }.distinct())

/**
 * The post's front matter data (MIME text/x-perfkit-runs, read by notebooks/tools/publish.py): run ids,
 * hosts (with where a run was collected from) and the JVMs that ran the forks, which is what a JDK
 * comparison varies; [RunsSummary] lists only the runs' own JVMs.
 */
fun List<Group>.summaryJson(): String {
    val runs = allRuns()
    return com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(mapOf(
        "study" to runs.map { it.study }.distinct().joinToString(),
        "runIds" to runs.map { it.id },
        "hosts" to runs.map { r -> "${r.hostname} (${r.cores} cores, ${r.cpuModel})" + (r.collectedFrom?.let { " via $it" } ?: "") }.distinct(),
        "jdks" to runs.map { it.forkJdk }.distinct(),
        "groups" to map { it.name },
        "reference" to runs.all { it.isReference },
        "title" to compareTitle(),
        "titleMarkdown" to mdText(compareTitle()), // the publisher's heading: group names are data
        "ended" to endedDay(runs),
    ) + scaleFields(runs))
}

/**
 * The post's title from what was compared: the study, the groups, and the factor families that differ between them
 * (one VM against itself says so, rather than "two hosts").
 */
fun List<Group>.compareTitle(): String {
    val diff = fingerprintDiff(this)
    val study = allRuns().map { it.study }.distinct().joinToString()
    val what = when {
        diff.factors.isEmpty() -> "no recorded difference"
        else -> "differing in " + diff.factors.joinToString(", ")
    }
    val hosts = allRuns().map { it.hostname }.distinct()
    val where = if (hosts.size == 1) "on one host (${hosts.single()})" else "on ${hosts.size} hosts"
    return "Side by side: $study, ${joinToString(" vs ") { it.name }} ($where, $what)"
}

/** Which runs make up each group, in one table. */
fun List<Group>.membersTable(): AnyFrame {
    val rows = flatMap { g -> g.runs.map { r -> listOf(g.name, r.id, r.hostname + (r.collectedFrom?.let { " (from $it)" } ?: ""), r.forkJdk, r.tag, r.mode, r.repetitions, r.status) } }
    return frameOf(listOf("group", "run_id", "host", "fork_jdk", "tag", "mode", "repetitions", "status"), rows)
}
