package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn
import org.jetbrains.letsPlot.intern.Plot
import org.jetbrains.letsPlot.scale.scaleXLog10

/** The original's rate per chain: its instance counts convert to msg/s with it. */
const val PUBLISHED_RATE_PER_CHAIN = 1000.0

/** The cell the post answers with by default: Kafka's usual consumer loop, on which --rate-per-chain auto calibrates. */
const val KAFKA_BASELINE = "kafka/blocking"

/**
 * Each cell's capacity on this host over its repetitions (capacity.csv of one run), as a bracket in msg/s or, with
 * [chains], in chains. The original asked how many chains fit on its hardware, services and driver sharing the cores,
 * and counted a miss on a saturated machine as a miss (its Kafka broke the SLA at 700%). So here a search's first step
 * not met closes its bracket whatever its verdict: a search with one is read as a wall of this host.
 */
fun messagingBrackets(capacity: AnyFrame, chains: Boolean = false): Map<String, CapacityBracket> =
    capacity.rows().groupBy { it["cell"] as String }.mapValues { (_, rows) ->
        capacityBracket(rows.map { r ->
            val missed = num(r[if (chains) "first_missed_instances" else "first_missed_msgs_per_s"])
            ForkBracket(num(r["repetition"])?.toInt() ?: 1, num(r[if (chains) "capacity_instances" else "capacity_msgs_per_s"]), missed,
                if (missed != null) "wall" else r["capacity_status"].toString())
        }, if (chains) "chain(s)" else "msg/s", repetition = "search")
    }

/** The two ends of a ratio of capacity brackets; an open end is null. */
data class RatioBounds(val low: Double?, val high: Double?) {
    val text: String get() = when {
        low != null && high != null -> "between ${formatNumber(low)}x and ${formatNumber(high)}x"
        low != null -> "more than ${formatNumber(low)}x"
        high != null -> "less than ${formatNumber(high)}x"
        else -> "cannot be bounded from these brackets"
    }
}

/** A / B lies in (A.low / B.high, A.high / B.low): the ratio of the worst case of one to the best of the other, each way. */
fun ratioBounds(a: CapacityBracket, b: CapacityBracket) = RatioBounds(
    if (a.low != null && b.high != null) a.low / b.high else null,
    if (a.high != null && b.low != null && b.low > 0) a.high / b.low else null)

/** Why a cell has no two-sided bracket: the statuses of its searches, e.g. "3 of 3 searches not measurable on this host". */
private fun gaps(c: CapacityBracket?): String = when {
    c == null -> "it was not run"
    else -> c.forks.groupBy { it.status }.entries.joinToString(", ") { (status, forks) -> "${forks.size} of ${c.forks.size} search(es) ${mdText(status)}" }
}

/** Messaging's warm-up rule, as the preconditions name it. */
private const val MESSAGING_WARMUP = "delivered rate and CPU stable for consecutive seconds"

/** A sweep step's system CPU, the harness's saturation flag and its steal, for [belowWallJudged]. */
private fun DataRow<*>.wallFacts() = Triple(num(opt("cpu_system_pct")), opt("saturated") == true, num(opt("steal_pct")))

/** The cells of [variant]'s steps at [instances] chains, one per repetition: a side of a post's "where the time went". */
fun AnyFrame.cellsAt(variant: String, instances: Int): List<String> =
    rows().filter { it["variant"] == variant && num(it["instances"]) == instances.toDouble() }.map { it["cell"].toString() }.distinct()

/** The steps of [cell] at [instances] chains, every repetition (valid or not: a miss that closed a bracket counts). */
private fun AnyFrame.stepsAt(cell: String?, instances: Double): List<DataRow<*>> =
    rows().filter { it["variant"] == cell && num(it["instances"]) == instances }

/** The steps that closed [cell]'s brackets: each search's first missed step, where the capacity's top was found. */
private fun closingSteps(sweep: AnyFrame, capacity: AnyFrame, cell: String?): List<DataRow<*>> =
    capacity.rows().filter { it["cell"] == cell }.mapNotNull { c ->
        val missed = num(c["first_missed_instances"]) ?: return@mapNotNull null
        sweep.rows().firstOrNull { it["variant"] == cell && num(it.opt("repetition")) == num(c["repetition"]) && num(it["instances"]) == missed }
    }

