package perfkit.kit

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.jetbrains.kotlinx.dataframe.AnyFrame
import org.jetbrains.kotlinx.dataframe.api.Infer
import org.jetbrains.kotlinx.dataframe.api.concat
import org.jetbrains.kotlinx.dataframe.api.dataFrameOf
import org.jetbrains.kotlinx.dataframe.api.toColumn
import org.jetbrains.kotlinx.dataframe.api.insert
import org.jetbrains.kotlinx.dataframe.api.at
import org.jetbrains.kotlinx.dataframe.api.select
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.exists
import kotlin.io.path.isDirectory
import kotlin.io.path.name

/** A run directory that does not follow the run format; the message names the file. */
class RunFormatException(message: String, cause: Throwable? = null) : RuntimeException(message, cause)

private val JSON = ObjectMapper()
private val RUN_ID = Regex("""\d{8}T\d{6}Z-[a-z0-9-]+-[0-9a-f]{6}""")

/** One run: its directory and manifest (see data/README.md). */
class Run(val dir: Path, val manifest: JsonNode) {
    val id: String get() = manifest["runId"].asText()
    val study: String get() = manifest["study"].asText()
    val status: String get() = manifest["status"].asText()
    val valid: Boolean get() = manifest["valid"].asBoolean()
    val mode: String get() = manifest.path("notes").path("mode").asText("")
    val host: String get() = manifest["host"]["hostname"].asText()
    val jdk: String get() = manifest["jvm"]["version"].asText()
    val tag: String get() = manifest.path("tag").asText("")
    val startedAt: String get() = manifest["startedAt"].asText()
    val isReference: Boolean get() = dir.parent?.parent?.name == "reference"

    /** How plots and tables name this run: host, JDK, and the tag if there is one. */
    val label: String get() = listOf(host, "JDK $jdk", tag).filter { it.isNotBlank() }.joinToString(" · ")

    fun param(name: String): String? = manifest["params"]?.get(name)?.asText()

    /** A data file listed in the manifest; a clear error when it is not listed or not on disk. */
    fun file(path: String): Path {
        val listed = manifest["files"].map { it["path"].asText() }
        if (path !in listed) throw RunFormatException("run $id has no file '$path' (it lists: ${listed.joinToString()})")
        val file = dir.resolve(path)
        if (!file.exists()) throw RunFormatException("run $id lists '$path' but it is missing: $file")
        return file
    }

    fun filesOfKind(kind: String): List<String> = manifest["files"].filter { it["kind"].asText() == kind }.map { it["path"].asText() }

    fun table(path: String): AnyFrame = readCsv(file(path))

    override fun toString() = "$study/$id ($status)"
}

