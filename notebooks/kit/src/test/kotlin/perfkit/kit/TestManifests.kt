package perfkit.kit

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

private val MAPPER = ObjectMapper()

/** Every field run.schema.json requires, with plain values: what a test does not set. */
private const val TEMPLATE = """
{"schemaVersion":2,"study":"queues","runId":"20260101T000000Z-h1-aaaaaa","mode":"throughput","tag":"","quick":false,
 "variants":[],"params":{},"status":"complete","error":null,"startedAt":"2026-01-01T00:00:00Z","endedAt":"2026-01-01T00:01:00Z",
 "pid":1,"host":{"hostname":"h1","cpuModel":"test cpu","logicalCores":2,"memoryBytes":1073741824,"os":"Linux","kernel":"6.1.0",
 "containerCpuLimit":null},
 "jvm":{"vendor":"test","version":"17.0.15","inputArguments":[]},"kit":{"commit":"0000000","dirty":false},
 "measurement":{"warmupSeconds":1,"measureSeconds":1,"repetitions":1,"repetitionKind":"jvm-fork","warmupExcluded":true},
 "valid":true,"invalidReasons":[],"notes":{},"files":[]}
"""

/**
 * A schema-complete version-2 manifest from a test's partial one: the test's fields over [TEMPLATE] (objects merged one
 * level deep), each files[] entry completed with nulls, a finished run given an end time and a stopped one its reason. Tests write what they test.
 */
fun completeManifest(json: String): String {
    val given = MAPPER.readTree(json) as ObjectNode
    val out = MAPPER.readTree(TEMPLATE) as ObjectNode
    for ((name, value) in given.properties()) {
        val base = out.get(name)
        if (base is ObjectNode && value is ObjectNode && name != "params" && name != "notes") base.setAll<ObjectNode>(value) else out.set<ObjectNode>(name, value)
    }
    if (out["status"].asText() != "running" && out["endedAt"].isNull) out.put("endedAt", "2026-01-01T00:01:00Z")
    // a run that failed or was interrupted says why (the schema requires it)
    if (out["status"].asText() in setOf("failed", "interrupted") && out["error"].isNull) out.put("error", "stopped in a test")
    for (f in out["files"]) if (f is ObjectNode) {
        if (!f.has("description")) f.put("description", "")
        for (k in listOf("cell", "series", "fork", "timing", "window")) if (!f.has(k)) f.putNull(k)
    }
    return MAPPER.writeValueAsString(out)
}