/**
 * The table the messaging post opens with: the original's claims (Kafka breaks the SLO at the second chain; about 400x
 * more chains on Chronicle Queue, 500x by its own table; a Kafka chain costs about 129x the CPU; a 99.8% cost cut)
 * against one run's [capacity] and [sweep] tables and the published numbers [pub]. Capacity answers come from brackets
 * over the repetitions (every repetition's bracket inside them), CPU from a ratio's 95% interval over them, each judged
 * against the original's figure ([answerAgainstPublished]) and only where the brackets were not closed by this host's
 * wall. Kafka as the original ran it (`kafka/original`, its spinning poll) comes first, the kit's other policies after.
 */
fun messagingClaims(sweep: AnyFrame, capacity: AnyFrame, pub: AnyFrame): List<Claim> {
    val inChains = messagingBrackets(capacity, chains = true)
    val inRate = messagingBrackets(capacity)
    val rate = capacity.rows().firstNotNullOfOrNull { num(it["rate_per_chain"]) }
    // the original's pairing first: its own poll loop, then the kit's policies
    val kafkaCells = inRate.keys.filter { it.startsWith("kafka/") }.sortedBy { if (it == KAFKA_ORIGINAL) 0 else 1 }
    val baseline = if (KAFKA_BASELINE in kafkaCells) KAFKA_BASELINE else kafkaCells.firstOrNull()
    val chronicle = inRate["chronicle/original"]
    val claims = mutableListOf<Claim>()
    val rateWords = rate?.let { "${formatNumber(it)} msg/s per chain" } ?: "this run's rate"
    val searches = { cell: String? -> capacity.rows().count { it["cell"] == cell } }
    // warm-up ended by its rule in every step used, and (where the run recorded it) no JIT above the line while measured
    fun warm(vararg sides: Pair<String, List<DataRow<*>>>) = sides.toMap().let { bySide ->
        warmByJit(bySide, "steps", warmupSettled(bySide.mapValues { (_, rs) -> rs.map { it.opt("warmup_settled") as? Boolean } }, MESSAGING_WARMUP))
    }
    // a capacity is this host's wall, not the system's, when the step that closed its bracket ran at the wall
    fun capacityChecks(cell: String?): List<Precondition> {
        val kafkaSteps = closingSteps(sweep, capacity, cell); val chronicleSteps = closingSteps(sweep, capacity, "chronicle/original")
        return listOf(enoughForks(mapOf("`$cell`" to searches(cell), "Chronicle" to searches("chronicle/original"))),
            belowWallJudged(mapOf("`$cell`'s closing steps" to kafkaSteps.map { it.wallFacts() }, "Chronicle's" to chronicleSteps.map { it.wallFacts() })),
            warm("`$cell`" to kafkaSteps, "Chronicle" to chronicleSteps))
    }

    // a bracket from fewer than 3 searches is an observation, not an answer (as an interval needs 3 forks)
    fun tooFew(c: CapacityBracket?) = c != null && c.forks.size < MIN_REPETITIONS_FOR_CLAIM
    val fewWhy = "Only ${capacity.rows().groupBy { it["cell"] }.values.minOfOrNull { it.size } ?: 0} search(es) per cell: a claim needs $MIN_REPETITIONS_FOR_CLAIM."
    // the one-chain claims are asked of the original's pairing and of the baseline
    val pairings = kafkaCells.filter { it == KAFKA_ORIGINAL || it == baseline }
    for (cell in pairings) {
        val kafka = inChains[cell]
        val breaksAtTwo = when {
            kafka == null || tooFew(kafka) -> Answer.CANNOT_TELL
            kafka.low == 1.0 && kafka.high == 2.0 -> Answer.HOLDS
            (kafka.low != null && kafka.low >= 2) || (kafka.high != null && kafka.high <= 1) -> Answer.DOES_NOT_HOLD
            else -> Answer.CANNOT_TELL
        }
        // the original broke the SLA at its machine's wall (700%), so a miss at 2 chains on the wall here is the same
        // finding; a miss at 1 chain on the wall is this host's size, not Kafka's capacity
        val oneChain = sweep.stepsAt(cell, 1.0)
        val missedAtOne = kafka?.high != null && kafka.high <= 1
        val checks = listOf(enoughForks(mapOf("`$cell`" to searches(cell))), warm("`$cell`" to oneChain)) +
            if (missedAtOne) listOf(belowWallJudged(mapOf("`$cell` at 1 chain" to oneChain.map { it.wallFacts() }))) else emptyList()
        claims += claim("Kafka (one broker, acks=1) meets the 100 ms p99.9 with one chain and breaks it at the second" +
            if (cell == KAFKA_ORIGINAL) " (Kafka as the original polled it)" else " (Kafka as `$cell`)",
            kafka?.let { "`$cell` at $rateWords: ${it.text}" } ?: "Kafka was not run", breaksAtTwo, when (breaksAtTwo) {
                Answer.HOLDS -> "Every search met the SLO at 1 chain and missed it at 2."
                Answer.DOES_NOT_HOLD -> if (kafka!!.low != null && kafka.low >= 2) "Every search met the SLO with 2 chains or more." else "Every search missed the SLO at 1 chain on this host."
                else -> if (tooFew(kafka)) fewWhy else "The searches do not bracket Kafka's capacity between 1 and 2 chains: ${gaps(kafka)}."
            }, checks)
    }

    val published = pub.publishedValue("chronicle/kafka", "capacity_ratio")
    val seedRatio = pub.publishedValue("chronicle", "capacity_instances") / pub.publishedValue("kafka", "capacity_instances")
    for (cell in kafkaCells) {
        val k = inRate[cell]
        val r = if (chronicle == null || k == null) RatioBounds(null, null) else ratioBounds(chronicle, k)
        val answer = if (tooFew(chronicle) || tooFew(k)) Answer.CANNOT_TELL else answerAgainstPublished(r.low, r.high, published)
        claims += claim("Chronicle Queue carries about ${formatNumber(published)}x the chains Kafka does (its own table gives ${formatNumber(seedRatio)}x; Kafka as `$cell`)",
            if (chronicle == null) "Chronicle Queue was not run" else "${r.text} (Chronicle ${chronicle.text}; Kafka ${k?.text ?: "not run"})", answer,
            if (tooFew(chronicle) || tooFew(k)) fewWhy else if (r.low == null && r.high == null) "No bracket on one side: Chronicle ${gaps(chronicle)}; Kafka ${gaps(k)}."
            else publishedRuleWhy(answer, published, r.low, r.high, "The ratio of the brackets' ends"), capacityChecks(cell))
    }

    // CPU per message at one chain, the step every search starts with: the original's pairing first
    val kafkaCpu = pub.publishedValue("kafka-n1", "cpu_pct")
    val chronicleCpu = pub.publishedValue("chronicle-n1", "cpu_pct")
    val cpuRatio = kafkaCpu / chronicleCpu
    val oneChainValid = { cell: String? -> sweep.stepsAt(cell, 1.0).filter { it["valid"] == true } }
    for (cell in pairings) {
        val kafkaSteps = oneChainValid(cell); val chronicleSteps = oneChainValid("chronicle/original")
        val kafkaUs = kafkaSteps.mapNotNull { num(it["cpu_us_per_msg"]) }
        val chronicleUs = chronicleSteps.mapNotNull { num(it["cpu_us_per_msg"]) }
        val cpu = if (kafkaUs.isEmpty() || chronicleUs.isEmpty()) null else ratioInterval(kafkaUs, chronicleUs)
        val cpuAnswer = answerAgainstPublished(cpu, cpuRatio)
        claims += claim("One Kafka chain costs far more CPU than one Chronicle chain (${formatNumber(kafkaCpu)}% against ${formatNumber(chronicleCpu)}% of a core: ${formatNumber(cpuRatio)}x)" +
            if (cell == KAFKA_ORIGINAL) " (Kafka as the original polled it)" else " (Kafka as `$cell`)",
            cpu?.let { "CPU per message, `$cell` / Chronicle, 1 chain: ${ratioText(it)}" } ?: "not measured", cpuAnswer, when {
                cpu == null -> "No valid one-chain step of both systems."
                cpu.range -> "Under 3 repetitions a side the numbers are ranges, which support no claim."
                else -> publishedRuleWhy(cpuAnswer, cpuRatio, cpu)
            }, listOf(enoughForks(mapOf("`$cell`" to kafkaUs.size, "Chronicle" to chronicleUs.size)),
                belowWallJudged(mapOf("`$cell`" to kafkaSteps.map { it.wallFacts() }, "Chronicle" to chronicleSteps.map { it.wallFacts() })),
                warm("`$cell`" to kafkaSteps, "Chronicle" to chronicleSteps)))
    }

    val saving = pub.publishedValue("chronicle/kafka", "cost_saving_percent")
    val k = baseline?.let { inRate[it] }
    val r = if (chronicle == null || k == null) RatioBounds(null, null) else ratioBounds(chronicle, k)
    val needed = 1 / (1 - saving / 100) // the capacity ratio that cuts cost by `saving`
    val costAnswer = if (tooFew(chronicle) || tooFew(k)) Answer.CANNOT_TELL else answerAgainstPublished(r.low, r.high, needed)
    val cut = { ratio: Double -> formatNumber(100 * (1 - 1 / ratio)) + "%" }
    claims += claim("A potential cost cut of about ${formatNumber(saving)}% (cost per message at the SLO: ${formatNumber(needed)}x the capacity)",
        when {
            r.low != null && r.high != null -> "${cut(r.low)} to ${cut(r.high)} against `$baseline` (capacity ${r.text})"
            r.low != null -> "more than ${cut(r.low)} against `$baseline` (capacity ${r.text})"
            r.high != null -> "less than ${cut(r.high)} against `$baseline` (capacity ${r.text})"
            else -> "not bounded"
        }, costAnswer, if (tooFew(chronicle) || tooFew(k)) fewWhy else publishedRuleWhy(costAnswer, needed, r.low, r.high, "The capacity ratio's bracket"),
        capacityChecks(baseline))
    return claims
}

