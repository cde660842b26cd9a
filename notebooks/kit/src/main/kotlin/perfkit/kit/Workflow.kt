package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.add
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.remove
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn

/** How much of one instance's % of the theoretical maximum more instances may lose and still count as "stable". */
const val STABLE_SHARE = 0.9

/**
 * [lock_poll_ms] on every lock-on row: how often its engines polled for the global lock (null with the lock off). Runs
 * before it was a column polled at their --lock-poll-ms ([pollMsByRun], run id to ms), or at Flowable's default.
 */
fun AnyFrame.withLockPoll(pollMsByRun: Map<String, Double> = emptyMap()): AnyFrame {
    val has = "lock_poll_ms" in columnNames()
    val hasRun = "run_id" in columnNames()
    val polls = rows().map { r ->
        when {
            r["lock"] != "on" -> null
            has && r["lock_poll_ms"] != null -> num(r["lock_poll_ms"])!!.toInt()
            else -> ((if (hasRun) pollMsByRun[r["run_id"]] else null) ?: DEFAULT_LOCK_POLL_MS).toInt()
        }
    }
    return (if (has) remove("lock_poll_ms") else this).add(polls.toColumn("lock_poll_ms"))
}

/**
 * [jit_ms_per_s] and [jit_window_s] on every drain: the JIT of its busiest engine over the drain after its warm-up
 * (each engine's `jvm:<cell>/engine<i>` series in phase `execute`, its first --warmup seconds left out: they are not
 * in the steady rate either), and how many seconds that was; and [gc_ms_per_s], the busiest engine's GC time over
 * the same stretch, the pause total a post puts beside CPU. Empty for runs whose engines reported none (before
 * 2026-11-28); rows need `run_id`, as [runs] tables give.
 */
fun AnyFrame.withEngineJit(runs: List<RecordedRun>): AnyFrame {
    val byRun = runs.associate { run ->
        val warmup = run.param("warmup")?.toDoubleOrNull() ?: 0.0
        val rows = if (!run.has("timeseries.csv")) emptyList() else run.table("timeseries.csv").rows()
            .filter { it["phase"] == "execute" && (it["series"] as? String)?.let { s -> s.startsWith("jvm:") && "/engine" in s } == true }
        fun perEngine(metric: String) = rows.filter { it["metric"] == metric }
            .groupBy { (it["series"] as String).removePrefix("jvm:") }
            .mapValues { (_, rs) -> rs.sortedBy { num(it["epoch_ms"]) ?: 0.0 }.drop(kotlin.math.ceil(warmup).toInt()).mapNotNull { num(it["value"]) } }
        val gc = perEngine("gc_ms_per_s")
        // per cell: the busiest engine's mean JIT over the shortest engine's window, and the busiest engine's GC time
        run.id to perEngine("jit_ms_per_s").entries.groupBy { it.key.substringBeforeLast("/engine") }.mapValues { (cell, es) ->
            es.filter { it.value.isNotEmpty() }.let { w -> if (w.isEmpty()) null else Triple(w.maxOf { it.value.average() }, w.minOf { it.value.size },
                gc.filterKeys { it.substringBeforeLast("/engine") == cell }.values.filter { it.isNotEmpty() }.maxOfOrNull { it.average() }) }
        }
    }
    val found = rows().map { r -> byRun[r.opt("run_id")]?.get(r["cell"]) }
    val base = listOf("jit_ms_per_s", "jit_window_s", "gc_ms_per_s").fold(this) { f, c -> if (c in f.columnNames()) f.remove(c) else f }
    return base.add(found.map { it?.first }.toColumn("jit_ms_per_s")).add(found.map { it?.second?.toDouble() }.toColumn("jit_window_s"))
        .add(found.map { it?.third }.toColumn("gc_ms_per_s"))
}

