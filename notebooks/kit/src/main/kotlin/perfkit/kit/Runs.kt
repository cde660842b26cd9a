package perfkit.kit

import com.networknt.schema.JsonSchema
import com.networknt.schema.JsonSchemaFactory
import com.networknt.schema.SchemaLocation
import com.networknt.schema.SchemaValidatorsConfig
import com.networknt.schema.SpecVersion

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.at
import org.jetbrains.kotlinx.dataframe.api.concat
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.insert
import org.jetbrains.kotlinx.dataframe.api.select
import org.jetbrains.kotlinx.dataframe.api.toColumn
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.exists
import kotlin.io.path.isDirectory
import kotlin.io.path.name

/** A run directory that does not follow the run format; the message names the file. */
class RunFormatException(message: String, cause: Throwable? = null) : RuntimeException(message, cause)

private val JSON = ObjectMapper()
private val RUN_ID = Regex("""\d{8}T\d{6}Z-[a-z0-9-]+-[0-9a-f]{6}""")

/** The measurement window of a latency log by intended time (epoch ms); earlier intervals are warm-up. */
data class Window(val startMs: Long, val endMs: Long)

/** One entry of the manifest's `files[]` (see data/README.md); fields that do not apply are null. */
data class RecordedFile(
    val path: String, val kind: String, val description: String,
    val cell: String?, val series: String?, val fork: Int?, val timing: String?, val window: Window?,
)

/**
 * One run as it was recorded: its directory and manifest (see data/README.md), with typed accessors for what cells
 * need. (The harness's Run is the run being made; this is what it left on disk.)
 */
class RecordedRun(val dir: Path, val manifest: JsonNode) {
    val id: String get() = manifest["runId"].asText()
    val study: String get() = manifest["study"].asText()
    val status: String get() = manifest["status"].asText()
    val schemaVersion: Int get() = manifest.path("schemaVersion").asInt()
    val valid: Boolean get() = manifest.path("valid").asBoolean(true)
    val invalidReasons: List<String> get() = manifest.path("invalidReasons").map { it.asText() }
    val mode: String get() = manifest["mode"].asText()
    /**
     * The target of a run made with `--on user@host`: every part of it ran there (the run itself, its clock and its
     * data stayed on the run's host), so that host's fingerprint describes the machine measured. Null for a run made here.
     */
    val on: String? get() = param("on")?.takeIf { it.isNotBlank() }

    /** The machine the run measured: the run's host, or the target of `--on` (its fingerprint in the manifest's placement). */
    internal val measuredHost: JsonNode get() = on?.let { target ->
        manifest.path("placement").firstOrNull { it.path("host").asText() == target }?.path("fingerprint")?.takeIf { it.isObject }
    } ?: manifest["host"]

    /**
     * The time series of the measured machine's CPU and steal: `system`, or for a run made with `--on` the
     * `host:<part>` series of every part on the target (each is read while its part lives: together they cover the run).
     */
    val hostSeries: List<String> get() = on?.let { target ->
        manifest.path("placement").filter { it.path("host").asText() == target }.map { "host:" + it.path("part").asText() }.distinct().ifEmpty { null }
    } ?: listOf("system")

    val hostname: String get() = measuredHost.path("hostname").asText("")
    val host: String get() = hostname
    val cores: Int get() = measuredHost.path("logicalCores").asInt()
    val cpuModel: String get() = measuredHost.path("cpuModel").asText("")
    val containerCpuLimit: Double? get() = measuredHost.path("containerCpuLimit").takeIf { it.isNumber }?.asDouble()
    val jdk: String get() = manifest["jvm"].path("version").asText("")
    val tag: String get() = manifest.path("tag").asText("")
    val quick: Boolean get() = manifest.path("quick").asBoolean(false)
    val startedAt: String get() = manifest.path("startedAt").asText("")
    /** When the run ended; empty while it runs. */
    val endedAt: String get() = manifest.path("endedAt").asText("")
    val commit: String get() = manifest.path("kit").path("commit").asText("")
    val dirty: Boolean? get() = manifest.path("kit").path("dirty").takeIf { it.isBoolean }?.asBoolean()
    val repetitions: Int get() = manifest.path("measurement").path("repetitions").asInt()
    val warmupSeconds: Double get() = manifest.path("measurement").path("warmupSeconds").asDouble()
    val measureSeconds: Double get() = manifest.path("measurement").path("measureSeconds").asDouble()
    val params: Map<String, String> get() = manifest.path("params").properties().associate { (k, v) -> k to v.asText() }
    val isReference: Boolean get() = dir.parent?.parent?.name == "reference"