/** Reads a run directory; a missing or corrupt manifest is an error that names the file. */
fun loadRun(dir: Path): Run {
    val file = dir.resolve("run.json")
    if (!file.exists()) throw RunFormatException("not a run directory (no run.json): $dir")
    val manifest = try { JSON.readTree(file.toFile()) } catch (e: Exception) {
        throw RunFormatException("corrupt manifest $file: ${e.message?.lineSequence()?.first()}", e)
    }
    if (manifest == null || !manifest.isObject) throw RunFormatException("corrupt manifest $file: not a JSON object")
    val version = manifest.path("schemaVersion").asInt(-1)
    if (version != 1) throw RunFormatException("unsupported manifest $file: schemaVersion $version (this kit reads 1)")
    for (field in listOf("runId", "study", "status", "host", "jvm", "files", "params"))
        if (!manifest.has(field)) throw RunFormatException("corrupt manifest $file: no '$field'")
    return Run(dir, manifest)
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
 * Finds the runs a notebook analyses. [selection] is one of:
 * - `latest`: the newest complete run of each mode under data/runs/<study>, or the reference runs when there are none;
 * - `reference`: the committed reference runs; `all`: every complete run;
 * - a run id; or a path to a run directory or to a folder of runs (e.g. runs from two hosts to compare).
 */
fun findRuns(study: String, selection: String = "latest", root: Path = dataRoot()): List<Run> {
    val user = runsUnder(root.resolve("runs").resolve(study), study)
    val reference = runsUnder(root.resolve("reference").resolve(study), study)
    val chosen = when {
        selection == "latest" -> newestPerMode(user.filter { it.status == "complete" }).ifEmpty { reference }
        selection == "reference" -> reference
        selection == "all" -> (user + reference).filter { it.status == "complete" }
        RUN_ID.matches(selection) -> (user + reference).filter { it.id == selection }
        else -> {
            val path = Path.of(selection).let { if (it.isAbsolute || it.exists()) it else root.resolve(selection) }
            if (!path.isDirectory()) throw RunFormatException("no run id, folder or keyword '$selection' (use latest, reference, all, a run id or a folder)")
            if (path.resolve("run.json").exists()) listOf(loadRun(path)) else runsUnder(path, study)
        }
    }
    if (chosen.isEmpty()) throw RunFormatException("no $study runs match '$selection' under $root")
    return chosen.sortedBy { it.id }
}

private fun runsUnder(folder: Path, study: String): List<Run> {
    if (!folder.isDirectory()) return emptyList()
    return Files.walk(folder).use { paths ->
        paths.filter { it.name == "run.json" }.map { loadRun(it.parent) }.toList()
    }.filter { it.study == study }
}

private fun newestPerMode(runs: List<Run>): List<Run> =
    runs.groupBy { it.mode }.values.map { group -> group.maxBy { it.id } }

/** One row per run: what ran, where, and how. */
fun List<Run>.manifests(): AnyFrame {
    fun col(name: String, f: (Run) -> Any?) = map(f).toColumn(name, Infer.Type)
    return dataFrameOf(listOf(
        col("run_id") { it.id },
        col("label") { it.label },
        col("status") { it.status },
        col("valid") { it.valid },
        col("mode") { it.mode },
        col("started_at") { it.startedAt },
        col("host") { it.host },
        col("cpu") { it.manifest["host"]["cpuModel"].asText() },
        col("cores") { it.manifest["host"]["logicalCores"].asInt() },
        col("jdk") { it.jdk },
        col("commit") { it.manifest["kit"]["commit"].asText("").take(10) },
        col("dirty") { it.manifest["kit"]["dirty"].let { d -> if (d.isNull) null else d.asBoolean() } },
        col("quick") { it.manifest.path("quick").asBoolean() },
        col("repetitions") { it.manifest["measurement"]["repetitions"].asInt() },
        col("warmup_s") { it.manifest["measurement"]["warmupSeconds"].asDouble() },
        col("measure_s") { it.manifest["measurement"]["measureSeconds"].asDouble() },
        col("reference") { it.isReference },
    ))
}

/** The published numbers of a study (data/published/<study>.csv). */
fun published(study: String, root: Path = dataRoot()): AnyFrame = readCsv(root.resolve("published/$study.csv"))

/**
 * What a post is based on: shown as a Markdown table in the notebook, and read by the publisher
 * (MIME text/x-perfkit-runs) for the post's front matter.
 */
class RunsSummary(val runs: List<Run>) {
    val markdown: String get() = runs.manifests()
        .select("run_id", "mode", "host", "cores", "jdk", "commit", "repetitions", "warmup_s", "measure_s", "valid")
        .toMarkdown().text
    val json: String get() = JSON.writeValueAsString(mapOf(
        "study" to runs.map { it.study }.distinct().joinToString(),
        "runIds" to runs.map { it.id },
        "hosts" to runs.map { "${it.host} (${it.manifest["host"]["logicalCores"].asInt()} cores, ${it.manifest["host"]["cpuModel"].asText()})" }.distinct(),
        "jdks" to runs.map { it.jdk }.distinct(),
        "reference" to runs.all { it.isReference },
    ))
}

fun List<Run>.summary() = RunsSummary(this)

/** The same table from every run, stacked, with run_id and label in front. */
fun List<Run>.table(path: String): AnyFrame = map { run ->
    val t = run.table(path)
    t.insert(List(t.rowsCount()) { run.label }.toColumn("label")).at(0)
        .insert(List(t.rowsCount()) { run.id }.toColumn("run_id")).at(0)
}.concat()
