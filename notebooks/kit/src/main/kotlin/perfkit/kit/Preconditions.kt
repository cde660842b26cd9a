package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.add
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.remove
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn

// The preconditions a claim is checked against before any interval is read (docs/method.md, "Preconditions"). Each
// takes plain numbers from the run's own tables, so each study states what it checks and the rule stays in one place.

/** The machine's wall: system CPU at or above this share of all its cores (the harness's saturation rule, StepVerdict). */
const val WALL_SHARE = 0.9

/** Steal above this, in % of one core, is heavy: the hypervisor, not the system, decides the step (the harness's rule). */
const val HEAVY_STEAL_PCT = 20.0

/** A driver late by more than this share of the SLO at p99 did not offer the load it was asked to (the harness's rule, OpenStep). */
const val LATENESS_SHARE_OF_SLO = 0.1

/**
 * CPU outside the processes a step accounts for, in % of one core, above which something else shared the machine:
 * the references leave 1-20% outside them (the harness's own sampling, the kernel's network work); a bystander
 * spinning in GC took 96-192%.
 */
const val OTHERS_BUSY_PCT = 30.0

/** Steps pooled in one comparison must have been offered the same load within this share. */
const val SAME_LOAD_TOLERANCE = 0.05

/** A step ran while a JVM under test compiled above this many ms per second of JIT: the warm rule. */
const val COLD_JIT_MS_PER_S = 50.0

/** A step's JIT per second judges its warmth only over at least this many seconds: shorter, it is one or two samples. */
const val MIN_JIT_WINDOW_S = 5.0

/** The checks' names, as the claims tables list them. */
const val ENOUGH_FORKS = "enough forks"
const val BELOW_WALL = "below the machine's wall"
const val DRIVER_ON_TIME = "driver on time"
const val SAME_LOAD = "same offered load"
const val WARM = "JVMs warm"
const val NOTHING_ELSE_BUSY = "nothing else busy"

/** At least [min] valid forks (repetitions, searches) on every side, so each side has an interval, not a range. */
fun enoughForks(forksBySide: Map<String, Int>, min: Int = MIN_REPETITIONS_FOR_CLAIM): Precondition =
    Precondition(ENOUGH_FORKS, forksBySide.isNotEmpty() && forksBySide.values.all { it >= min },
        forksBySide.entries.joinToString(", ") { "${it.key} ${it.value}" } + " (at least $min a side)")

/**
 * Neither side at the machine's wall: no step a side's answer uses ran at [WALL_SHARE] or more of all [cores] ([what]
 * in % of one core: system CPU, or what the study can sum of it), or with steal above [HEAVY_STEAL_PCT]. Two sides at
 * one wall give the machine's ratio, and a load driver sharing the cores pulls it toward 1. Failed as soon as one
 * recorded step is at the wall; not checked (null) when a side has no CPU recorded, or the cores are unknown.
 */
fun belowWall(cpuBySide: Map<String, List<Double>>, cores: Int, stealBySide: Map<String, List<Double>> = emptyMap(),
              what: String = "system CPU"): Precondition {
    if (cores <= 0) return Precondition(BELOW_WALL, null, "no core count recorded")
    val wall = WALL_SHARE * 100 * cores
    val parts = cpuBySide.map { (side, cpu) ->
        val at = cpu.count { it >= wall }
        val stolen = stealBySide[side].orEmpty().count { it > HEAVY_STEAL_PCT }
        Triple(side, at + stolen, if (cpu.isEmpty()) "$side not recorded" else "$side up to ${formatNumber(cpu.max())}%" +
            (if (at > 0) " ($at of ${cpu.size} at the wall)" else "") +
            (if (stolen > 0) ", $stolen with steal above ${formatNumber(HEAVY_STEAL_PCT)}% of a core" else ""))
    }
    val met = when {
        parts.any { it.second > 0 } -> false
        parts.isEmpty() || cpuBySide.values.any { it.isEmpty() } -> null
        else -> true
    }
    return Precondition(BELOW_WALL, met, "$what ${parts.joinToString(", ") { it.third }} of ${100 * cores}% (the wall: ${formatNumber(wall)}%)")
}

