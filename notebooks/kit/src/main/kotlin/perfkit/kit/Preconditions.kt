package perfkit.kit

import org.jetbrains.kotlinx.dataframe.api.columnNames

// The preconditions a claim is checked against before any interval is read (docs/method.md, "Preconditions"). Each
// takes plain numbers from the run's own tables, so each study states what it checks and the rule stays in one place.

/** The machine's wall: system CPU at or above this share of all its cores (the harness's saturation rule, StepVerdict). */
const val WALL_SHARE = 0.9

/** Steal above this, in % of one core, is heavy: the hypervisor, not the system, decides the step (the harness's rule). */
const val HEAVY_STEAL_PCT = 20.0

/** A driver late by more than this share of the SLO at p99 did not offer the load it was asked to (the harness's rule, OpenStep). */
const val LATENESS_SHARE_OF_SLO = 0.1

/** Steps pooled in one comparison must have been offered the same load within this share. */
const val SAME_LOAD_TOLERANCE = 0.05

/** At least [min] valid forks (repetitions, searches) on every side, so each side has an interval, not a range. */
fun enoughForks(forksBySide: Map<String, Int>, min: Int = MIN_REPETITIONS_FOR_CLAIM): Precondition =
    Precondition("enough forks", forksBySide.isNotEmpty() && forksBySide.values.all { it >= min },
        forksBySide.entries.joinToString(", ") { "${it.key} ${it.value}" } + " (at least $min a side)")

/**
 * Neither side at the machine's wall: no step a side's answer uses ran at [WALL_SHARE] or more of all [cores] (system
 * CPU in % of one core), or with steal above [HEAVY_STEAL_PCT]. Two sides at one wall give the machine's ratio, and a
 * load driver sharing the cores pulls it toward 1. Not checked (null) when no CPU was recorded.
 */
fun belowWall(cpuBySide: Map<String, List<Double>>, cores: Int, stealBySide: Map<String, List<Double>> = emptyMap()): Precondition {
    val name = "below the machine's wall"
    if (cores <= 0 || cpuBySide.values.all { it.isEmpty() }) return Precondition(name, null, "no system CPU recorded")
    val wall = WALL_SHARE * 100 * cores
    val parts = cpuBySide.filterValues { it.isNotEmpty() }.map { (side, cpu) ->
        val at = cpu.count { it >= wall }
        val stolen = stealBySide[side].orEmpty().count { it > HEAVY_STEAL_PCT }
        Triple(side, at + stolen, "$side up to ${formatNumber(cpu.max())}%" + (if (at > 0) " ($at of ${cpu.size} at the wall)" else "") +
            (if (stolen > 0) ", $stolen with steal above ${formatNumber(HEAVY_STEAL_PCT)}% of a core" else ""))
    }
    return Precondition(name, parts.all { it.second == 0 },
        "system CPU ${parts.joinToString(", ") { it.third }} of ${100 * cores}% (the wall: ${formatNumber(wall)}%)")
}

/**
 * The load driver was on time in every step used, met or missed: its lateness p99 at most [LATENESS_SHARE_OF_SLO] of
 * [sloMs] in each. A late driver offered less than the rate the step is labelled with, so its latency belongs to no rate.
 */
fun driverOnTime(latenessP99MsByStep: Map<String, Double?>, sloMs: Double): Precondition {
    val name = "driver on time"
    val known = latenessP99MsByStep.filterValues { it != null && !it.isNaN() }.mapValues { it.value!! }
    if (known.isEmpty()) return Precondition(name, null, "no lateness recorded")
    val limit = LATENESS_SHARE_OF_SLO * sloMs
    val late = known.filterValues { it > limit }
    return Precondition(name, late.isEmpty(), if (late.isEmpty())
        "lateness p99 at most ${formatNumber(known.values.max())} ms in ${known.size} step(s) (limit ${formatNumber(limit)} ms, a tenth of the SLO)"
    else late.entries.joinToString(", ") { "${it.key} late by ${formatNumber(it.value)} ms at p99" } + " (limit ${formatNumber(limit)} ms, a tenth of the SLO)")
}

/** The steps pooled in one comparison were offered the same load, within [SAME_LOAD_TOLERANCE]. */
fun sameOfferedLoad(rates: List<Double>, unit: String = "req/s"): Precondition {
    val name = "same offered load"
    if (rates.isEmpty()) return Precondition(name, null, "no offered rate recorded")
    val spread = rates.max() / rates.min() - 1
    return Precondition(name, spread <= SAME_LOAD_TOLERANCE,
        "offered ${rates.distinct().sorted().joinToString(", ") { formatNumber(it) }} $unit " +
            if (spread <= SAME_LOAD_TOLERANCE) "(within ${formatNumber(100 * SAME_LOAD_TOLERANCE)}%)"
            else "(${formatNumber(100 * spread)}% apart, more than ${formatNumber(100 * SAME_LOAD_TOLERANCE)}%: pooled steps ran at different loads)")
}

