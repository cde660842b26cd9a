package perfkit.kit

import jdk.jfr.consumer.RecordedEvent
import jdk.jfr.consumer.RecordingFile
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.rows
import org.jetbrains.kotlinx.dataframe.api.toColumn
import org.jetbrains.kotlinx.dataframe.api.toMap
import org.jetbrains.letsPlot.geom.geomRect
import org.jetbrains.letsPlot.geom.geomText
import org.jetbrains.letsPlot.intern.Plot
import org.jetbrains.letsPlot.label.labs
import org.jetbrains.letsPlot.letsPlot
import org.jetbrains.letsPlot.scale.scaleFillGradient
import org.jetbrains.letsPlot.scale.scaleYReverse
import java.nio.file.Path

// Where the time went: the JDK Flight Recorder profiles a run keeps with --profile (data/README.md: kind "profile",
// one JVM over one measured window), read with the JDK's own parser (jdk.jfr.consumer).

/**
 * One JVM (or the JVMs of one side, merged) over measured windows: where its threads ran ([stacks]: folded method
 * samples, outermost frame first, joined by `;`), where they sat in native code ([nativeStacks]: JFR samples those
 * apart, every 20 ms, and most are waits: a park, an epoll, a socket read), what it allocated, how long GC paused it, and how long its threads
 * waited to enter a monitor, parked (a pool's idle threads park too), or read and wrote sockets (JFR's "profile"
 * settings record those waits from 10 ms or 20 ms on, so short ones are not in these totals).
 */
data class JvmProfile(
    val name: String, val windows: Set<Window>, val stacks: Map<String, Long>,
    val allocatedBytes: Double, val gcPauses: Int, val gcPauseMs: Double,
    val monitorWaitMs: Double, val parkMs: Double, val socketReadMs: Double, val socketWriteMs: Double,
    val nativeStacks: Map<String, Long> = emptyMap(),
) {
    val samples: Long get() = stacks.values.sum()
    val nativeSamples: Long get() = nativeStacks.values.sum()

    /**
     * The wall time covered: the union of the windows, so time several JVMs were recorded in counts once (each JVM's
     * window opens a few milliseconds after the last one's, so they overlap rather than match).
     */
    val seconds: Double get() {
        var total = 0L; var end = Long.MIN_VALUE
        for (w in windows.sortedBy { it.startMs }) {
            if (w.endMs <= end) continue
            total += w.endMs - maxOf(w.startMs, end)
            end = w.endMs
        }
        return total / 1000.0
    }

    /** What the side allocated per second of wall time, all its JVMs together. */
    val allocationMBps: Double get() = if (seconds > 0) allocatedBytes / 1e6 / seconds else Double.NaN

    /** This profile and [other] as one: a side's JVMs or windows together. */
    operator fun plus(other: JvmProfile) = JvmProfile(name, windows + other.windows,
        (stacks.keys + other.stacks.keys).associateWith { (stacks[it] ?: 0) + (other.stacks[it] ?: 0) },
        allocatedBytes + other.allocatedBytes, gcPauses + other.gcPauses, gcPauseMs + other.gcPauseMs,
        monitorWaitMs + other.monitorWaitMs, parkMs + other.parkMs, socketReadMs + other.socketReadMs, socketWriteMs + other.socketWriteMs,
        (nativeStacks.keys + other.nativeStacks.keys).associateWith { (nativeStacks[it] ?: 0) + (other.nativeStacks[it] ?: 0) })

    /**
     * Each method's share of the samples: on top of the stack (self) and anywhere on it (total), most self first; of
     * the method samples, or with [native] of the native ones (self: the native method a thread sat in).
     */
    fun frameShares(native: Boolean = false): Map<String, Pair<Double, Double>> {
        val folded = if (native) nativeStacks else stacks
        val all = folded.values.sum().toDouble().takeIf { it > 0 } ?: return emptyMap()
        val self = HashMap<String, Long>(); val total = HashMap<String, Long>()
        for ((stack, n) in folded) {
            val frames = stack.split(';')
            self.merge(frames.last(), n, Long::plus)
            for (f in frames.toSet()) total.merge(f, n, Long::plus)
        }
        return total.keys.associateWith { (self[it] ?: 0) / all to total.getValue(it) / all }
            .entries.sortedByDescending { it.value.first }.associate { it.key to it.value }
    }

    /** The [n] methods with the most self time, with their total share, as a table. */
    fun topFrames(n: Int = 10): AnyFrame = frameOf(listOf("method", "self_pct", "total_pct"),
        frameShares().entries.take(n).map { (m, s) -> listOf(m, 100 * s.first, 100 * s.second) })
}