/** Kafka as the original ran it: its services poll with a back-off of 1/8 of the message gap, which spins. */
const val KAFKA_ORIGINAL = "kafka/original"

/** Capacity per cell beside the original's, in msg/s (the original's instance counts at 1000 msg/s per chain). */
fun messagingCapacityTable(capacity: AnyFrame, pub: AnyFrame): Markdown {
    val inRate = messagingBrackets(capacity)
    val inChains = messagingBrackets(capacity, chains = true)
    val rate = capacity.rows().firstNotNullOfOrNull { num(it["rate_per_chain"]) }
    val pk = pub.publishedValue("kafka", "capacity_instances")
    val pc = pub.publishedValue("chronicle", "capacity_instances")
    return Markdown("| cell | capacity (chains) | capacity (msg/s) | each search (msg/s) |\n|---|---|---|---|\n" +
        "| original: Kafka | ${formatNumber(pk)} | ${formatNumber(pk * PUBLISHED_RATE_PER_CHAIN)} | (7 isolated Ryzen cores, 1000 msg/s per chain) |\n" +
        "| original: Chronicle Queue | ${formatNumber(pc)} (largest tried) | ${formatNumber(pc * PUBLISHED_RATE_PER_CHAIN)} or more | |\n" +
        inRate.entries.joinToString("\n") { (cell, c) -> "| `$cell` at ${rate?.let { formatNumber(it) } ?: "?"} msg/s per chain | ${inChains.getValue(cell).text} | ${c.text} | ${c.perFork} |" })
}

