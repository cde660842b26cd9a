package perfkit.harness.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One entry of the manifest's {@code files[]}: what a data file holds, stated as fields so readers never parse
 * file names. {@code cell} is the measured cell (the tables' {@code cell} column), {@code series} a latency
 * series within it, {@code fork} the 1-based JVM fork, {@code timing} corrected or uncorrected, and
 * {@code window} the measurement window by intended time (epoch ms); each is null where it does not apply.
 */
public record RunFile(String path, String kind, String description, String cell, String series, Integer fork, String timing,
                      Long windowStartMs, Long windowEndMs) {
    public static final String CORRECTED = "corrected", UNCORRECTED = "uncorrected";

    public static RunFile of(String path, String kind, String description) {
        return new RunFile(path, kind, description, null, null, null, null, null, null);
    }

    public static RunFile table(String path, String description) {
        return of(path, "table", description);
    }

    public RunFile withWindow(long startMs, long endMs) {
        return new RunFile(path, kind, description, cell, series, fork, timing, startMs, endMs);
    }

    public ObjectNode toJson() {
        ObjectNode f = Manifest.newObject();
        f.put("path", path);
        f.put("kind", kind);
        f.put("description", description);
        f.put("cell", cell);
        f.put("series", series);
        if (fork == null) f.putNull("fork"); else f.put("fork", fork);
        f.put("timing", timing);
        if (windowStartMs == null) f.putNull("window");
        else f.putObject("window").put("startMs", windowStartMs).put("endMs", windowEndMs);
        return f;
    }

    public static RunFile fromJson(JsonNode f) {
        JsonNode w = f.path("window");
        return new RunFile(f.get("path").asText(), f.get("kind").asText(), f.get("description").asText(),
                text(f, "cell"), text(f, "series"), f.path("fork").isInt() ? f.get("fork").asInt() : null, text(f, "timing"),
                w.isObject() ? w.get("startMs").asLong() : null, w.isObject() ? w.get("endMs").asLong() : null);
    }

    private static String text(JsonNode f, String field) {
        return f.path(field).isTextual() ? f.get(field).asText() : null;
    }
}
