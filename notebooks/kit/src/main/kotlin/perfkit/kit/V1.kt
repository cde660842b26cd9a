package perfkit.kit

import com.fasterxml.jackson.databind.JsonNode

/**
 * COMPATIBILITY READER FOR SCHEMA VERSION 1 MANIFESTS: remove once every run, reference runs included,
 * is version 2. Version 1 had no `mode` field and no cell/series/fork/timing/window in `files[]`; they
 * are derived here from notes and file names, the only place the kit still parses a file name.
 */
internal object V1 {
    private val LOG_NAME = Regex("""latency/(.+)\.fork(\d+)\.(corrected|uncorrected)\.hlog""")
    private val SUB_SERIES = Regex("""(.+)-(e2e|hop\d+)""")
    private val STUDY_MODES = mapOf("messaging" to "sweep", "workflow" to "drain", "harness" to "jmh", "overhead" to "jmh")

    fun mode(run: Run): String = run.note("mode") ?: STUDY_MODES[run.study] ?: ""

    fun file(run: Run, f: JsonNode): RunFile {
        val path = f["path"].asText()
        val m = LOG_NAME.matchEntire(path)
        if (m == null || f["kind"].asText() != "hlog")
            return RunFile(path, f["kind"].asText(), f.path("description").asText(""), null, null, null, null, null)
        val name = m.groupValues[1]
        // messaging wrote <cell>-e2e / <cell>-hop1; version 2 calls these series <cell>/e2e
        val sub = SUB_SERIES.matchEntire(name)
        val cell = sub?.groupValues?.get(1) ?: name
        val series = if (sub != null) "$cell/${sub.groupValues[2]}" else name
        return RunFile(path, "hlog", f.path("description").asText(""), cell, series, m.groupValues[2].toInt(), m.groupValues[3], null)
    }
}