/** The original's rows for [system] ("kafka", "chronicle"), by instance count: metric -> value. */
private fun publishedByInstances(pub: AnyFrame, system: String): Map<Int, Map<String, Double>> =
    pub.rows().mapNotNull { r ->
        val variant = r["variant"] as String
        val n = variant.removePrefix("$system-n").toIntOrNull()
        if (!variant.startsWith("$system-n") || n == null) null else Triple(n, r["metric"] as String, num(r["value"])!!)
    }.groupBy { it.first }.mapValues { (_, v) -> v.associate { it.second to it.third } }

private fun median(values: List<Double>): Double? = values.sorted().let { s -> if (s.isEmpty()) null else if (s.size % 2 == 1) s[s.size / 2] else (s[s.size / 2 - 1] + s[s.size / 2]) / 2 }

private fun DataRow<*>.testedCpu(): Double? = num(this["cpu_app_pct"])?.let { it + (num(this["cpu_broker_pct"]) ?: 0.0) }

/**
 * One system's latency and CPU per chain count: the original's row beside this host's, the median over the valid steps
 * of [variant] at that count (with how many). CPU is the processes under test (services, driver, broker) in % of one core.
 */
fun perInstanceTable(sweep: AnyFrame, pub: AnyFrame, system: String, variant: String): Markdown {
    val published = publishedByInstances(pub, system)
    val ours = sweep.rows().filter { it["variant"] == variant && it["valid"] == true }.groupBy { num(it["instances"])!!.toInt() }
    val fmt = { v: Double? -> v?.let { formatNumber(it) } ?: "" }
    val rows = (published.keys + ours.keys).sorted().joinToString("\n") { n ->
        val p = published[n].orEmpty()
        val o = ours[n].orEmpty()
        val m = { col: String -> median(o.mapNotNull { num(it[col]) }) }
        "| $n | ${fmt(p["p50_ms"])} | ${fmt(p["p99_ms"])} | ${fmt(p["p99_9_ms"])} | ${fmt(p["cpu_pct"])} | " +
            "${fmt(m("p50_ms"))} | ${fmt(m("p99_ms"))} | ${fmt(m("p99_9_ms"))} | ${fmt(median(o.mapNotNull { it.testedCpu() }))} | ${if (o.isEmpty()) "" else o.size} |"
    }
    return Markdown("| chains | original p50 ms | p99 ms | p99.9 ms | CPU % | `$variant` p50 ms | p99 ms | p99.9 ms | CPU % | steps |\n" +
        "|---|---|---|---|---|---|---|---|---|---|\n" + rows)
}