/** The engines were warm over the drains compared, by their JIT after warm-up ([withEngineJit], [warmByJit]). */
internal fun drainsWarm(sides: Map<String, List<DataRow<*>>>): Precondition =
    warmByJit(sides, "drains", warmthNotRecorded("time (--warmup seconds of each drain)"))

/** The lock setting "on" at one poll interval, as [lockSetting] names it. */
private fun lockOn(pollMs: Int) = "on, polled every $pollMs ms"

/** A drain's lock setting, the poll included: "off", or "on, polled every 500 ms" (rows from [withLockPoll]). */
private fun DataRow<*>.lockSetting(): String =
    if (this["lock"] == "on") lockOn(num(this["lock_poll_ms"])?.toInt() ?: DEFAULT_LOCK_POLL_MS.toInt()) else this["lock"] as String

/** The valid drains of one configuration. */
private fun AnyFrame.drainRows(type: String, instances: Int, acquire: Int, lock: String): List<DataRow<*>> =
    rows().filter { it["valid"] == true && it["job_type"] == type && num(it["instances"])?.toInt() == instances &&
        num(it["acquire_size"])?.toInt() == acquire && it.lockSetting() == lock }

/** The valid drains of one configuration, as their steady rates (start-up and tail left out, where recorded) per repetition. */
private fun AnyFrame.steadyRates(type: String, instances: Int, acquire: Int, lock: String): List<Double> =
    drainRows(type, instances, acquire, lock).mapNotNull { it.rate(steady = true) }

private fun AnyFrame.drainRows(type: String, c: Triple<Int, Int, String>) = drainRows(type, c.first, c.second, c.third)

private fun DataRow<*>.config() = Triple(num(this["instances"])!!.toInt(), num(this["acquire_size"])!!.toInt(), lockSetting())

/** A drain's rate with its start-up and tail (jobs_per_s), or its steady middle (steady_jobs_per_s) where recorded. */
private fun DataRow<*>.rate(steady: Boolean): Double? = if (steady) num(opt("steady_jobs_per_s")) ?: num(opt("jobs_per_s")) else num(opt("jobs_per_s"))

/** A drain's % of its theoretical maximum at its steady rate, where both were recorded, else over the whole drain. */
private fun DataRow<*>.steadyPct(): Double? {
    val steady = num(opt("steady_jobs_per_s")); val max = num(opt("theoretical_max_per_s"))
    return if (steady != null && max != null && max > 0) 100 * steady / max else num(opt("pct_of_max"))
}

/** Start-up and tail may take at most this share of a drain, or its length, not the executor, decides its rate. */
const val MAX_DRAIN_OVERHEAD = 0.05

/**
 * The drains are long enough that start-up and tail decide nothing: in each, the whole drain's rate is within
 * [MAX_DRAIN_OVERHEAD] of its steady rate. Not checked for drains that recorded no steady rate.
 */
internal fun drainsLongEnough(sides: Map<String, List<DataRow<*>>>): Precondition {
    val name = "drains long enough"
    val overhead = sides.mapValues { (_, rs) -> rs.mapNotNull { r ->
        val whole = num(r.opt("jobs_per_s")); val steady = num(r.opt("steady_jobs_per_s"))
        if (whole == null || steady == null || steady <= 0) null else 1 - whole / steady
    } }.filterValues { it.isNotEmpty() }
    if (overhead.isEmpty()) return Precondition(name, null, "no steady rate recorded")
    val worst = overhead.mapValues { it.value.max() }
    return Precondition(name, worst.values.all { it <= MAX_DRAIN_OVERHEAD },
        "start-up and tail cost up to " + worst.entries.joinToString(", ") { "${formatNumber(100 * it.value)}% (${it.key})" } +
            " of the drain's rate (at most ${formatNumber(100 * MAX_DRAIN_OVERHEAD)}%)")
}

/** What limits a drain that the lock and the acquire size act on: acquiring jobs, or the database's row locks. */
private val ACQUISITION_BOUND = setOf("acquisition", "database-locks")

