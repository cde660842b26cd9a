package perfkit.kit

import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.DataRow
import org.jetbrains.kotlinx.dataframe.api.columnNames
import org.jetbrains.kotlinx.dataframe.api.filter
import org.jetbrains.kotlinx.dataframe.api.rows

// The web-reactive post's evidence, from closed.csv and open.csv (data/README.md): which closed-model steps a claim
// may rest on, and the original's claims with this host's answers.

/**
 * The closed-model steps a claim may rest on: valid, measured on warm servers (every JIT under 50 ms/s during the
 * step), and measurable on this host (steal under 20% of a core). Older runs without those columns keep every valid row.
 */
fun AnyFrame.measuredClosed(): AnyFrame {
    val cols = columnNames()
    return filter { r ->
        r["valid"] == true && ("warm" !in cols || r["warm"] != false) && ("verdict" !in cols || r["verdict"] == "measured")
    }
}

/** How many valid closed steps [measuredClosed] leaves out, and why: cold servers, heavy steal. */
fun AnyFrame.closedLeftOut(): String {
    val cols = columnNames()
    val valid = rows().filter { it["valid"] == true }
    val cold = if ("warm" in cols) valid.count { it["warm"] == false } else 0
    val stolen = if ("verdict" in cols) valid.count { it["warm"] != false && it["verdict"] != "measured" } else 0
    return if (cold + stolen == 0) "" else listOfNotNull(
        if (cold > 0) "$cold step(s) measured while a server's JIT still compiled" else null,
        if (stolen > 0) "$stolen step(s) with steal above 20% of a core" else null,
    ).joinToString(" and ") + " are left out of every figure and claim."
}

/**
 * Why the closed-model figures of these steps ([this]: closed.csv) have nothing to plot, in one paragraph for the
 * post: no closed model at all, every step invalid, or every valid step cold or stolen (with how many of each).
 */
fun AnyFrame.nothingToPlot(): String {
    val valid = rows().count { it["valid"] == true }
    return when {
        rowsCount() == 0 -> "These runs have no closed-model step (the closed model did not run), so there is nothing to plot."
        valid == 0 -> "Every closed-model step of these runs is invalid, so there is nothing to plot."
        else -> "No closed-model step of these runs was measured on warm servers without heavy steal, so there is nothing to plot: " +
            closedLeftOut() + if ("warm" in columnNames() && rows().any { it["valid"] == true && it["warm"] == false })
                " A quick run caps each app's warm-up at `--server-warmup-max`; a longer one lets the JIT finish." else ""
    }
}

/**
 * The requests each user made back to back in these closed steps ([this]: closed.csv), for an axis label: "5", or
 * "100 with 1 call, 50 with 2" where --step-seconds lengthened the cells differently. Runs without the repeats
 * column made [runRepeats] (--repeats) everywhere.
 */
fun AnyFrame.closedRepeats(runRepeats: Int): String {
    if ("repeats" !in columnNames()) return "$runRepeats"
    val byCalls = rows().groupBy { num(it["calls"])?.toLong() ?: 0L }
        .mapValues { (_, rs) -> rs.mapNotNull { num(it["repeats"])?.toLong() }.distinct().sorted() }.toSortedMap()
    val all = byCalls.values.flatten().distinct()
    return when {
        all.isEmpty() -> "$runRepeats"
        all.size == 1 -> "${all.single()}"
        else -> byCalls.entries.joinToString(", ") { (c, r) -> "${r.joinToString("/")} with $c call${if (c == 1L) "" else "s"}" }
    }
}

/** The processes a web-reactive step accounts for: the app under test, the external service and the load driver. */
val WEB_REACTIVE_PROCESSES = listOf("cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct")

/** Whether a latency log's series is a closed-model step (`<stack>/<calls>/n<N>`), the load the claims compare. */
fun isClosedStep(series: String): Boolean = series.substringAfterLast('/').let { it.length > 1 && it[0] == 'n' && it.drop(1).all(Char::isDigit) }

/** Tomcat's request pool in this run's MVC app, as the running app reported it (200, its default, when not recorded). */
val RecordedRun.mvcPoolThreads: Int get() = noteAt("apps", "mvc", "requestThreadsMax").asInt(200)