/**
 * Graph 1 of the original, p99.9 against the load carried (msg/s, both axes log): this host's cells, the median over
 * repetitions per chain count, and the original's points at 1000 msg/s per chain, with the SLO dashed.
 */
fun latencyAgainstLoad(sweep: AnyFrame, pub: AnyFrame, slo: Double): Plot {
    val series = mutableListOf<String>(); val load = mutableListOf<Double>(); val p999 = mutableListOf<Double>()
    sweep.rows().filter { it["valid"] == true }.groupBy { it["variant"] as String to num(it["target_rate"])!! }.forEach { (key, rows) ->
        median(rows.mapNotNull { num(it["p99_9_ms"]) })?.let { series += key.first; load += key.second; p999 += it }
    }
    for (system in listOf("kafka", "chronicle")) publishedByInstances(pub, system).forEach { (n, metrics) ->
        metrics["p99_9_ms"]?.let { series += "original $system"; load += n * PUBLISHED_RATE_PER_CHAIN; p999 += it }
    }
    val df = dataFrameOf(listOf(series.toColumn("series"), load.toColumn("msgs_per_s"), p999.toColumn("p99_9_ms")))
    return scalingCurve(df, x = "msgs_per_s", y = "p99_9_ms", color = "series", slo = slo, title = "p99.9 against load",
        xLabel = "messages per second carried (log scale)", yLabel = "p99.9 end to end (ms, log scale)", logY = true) + scaleXLog10()
}

/**
 * Cost per million messages at the SLO per cell, from its capacity bracket, and relative to Kafka ([KAFKA_BASELINE]):
 * the inverse of the capacity ratio, as a bracket.
 */
fun messagingCost(capacity: AnyFrame, pricePerHour: Double): Markdown {
    val inRate = messagingBrackets(capacity)
    val base = inRate[KAFKA_BASELINE] ?: inRate.entries.firstOrNull { it.key.startsWith("kafka/") }?.value
    val baseName = if (KAFKA_BASELINE in inRate) KAFKA_BASELINE else inRate.keys.firstOrNull { it.startsWith("kafka/") }
    return Markdown("| cell | capacity | cost per million messages | relative to `${baseName ?: "kafka"}` |\n|---|---|---|---|\n" +
        inRate.entries.joinToString("\n") { (cell, c) ->
            "| `$cell` | ${c.text} | ${costBracket(pricePerHour, c)} | ${if (base == null || cell == baseName) "1" else ratioBounds(base, c).text} |"
        })
}

/**
 * The post's answer in one sentence: Chronicle Queue's capacity over Kafka's at the SLO, per Kafka cell, as a bracket
 * over the repetitions, beside the published ratio; or why this run cannot bound it.
 */