/**
 * The acquisition factor (the lock, the acquire size) is live when at least one side's drains are mostly limited by
 * acquisition or database locks; executor threads that are all busy, or a machine at its wall, leave it nothing to act on.
 */
internal fun acquisitionLive(factor: String, sides: Map<String, List<DataRow<*>>>): Precondition {
    fun bound(rs: List<DataRow<*>>) = rs.count { it.opt("bottleneck") in ACQUISITION_BOUND }
    val recorded = sides.values.flatten().any { it.opt("bottleneck") != null }
    if (!recorded) return factorLive(factor, null, "no bottleneck recorded")
    val live = sides.values.any { rs -> rs.isNotEmpty() && 2 * bound(rs) > rs.size }
    val limits = sides.entries.joinToString("; ") { (side, rs) ->
        "$side: " + rs.groupingBy { it.opt("bottleneck")?.toString() ?: "?" }.eachCount().entries.joinToString(", ") { "${it.key} ${it.value}" }
    }
    return factorLive(factor, live, "what limited the drains: $limits" + if (live) "" else
        " (no side mostly limited by acquisition or database locks, so the $factor had nothing to act on)")
}

/**
 * Room for a larger batch: a larger acquire size can act only where an acquisition could take at least twice the jobs
 * [smaller] takes. An engine takes at most its queue's free places, so a queue that stays nearly full caps every acquire
 * size alike ([larger]: the larger size's drains, with queue_size and queued_mean).
 */
internal fun acquireSizeLive(larger: List<DataRow<*>>, smaller: Int): Precondition {
    val name = "room for a larger batch"
    val free = larger.mapNotNull { r -> num(r.opt("queue_size"))?.let { q -> num(r.opt("queued_mean"))?.let { q - it } } }
    if (free.isEmpty()) return Precondition(name, null, "no queue occupancy recorded")
    val room = free.average()
    return Precondition(name, room >= 2 * smaller, "the executor's queue had ${formatNumber(room)} free places on average, so an acquisition " +
        "could take about that many jobs" + if (room >= 2 * smaller) ", at least twice acquire $smaller" else ": under twice acquire $smaller, so a " +
        "larger size had little to add (a --queue-size well above the largest acquire size gives it room)")
}

/** The checks every drain comparison makes: forks, the machine's wall, the drains' length, and the engines' warmth. */
private fun drainChecks(sides: Map<String, List<DataRow<*>>>): List<Precondition> {
    val cores = sides.values.flatten().firstNotNullOfOrNull { num(it.opt("cores"))?.toInt() } ?: 0
    return listOf(enoughForks(sides.mapValues { it.value.size }),
        belowWall(sides.mapValues { (_, rs) -> rs.mapNotNull { num(it.opt("cpu_system_pct")) } }, cores),
        drainsLongEnough(sides),
        drainsWarm(sides))
}

private fun Estimate.pct() = formatNumber(mean) + "% (" + (if (range) "range, $n repetition(s)" else "95% t") +
    " ${formatNumber(low)}..${formatNumber(high)})"

private fun whyNot(e: Estimate?, missing: String) = when {
    e == null -> missing
    e.range -> "Under 3 repetitions a side the numbers are ranges, which support no claim."
    else -> null
}

/**
 * The table the workflow post opens with: the original's claims (82% of the theoretical maximum, stable as instances
 * are added; lock off about 1/6 of lock on; larger acquire sizes faster) against the valid drains in [cells]
 * (throughput.csv rows under one label) and the published numbers [pub]. Each answer comes from a mean's or a ratio's
 * 95% interval over repetitions, at the drains' steady rates, and only where its preconditions hold: enough
 * repetitions, the machine below its wall, drains long enough, and the factor live; configurations a run did not
 * drain are said to be missing.
 */