/**
 * What this run can and cannot say, from its manifest and its steps ([closed] and [open] of every selected run; this
 * run's rows are picked): a quick run, whether the external service honoured its [delayMs] at its busiest step, an
 * invalid run or steps, steps left out, how the apps' warm-ups ended, and the JDKs. "Every step is valid." otherwise.
 */
fun RecordedRun.webReactiveCaveats(closed: AnyFrame, open: AnyFrame, delayMs: Double): Markdown {
    val peak = noteAt("backendAtPeak")
    val mine = { f: AnyFrame -> f.filter { it["run_id"] == id } }
    val stepsInvalid = listOf(closed, open).sumOf { f -> mine(f).rows().count { it["valid"] != true } }
    val warmups = noteAt("serverWarmup").takeIf { it.isArray && it.size() > 0 }
    return md(listOfNotNull(
        if (quick) "**Quick run:** two N values, a ${formatNumber(warmupSeconds)} s warm-up and $repetitions fork(s). The apps are barely warm and one fork gives no interval: read the shapes, not the numbers." else null,
        if (peak.isObject) "**The external service's delay.** At its busiest step (`${escapeHtml(peak.path("cell").asText())}`, ${escapeHtml(peak.path("step").asText())}, " +
            "${peak.path("callsPerSecond").asLong()} calls/s) its own p50 was ${formatNumber(peak.path("p50Ms").asDouble())} ms for a ${formatNumber(delayMs)} ms delay: " +
            (if (peak.path("honoured").asBoolean()) "within 2 ms, so the delay was honoured and any queueing below is the apps'."
            else "more than 2 ms off, so on this host the service itself added latency, and the apps' numbers include it.") else null,
        if (!valid) "**This run is marked invalid:** " + invalidReasons.joinToString("; ") { escapeHtml(it) } + "." else null,
        if (stepsInvalid > 0) "$stepsInvalid step(s) are invalid (the driver waited for a connection, fell behind its schedule, or requests failed); they are left out of the figures." else null,
        mine(closed).closedLeftOut().ifEmpty { null },
        warmups?.let { w -> val unsettled = w.count { !it.path("settled").asBoolean() }
            "**Warm-up by rule:** ${w.size() - unsettled} of ${w.size()} app warm-ups settled (every JIT under 50 ms/s over 10 s, steady throughput)" +
                (if (unsettled > 0) "; $unsettled reached the maximum while a JIT still compiled, so their first steps may be cold (each step's JIT is recorded, and cold steps are left out)." else ".") },
        noteAt("jdks").takeIf { it.isObject }?.let { "**JDKs:** apps on ${mdText(it.path("apps").asText())}; the external service and the load driver on ${mdText(it.path("loadDriver").asText())}." },
    ).joinToString("\n\n").ifEmpty { "Every step is valid." })
}

/** Each stack this run measured: how it is built (its manifest note) and its threads, as the running app reported them. */
fun RecordedRun.webReactiveStacks(): Markdown {
    fun threadsOf(stack: String): String = noteAt("apps", stack).let { a -> when {
        a.has("requestThreadsMax") -> "${a.path("requestThreadsMax").asInt()} request threads (Tomcat's pool; ${a.path("requestThreadsLargest").asInt()} ever busy at once), " +
            "plus ${a.path("threadGroups").path("HttpClient-#-Worker-#").asInt()} JDK HttpClient workers"
        a.path("virtualThreads").asBoolean() -> "virtual threads, one per request"
        a.has("ioWorkerCount") -> "${a.path("ioWorkerCount").asInt()} event-loop threads (Reactor Netty: max(cores, 4)), shared by server and WebClient"
        else -> "not recorded" } }
    val stacks = variants.map { it.substringBefore('/') }.distinct()
    return md("| stack | how it is built | threads, from the running app |\n|---|---|---|\n" +
        stacks.joinToString("\n") { "| `$it` | ${escapeHtml(note(it) ?: "")} | ${threadsOf(it)} |" } +
        (note("mvcVirtualSkipped")?.let { "\n\n" + escapeHtml(it) + "." } ?: ""))
}

/** Reactive against imperative at [calls] calls, judged on [steps]: the answer, the N it was judged at, and the two means. */
private class RaceAnswer(val answer: Answer, val top: Long, val mvc: Estimate?, val webflux: Estimate?, val why: String)