/** A step's JIT per second judges its warmth only over at least this many seconds: shorter, it is one or two samples. */
const val MIN_JIT_WINDOW_S = 5.0

/**
 * Warmth, judged from the servers' JIT over the windows used ([windowsS], seconds). Over windows long enough to judge
 * ([MIN_JIT_WINDOW_S]) the steps a JIT flagged as cold are left out and the answer is [withoutCold]; over shorter ones a
 * flag rests on a sample or two, so no step is dropped on it and the answer is [withEvery], with warmth not checked.
 * Either way [cold] lists the flagged steps with their numbers, and the other answer is said when it differs.
 * Returns the answer to give and the precondition to list.
 */
fun judgeWarmth(withEvery: Answer, withoutCold: Answer, cold: List<String>, windowsS: List<Double>): Pair<Answer, Precondition> {
    val name = "JVMs warm"
    val jit = "the JIT above ${formatNumber(COLD_JIT_MS_PER_S)} ms/s"
    if (cold.isEmpty()) return withoutCold to Precondition(name, true, "no step used ran with $jit")
    val listed = cold.take(4).joinToString(", ") + if (cold.size > 4) " and ${cold.size - 4} more" else ""
    val short = windowsS.isNotEmpty() && windowsS.min() < MIN_JIT_WINDOW_S
    val span = if (windowsS.isEmpty() || windowsS.min() == windowsS.max()) "${formatNumber(windowsS.firstOrNull() ?: 0.0)} s" else "${formatNumber(windowsS.min())} to ${formatNumber(windowsS.max())} s"
    return if (short) withEvery to Precondition(name, null, "steps of $span are too " +
        "short to judge by their JIT (at least ${formatNumber(MIN_JIT_WINDOW_S)} s), so every valid fork is used; ${cold.size} showed $jit ($listed)" +
        if (withoutCold != withEvery) "; without them the answer would be \"${withoutCold.words}\"" else "; without them the answer is the same")
    else withoutCold to Precondition(name, true, "${cold.size} step(s) left out with $jit ($listed)" +
        if (withoutCold != withEvery) "; with them the answer would be \"${withEvery.words}\"" else "; with them the answer is the same")
}

/** A step ran while a JVM under test compiled above this many ms per second of JIT: the warm rule. */
const val COLD_JIT_MS_PER_S = 50.0

/** The JVMs' warmth where these forks record no JIT series: listed as not checked, with the warm-up rule they did follow. */
fun warmthNotRecorded(warmup: String): Precondition =
    Precondition("JVMs warm", null, "not judged from the JIT for these forks; warm-up ended by $warmup")

/**
 * The factor under test was live: on the sides compared it acted on what limited them, and its levels differed in what
 * ran. [live] and [detail] come from the study, which knows its factor; null when these runs cannot show it.
 */
fun factorLive(factor: String, live: Boolean?, detail: String): Precondition = Precondition("$factor live", live, detail)

/**
 * [belowWall] from steps the harness already judged by the same rule (a sweep's `saturated`: system CPU at 90% of all
 * cores or more), each step as its system CPU (for the reader) and that flag.
 */
fun belowWallJudged(stepsBySide: Map<String, List<Pair<Double?, Boolean>>>): Precondition {
    val name = "below the machine's wall"
    val sides = stepsBySide.filterValues { it.isNotEmpty() }
    if (sides.isEmpty()) return Precondition(name, null, "no step to judge")
    val parts = sides.map { (side, steps) ->
        val at = steps.count { it.second }
        val cpu = steps.mapNotNull { it.first }.maxOrNull()
        "$side ${if (at == 0) "below it" else "$at of ${steps.size} step(s) at it"}" + (cpu?.let { " (system CPU up to ${formatNumber(it)}%)" } ?: "")
    }
    return Precondition(name, sides.values.all { steps -> steps.none { it.second } }, parts.joinToString("; "))
}

/** Warm-up ended by a rule that settled in every step used (a step whose warm-up reached its limit is marked by the study). */
fun warmupSettled(settledBySide: Map<String, List<Boolean?>>, rule: String): Precondition {
    val all = settledBySide.values.flatten()
    if (all.isEmpty() || all.all { it == null }) return warmthNotRecorded(rule)
    val unsettled = settledBySide.mapValues { (_, s) -> s.count { it == false } }.filterValues { it > 0 }
    return Precondition("JVMs warm", unsettled.isEmpty(), if (unsettled.isEmpty()) "warm-up settled by its rule ($rule) in all ${all.size} step(s); not judged from the JIT"
        else unsettled.entries.joinToString(", ") { "${it.key}: ${it.value} step(s) whose warm-up never settled" } + " ($rule)")
}

/** A column's value, or null where this row's table has no such column (runs recorded before it was one). */
internal fun org.jetbrains.kotlinx.dataframe.DataRow<*>.opt(column: String): Any? = if (column in df().columnNames()) get(column) else null