fun workflowClaims(cells: AnyFrame, pub: AnyFrame, engines: AnyFrame? = null): List<Claim> {
    val valid = cells.withLockPoll().filter { it["valid"] == true }
    val fixed = valid.filter { it["job_type"] == "fixed" }
    val original = pub.publishedValue("fixed", "pct_of_theoretical_max")
    val claims = mutableListOf<Claim>()
    fun pctOf(type: String, c: Triple<Int, Int, String>) = fixed.drainRows(type, c).mapNotNull { it.steadyPct() }

    // the best one-instance configuration, as the original reported its best
    val oneInstance = fixed.rows().filter { num(it["instances"])?.toInt() == 1 }.map { it.config() }.distinct()
        .associateWith { c -> meanInterval(pctOf("fixed", c)) }
    val best = oneInstance.maxByOrNull { it.value.mean }
    val pct = best?.value
    val pctAnswer = answerAbove(pct, original)
    claims += claim("Fixed jobs reach ${formatNumber(original)}% of the theoretical maximum (instances × threads × 1000 / job ms)",
        pct?.let { "${it.pct()} at the steady rate on 1 instance, acquire ${best.key.second}, lock ${best.key.third}" } ?: "not measured",
        pctAnswer, whyNot(pct, "No valid one-instance fixed-job drain in these runs.") ?: when (pctAnswer) {
            Answer.HOLDS -> "The whole interval lies above ${formatNumber(original)}%."
            Answer.DOES_NOT_HOLD -> "The whole interval lies at or below ${formatNumber(original)}%."
            else -> "The interval straddles ${formatNumber(original)}%."
        }, best?.let { drainChecks(mapOf("1 instance" to fixed.drainRows("fixed", it.key))) }.orEmpty())

    // stable as instances are added: the largest instance count against one, in the same acquire size and lock, at the
    // steady rates (a fixed start-up spread over a drain four times shorter would otherwise decide it)
    val most = fixed.rows().mapNotNull { num(it["instances"])?.toInt() }.maxOrNull()
    val sides = if (best == null || most == null || most == 1) null else {
        val (_, a, l) = best.key
        mapOf("$most instances" to fixed.drainRows("fixed", most, a, l), "1 instance" to fixed.drainRows("fixed", 1, a, l))
    }
    fun sharesRatio(share: (DataRow<*>) -> Double?): Estimate? = sides?.values?.toList()?.let { (many, one) ->
        val m = many.mapNotNull(share); val o = one.mapNotNull(share)
        if (m.isEmpty() || o.isEmpty()) null else ratioInterval(m, o)
    }
    val scaled = sharesRatio { it.steadyPct() }
    val wholeDrain = sharesRatio { num(it.opt("pct_of_max")) }
    // a backlog under two batches per engine leaves some engines without a batch: that is the scale, not the engines;
    // an engine acquires at most its free queue places, so a queue smaller than the acquire size is the batch
    val sideRows = sides?.values?.flatten().orEmpty()
    val jobs = sideRows.mapNotNull { num(it.opt("jobs")) }.minOrNull()
    val queue = sideRows.mapNotNull { num(it.opt("queue_size"))?.toInt() }.minOrNull()
    val batch = best?.key?.second?.let { a -> queue?.let { minOf(a, it) } ?: a }
    val starved = best != null && most != null && jobs != null && jobs < 2.0 * most * batch!!
    val stableAnswer = answerAbove(scaled, STABLE_SHARE)
    val backlog = if (jobs == null || most == null || batch == null || scaled == null) emptyList() else listOf(Precondition("a batch for every engine", !starved,
        "${formatNumber(jobs)} jobs per drain against two batches of $batch for each of $most engines (${formatNumber(2.0 * most * batch)})" +
            if (starved) ": some engines got no batch; drain more jobs (--jobs) or compare at a smaller acquire size" else ""))
    claims += claim("… and stays there as instances are added",
        scaled?.let { "$most instances keep ${ratioText(it)} of one instance's share at the steady rate" +
            (wholeDrain?.let { w -> "; over the whole drain, start-up included, ${ratioText(w)}" } ?: "") } ?: "not measured", stableAnswer,
        whyNot(scaled, "These runs do not drain fixed jobs on more than one instance in the best one-instance configuration.") ?: when (stableAnswer) {
            Answer.HOLDS -> "The whole interval lies above ${formatNumber(STABLE_SHARE)}: at most a tenth is lost."
            Answer.DOES_NOT_HOLD -> "The whole interval lies at or below ${formatNumber(STABLE_SHARE)}: more instances lose more than a tenth."
            else -> "The interval straddles ${formatNumber(STABLE_SHARE)}."
        }, sides?.let { backlog + drainChecks(it) }.orEmpty())

    // the lock and the acquire size, per job type, where the most instances ran both settings; the lock once per poll
    // interval its engines used, since how often a waiting engine polls can decide which setting is faster
    val onOverOff = 1 / pub.publishedValue("lock-off/lock-on", "throughput_ratio")
    val onSettings = valid.rows().map { it.lockSetting() }.filter { it != "off" }.distinct()
        .sortedBy { it.filter(Char::isDigit).toIntOrNull() ?: 0 }.ifEmpty { listOf("on") }
    for (type in valid.rows().map { it["job_type"] as String }.distinct().sorted()) for (on in onSettings) {
        val lock = pairedRatio(valid, type, { it.third == on }, { c -> c.copy(third = "off") })
        val e = lock?.second
        // with the lock off, one engine may take the whole backlog into its queue: then the drain measures the hoard
        val hoard = lock?.first?.takeIf { it.first > 1 }?.let { c -> engines?.let { busiestShare(it, valid, type, c.copy(third = "off")) } }
        val lockSides = lock?.first?.let { c -> mapOf("lock on" to valid.drainRows(type, c), "lock off" to valid.drainRows(type, c.copy(third = "off"))) }
        val hoardCheck = hoard?.let { h -> Precondition("every engine took jobs", h < HOARDED_SHARE, "with the lock off the busiest engine " +
            "committed ${formatNumber(100 * h)}% of the jobs" + if (h >= HOARDED_SHARE) ": the backlog fits one engine's queue (--queue-size), " +
            "so this measures one engine, not the lock; drain more jobs than instances × queue size (--jobs)" else "") }
        val lockAnswer = answerAgainstPublished(e, onOverOff)
        val poll = if (onSettings.size > 1) on.removePrefix("on") else "" // ", polled every 100 ms"
        claims += claim("With the global acquire lock off, throughput falls to about 1/${formatNumber(onOverOff)} of lock on ($type jobs$poll)",
            lock?.let { (c, r) -> "lock on / off: ${ratioText(r)} at ${c.first} instance(s), acquire ${c.second}, steady rates" } ?: "not measured", lockAnswer,
            whyNot(e, "These runs do not drain $type jobs with the lock both on and off in one configuration.") ?: publishedRuleWhy(lockAnswer, onOverOff, e!!),
            lockSides?.let { listOfNotNull(acquisitionLive("lock", it), hoardCheck) + drainChecks(it) }.orEmpty())
    }
    val acquire = pairedRatio(valid, "fixed", { it.second > 32 }, { c -> c.copy(second = 32) })
    val acquireAnswer = answerAbove(acquire?.second, 1.0)
    val acquireSides = acquire?.first?.let { c -> mapOf("acquire ${c.second}" to valid.drainRows("fixed", c), "acquire 32" to valid.drainRows("fixed", c.copy(second = 32))) }
    claims += claim("Larger acquire sizes are significantly faster (fixed jobs)",
        acquire?.let { (c, e) -> "acquire ${c.second} / 32: ${ratioText(e)} at ${c.first} instance(s), lock ${c.third}, steady rates" } ?: "not measured", acquireAnswer,
        whyNot(acquire?.second, "These runs do not drain fixed jobs at acquire size 32 and a larger one in one configuration.") ?: when (acquireAnswer) {
            Answer.HOLDS -> "The whole interval lies above 1 (the original gives no size for this one, only its direction)."
            Answer.DOES_NOT_HOLD -> "The whole interval lies at or below 1."
            else -> "The interval straddles 1."
        }, acquireSides?.let { s -> listOf(acquireSizeLive(s.values.first(), 32), acquisitionLive("acquire size", s)) + drainChecks(s) }.orEmpty())
    return claims
}