private fun reactiveRace(steps: AnyFrame, c: Long): RaceAnswer {
    val est = estimates(steps, listOf("stack", "calls", "users"), "mean_ms")
    val users = steps.rows().filter { (it["calls"] as Number).toLong() == c }.map { (it["users"] as Number).toLong() }.distinct().sorted()
    fun e(stack: String, n: Long) = est[listOf(stack, c, n)]
    // judged only at the N where both stacks have enough forks for an interval: an N whose other forks were left out
    // says nothing either way, rather than breaking the run of wins
    val judged = users.filter { n -> e("mvc", n)?.range == false && e("webflux", n)?.range == false }.ifEmpty { users }
    val wins = judged.map { n -> n to (e("mvc", n)?.let { m -> e("webflux", n)?.let { w -> w.mean < m.mean && differs(w, m) } } == true) }
    val from = wins.indices.firstOrNull { i -> wins.drop(i).all { it.second } }?.let { wins[it].first }
    val top = judged.lastOrNull() ?: 0L
    val m = e("mvc", top); val w = e("webflux", top)
    val answer = when {
        m == null || w == null || m.range || w.range -> Answer.CANNOT_TELL
        from != null -> Answer.HOLDS
        differs(m, w) && m.mean < w.mean -> Answer.DOES_NOT_HOLD
        else -> Answer.CANNOT_TELL
    }
    val why = when {
        m == null || w == null -> "Both stacks need measured steps at N = $top."
        m.range || w.range -> "${minOf(m.n, w.n)} fork(s) give a range, not an interval: at least $MIN_REPETITIONS_FOR_CLAIM are needed."
        answer == Answer.HOLDS -> "WebFlux is faster with a Welch t-test's support (5%) at every N from $from up" +
            (if (judged.size < users.size) " (N = ${(users - judged.toSet()).joinToString()} left out: under $MIN_REPETITIONS_FOR_CLAIM forks)." else ".")
        answer == Answer.DOES_NOT_HOLD -> "MVC is faster at N = $top with a Welch t-test's support."
        else -> "No N from which WebFlux is faster at every larger N with a Welch t-test's support."
    }
    return RaceAnswer(answer, top, m, w, why)
}

/** The valid steps of [every] that the steal rule kept (cold ones included) and [keep] picks; null without [every]. */
private fun measuredOf(every: AnyFrame?, keep: (DataRow<*>) -> Boolean): AnyFrame? =
    every?.filter { it["valid"] == true && ("verdict" !in every.columnNames() || it["verdict"] == "measured") && keep(it) }

/** The closed steps of [stack] at [calls] and [users], as rows. */
private fun AnyFrame.closedSteps(stack: String, calls: Long, users: Long) =
    rows().filter { it["stack"] == stack && (it["calls"] as Number).toLong() == calls && (it["users"] as Number).toLong() == users }

/**
 * The original's claims, with this host's answers:
 * - reactive answers faster than imperative as concurrency grows, with 1 and with 2 calls to the external service;
 * - past about [poolThreads] concurrent requests the imperative style queues behind its pool.
 * [closed] are the steps a claim may rest on ([measuredClosed]); [everyValid], when given, every valid step, cold ones
 * included: warmth is then judged by [onWarmSteps], which runs the race on every valid step where the windows are too
 * short for a JIT sample to judge, says what dropping the flagged steps would have answered, and lets no refutation
 * rest on the cold steps.
 * [delayMs] is the external service's delay; [cores] the host's, for the machine's wall; [placedRuns] the runs whose
 * parts ran on other hosts, where this host's CPU total cannot show a bystander ([nothingElseBusy]).
 */