/** JFR's frames as a flame graph names them: the class's simple name and the method. */
private fun frameName(typeName: String, method: String) = typeName.substringAfterLast('.') + "." + method

/**
 * Reads one recording; with [window] (epoch ms, its end excluded) only the events that start inside it. [name] labels it.
 * Stacks are cut to their innermost [maxDepth] frames, the depth JFR records by default.
 */
fun readProfile(file: Path, name: String = file.fileName.toString(), window: Window? = null, maxDepth: Int = 64): JvmProfile {
    val stacks = HashMap<String, Long>(); val nativeStacks = HashMap<String, Long>()
    var allocated = 0.0; var pauses = 0; var pauseMs = 0.0; var monitorMs = 0.0; var parkMs = 0.0; var readMs = 0.0; var writeMs = 0.0
    var first = Long.MAX_VALUE; var last = Long.MIN_VALUE
    fun ms(e: RecordedEvent) = e.duration.toNanos() / 1e6
    RecordingFile(file).use { recording ->
        while (recording.hasMoreEvents()) {
            val e = recording.readEvent()
            val at = e.startTime.toEpochMilli()
            if (window != null && (at < window.startMs || at >= window.endMs)) continue
            first = minOf(first, at); last = maxOf(last, e.endTime.toEpochMilli())
            when (e.eventType.name) {
                "jdk.ExecutionSample", "jdk.NativeMethodSample" -> e.stackTrace?.frames?.take(maxDepth)?.takeIf { it.isNotEmpty() }?.let { frames ->
                    val folded = frames.asReversed().joinToString(";") { f -> frameName(f.method.type.name, f.method.name) }
                    (if (e.eventType.name == "jdk.ExecutionSample") stacks else nativeStacks).merge(folded, 1L, Long::plus)
                }
                "jdk.ObjectAllocationSample" -> allocated += e.getLong("weight")
                "jdk.GarbageCollection" -> { pauses++; pauseMs += e.getDuration("sumOfPauses").toNanos() / 1e6 }
                "jdk.JavaMonitorEnter" -> monitorMs += ms(e)
                "jdk.ThreadPark" -> parkMs += ms(e)
                "jdk.SocketRead" -> readMs += ms(e)
                "jdk.SocketWrite" -> writeMs += ms(e)
            }
        }
    }
    val covered = window ?: Window(minOf(first, last), last)
    return JvmProfile(name, setOf(covered), stacks, allocated, pauses, pauseMs, monitorMs, parkMs, readMs, writeMs, nativeStacks)
}

/**
 * A profile the run kept: the JVM it recorded (the manifest's series) over the window it covers, and the cell and fork
 * it measured when that JVM was a fork whose spec names them (null for a service).
 */
data class ProfileFile(val run: RecordedRun, val path: String, val jvm: String, val window: Window, val cell: String? = null, val fork: Int? = null)

/** The profiles this run kept (`--profile`); empty for a run made without it. */
fun RecordedRun.profiles(): List<ProfileFile> =
    files.filter { it.kind == "profile" && it.window != null }.map { ProfileFile(this, it.path, it.series ?: it.path, it.window!!, it.cell, it.fork) }

/**
 * The profiles of [cell]: those whose window overlaps the measurement window of one of the cell's latency logs
 * (the manifest's windows, never file names) whose series [steps] accepts (one kind of load: the closed model's steps,
 * say, not the capacity search's), optionally only of the JVMs [jvm] accepts. A cell that writes no latency log (queues
 * at full speed) has the profiles of the forks that measured it, by the cell they name. Null when there are none.
 */
fun List<RecordedRun>.cellProfile(cell: String, steps: (String) -> Boolean = { true }, jvm: (String) -> Boolean = { true }): JvmProfile? =
    cellsProfile(listOf(cell), cell, steps, jvm)

/** [cellProfile] over several [cells] at once (one load's repetitions, each a cell of its own), named [name]. */
fun List<RecordedRun>.cellsProfile(cells: Collection<String>, name: String, steps: (String) -> Boolean = { true }, jvm: (String) -> Boolean = { true }): JvmProfile? =
    flatMap { run ->
        val logs = run.files.filter { it.kind == "hlog" && it.cell in cells && it.window != null }
        val windows = logs.filter { steps(it.series ?: "") }.map { it.window!! }
        run.profiles().filter { p -> jvm(p.jvm) &&
            if (logs.isEmpty()) p.cell in cells else windows.any { w -> p.window.startMs < w.endMs && w.startMs < p.window.endMs } }
    }.map { p -> readProfile(p.run.dir.resolve(p.path), name, p.window) }.reduceOrNull(JvmProfile::plus)