/** A configuration is a hoard when its busiest engine committed at least this share of the jobs, on average over its drains. */
private const val HOARDED_SHARE = 0.9

/**
 * The busiest engine's share of the committed jobs in the valid drains of one configuration (engines.csv: commit_events
 * per cell and instance), averaged over its drains; null when engines.csv has none of them.
 */
internal fun busiestShare(engines: AnyFrame, valid: AnyFrame, type: String, config: Triple<Int, Int, String>): Double? {
    // a drain is its run and cell: runs pooled under one label reuse cell names
    fun drain(row: DataRow<*>) = (if ("run_id" in row.df().columnNames()) row["run_id"] else null) to row["cell"]
    val drained = valid.rows().filter { it["job_type"] == type && it.config() == config }.map { drain(it) }.toSet()
    val shares = engines.rows().filter { drain(it) in drained }.groupBy { drain(it) }.values.mapNotNull { rows ->
        val commits = rows.map { num(it["commit_events"]) ?: 0.0 }
        commits.sum().takeIf { it > 0 }?.let { commits.max() / it }
    }
    return shares.takeIf { it.isNotEmpty() }?.average()
}

/**
 * The ratio of [type]'s jobs/s in a configuration that [isNumerator] picks to the one [denominatorOf] names, at the
 * largest instance count (then acquire size) where both sides have enough valid drains for an interval, else where
 * both were drained at all; null when no configuration has both.
 */