fun webReactiveClaims(closed: AnyFrame, delayMs: Double, poolThreads: Int, cores: Int, everyValid: AnyFrame? = null,
                      placedRuns: Set<String> = emptySet()): List<Claim> {
    if (closed.rowsCount() == 0) return listOf(Claim("Reactive wins as concurrency grows", "no measured closed-model step",
        Answer.CANNOT_TELL, "Every closed-model step was invalid, cold or stolen."))
    val calls = closed.rows().map { (it["calls"] as Number).toLong() }.distinct().sorted()
    val users = closed.rows().map { (it["users"] as Number).toLong() }.distinct().sorted()
    val claims = mutableListOf<Claim>()
    for (c in calls) {
        // warmth first: it decides which steps the race is run on (every valid one where windows are too short to judge)
        val unfiltered = measuredOf(everyValid) { (it["calls"] as Number).toLong() == c && it["stack"] in setOf("mvc", "webflux") }
        val (_, steps, warmth) = if (unfiltered == null) Triple(null, closed, null)
            else onWarmSteps(unfiltered, { "${it["stack"]} fork ${it["fork"]} at N = ${it["users"]}" }) { reactiveRace(it, c).answer }
        val race = reactiveRace(steps, c)
        val m = race.mvc; val w = race.webflux; val top = race.top
        val sides = mapOf("MVC" to steps.closedSteps("mvc", c, top), "WebFlux" to steps.closedSteps("webflux", c, top))
        val checks = listOfNotNull(enoughForks(sides.mapValues { it.value.size }),
            belowWallOf(sides, cores), nothingElseBusy(sides, WEB_REACTIVE_PROCESSES, placedRuns),
            warmth)
        claims += claim("Reactive (WebFlux) answers faster than imperative (MVC) as concurrency grows, with $c call(s) to the external service",
            if (m != null && w != null) "mean at N = $top: WebFlux ${formatNumber(w.mean)} ms, MVC ${formatNumber(m.mean)} ms" else "N = $top not measured on both",
            race.answer, race.why, checks)
    }
    // the knee: the first N at which MVC's mean response time is more than 25% above the external service's wait, on
    // the steps warmth allows, as the race above
    val c = calls.first()
    fun kneeIn(f: AnyFrame): Long? {
        val mvc = estimates(f, listOf("stack", "calls", "users"), "mean_ms")
        return users.firstOrNull { n -> (mvc[listOf("mvc", c, n)]?.mean ?: 0.0) > 1.25 * c * delayMs }
    }
    fun kneeAnswer(knee: Long?) = when {
        knee == null && users.last() < poolThreads -> Answer.CANNOT_TELL
        knee == null -> Answer.DOES_NOT_HOLD
        knee >= poolThreads -> Answer.HOLDS
        else -> Answer.DOES_NOT_HOLD
    }
    val mvcSteps = measuredOf(everyValid) { it["stack"] == "mvc" && (it["calls"] as Number).toLong() == c }
    val (_, kneeSteps, kneeWarmth) = if (mvcSteps == null) Triple(null, closed, null)
        else onWarmSteps(mvcSteps, { "mvc fork ${it["fork"]} at N = ${it["users"]}" }) { kneeAnswer(kneeIn(it)) }
    val knee = kneeIn(kneeSteps)
    val atKnee = knee?.let { n -> kneeSteps.closedSteps("mvc", c, n) }.orEmpty()
    val cpuAtKnee = atKnee.mapNotNull { num(it.opt("cpu_system_pct")) }.takeIf { it.isNotEmpty() }?.average()
    // a knee on a machine at its wall is the machine's, not the pool's
    val kneeChecks = if (knee == null) listOfNotNull(kneeWarmth) else listOfNotNull(enoughForks(mapOf("MVC at N = $knee" to atKnee.size)),
        belowWallOf(mapOf("MVC at N = $knee" to atKnee), cores), nothingElseBusy(mapOf("MVC at N = $knee" to atKnee), WEB_REACTIVE_PROCESSES, placedRuns), kneeWarmth)
    claims += claim("Past about $poolThreads concurrent requests the imperative style queues behind its thread pool ($poolThreads threads)",
        knee?.let { "MVC's mean passes 1.25 x its external wait first at N = $it" + (cpuAtKnee?.let { u -> ", system CPU ${formatNumber(u)}% of ${cores * 100}%" } ?: "") }
            ?: "MVC's mean stays within 1.25 x its external wait up to N = ${users.last()}",
        kneeAnswer(knee),
        when {
            knee == null && users.last() < poolThreads -> "The sweep stopped at N = ${users.last()}, below the pool's $poolThreads threads."
            knee == null -> "No queueing showed up to N = ${users.last()}."
            knee >= poolThreads -> "Little's law puts the knee at N = $poolThreads for $poolThreads threads; it shows at N = $knee."
            else -> "MVC queued at N = $knee, below its pool, with CPU to spare: something other than the pool limits it here."
        }, kneeChecks)
    return claims
}