    /** A study-specific note from the manifest (`notes.<name>`, or deeper: `note("calibration", "rule")`), as text; null when absent. */
    fun note(vararg path: String): String? = noteAt(*path).takeIf { !it.isMissingNode && !it.isNull }?.asText()

    /** A note that is a list (`notes.warmupNeverSettled`), as text; empty when absent. */
    fun noteList(vararg path: String): List<String> = noteAt(*path).takeIf { it.isArray }?.map { it.asText() }.orEmpty()

    /** The manifest's note at [path] as its JSON, or a missing node: for the kit's readers of a study's own notes. */
    internal fun noteAt(vararg path: String): JsonNode = path.fold(manifest.path("notes")) { n, k -> n.path(k) }

    /** The cells (variants) the run was asked to measure, as the manifest lists them. */
    val variants: List<String> get() = manifest.path("variants").map { it.asText() }

    /** Set by [findRuns] when runs sharing host, JDK and tag differ in a parameter that changes the measurement. */
    internal var distinction: String = ""

    /** How plots and tables name this run: host, JDK, the tag if there is one, and any parameter that sets it apart. */
    val label: String get() = listOf(hostname, "JDK $jdk", tag, distinction).filter { it.isNotBlank() }.joinToString(" · ")

    fun param(name: String): String? = manifest["params"]?.get(name)?.asText()

    /** Every data file the manifest lists, with its cell, series, fork, timing and window. */
    val files: List<RecordedFile> by lazy {
        manifest["files"].map { f -> fileOf(f) }
    }

    /**
     * The name the manifest lists [path] under: the path itself, or `<path>.gz` where the run keeps that file
     * gzip-compressed (data/README.md: a long reference run's time series); null when it lists neither.
     */
    fun storedName(path: String): String? = files.map { it.path }.let { listed ->
        when { path in listed -> path; "$path.gz" in listed -> "$path.gz"; else -> null }
    }

    /** Whether the manifest lists [path], stored as it is or compressed. */
    fun has(path: String): Boolean = storedName(path) != null

    /** A data file listed in the manifest, as stored; a clear error when it is not listed or not on disk. */
    fun file(path: String): Path {
        val stored = storedName(path) ?: throw RunFormatException("run $id has no file '$path' (it lists: ${files.joinToString { it.path }})")
        val file = dir.resolve(stored)
        if (!file.exists()) throw RunFormatException("run $id lists '$stored' but it is missing: $file")
        return file
    }

    fun filesOfKind(kind: String): List<String> = files.filter { it.kind == kind }.map { it.path }

    /** The data folder whose declarations this run is read by: the one [findRuns] searched, else the kit's own. */
    internal var declaredUnder: Path? = null

    /**
     * A table of this run, each declared column of its declared type ([TableDeclarations]); with no declarations at
     * hand (a run loaded outside any kit checkout), every column is typed by what fits its values.
     */
    fun table(path: String): AnyFrame {
        val root = declaredUnder ?: try { dataRoot() } catch (e: RunFormatException) { null }
        val declared = root?.let { TableDeclarations.of(study, it) }
        return readCsv(file(path), declared?.tables?.get(path).orEmpty(), declared?.values?.get(path).orEmpty())
    }

    override fun toString() = "$study/$id ($status)"
}

private fun fileOf(f: JsonNode): RecordedFile {
    fun text(name: String) = f.path(name).takeIf { it.isTextual }?.asText()
    val w = f.path("window")
    return RecordedFile(f["path"].asText(), f["kind"].asText(), f.path("description").asText(""),
        text("cell"), text("series"), f.path("fork").takeIf { it.isInt }?.asInt(), text("timing"),
        if (w.isObject) Window(w["startMs"].asLong(), w["endMs"].asLong()) else null)
}

/** data/schema/run.schema.json, which the build copies into the jar (pom.xml): format checks on, as in the Python tests. */
private val MANIFEST_SCHEMA: JsonSchema by lazy {
    val config = SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build()
    val schema = RecordedRun::class.java.getResourceAsStream("/perfkit/kit/run.schema.json").use { JSON.readTree(it ?: error("run.schema.json is not in the kit's jar")) }
    // its $id is relative ("perfkit/run.schema.json"): a base that names no host, as it refers to nothing outside
    JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(SchemaLocation.of("https://perfkit.invalid/schema/"), schema, config)
}