/** [belowWall] over table rows by side: their `cpu_system_pct` and `steal_pct`. */
fun belowWallOf(rowsBySide: Map<String, List<DataRow<*>>>, cores: Int): Precondition = belowWall(
    rowsBySide.mapValues { (_, rs) -> rs.mapNotNull { num(it.opt("cpu_system_pct")) } }, cores,
    rowsBySide.mapValues { (_, rs) -> rs.mapNotNull { num(it.opt("steal_pct")) } })

/**
 * Nothing but the step's own processes used the machine: in every step a side uses, the system CPU less the step's
 * [processes] (its per-process columns: the servers under test, the driver, the services they call; an empty one
 * counts as 0) stays under [OTHERS_BUSY_PCT] of one core. Above it a bystander (an idle app spinning in GC, another
 * job) took cores from the step, and its numbers are that machine's, not the configuration's. Steps of [placedRuns]
 * are not judged: their parts ran on other hosts, whose CPU this host's total does not hold. Not checked (null) where
 * no step is left to judge or a table records no per-process CPU.
 */
fun nothingElseBusy(rowsBySide: Map<String, List<DataRow<*>>>, processes: List<String>, placedRuns: Set<String> = emptySet()): Precondition {
    fun others(r: DataRow<*>): Double? {
        if (r.opt("run_id") in placedRuns) return null
        val system = num(r.opt("cpu_system_pct")) ?: return null
        val own = processes.mapNotNull { num(r.opt(it)) }
        return if (own.isEmpty()) null else system - own.sum()
    }
    val bySide = rowsBySide.mapValues { (_, rs) -> rs.mapNotNull(::others) }.filterValues { it.isNotEmpty() }
    if (bySide.isEmpty()) return Precondition(NOTHING_ELSE_BUSY, null,
        if (rowsBySide.values.flatten().any { it.opt("run_id") in placedRuns }) "parts ran on other hosts, so this host's CPU total does not hold them"
        else "no per-process CPU recorded")
    val busy = bySide.mapValues { (_, o) -> o.count { it > OTHERS_BUSY_PCT } }
    val limit = "${formatNumber(OTHERS_BUSY_PCT)}% of a core"
    return Precondition(NOTHING_ELSE_BUSY, busy.values.all { it == 0 }, bySide.entries.joinToString(", ") { (side, o) ->
        "$side up to ${formatNumber(o.max())}%" + (busy.getValue(side).takeIf { it > 0 }?.let { " ($it of ${o.size} step(s) above $limit)" } ?: "")
    } + " of CPU outside the step's own processes (the limit: $limit)")
}

/**
 * [belowWall] from steps the harness already judged by the same rule (a sweep's `saturated`: system CPU at 90% of all
 * cores or more), each step as its system CPU (for the reader), that flag, and its steal.
 */
fun belowWallJudged(stepsBySide: Map<String, List<Triple<Double?, Boolean, Double?>>>): Precondition {
    val sides = stepsBySide.filterValues { it.isNotEmpty() }
    if (sides.isEmpty()) return Precondition(BELOW_WALL, null, "no step to judge")
    fun atWall(step: Triple<Double?, Boolean, Double?>) = step.second || (step.third ?: 0.0) > HEAVY_STEAL_PCT
    val parts = sides.map { (side, steps) ->
        val at = steps.count(::atWall)
        val cpu = steps.mapNotNull { it.first }.maxOrNull()
        "$side ${if (at == 0) "below it" else "$at of ${steps.size} step(s) at it"}" + (cpu?.let { " (system CPU up to ${formatNumber(it)}%)" } ?: "")
    }
    return Precondition(BELOW_WALL, sides.values.all { steps -> steps.none(::atWall) }, parts.joinToString("; "))
}

/**
 * The load driver was on time in every step used, met or missed: its lateness p99 at most [LATENESS_SHARE_OF_SLO] of
 * [sloMs] in each. A late driver offered less than the rate the step is labelled with, so its latency belongs to no rate.
 */