fun capacityRatioAnswer(capacity: AnyFrame, pub: AnyFrame): String {
    val inRate = messagingBrackets(capacity)
    val published = pub.publishedValue("chronicle/kafka", "capacity_ratio")
    val seedRatio = pub.publishedValue("chronicle", "capacity_instances") / pub.publishedValue("kafka", "capacity_instances")
    val chronicle = inRate["chronicle/original"]
    val kafkaCells = inRate.keys.filter { it.startsWith("kafka/") }
    val beside = "the published about ${formatNumber(published)}x (its own table, 500 chains against 1, gives ${formatNumber(seedRatio)}x)"
    if (chronicle == null || kafkaCells.isEmpty()) return "This run cannot say: it did not run both Chronicle Queue and Kafka, so there is no ratio to set beside $beside."
    val ratios = kafkaCells.associateWith { ratioBounds(chronicle, inRate.getValue(it)) }
    val bounded = ratios.filterValues { it.low != null || it.high != null }
    if (bounded.isEmpty()) return "This run cannot say how much of $beside survives: Chronicle ${gaps(chronicle)}; " +
        kafkaCells.joinToString("; ") { "`$it` ${gaps(inRate[it])}" } + "."
    val searches = chronicle.forks.size
    return "At the SLO, Chronicle Queue's capacity over Kafka's is " + bounded.entries.joinToString("; ") { (cell, r) -> "${r.text} against `$cell`" } +
        (if (bounded.size < ratios.size) " (no bound against " + (ratios.keys - bounded.keys).joinToString { "`$it`" } + ")" else "") +
        ", over $searches search(es) each, beside $beside."
}

/**
 * The run's sweep and capacity tables as they would read at another p99.9 SLO ([sloMs], the run's own being
 * [recordedSloMs]): each step's `meets_slo` judged again (a step lost messages, or on a saturated machine, still
 * misses), and each search's bracket re-read from its steps ([forkBracketAtSlo]). At the recorded SLO both come back
 * as they are.
 */
fun messagingAtSlo(sweep: AnyFrame, capacity: AnyFrame, sloMs: Double, recordedSloMs: Double): Pair<AnyFrame, AnyFrame> {
    if (sloMs == recordedSloMs) return sweep to capacity
    fun step(r: DataRow<*>): SearchStep {
        val usable = r["valid"] == true && r.opt("saturated") != true
        return SearchStep(num(r["target_rate"])!!, if (usable) num(r["p99_9_ms"]) ?: Double.POSITIVE_INFINITY else Double.POSITIVE_INFINITY)
    }
    val judged = sweep.rows().map { r -> r to step(r).meets(sloMs) }
    val newSweep = frameOf(sweep.columnNames(), judged.map { (r, met) -> sweep.columnNames().map { c -> if (c == "meets_slo") met else r[c] } })
    val searches = sweep.rows().groupBy { Triple(it["run_id"], it["variant"], it["repetition"]) }
    val names = listOf("run_id", "cell", "system", "policy", "repetition", "rate_per_chain", "capacity_instances", "capacity_msgs_per_s",
        "first_missed_instances", "first_missed_msgs_per_s", "capacity_status", "slo_ms", "steps", "stop_reason")
    val rows = searches.map { (key, steps) ->
        val first = steps.first()
        val b = forkBracketAtSlo(num(key.third)?.toInt() ?: 1, steps.map(::step), sloMs, recordedSloMs)
        fun instancesAt(load: Double?) = load?.let { l -> steps.first { num(it["target_rate"]) == l }["instances"] }
        listOf(key.first, key.second, first["system"], first["policy"], key.third, first["rate_per_chain"], instancesAt(b.lastMet), b.lastMet,
            instancesAt(b.firstMissed), b.firstMissed, b.status, sloMs, steps.size,
            "re-read at p99.9 <= ${formatNumber(sloMs)} ms from the ${steps.size} recorded step(s) (the run's SLO: ${formatNumber(recordedSloMs)} ms)")
    }
    return newSweep to frameOf(names, rows)
}

/**
 * The Kafka and Chronicle Queue releases these runs ran, as each run read them from its jars (notes.versions); runs
 * of kits before 2026-11-28 did not record them, and the sentence says so rather than guess.
 */
fun List<RecordedRun>.messagingVersions(): String {
    val kafka = recordedVersion("kafka"); val chronicle = recordedVersion("chronicle")
    // against a user's cluster (--bootstrap-servers) the version is the clients', and the cluster's mode is its own
    val own = all { it.param("bootstrap-servers").isNullOrBlank() }
    val k = kafka?.let { " $it" } ?: ""
    val kafkaText = if (own) "Kafka$k (KRaft)" else "Kafka clients$k against the user's cluster"
    return if (kafka == null && chronicle == null) "$kafkaText and Chronicle Queue at releases these runs did not record"
    else "$kafkaText and Chronicle Queue ${chronicle ?: "?"}"
}