/** Reads a run directory; a missing or corrupt manifest is an error that names the file and what is wrong with it. */
fun loadRun(dir: Path): RecordedRun {
    val file = dir.resolve("run.json")
    if (!file.exists()) throw RunFormatException("not a run directory (no run.json): $dir")
    val manifest = try { JSON.readTree(file.toFile()) } catch (e: Exception) {
        throw RunFormatException("corrupt manifest $file: ${e.message?.lineSequence()?.first()}", e)
    }
    if (manifest == null || !manifest.isObject) throw RunFormatException("corrupt manifest $file: not a JSON object")
    val version = manifest.path("schemaVersion").asInt(-1)
    // version 1 had no mode and no cell, series or fork per file, and every run the kit has written since is version 2
    if (version != 2) throw RunFormatException("unsupported manifest $file: schemaVersion $version (this kit reads version 2)")
    // the schema the scripts' tests hold the harness to: its first complaints, in one line
    val problems = MANIFEST_SCHEMA.validate(manifest).map { "${it.instanceLocation}: ${it.message.substringAfter(": ")}" }.sorted()
    if (problems.isNotEmpty())
        throw RunFormatException("corrupt manifest $file: ${problems.take(3).joinToString("; ")}${if (problems.size > 3) " (and ${problems.size - 3} more)" else ""}")
    return RecordedRun(dir, manifest)
}

/** The kit's data folder: PERFKIT_DATA, else the nearest data/ above the working directory that holds the schema. */
fun dataRoot(): Path {
    System.getenv("PERFKIT_DATA")?.takeIf { it.isNotBlank() }?.let { return Path.of(it).toAbsolutePath() }
    var dir: Path? = Path.of("").toAbsolutePath()
    while (dir != null) {
        if (dir.resolve("data/schema/run.schema.json").exists()) return dir.resolve("data")
        dir = dir.parent
    }
    throw RunFormatException("cannot find the kit's data/ folder above ${Path.of("").toAbsolutePath()}; set PERFKIT_DATA")
}

/**
 * Parameters that do not change what a run measures, so runs differing only in them may be pooled under
 * one label: bookkeeping (out, tag, quick), how many repetitions, which variants or cells were chosen (each
 * row still names its own), limits and credentials. Every other parameter (rate, wait strategy, warm-up,
 * JVM flags, ...) sets runs apart: [findRuns] adds it to their labels.
 */
val POOLABLE_PARAMS = setOf(
    "out", "tag", "quick", "keep-warmup", "forks", "repetitions", "variants", "systems", "job-types",
    "budget", "max-instances", "max-drain", "drain-timeout", "jdbc-user", "jdbc-password",
    "rounds", "engines", "stores", "durability", "chains", "cassandra-user", "cassandra-password",
    // where credentials are read from: the same cluster reached with another copy of its stores is the same measurement
    "jdbc-password-file", "cassandra-password-file", "cassandra-truststore", "cassandra-truststore-password", "cassandra-truststore-password-file",
    "cassandra-keystore", "cassandra-keystore-password", "cassandra-keystore-password-file", "kafka-config",
)

/**
 * Finds the runs a notebook analyses. [selection] is one of:
 * - `latest`: the newest complete run of each mode under data/runs/<study>, or the reference runs when there are none;
 * - `reference`: the committed reference runs; `all`: every complete run;
 * - a run id; or a path to a run directory or to a folder of runs (e.g. runs from two hosts to compare).
 *
 * Unreadable or damaged runs (a listed file missing, a table without a declared column, a latency log cut short:
 * see [damage]) are skipped unless the selection names them, when they fail it; [FoundRuns.skipped] says why, one
 * line each, and the runs' [summary] shows those lines under its table. Runs that
 * share a label but differ in a parameter that changes the measurement get that parameter in their labels, so
 * they are never pooled by accident.
 */