private fun pairedRatio(cells: AnyFrame, type: String, isNumerator: (Triple<Int, Int, String>) -> Boolean,
                        denominatorOf: (Triple<Int, Int, String>) -> Triple<Int, Int, String>): Pair<Triple<Int, Int, String>, Estimate>? =
    cells.rows().filter { it["job_type"] == type }.map { it.config() }.distinct().filter(isNumerator)
        .sortedWith(compareByDescending<Triple<Int, Int, String>> { it.first }.thenByDescending { it.second })
        .mapNotNull { c ->
            val d = denominatorOf(c)
            val top = cells.drainRows(type, c).mapNotNull { it.rate(steady = true) }
            val bottom = cells.drainRows(type, d).mapNotNull { it.rate(steady = true) }
            if (top.isEmpty() || bottom.isEmpty()) null else c to ratioInterval(top, bottom)
        }
        // the largest configuration with enough valid drains a side for an interval, else the largest there is
        .let { pairs -> pairs.firstOrNull { !it.second.range } ?: pairs.firstOrNull() }

/**
 * Lock off over lock on, per job type, instance count, acquire size and lock poll that ran both (valid drains of
 * [cells]; [pollMsByRun] as in [withLockPoll]): the ratio of mean steady jobs/s (start-up and tail left out, as the
 * claims read them) with its interval, beside the original's 1/6.
 */