fun driverOnTime(latenessP99MsByStep: Map<String, Double?>, sloMs: Double): Precondition {
    val known = latenessP99MsByStep.filterValues { it != null && !it.isNaN() }.mapValues { it.value!! }
    if (known.isEmpty()) return Precondition(DRIVER_ON_TIME, null, "no lateness recorded")
    val limit = LATENESS_SHARE_OF_SLO * sloMs
    val late = known.filterValues { it > limit }
    return Precondition(DRIVER_ON_TIME, late.isEmpty(), if (late.isEmpty())
        "lateness p99 at most ${formatNumber(known.values.max())} ms in ${known.size} step(s) (limit ${formatNumber(limit)} ms, a tenth of the SLO)"
    else late.entries.joinToString(", ") { "${it.key} late by ${formatNumber(it.value)} ms at p99" } + " (limit ${formatNumber(limit)} ms, a tenth of the SLO)")
}

/** The steps compared with each other ([ratesByGroup]: the rates of each group of steps that are compared) were offered one load, within [SAME_LOAD_TOLERANCE]. */
fun sameOfferedLoad(ratesByGroup: Map<String, List<Double>>, unit: String = "req/s"): Precondition {
    val groups = ratesByGroup.filterValues { it.isNotEmpty() }
    if (groups.isEmpty()) return Precondition(SAME_LOAD, null, "no offered rate recorded")
    val apart = groups.filterValues { it.max() / it.min() - 1 > SAME_LOAD_TOLERANCE }
    return Precondition(SAME_LOAD, apart.isEmpty(), if (apart.isEmpty())
        "each comparison at one offered load: " + groups.entries.joinToString(", ") { "${it.key} ${formatNumber(it.value.first())} $unit" }
    else apart.entries.joinToString(", ") { "${it.key} offered ${it.value.distinct().sorted().joinToString(" and ") { r -> formatNumber(r) }} $unit" } +
        " (more than ${formatNumber(100 * SAME_LOAD_TOLERANCE)}% apart)")
}

/**
 * Warmth, judged from the JIT of the JVMs under test over the windows used ([windowsS], seconds):
 * - over windows long enough to judge ([MIN_JIT_WINDOW_S]) the steps a JIT flagged as cold are left out, and the
 *   answer is [withoutCold];
 * - over shorter ones a flag rests on a sample or two, so no step is dropped on it and the answer is [withEvery], with
 *   warmth not checked; but where the two answers disagree on a verdict (one of them "does not hold", or one "holds"
 *   and the other "does not hold"), warmth decides it and the check fails: a refutation never rests on cold steps.
 * Either way [cold] lists the flagged steps with their numbers, and the other answer is said when it differs.
 * Returns the answer to give, whether it rests on the warm steps only, and the precondition to list.
 */
fun judgeWarmth(withEvery: Answer, withoutCold: Answer, cold: List<String>, windowsS: List<Double>): Triple<Answer, Boolean, Precondition> {
    val jit = "the JIT above ${formatNumber(COLD_JIT_MS_PER_S)} ms/s"
    if (cold.isEmpty()) return Triple(withoutCold, true, Precondition(WARM, true, "no step used ran with $jit"))
    val listed = cold.take(4).joinToString(", ") + if (cold.size > 4) " and ${cold.size - 4} more" else ""
    val other = { answer: Answer, with: String -> if (withoutCold != withEvery) "; $with them the answer would be \"${answer.words}\"" else "; $with them the answer is the same" }
    if (windowsS.isNotEmpty() && windowsS.min() >= MIN_JIT_WINDOW_S)
        return Triple(withoutCold, true, Precondition(WARM, true, "${cold.size} step(s) left out with $jit ($listed)" + other(withEvery, "with")))
    val span = if (windowsS.isEmpty()) "of unknown length" else if (windowsS.min() == windowsS.max()) "of ${formatNumber(windowsS.min())} s"
        else "of ${formatNumber(windowsS.min())} to ${formatNumber(windowsS.max())} s"
    val refutes = withEvery != withoutCold && (Answer.DOES_NOT_HOLD == withEvery || Answer.DOES_NOT_HOLD == withoutCold)
    return Triple(withEvery, false, Precondition(WARM, if (refutes) false else null, "steps $span are too short to judge by their JIT " +
        "(at least ${formatNumber(MIN_JIT_WINDOW_S)} s), so every valid fork is used; ${cold.size} showed $jit ($listed)" + other(withoutCold, "without") +
        if (refutes) ": warmth decides the verdict" else ""))
}