/**
 * Fewer method samples than this on a side and its frames' shares are noise (a share's standard error at 100 samples
 * is up to 5 points): the frames are then not ranked, and the post says why.
 */
const val MIN_FRAME_SAMPLES = 100

/**
 * Where the time went on each side of a comparison, for a post: the [methods] whose own share of the samples (self
 * time) differs most between [a] and [b], with their total share, then allocation, GC pauses and waits. Frames are
 * ranked only when each side has [minSamples] method samples or more; when one has fewer (threads that wait rather
 * than run: JFR samples only those it finds running Java), the native methods threads sat in are ranked instead,
 * when each side has [minSamples] native samples.
 */
fun whereTimeWent(a: JvmProfile, b: JvmProfile, methods: Int = 2, minSamples: Int = MIN_FRAME_SAMPLES): Markdown {
    val few = listOf(a, b).filter { it.samples < minSamples }
    val native = few.isNotEmpty() && a.nativeSamples >= minSamples && b.nativeSamples >= minSamples
    val sa = a.frameShares(native); val sb = b.frameShares(native)
    // by self time: a caller's total share is never below its callee's, so ranking by total would name thread roots
    val differ = if (few.isNotEmpty() && !native) emptyList() else (sa.keys + sb.keys).map { m -> m to ((sa[m]?.first ?: 0.0) - (sb[m]?.first ?: 0.0)) }
        .sortedByDescending { kotlin.math.abs(it.second) }.take(methods)
    fun pct(v: Double?) = formatNumber(100 * (v ?: 0.0), 2) + "%"
    fun row(what: String, f: (JvmProfile) -> String) = "| $what | ${f(a)} | ${f(b)} |"
    val unranked = if (few.isEmpty()) emptyList() else listOf("| methods | too few samples to rank (under $minSamples on " +
        few.joinToString(" and ") { mdText(it.name, atLineStart = false) } + ")" +
        (if (native) ": its threads wait rather than run, so the native methods they sat in are ranked" else ": a longer window or more forks") + " | |")
    val share = if (native) "share of native samples" else "share of samples"
    return md((listOf("| | ${mdText(a.name, atLineStart = false)} | ${mdText(b.name, atLineStart = false)} |", "|---|---|---|") + unranked +
        differ.map { (m, _) -> "| `${m.replace("`", "'")}` ($share: self / total) | ${pct(sa[m]?.first)} / ${pct(sa[m]?.second)} | " +
            "${pct(sb[m]?.first)} / ${pct(sb[m]?.second)} |" } + listOf(
        row("method samples") { formatNumber(it.samples.toDouble()) },
        row("native samples (a wait or a native call)") { formatNumber(it.nativeSamples.toDouble()) },
        row("allocation (MB/s)") { formatNumber(it.allocationMBps, 3) },
        row("GC pauses (count, total ms)") { "${it.gcPauses}, ${formatNumber(it.gcPauseMs, 3)}" },
        row("waiting to enter a monitor (ms)") { formatNumber(it.monitorWaitMs, 3) },
        row("parked (ms; idle pool threads too)") { formatNumber(it.parkMs, 3) },
        row("socket reads, writes (ms)") { "${formatNumber(it.socketReadMs, 3)}, ${formatNumber(it.socketWriteMs, 3)}" },
    )).joinToString("\n"))
}

/**
 * An icicle graph of [p]: each method a bar as wide as its share of the samples, its callers above it; bars under
 * [minShare] of the samples are left out (and so is what they call), and names are written on bars wide enough.
 */