fun lockRatios(cells: AnyFrame, pollMsByRun: Map<String, Double> = emptyMap()): AnyFrame {
    val valid = cells.withLockPoll(pollMsByRun).filter { it["valid"] == true }
    val rows = valid.rows().filter { it["lock"] == "on" }
        .map { listOf(it["job_type"] as String, num(it["instances"])!!.toInt(), num(it["acquire_size"])!!.toInt(), num(it["lock_poll_ms"])!!.toInt()) }.distinct()
        .mapNotNull { (t, k, a, poll) ->
            val on = valid.steadyRates(t as String, k as Int, a as Int, lockOn(poll as Int)); val off = valid.steadyRates(t, k, a, "off")
            if (on.isEmpty() || off.isEmpty()) null else ratioInterval(off, on).let { e -> listOf(t, k, a, poll, e.mean, e.low, e.high, e.interval, e.n) }
        }
    val names = listOf("job_type", "instances", "acquire_size", "lock_poll_ms", "off_over_on", "low", "high", "interval", "n")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * What polling for the lock more often does: per job type, instance count and acquire size, lock-on steady jobs/s at
 * each shorter poll over those at the longest one, with its interval (valid drains of [cells]; [pollMsByRun] as in
 * [withLockPoll]). The original saw a shorter wait add a few hundred jobs/s. Empty when no configuration ran two polls.
 */
fun lockPollEffect(cells: AnyFrame, pollMsByRun: Map<String, Double> = emptyMap()): AnyFrame {
    val valid = cells.withLockPoll(pollMsByRun).filter { it["valid"] == true && it["lock"] == "on" }
    val rows = valid.rows().groupBy { listOf(it["job_type"] as String, num(it["instances"])!!.toInt(), num(it["acquire_size"])!!.toInt()) }
        .flatMap { (key, rs) ->
            val (t, k, a) = key
            val polls = rs.map { num(it["lock_poll_ms"])!!.toInt() }.distinct().sorted()
            val longest = polls.last()
            fun at(poll: Int) = valid.steadyRates(t as String, k as Int, a as Int, lockOn(poll))
            polls.dropLast(1).map { poll ->
                val e = ratioInterval(at(poll), at(longest))
                listOf(t, k, a, poll, longest, at(poll).average() - at(longest).average(), e.mean, e.low, e.high, e.interval, e.n)
            }
        }
    val names = listOf("job_type", "instances", "acquire_size", "lock_poll_ms", "against_poll_ms", "jobs_per_s_gained", "ratio", "low", "high", "interval", "n")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * Each lock-on configuration of [cells] beside the ceiling the lock's polling would set if an engine took one batch
 * per poll: instances x acquire size x 1000 / poll ms jobs/s, the poll from each row's lock_poll_ms (for runs before
 * that column, from [pollMsByRun] as in [withLockPoll]). A drain near 100% of its ceiling while CPU is to spare was
 * held back by the lock's polling; one far below it was limited by something else.
 */
fun lockPollCeiling(cells: AnyFrame, pollMsByRun: Map<String, Double> = emptyMap()): AnyFrame {
    val rows = cells.withLockPoll(pollMsByRun).rows().filter { it["valid"] == true && it["lock"] == "on" }
        .groupBy { listOf(it["job_type"], num(it["instances"])!!.toInt(), num(it["acquire_size"])!!.toInt(), num(it["lock_poll_ms"])!!) }
        .map { (key, rs) ->
            val (type, k, a, poll) = key
            val ceiling = (k as Int) * (a as Int) * 1000.0 / (poll as Double)
            val rate = rs.mapNotNull { num(it.opt("jobs_per_s")) }.average()
            val system = rs.mapNotNull { num(it.opt("cpu_system_pct")) }.average()
            listOf(type, k, a, poll, rate, ceiling, 100 * rate / ceiling, system, rs.map { it.opt("bottleneck") }.distinct().joinToString(", "))
        }
    val names = listOf("job_type", "instances", "acquire_size", "lock_poll_ms", "jobs_per_s", "poll_ceiling", "pct_of_ceiling", "cpu_system_pct", "bottleneck")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * What a committed job cost the executor's threads, per job type, instance count, acquire size and lock setting (valid
 * drains of [cells]): busy thread-milliseconds per committed job (threads busy x threads x instances / jobs/s), beside
 * jobs/s, how busy the threads were and the database's lock waiters. A drain whose threads were all busy yet slow
 * spent its time inside the jobs (a fixed job's sleep, a wait in the engine); one with idle threads waited for work.
 */
fun threadTimePerJob(cells: AnyFrame, pollMsByRun: Map<String, Double> = emptyMap()): AnyFrame = frameOf(
    listOf("job_type", "instances", "acquire_size", "lock", "jobs_per_s", "threads_busy_pct", "thread_ms_per_job", "db_lock_waiters_mean", "n"),
    cells.withLockPoll(pollMsByRun).rows().filter { it["valid"] == true }
        .groupBy { listOf(it["job_type"] as String, num(it["instances"])!!.toInt(), num(it["acquire_size"])!!.toInt(), it.lockSetting()) }
        .map { (key, rs) ->
            val perJob = rs.mapNotNull { r ->
                val busy = num(r["threads_busy_pct"]); val rate = num(r.opt("jobs_per_s")); val threads = num(r["threads"])
                if (busy == null || rate == null || threads == null || rate <= 0) null else busy / 100 * threads * (key[1] as Int) * 1000 / rate
            }
            key + listOf(rs.mapNotNull { num(it.opt("jobs_per_s")) }.average(), rs.mapNotNull { num(it["threads_busy_pct"]) }.average(),
                perJob.takeIf { it.isNotEmpty() }?.average(), rs.mapNotNull { num(it["db_lock_waiters_mean"]) }.takeIf { it.isNotEmpty() }?.average(), rs.size)
        })

/** Flowable's asyncJobsGlobalLockPollRate when not set. */
const val DEFAULT_LOCK_POLL_MS = 500.0

/**
 * How each run sized the executor, one Markdown line per run: the calibration that set the threads (or threads set by
 * hand) and the queue per instance (runs before queue_size was a column used their --queue-size).
 */
fun executorSizing(runs: List<RecordedRun>): String = runs.joinToString("\n") { r ->
    val c = r.manifest["notes"]?.get("calibration")
    val threads = if (c == null) "threads set by hand (--threads ${r.param("threads")})"
        else "no-op drain ${formatNumber(c["noopJobsPerS"].asDouble())} jobs/s (${c["rateFrom"].asText()}, ${c["calibrationThreads"].asInt()} threads, " +
            "bottleneck ${c["bottleneck"].asText()}) → threads per instance: **${c["threads"].asInt()}**, theoretical maximum " +
            "${formatNumber(c["theoreticalMaxPerInstance"].asDouble())} jobs/s at ${(c["headroom"].asDouble() * 100).toInt()}% headroom"
    val cells = r.table("throughput.csv")
    val queues = if ("queue_size" in cells.columnNames()) cells.rows().mapNotNull { num(it.opt("queue_size"))?.toInt() }.distinct() else emptyList()
    val queue = if (queues.isEmpty()) "queue ${r.param("queue-size")} per instance (--queue-size)"
        else "queue **${queues.joinToString { formatNumber(it.toDouble()) }}** per instance" +
            if (r.param("queue-size") == "auto") " (auto: 64 places per thread, the original's 8192 for 128)" else " (--queue-size)"
    "- `${r.id}`: $threads; $queue"
}

/**
 * Where the time went under the lock claim (why lock off does or does not hurt here): the engines' profiles with the
 * lock on and off, fixed jobs at the most instances measured and the smallest acquire size, over every repetition's
 * drain (each a cell of its own); when the runs kept profiles (`--profile`). [cells] is the throughput table.
 */
fun List<RecordedRun>.lockWhereTimeWent(cells: AnyFrame): Markdown {
    val fixed = cells.rows().filter { it["job_type"] == "fixed" }
    val most = fixed.mapNotNull { num(it["instances"])?.toInt() }.maxOrNull() ?: return Markdown("")
    val acquire = fixed.mapNotNull { num(it["acquire_size"])?.toInt() }.minOrNull() ?: return Markdown("")
    fun side(lock: String) = fixed.filter { num(it["instances"])?.toInt() == most && num(it["acquire_size"])?.toInt() == acquire && it["lock"] == lock }
        .map { it["cell"].toString() }.distinct()
    return whereTimeWent("lock on, $most instance(s)", side("on"), "lock off, $most instance(s)", side("off"))
}