/**
 * Beyond the original: its future work asks about other schedulers for the reactive side; the nearer question today is
 * the imperative style on JDK 21+ virtual threads (`mvc-virtual`), one per request, on as many carriers as cores.
 * Per number of calls, two questions, judged at the largest N both stacks measured with enough warm forks:
 * - does WebFlux still answer faster than MVC on virtual threads (the original's thesis, with the pool taken away)?
 * - does MVC on virtual threads stay within 1.25 x its external wait where platform-thread MVC queued?
 * Each answer is checked first ([claim]): enough forks on both sides, and neither side at the machine's wall ([cores]),
 * where a queue is the CPU's, not a pool's, and the race is the machine's ratio.
 * Empty when no `mvc-virtual` step was measured (a JDK under 21 ran the apps, or the variant was not selected).
 */
fun virtualThreadClaims(closed: AnyFrame, delayMs: Double, cores: Int, placedRuns: Set<String> = emptySet()): List<Claim> {
    if (closed.rows().none { it["stack"] == "mvc-virtual" }) return emptyList()
    val est = estimates(closed, listOf("stack", "calls", "users"), "mean_ms")
    val calls = closed.rows().map { (it["calls"] as Number).toLong() }.distinct().sorted()
    val users = closed.rows().map { (it["users"] as Number).toLong() }.distinct().sorted()
    fun e(stack: String, c: Long, n: Long) = est[listOf(stack, c, n)]
    return calls.flatMap { c ->
        val top = users.lastOrNull { n -> e("mvc-virtual", c, n)?.range == false && e("webflux", c, n)?.range == false }
            ?: users.lastOrNull { n -> e("mvc-virtual", c, n) != null && e("webflux", c, n) != null }
        val v = top?.let { e("mvc-virtual", c, it) }
        val w = top?.let { e("webflux", c, it) }
        val raceSides = top?.let { n -> mapOf("MVC on virtual threads" to closed.closedSteps("mvc-virtual", c, n), "WebFlux" to closed.closedSteps("webflux", c, n)) }
        val race = claim("WebFlux still answers faster than MVC on virtual threads, with $c call(s)",
            if (v != null && w != null) "mean at N = $top: WebFlux ${formatNumber(w.mean)} ms, MVC on virtual threads ${formatNumber(v.mean)} ms"
            else "not measured on both at any N",
            when {
                v == null || w == null || v.range || w.range -> Answer.CANNOT_TELL
                differs(w, v) && w.mean < v.mean -> Answer.HOLDS
                differs(w, v) -> Answer.DOES_NOT_HOLD
                else -> Answer.CANNOT_TELL
            },
            when {
                v == null || w == null -> "Both stacks need measured steps at one N."
                v.range || w.range -> "${minOf(v.n, w.n)} fork(s) give a range, not an interval: at least $MIN_REPETITIONS_FOR_CLAIM are needed."
                differs(w, v) && w.mean < v.mean -> "WebFlux is faster at N = $top with a Welch t-test's support (5%)."
                differs(w, v) -> "MVC on virtual threads is faster at N = $top with a Welch t-test's support (5%)."
                else -> "The forks support no difference at N = $top (Welch, 5%): virtual threads close the gap the pool opened, as far as this host can tell."
            }, raceSides?.let { s -> listOf(enoughForks(s.mapValues { it.value.size }), belowWallOf(s, cores), nothingElseBusy(s, WEB_REACTIVE_PROCESSES, placedRuns)) }.orEmpty())
        val wait = c * delayMs
        val queued = users.firstOrNull { n -> (e("mvc-virtual", c, n)?.mean ?: 0.0) > 1.25 * wait }
        val platformQueued = users.firstOrNull { n -> (e("mvc", c, n)?.mean ?: 0.0) > 1.25 * wait }
        val last = users.lastOrNull { n -> e("mvc-virtual", c, n) != null }
        // where each style first queued, it must have queued on a machine below its wall: there a queue is the CPU's
        val queueSides = listOfNotNull(queued?.let { "MVC on virtual threads at N = $it" to closed.closedSteps("mvc-virtual", c, it) },
            platformQueued?.let { "MVC on its pool at N = $it" to closed.closedSteps("mvc", c, it) }).toMap()
        val noPool = claim("MVC on virtual threads does not queue where MVC on its thread pool did, with $c call(s)",
            listOf(queued?.let { "virtual threads pass 1.25 x the ${formatNumber(wait)} ms wait first at N = $it" }
                ?: last?.let { "virtual threads stay within 1.25 x the ${formatNumber(wait)} ms wait up to N = $it" } ?: "not measured",
                platformQueued?.let { "the pool first at N = $it" } ?: "the pool within it throughout").joinToString("; "),
            when {
                last == null || platformQueued == null -> Answer.CANNOT_TELL
                queued == null || queued > platformQueued -> Answer.HOLDS
                else -> Answer.DOES_NOT_HOLD
            },
            when {
                last == null -> "No measured step of MVC on virtual threads."
                platformQueued == null -> "MVC on its pool never queued in this sweep, so there is nothing for virtual threads to remove."
                queued == null -> "Up to N = $last no request waited for a thread; the host's CPU is the next limit."
                queued > platformQueued -> "They queue too, but later (N = $queued against $platformQueued): a limit other than the pool, the host's CPU or the external service."
                else -> "They queue no later than the pool did (N = $queued against $platformQueued): what limits them is not a pool."
            }, if (queueSides.isEmpty()) emptyList() else listOf(belowWallOf(queueSides, cores), nothingElseBusy(queueSides, WEB_REACTIVE_PROCESSES, placedRuns)))
        listOf(race, noPool)
    }
}