fun flameGraph(p: JvmProfile, title: String = "Where ${p.name}'s threads ran", minShare: Double = 0.005): Plot {
    val total = p.samples.toDouble()
    val rows = mutableListOf<List<Any?>>()
    // lay the folded stacks out depth by depth, children sorted by name so a frame's bars sit together
    fun lay(prefix: List<String>, stacks: List<Pair<List<String>, Long>>, x0: Double) {
        var x = x0
        for ((frame, group) in stacks.filter { it.first.size > prefix.size }.groupBy { it.first[prefix.size] }.toSortedMap()) {
            val n = group.sumOf { it.second }.toDouble()
            if (n / total >= minShare) {
                val depth = prefix.size
                rows += listOf(x / total, (x + n) / total, depth.toDouble(), depth + 0.92, depth + 0.46, frame, if (n / total >= 0.06) frame.take((n / total * 90).toInt()) else "",
                    100 * group.filter { it.first.size == depth + 1 }.sumOf { it.second } / n)
                lay(prefix + frame, group, x)
            }
            x += n
        }
    }
    if (total > 0) lay(emptyList(), p.stacks.map { (s, n) -> s.split(';') to n }, 0.0)
    val df = frameOf(listOf("xmin", "xmax", "ymin", "ymax", "ymid", "method", "label", "self_pct"), rows)
    return letsPlot(df.toMap()) +
        geomRect(color = "white", size = 0.2) { xmin = "xmin"; xmax = "xmax"; ymin = "ymin"; ymax = "ymax"; fill = "self_pct" } +
        geomText(size = 6, hjust = 0, color = "#222222", nudgeX = 0.002) { x = "xmin"; y = "ymid"; label = "label" } +
        scaleFillGradient(low = "#fde0b0", high = "#d7301f", name = "self %") + scaleYReverse() +
        labs(title = title, x = "share of ${formatNumber(total)} method samples", y = "stack depth (callers above)") + houseTheme()
}

/**
 * A post's "where the time went" under a claim comparing [cellA] and [cellB]: [whereTimeWent] from the profiles of
 * each cell in these runs, of the JVMs [jvmA] and [jvmB] accept (a side's own server, not a bystander recorded in the
 * same window), over the steps [steps] accepts (one kind of load on both sides); or, when they kept none, how to get
 * one, or that a run made with `--profile` wrote none.
 */
fun List<RecordedRun>.whereTimeWent(cellA: String, cellB: String, jvmA: (String) -> Boolean = { true }, jvmB: (String) -> Boolean = { true },
                                    steps: (String) -> Boolean = { true }): Markdown {
    // a cell these runs never measured (neither asked for nor named by a file) is said so, not blamed on the recording
    fun measured(cell: String) = if (any { r -> cell in r.variants || r.files.any { it.cell == cell } }) listOf(cell) else emptyList()
    return whereTimeWent(cellA, measured(cellA), cellB, measured(cellB), jvmA, jvmB, steps)
}

/** The same where each side is several cells ([cellsA], [cellsB]: a load's repetitions), named [nameA] and [nameB]. */
fun List<RecordedRun>.whereTimeWent(nameA: String, cellsA: Collection<String>, nameB: String, cellsB: Collection<String>,
                                    jvmA: (String) -> Boolean = { true }, jvmB: (String) -> Boolean = { true },
                                    steps: (String) -> Boolean = { true }): Markdown {
    val names = "${mdText(nameA, atLineStart = false)} and ${mdText(nameB, atLineStart = false)}"
    // a side these runs never measured (a quick run's smaller grid) is no missing recording
    val unmeasured = listOf(nameA to cellsA, nameB to cellsB).filter { it.second.isEmpty() }.map { mdText(it.first, atLineStart = false) }
    if (unmeasured.isNotEmpty()) return md("**Where the time went:** these runs measured no ${unmeasured.joinToString(" and no ")}, so there is no second side to compare.")
    val a = cellsProfile(cellsA, nameA, steps, jvmA); val b = cellsProfile(cellsB, nameB, steps, jvmB)
    if (a == null || b == null) return md(if (any { it.param("profile") == "true" })
        "**Where the time went:** these runs were made with `--profile` but kept no profile of $names: a JDK without Flight Recorder, " +
            "or JVMs stopped before they wrote their recordings (the run's log says which)."
    else "**Where the time went:** these runs kept no profile of $names. A run made with `--profile` " +
        "records each JVM under test with JDK Flight Recorder over its measured windows, and this paragraph then compares the two sides.")
    return Markdown("**Where the time went**, $names, from JDK Flight Recorder over the measured windows:\n\n") + whereTimeWent(a, b)
}

/**
 * What one side of a profiling.csv pair reads: a rate where the study measures at full speed (queues' forks, workflow's
 * no-op drains: a cost shows as less throughput), or CPU per unit of work where it offers a fixed load (messaging's
 * chain, the HTTP studies' open step: a cost shows as more CPU, the rate being the same on both sides).
 */