/**
 * [judgeWarmth] on a table: the answer [answerOf] gives on [every] valid step, or on those whose `warm` is not false
 * where the windows (`seconds`, else [windowOf]) are long enough to judge; [describe] names a cold step. Returns the
 * answer, the steps it rests on, and the warmth check.
 */
fun onWarmSteps(every: AnyFrame, describe: (DataRow<*>) -> String, windowOf: (DataRow<*>) -> Double? = { num(it.opt("seconds")) },
                answerOf: (AnyFrame) -> Answer): Triple<Answer, AnyFrame, Precondition> {
    val warm = every.filter { it.opt("warm") != false }
    val cold = every.rows().filter { it.opt("warm") == false }
        .map { describe(it) + ((it.opt("jit_ms_per_s") as? Number)?.let { j -> " (JIT ${formatNumber(j.toDouble())} ms/s)" } ?: "") }
    val (answer, warmOnly, check) = judgeWarmth(answerOf(every), answerOf(warm), cold, every.rows().mapNotNull(windowOf))
    return Triple(answer, if (warmOnly) warm else every, check)
}

/** The JVMs' warmth where it is not judged from the JIT: listed as not checked, with the warm-up rule they did follow. */
fun warmthNotRecorded(warmup: String): Precondition =
    Precondition(WARM, null, "not judged from the JIT for these forks; warm-up ended by $warmup")

/**
 * The JVMs were warm over the [what] compared, judged from their JIT: each row's `jit_ms_per_s` over a window of
 * `jit_window_s` seconds (a study adds both). A row above [COLD_JIT_MS_PER_S] fails the check, since these comparisons
 * pool whole steps and have no fork to leave out; windows under [MIN_JIT_WINDOW_S] are not judged. Where any row lacks
 * the JIT (runs before 2026-11-28), the study's [fallback] stands.
 */
fun warmByJit(sides: Map<String, List<DataRow<*>>>, what: String, fallback: Precondition): Precondition {
    val all = sides.values.flatten()
    if (all.isEmpty() || all.any { (it.opt("jit_ms_per_s") as? Number) == null }) return fallback
    val jit = { r: DataRow<*> -> (r.opt("jit_ms_per_s") as Number).toDouble() }
    val shortest = all.minOf { num(it.opt("jit_window_s")) ?: 0.0 }
    if (shortest < MIN_JIT_WINDOW_S) return Precondition(WARM, if (fallback.met == false) false else null,
        "$what of ${formatNumber(shortest)} s are too short to judge by the JIT (at least ${formatNumber(MIN_JIT_WINDOW_S)} s); " + fallback.detail)
    val cold = sides.flatMap { (side, rs) -> rs.filter { jit(it) > COLD_JIT_MS_PER_S }
        .map { "$side, ${it.opt("cell") ?: "?"} (JIT ${formatNumber(jit(it))} ms/s)" } }
    val label = "the JIT above ${formatNumber(COLD_JIT_MS_PER_S)} ms/s"
    return if (cold.isEmpty()) Precondition(WARM, fallback.met != false, "no JVM ran with $label in the ${all.size} $what used" +
            if (fallback.met == false) "; but " + fallback.detail else "")
        else Precondition(WARM, false, "${cold.size} of the ${all.size} $what ran with $label: " + cold.take(4).joinToString(", ") +
            (if (cold.size > 4) " and ${cold.size - 4} more" else "") + " (a longer warm-up lets the JIT finish first)")
}

/** A JVM's JIT and GC time over a window, ms per second (NaN: not reported), and the window's seconds (one report each). */
data class JvmWindow(val jitMsPerS: Double, val gcMsPerS: Double, val seconds: Int)

