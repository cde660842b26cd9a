package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn

// The queues post's evidence, from throughput.csv, consumers.csv and calibration.csv (data/README.md): the harness
// checked against a minimal program, the consumers beside the original's counts, and the original's claims.

/** How far the harness may sit from the minimal program before it is part of the result (DEVELOPERS.md: 10%). */
const val HARNESS_TOLERANCE = 0.10

/**
 * The harness beside the minimal 1P1C program run next to it (calibration.csv), per label and cell: forks, both
 * means (events/s) and harness/minimal with its interval. verdict: "within 10%" when the whole interval lies in
 * 0.9..1.1, "the harness costs throughput" when it lies below 0.9, else "cannot tell" (or "range" under 3 forks).
 * Runs without calibration.csv (older ones, fixed-rate ones) are left out.
 */
fun harnessCalibration(runs: List<RecordedRun>): AnyFrame {
    val rows = runs.filter { r -> r.has("calibration.csv") }.flatMap { run ->
        val t = run.table("calibration.csv")
        t.rows().groupBy { it["cell"] as String }.map { (cell, rs) ->
            val harness = rs.mapNotNull { num(it["harness_events_per_s"]) }
            val minimal = rs.mapNotNull { num(it["minimal_events_per_s"]) }
            val e = ratioInterval(harness, minimal)
            // a spinning 1P1C Disruptor is bistable on a small host (about 22 M or 110 M events/s per fork), and so
            // is the minimal program: then only many forks narrow the interval, and the verdict says so
            val spread = if (minimal.isEmpty() || minimal.min() <= 0) Double.NaN else minimal.max() / minimal.min()
            val verdict = when {
                e.range -> "range only (${e.n} fork(s))"
                e.low >= 1 - HARNESS_TOLERANCE && e.high <= 1 + HARNESS_TOLERANCE -> "within 10%"
                e.high < 1 - HARNESS_TOLERANCE -> "the harness costs throughput"
                e.low > 1 + HARNESS_TOLERANCE -> "the harness reads high"
                spread >= 2 -> "cannot tell: the minimal program itself spans ${formatNumber(spread)}x across forks"
                else -> "cannot tell"
            }
            listOf(run.label, cell, e.n, harness.average(), minimal.average(), e.mean, e.low, e.high, e.interval, verdict)
        }
    }
    val names = listOf("label", "cell", "forks", "harness_events_per_s", "minimal_events_per_s", "harness_over_minimal", "ci_low", "ci_high",
        "interval", "verdict")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * ArrayBlockingQueue with 3 and 5 consumers beside the original's counts, per label: total throughput as a ratio to
 * 1 consumer (ours with its interval; the original's from its event counts, whose window is unstated, so only the
 * ratios compare), each consumer's throughput as a ratio to 1 consumer, and fairness: the least-served consumer's
 * events over the most-served one's, mean over forks (1 = an even split).
 */
fun consumersBesidePublished(throughput: AnyFrame, consumers: AnyFrame, pub: AnyFrame): AnyFrame {
    val one = pub.publishedValue("abq-1", "events_in_window", "original write-up")
    val rows = throughput.rows().map { it["label"] as String }.distinct().flatMap { label ->
        val t = throughput.filter { it["label"] == label }
        listOf(3, 5).mapNotNull { n ->
            val cell = "abq-$n"
            val total = ratioOf(t, "cell", "events_per_s", cell, "abq-1") ?: return@mapNotNull null
            val perConsumer = Estimate(total.n, total.mean / n, total.low / n, total.high / n)
            val fairness = consumers.rows().filter { it["label"] == label && it["cell"] == cell }
                .groupBy { it["run_id"] to it["fork"] }.values
                .map { rs -> rs.mapNotNull { num(it["events"]) }.let { e -> if (e.isEmpty() || e.max() == 0.0) Double.NaN else e.min() / e.max() } }
                .filter { !it.isNaN() }
            listOf(label, cell, ratioText(total), formatNumber(pub.publishedValue(cell, "events_in_window", "original write-up") / one),
                ratioText(perConsumer), formatNumber(pub.publishedValue(cell, "events_per_consumer_in_window", "original write-up") / one),
                if (fairness.isEmpty()) "" else formatNumber(fairness.average(), 2))
        }
    }
    val names = listOf("label", "cell", "total_vs_1_consumer", "published_total_vs_1", "per_consumer_vs_1_consumer", "published_per_consumer_vs_1",
        "fairness_min_over_max")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * The harness read within [HARNESS_TOLERANCE] of a minimal program of the same topology in each of [cells] (rows of
 * [harnessCalibration]); where it did not, the harness is part of the result. Not checked where the calibration cannot
 * tell (a bimodal host, too few forks) or did not run.
 */
internal fun harnessMatches(calibration: AnyFrame, cells: List<String>): Precondition {
    val name = "the harness matches a minimal program"
    val rows = calibration.rows().filter { it["cell"] in cells }
    if (rows.isEmpty()) return Precondition(name, null, "no calibration of ${cells.joinToString { "`$it`" }} in these runs")
    val off = rows.any { it["verdict"] == "the harness costs throughput" || it["verdict"] == "the harness reads high" }
    val all = rows.all { it["verdict"] == "within 10%" } && rows.map { it["cell"] }.toSet().containsAll(cells)
    return Precondition(name, if (off) false else if (all) true else null,
        rows.joinToString(", ") { "`${it["cell"]}` ${it["verdict"]} (${formatNumber(num(it["harness_over_minimal"]) ?: Double.NaN)}x)" })
}

/** The queues' warm-up rule, as the preconditions name it. */
private const val QUEUES_WARMUP = "time (--warmup seconds of each fork)"

/** The original's own figure for the Disruptor: about 17M events against the queue's 5M ("more than 3x"), a size. */
const val DISRUPTOR_OVER_QUEUE = 17.0 / 5.0

/**
 * One row per cell and fork of [runs]' throughput.csv: label, run, cell (`abq-3`, `disruptor-1/yielding`), fork,
 * variant, wait strategy (`none` for the queue), events/s and bytes per event, and the fork's JIT over its measured
 * window ([forkJit]): `jit_ms_per_s`, `jit_window_s`, and `warm` (at most [COLD_JIT_MS_PER_S]); null for runs whose forks
 * reported none.
 */
fun queueCells(runs: List<RecordedRun>): AnyFrame = frameOf(
    listOf("label", "run_id", "cell", "fork", "variant", "wait_strategy", "events_per_s", "producer_bytes_per_event", "jit_ms_per_s", "jit_window_s", "warm"),
    runs.flatMap { run ->
        val jit = run.forkJit()
        run.table("throughput.csv").rows().map { r ->
            val variant = r["variant"] as String
            val strategy = if (variant.startsWith("abq")) "none" else r["wait_strategy"] as String
            val window = jit["${r["cell"]}/fork${num(r["fork"])?.toInt()}"]
            listOf(run.label, run.id, if (strategy == "none") variant else "$variant/$strategy", num(r["fork"])?.toInt(), variant, strategy,
                (r["events_per_s"] as Number).toDouble(), num(r.opt("producer_bytes_per_event")) ?: Double.NaN, window?.first, window?.second,
                window?.first?.let { it <= COLD_JIT_MS_PER_S })
        }
    })

/**
 * The original's claims with this host's answers, for one label's [throughput] rows ([queueCells]: events_per_s per
 * cell and fork):
 * - adding consumers to the queue lowers its total throughput (1 beat 3, 3 beat 5);
 * - the Disruptor with one handler moves more than 3x the queue's events, asked under each wait strategy in
 *   [strategies] and judged against that figure ([answerAgainstPublished]).
 * Every answer rests on a ratio's 95% interval; under 3 forks a side, none is claimed. Where the forks reported their
 * JIT, warmth is judged by [onWarmSteps]; [calibration] ([harnessCalibration]) checks the harness against the minimal program.
 */
fun queueClaims(throughput: AnyFrame, strategies: List<String>, calibration: AnyFrame? = null): List<Claim> {
    val claims = mutableListOf<Claim>()
    val hasJit = "warm" in throughput.columnNames() && throughput.rows().any { it["warm"] != null }
    // the answer [answerOf] gives, on the forks warmth allows, with the warmth check (not judged for runs without JIT)
    fun judged(cells: List<String>, answerOf: (AnyFrame) -> Answer): Triple<Answer, AnyFrame, Precondition> =
        if (!hasJit) Triple(answerOf(throughput), throughput, warmthNotRecorded(QUEUES_WARMUP))
        else onWarmSteps(throughput.filter { it["cell"] in cells }, { "`${it["cell"]}` fork ${it["fork"]}" }, { num(it["jit_window_s"]) }, answerOf)
    fun forks(f: AnyFrame, cell: String) = f.rows().count { it["cell"] == cell && num(it["events_per_s"]) != null }
    fun checks(f: AnyFrame, warmth: Precondition, vararg cells: String) = listOfNotNull(enoughForks(cells.associate { "`$it`" to forks(f, it) }),
        calibration?.let { harnessMatches(it, cells.filter { c -> c.endsWith("-1") || "-1/" in c }) }, warmth)

    fun consumersAnswer(f: AnyFrame): Answer {
        val a13 = answerAbove(ratioOf(f, "cell", "events_per_s", "abq-1", "abq-3"), 1.0)
        val a35 = answerAbove(ratioOf(f, "cell", "events_per_s", "abq-3", "abq-5"), 1.0)
        return when {
            a13 == Answer.HOLDS && a35 == Answer.HOLDS -> Answer.HOLDS
            a13 == Answer.DOES_NOT_HOLD || a35 == Answer.DOES_NOT_HOLD -> Answer.DOES_NOT_HOLD
            else -> Answer.CANNOT_TELL
        }
    }
    val queue = listOf("abq-1", "abq-3", "abq-5")
    val (consumersAnswer, consumerRows, consumerWarmth) = judged(queue, ::consumersAnswer)
    val r13 = ratioOf(consumerRows, "cell", "events_per_s", "abq-1", "abq-3")
    val r35 = ratioOf(consumerRows, "cell", "events_per_s", "abq-3", "abq-5")
    claims += claim("More consumers, less throughput: 1 consumer beat 3, and 3 beat 5 (about 5M, 3.3M, 2.4M events)",
        "1 / 3 consumers: ${ratioText(r13)}; 3 / 5: ${ratioText(r35)}", consumersAnswer,
        when (consumersAnswer) {
            Answer.HOLDS -> "Both ratios' intervals lie above 1."
            Answer.DOES_NOT_HOLD -> "An interval lies at or below 1: adding consumers did not lower the throughput there."
            else -> if (r13 == null || r35 == null) "A queue cell is missing from these runs." else if (r13.range || r35.range)
                "Under 3 forks a side the ratios are ranges, which support no claim." else "An interval straddles 1."
        }, if (r13 == null || r35 == null) emptyList() else checks(consumerRows, consumerWarmth, *queue.toTypedArray()))
    for (s in strategies) {
        val cell = "disruptor-1/$s"
        if (ratioOf(throughput, "cell", "events_per_s", cell, "abq-1") == null) continue
        val (a, rows, warmth) = judged(listOf(cell, "abq-1")) { f -> answerAgainstPublished(ratioOf(f, "cell", "events_per_s", cell, "abq-1"), DISRUPTOR_OVER_QUEUE) }
        val r = ratioOf(rows, "cell", "events_per_s", cell, "abq-1")
        claims += claim("The Disruptor (1 handler) moves about ${formatNumber(DISRUPTOR_OVER_QUEUE)}x the queue's events (17M against 5M), under `$s`", ratioText(r), a,
            if (r == null) "No warm fork of both cells." else if (r.range) "Under 3 forks a side the ratio is a range, which supports no claim."
            else publishedRuleWhy(a, DISRUPTOR_OVER_QUEUE, r) + if (a == Answer.DOES_NOT_HOLD && r.low > 1) " It is faster, not ${formatNumber(DISRUPTOR_OVER_QUEUE)}x." else "",
            checks(rows, warmth, cell, "abq-1"))
    }
    return claims
}

/**
 * Whether more consumers scale, as a Universal Scalability Law per label, design and wait strategy over [throughput]
 * ([queueCells]); the Disruptor's one-handler cell starts both of its multi-consumer designs. None where one producer
 * and the consumers are more threads than the host's [cores]: they take turns on the cores, and the bend is the host's.
 */
fun consumerScaling(throughput: AnyFrame, cores: Int): Markdown {
    val rows = throughput.rows().flatMap { r ->
        val variant = r["variant"] as String
        val consumers = variant.substringAfterLast('-').toIntOrNull() ?: return@flatMap emptyList()
        val designs = when {
            variant.startsWith("abq-") -> listOf("ArrayBlockingQueue")
            variant == "disruptor-1" -> listOf("Disruptor, sharded broadcast", "Disruptor, work-sharing")
            variant.startsWith("disruptor-shard-") -> listOf("Disruptor, sharded broadcast")
            variant.startsWith("disruptor-work-") -> listOf("Disruptor, work-sharing")
            else -> emptyList()
        }
        designs.map { d -> listOf(r["label"], d, r["wait_strategy"], "${r["run_id"]}/${r["fork"]}", consumers, r["events_per_s"]) }
    }
    val crowded = rows.map { it[4] as Int }.distinct().sorted().filter { it + 1 > cores }
    if (crowded.isNotEmpty()) return md("No scalability model for consumers here: one producer and ${crowded.joinToString(" or ")} consumers are " +
        "more threads than this host's $cores cores, so from ${crowded.first()} consumers on they take turns on the cores, and the curve bends " +
        "because of the host, not the queue.")
    val df = frameOf(listOf("label", "design", "wait_strategy", "fork", "consumers", "events_per_s"), rows)
    return Markdown("$USL_EXPLAINED\n\n") + uslTable(uslFits(df, listOf("label", "design", "wait_strategy"), n = "consumers", x = "events_per_s"),
        listOf("label", "design", "wait_strategy"), "consumers")
}