fun findRuns(study: String, selection: String = "latest", root: Path = dataRoot()): FoundRuns {
    // Said in the runs' summary, a cell's result: printed text can arrive after its cell ends and be lost (Kotlin/kotlin-jupyter#497)
    val skipped = mutableListOf<String>()
    val user by lazy { runsUnder(root.resolve("runs").resolve(study), study, skipped) }
    val reference by lazy { runsUnder(root.resolve("reference").resolve(study), study, skipped) }
    fun intact(runs: List<RecordedRun>) = runs.filter { run ->
        val problem = run.damage(root)
        if (problem != null) skipped += "skipping a damaged run ${run.id}: $problem"
        problem == null
    }
    fun named(run: RecordedRun) = run.also { r -> r.damage(root)?.let { throw RunFormatException("run ${r.id} is damaged: $it") } }
    val chosen = when {
        selection == "latest" -> newestIntactPerMode(user.runs.filter { it.status == "complete" }, ::intact).ifEmpty { intact(reference.runs) }
        selection == "reference" -> intact(reference.runs)
        selection == "all" -> intact((user.runs + reference.runs).filter { it.status == "complete" })
        RUN_ID.matches(selection) -> {
            (user.unreadable + reference.unreadable)[selection]?.let { throw RunFormatException(it) }
            (user.runs + reference.runs).filter { it.id == selection }.map(::named)
        }
        else -> {
            val path = Path.of(selection).let { if (it.isAbsolute || it.exists()) it else root.resolve(selection) }
            if (!path.isDirectory()) throw RunFormatException("no run id, folder or keyword '$selection' (use latest, reference, all, a run id or a folder)")
            if (path.resolve("run.json").exists()) listOf(named(loadRun(path))) else intact(runsUnder(path, study, skipped).runs)
        }
    }
    if (chosen.isEmpty()) throw RunFormatException("no $study runs match '$selection' under $root")
    // a run named by id is read alone: what else lies in its folders is not this selection's business
    val said = if (RUN_ID.matches(selection)) emptyList() else skipped.distinct()
    return FoundRuns(chosen.sortedBy { it.id }.onEach { it.declaredUnder = root }.also { distinguish(it) }, said)
}

/** The runs [findRuns] chose, and one line per run it skipped as unreadable or damaged. */
class FoundRuns(runs: List<RecordedRun>, val skipped: List<String>) : List<RecordedRun> by runs

private class Found(val runs: List<RecordedRun>, val unreadable: Map<String, String>)

/** Every readable run of [study] under [folder]; unreadable ones are kept by folder name, and said in [skipped]. */
private fun runsUnder(folder: Path, study: String, skipped: MutableList<String>): Found {
    if (!folder.isDirectory()) return Found(emptyList(), emptyMap())
    // links followed: a folder of links to runs gathered from elsewhere is a folder of runs
    val manifests = try {
        Files.walk(folder, java.nio.file.FileVisitOption.FOLLOW_LINKS).use { paths -> paths.filter { it.name == "run.json" }.toList() }
    } catch (e: java.io.UncheckedIOException) {
        throw RunFormatException("cannot read the runs under $folder: ${e.cause?.message ?: e.message} (a link that leads back into the folder?)")
    }
    val runs = mutableListOf<RecordedRun>()
    val unreadable = mutableMapOf<String, String>()
    for (m in manifests) {
        try { runs += loadRun(m.parent) } catch (e: RunFormatException) {
            unreadable[m.parent.name] = e.message!!
            skipped += "skipping an unreadable run: ${e.message}"
        }
    }
    return Found(runs.filter { it.study == study }, unreadable)
}

/** The newest run of each mode that is whole: older ones are checked only when a newer one is damaged. */
private fun newestIntactPerMode(runs: List<RecordedRun>, intact: (List<RecordedRun>) -> List<RecordedRun>): List<RecordedRun> =
    runs.groupBy { it.mode }.values.mapNotNull { group -> group.sortedByDescending { it.id }.firstOrNull { intact(listOf(it)).isNotEmpty() } }

/** Every study's options added after runs were made without them: what such a run did, so it pools with a run that said so. */
internal val ADDED_PARAM_DEFAULTS = mapOf("profile" to "false", "on" to "", "place" to "")

/** Appends to the labels of runs that share host, JDK and tag the parameters in which they differ. */
internal fun distinguish(runs: List<RecordedRun>) {
    runs.forEach { it.distinction = "" }
    for (group in runs.groupBy { it.label }.values) {
        if (group.size < 2) continue
        val keys = group.flatMap { it.params.keys }.toSortedSet() - POOLABLE_PARAMS
        fun value(run: RecordedRun, k: String) = run.params[k] ?: ADDED_PARAM_DEFAULTS[k]
        val differing = keys.filter { k -> group.map { value(it, k) }.distinct().size > 1 }
        for (run in group) run.distinction = differing.joinToString(" · ") { "$it=${value(run, it) ?: "-"}" }
    }
}