private enum class CostReading(val unit: String, val higherIsBetter: Boolean, val profiled: (DataRow<*>) -> Double?, val plain: (DataRow<*>) -> Double?) {
    EVENTS("events/s", true, { it.profiledEventsPerS }, { it.plainEventsPerS }),
    JOBS("jobs/s", true, { it.profiledJobsPerS }, { it.plainJobsPerS }),
    CPU_PER_MSG("CPU µs/msg", false, { it.profiledCpuUsPerMsg }, { it.plainCpuUsPerMsg }),
    CPU_PER_1K("CPU ms/1k req", false, { it.profiledCpuMsPer1k }, { it.plainCpuMsPer1k });

    companion object {
        fun of(rows: List<DataRow<*>>): CostReading? = entries.firstOrNull { r -> rows.any { r.profiled(it) != null } }
    }
}

/**
 * What `--profile` cost (profiling.csv: one measurement made recorded and plain, in pairs run back to back: queues'
 * forks of one cell beside plain twins of the same spec, workflow's no-op drains, messaging's one-chain step and the
 * HTTP studies' open step at a fixed rate), per label and cell: valid pairs, both means in the study's own reading
 * ([unit]: events/s, jobs/s, or CPU per message or per 1000 requests) and profiled/plain with its interval over the
 * pairs' own ratios. verdict: "no cost seen" when the interval holds 1; where a rate is read, "profiling costs
 * throughput" below 1 and "profiled reads high" above; where CPU per unit is read, "profiling costs CPU" above 1 and
 * "profiled reads low" below; "range only" under 3 pairs. Pairs with an invalid step are left out; runs made without
 * `--profile` have none.
 */
fun profilingCost(runs: List<RecordedRun>): AnyFrame {
    val rows = runs.filter { r -> r.has("profiling.csv") }.flatMap { run ->
        run.table("profiling.csv").rows().filter { it.valid != false }.groupBy { it["cell"] as String }.mapNotNull { (cell, rs) ->
            val reading = CostReading.of(rs) ?: return@mapNotNull null
            val ratios = rs.mapNotNull { it.profiledOverPlain }.filter { it.isFinite() }.ifEmpty { return@mapNotNull null }
            val e = meanInterval(ratios)
            val costly = if (reading.higherIsBetter) e.high < 1 else e.low > 1
            val flattering = if (reading.higherIsBetter) e.low > 1 else e.high < 1
            val verdict = when {
                e.range -> "range only (${e.n} pair(s))"
                costly -> if (reading.higherIsBetter) "profiling costs throughput" else "profiling costs CPU"
                flattering -> if (reading.higherIsBetter) "profiled reads high" else "profiled reads low"
                else -> "no cost seen"
            }
            listOf(run.label, cell, e.n, rs.mapNotNull(reading.profiled).average(), rs.mapNotNull(reading.plain).average(), reading.unit,
                e.mean, e.low, e.high, e.interval, verdict)
        }
    }
    val names = listOf("label", "cell", "pairs", "profiled", "plain", "unit", "profiled_over_plain", "ci_low", "ci_high", "interval", "verdict")
    return dataFrameOf(names.mapIndexed { i, n -> rows.map<List<Any?>, Any?> { it[i] }.toColumn(n) })
}

/**
 * One paragraph for a post: what `--profile` cost in these runs ([profilingCost]) as a table, or why it was not
 * measured (the run's notes.profilingCost); empty when no run was made with `--profile`.
 */
fun List<RecordedRun>.profilingCostSection(): Markdown {
    val cost = profilingCost(this)
    if (cost.rowsCount() > 0) return Markdown("\n\n**What `--profile` cost:** one measurement recorded and plain, in pairs run back to back " +
        "(which goes first alternating); profiled/plain with its 95% interval over the pairs.\n\n") + cost.toMarkdown()
    val why = filter { r -> r.param("profile") == "true" }.mapNotNull { r ->
        if (!r.has("profiling.csv")) r.note("profilingCost")
        else if (r.table("profiling.csv").rows().any { it.valid != false }) "${r.label}'s pairs had no reading to compare (the CPU was not sampled, or nothing was delivered)"
        else "${r.label}'s pairs each had an invalid step, so they say nothing of the cost"
    }.distinct()
    return if (why.isEmpty()) Markdown("") else Markdown("\n\n**What `--profile` cost:** ${mdText(why.joinToString("; "), atLineStart = false)}.")
}
