package perfkit.harness.process;

import perfkit.harness.record.Manifest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Locale;

/**
 * How a run and its forks talk. The parent writes the fork's spec (the study's typed record) as one JSON line on the
 * fork's stdin (never on its command line, where other users could read secrets) and keeps stdin open: its end tells
 * the fork the parent is gone. The fork answers with tagged stdout lines: progress ticks, phase changes, and one
 * final result; any other line is passed through to the console.
 */
public final class ForkProtocol {
    public static final String FLAG = "--perfkit-fork";
    public static final String TICK = "PERFKIT:TICK ", PHASE = "PERFKIT:PHASE ", RESULT = "PERFKIT:RESULT ";

    /** A cumulative count, stamped with the fork's System.nanoTime() (one monotonic clock for all processes on Linux). */
    public record Tick(long count, long nanos) {}

    public record Phase(String name, double plannedSeconds) {}

    private ForkProtocol() {}

    public static String tick(long count, long nanos) { return TICK + count + " " + nanos; }

    public static Tick parseTick(String line) {
        String[] f = line.substring(TICK.length()).trim().split(" ");
        return new Tick(Long.parseLong(f[0]), f.length > 1 ? Long.parseLong(f[1]) : System.nanoTime());
    }

    public static String phase(String name, double plannedSeconds) {
        return String.format(Locale.ROOT, "%s%s %.3f", PHASE, name, plannedSeconds);
    }

    public static Phase parsePhase(String line) {
        String[] f = line.substring(PHASE.length()).split(" ", 2);
        return new Phase(f[0], Double.parseDouble(f[1]));
    }

    public static String result(ObjectNode result) throws JsonProcessingException {
        return RESULT + Manifest.JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(result);
    }

    public static ObjectNode parseResult(String line) throws JsonProcessingException {
        return (ObjectNode) Manifest.JSON.readTree(line.substring(RESULT.length()));
    }

    /** A study's typed fork spec (a record) as the one stdin line: its components by name, each of its own JSON type. */
    public static String encodeSpec(Record spec) throws JsonProcessingException {
        return Manifest.JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(spec);
    }

    /** The stdin line as it came: the study's spec, each component of its own JSON type. */
    public static ObjectNode decodeLine(String line) throws JsonProcessingException {
        return (ObjectNode) Manifest.JSON.readTree(line);
    }

    /**
     * The line as the study's spec record: every component must be there, of its type, and nothing else, so a spec
     * the parent and the fork disagree on fails at the fork's start, never as a silent default.
     */
    public static <T extends Record> T spec(ObjectNode line, Class<T> type) throws JsonProcessingException {
        return strict(line, type);
    }

    /** The fields the harness itself puts in every fork's result, beside the study's own. */
    static final java.util.Set<String> HARNESS_RESULT_FIELDS = java.util.Set.of("series", "files", "jvm");

    /** A fork's result as the study's result record: its fields without the harness's, read as strictly as a spec. */
    public static <T extends Record> T result(ObjectNode result, Class<T> type) throws JsonProcessingException {
        ObjectNode own = result.deepCopy();
        own.remove(HARNESS_RESULT_FIELDS);
        return strict(own, type);
    }

    /** Every component present (null only where its type allows: a boxed or reference type), none unknown. */
    private static <T extends Record> T strict(ObjectNode node, Class<T> type) throws JsonProcessingException {
        return Manifest.JSON.readerFor(type).with(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES,
                DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).treeToValue(node, type);
    }
}