/** One row per run: what ran, where, and how. */
fun List<RecordedRun>.manifests(): AnyFrame {
    fun col(name: String, f: (RecordedRun) -> Any?) = map(f).toColumn(name, Infer.Type)
    return dataFrameOf(listOf(
        col("run_id") { it.id },
        col("label") { it.label },
        col("status") { it.status },
        col("valid") { it.valid },
        col("mode") { it.mode },
        col("started_at") { it.startedAt },
        col("host") { it.hostname },
        col("cpu") { it.cpuModel },
        col("cores") { it.cores },
        col("jdk") { it.jdk },
        col("commit") { it.commit.take(10) },
        col("dirty") { it.dirty },
        col("quick") { it.quick },
        col("repetitions") { it.repetitions },
        col("warmup_s") { it.warmupSeconds },
        col("measure_s") { it.measureSeconds },
        col("reference") { it.isReference },
    ))
}

/**
 * Every whole run a notebook of [study] can read, yours (data/runs) and the committed reference runs, newest first,
 * with the label its rows carry: what the parameters cell may choose from (a run id, `reference`, `all`, ...).
 */
fun availableRuns(study: String, root: Path = dataRoot()): AnyFrame =
    findRuns(study, "all", root).sortedByDescending { it.id }.manifests()
        .select("run_id", "label", "mode", "quick", "repetitions", "started_at", "reference")

/** The published numbers of a study (data/published/<study>.csv). */
fun published(study: String, root: Path = dataRoot()): AnyFrame = readCsv(root.resolve("published/$study.csv"))

/**
 * What a post is based on: shown as a Markdown table in the notebook, and read by the publisher
 * (MIME text/x-perfkit-runs) for the post's front matter.
 */
class RunsSummary(val runs: List<RecordedRun>, val skipped: List<String> = (runs as? FoundRuns)?.skipped.orEmpty()) {
    val markdown: String get() = runs.manifests()
        .select("run_id", "mode", "host", "cores", "jdk", "commit", "repetitions", "warmup_s", "measure_s", "valid")
        .toMarkdown().text +
            if (skipped.isEmpty()) "" else "\n\n" + skipped.joinToString("\n") { "- perfkit: " + mdText(it, atLineStart = false) }
    val json: String get() = JSON.writeValueAsString(mapOf(
        "study" to runs.map { it.study }.distinct().joinToString(),
        "runIds" to runs.map { it.id },
        "hosts" to runs.map { "${it.hostname} (${it.cores} cores, ${it.cpuModel})" }.distinct(),
        "jdks" to runs.map { it.jdk }.distinct(),
        "reference" to runs.all { it.isReference },
        "ended" to endedDay(runs),
    ) + scaleFields(runs))
}

/** A post is dated by its data, not by the day it was published: the day the newest of [runs] ended (null: none says). */
internal fun endedDay(runs: List<RecordedRun>): String? = runs.map { it.endedAt.ifBlank { it.startedAt } }.filter { it.length >= 10 }.maxOrNull()?.take(10)

/**
 * How much a post's runs can say, for the line under its title: `scale` is "quick" when any run was quick,
 * "reference" when all are committed reference runs, else "full"; `forks` is the fewest forks per cell.
 */
internal fun scaleFields(runs: List<RecordedRun>): Map<String, Any> = mapOf(
    "scale" to when {
        runs.any { it.quick } -> "quick"
        runs.isNotEmpty() && runs.all { it.isReference } -> "reference"
        else -> "full"
    },
    "forks" to (runs.minOfOrNull { it.repetitions } ?: 0),
)

fun List<RecordedRun>.summary() = RunsSummary(this)

/** The release of [library] these runs read from their jars (notes.versions), several joined by "and"; null when none recorded it. */
fun List<RecordedRun>.recordedVersion(library: String): String? =
    mapNotNull { it.note("versions", library) }.distinct().joinToString(" and ").ifEmpty { null }

/** The same table from every run, stacked, with run_id and label in front. */
fun List<RecordedRun>.table(path: String): AnyFrame = map { run ->
    val t = run.table(path)
    t.insert(List(t.rowsCount()) { run.label }.toColumn("label")).at(0)
        .insert(List(t.rowsCount()) { run.id }.toColumn("run_id")).at(0)
}.concat()