/**
 * The open-model steps and capacity brackets as they would read at another SLO per external call ([sloMsPerCall], the
 * run's own being [recordedSloMsPerCall]; a cell's SLO scales with its calls, as the study applies it). A step meets it
 * when it was valid, its p99 from the scheduled start is within it and the driver ran late by at most a tenth of it,
 * the study's own rule; each fork's bracket is re-read from its steps ([forkBracketAtSlo]).
 */
fun webReactiveAtSlo(open: AnyFrame, sloMsPerCall: Double, recordedSloMsPerCall: Double, capacity: AnyFrame): Pair<AnyFrame, AnyFrame> {
    if (sloMsPerCall == recordedSloMsPerCall) return open to capacity
    fun sloOf(r: DataRow<*>) = (num(r["calls"])?.takeIf { it >= 1 } ?: 1.0) * sloMsPerCall
    fun step(r: DataRow<*>) = SearchStep(num(r.opt("rate_rps"))!!,
        if (r["valid"] == true) num(r["p99_ms"]) ?: Double.POSITIVE_INFINITY else Double.POSITIVE_INFINITY, num(r.opt("lateness_p99_ms")))
    val names = open.columnNames()
    val newOpen = frameOf(names, open.rows().map { r ->
        val met = step(r).meets(sloOf(r))
        names.map { c -> when (c) { "slo_ms" -> sloOf(r); "meets_slo" -> met; "verdict" -> if (r["valid"] != true) r[c] else if (met) "met" else "missed"; else -> r[c] } }
    })
    val capNames = listOf("run_id", "cell", "stack", "calls", "fork", "slo_ms", "last_met_rps", "first_missed_rps", "status", "stop_reason", "steps")
    val rows = open.rows().groupBy { Triple(it["run_id"], it["cell"], it["fork"]) }.map { (key, steps) ->
        val first = steps.first()
        val b = forkBracketAtSlo(num(key.third)?.toInt() ?: 1, steps.map(::step), sloOf(first), num(first["slo_ms"])!!)
        listOf(key.first, key.second, first["stack"], first["calls"], key.third, sloOf(first), b.lastMet, b.firstMissed, b.status,
            "re-read at p99 <= ${formatNumber(sloOf(first))} ms from the ${steps.size} recorded step(s) (the run's SLO: ${formatNumber(num(first["slo_ms"])!!)} ms)",
            steps.joinToString(" ") { "${formatNumber(num(it.opt("rate_rps"))!!)}:${if (step(it).meets(sloOf(it))) "met" else "missed"}" })
    }
    return newOpen to frameOf(capNames, rows)
}