/**
 * Each fork's JIT and GC time over its measured window: the means of its `jvm:<series>` jit_ms_per_s and gc_ms_per_s
 * rows in phase `measure` (timeseries.csv), with the window's length in seconds, by fork series (`abq-3/fork2`). Empty
 * for runs whose forks reported neither (before 2026-11-28). Shared by every study whose forks are named by a series.
 */
fun RecordedRun.forkActivity(): Map<String, JvmWindow> {
    if (!has("timeseries.csv")) return emptyMap()
    return table("timeseries.csv").rows()
        .filter { it["phase"] == "measure" && (it["metric"] == "jit_ms_per_s" || it["metric"] == "gc_ms_per_s") && (it["series"] as? String)?.startsWith("jvm:") == true }
        .groupBy { (it["series"] as String).removePrefix("jvm:") }
        .mapValues { (_, rs) ->
            fun values(metric: String) = rs.filter { it["metric"] == metric }.mapNotNull { num(it["value"]) }
            fun mean(v: List<Double>) = if (v.isEmpty()) Double.NaN else v.average()
            val jit = values("jit_ms_per_s")
            JvmWindow(mean(jit), mean(values("gc_ms_per_s")), jit.size)
        }
}

/** Each fork's JIT over its measured window and the window's seconds ([forkActivity]). */
fun RecordedRun.forkJit(): Map<String, Pair<Double, Int>> = forkActivity().mapValues { (_, w) -> w.jitMsPerS to w.seconds }

/**
 * `jit_ms_per_s`, `jit_window_s` and `gc_ms_per_s` on every row of a table from [runs] (it needs `run_id`): its fork's
 * JIT and GC time over the measured window ([RecordedRun.forkActivity]), found by [seriesOf] (the row's cell by
 * default); empty where not recorded. The GC column is the pause total a post puts beside CPU.
 */
fun AnyFrame.withForkJit(runs: List<RecordedRun>, seriesOf: (DataRow<*>) -> String? = { it.opt("cell") as? String }): AnyFrame {
    val byRun = runs.associate { it.id to it.forkActivity() }
    val found = rows().map { r -> seriesOf(r)?.let { byRun[r.opt("run_id")]?.get(it) } }
    val base = listOf("jit_ms_per_s", "jit_window_s", "gc_ms_per_s").fold(this) { f, c -> if (c in f.columnNames()) f.remove(c) else f }
    return base.add(found.map { it?.jitMsPerS?.takeIf { j -> !j.isNaN() } }.toColumn("jit_ms_per_s"))
        .add(found.map { it?.seconds?.toDouble() }.toColumn("jit_window_s"))
        .add(found.map { it?.gcMsPerS?.takeIf { g -> !g.isNaN() } }.toColumn("gc_ms_per_s"))
}

/** Warm-up ended by a rule that settled in every step used (a step whose warm-up reached its limit is marked by the study). */
fun warmupSettled(settledBySide: Map<String, List<Boolean?>>, rule: String): Precondition {
    val all = settledBySide.values.flatten()
    if (all.isEmpty() || all.all { it == null }) return warmthNotRecorded(rule)
    val unsettled = settledBySide.mapValues { (_, s) -> s.count { it == false } }.filterValues { it > 0 }
    return Precondition(WARM, unsettled.isEmpty(), if (unsettled.isEmpty()) "warm-up settled by its rule ($rule) in all ${all.size} step(s); not judged from the JIT"
        else unsettled.entries.joinToString(", ") { "${it.key}: ${it.value} step(s) whose warm-up never settled" } + " ($rule)")
}

/**
 * The factor under test was live: on the sides compared it acted on what limited them, and its levels differed in what
 * ran. [live] and [detail] come from the study, which knows its factor; null when these runs cannot show it.
 */
fun factorLive(factor: String, live: Boolean?, detail: String): Precondition = Precondition("$factor live", live, detail)

/** A column's value, or null where this row's table has no such column (runs recorded before it was one). */
internal fun DataRow<*>.opt(column: String): Any? = if (column in df().columnNames()) get(column) else null
