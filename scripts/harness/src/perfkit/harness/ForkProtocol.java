package perfkit.harness;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Locale;
import java.util.Map;

/**
 * How a run and its forks talk. The parent writes the fork's parameters as one JSON line on the fork's stdin
 * (never on its command line, where other users could read secrets) and keeps stdin open: its end tells the
 * fork the parent is gone. The fork answers with tagged stdout lines: progress ticks, phase changes, and one
 * final result; any other line is passed through to the console.
 */
final class ForkProtocol {
    static final String FLAG = "--perfkit-fork";
    static final String TICK = "PERFKIT:TICK ", PHASE = "PERFKIT:PHASE ", RESULT = "PERFKIT:RESULT ";

    /** A cumulative count, stamped with the fork's System.nanoTime() (one monotonic clock for all processes on Linux). */
    record Tick(long count, long nanos) {}

    record Phase(String name, double plannedSeconds) {}

    private ForkProtocol() {}

    static String tick(long count, long nanos) { return TICK + count + " " + nanos; }

    static Tick parseTick(String line) {
        String[] f = line.substring(TICK.length()).trim().split(" ");
        return new Tick(Long.parseLong(f[0]), f.length > 1 ? Long.parseLong(f[1]) : System.nanoTime());
    }

    static String phase(String name, double plannedSeconds) {
        return String.format(Locale.ROOT, "%s%s %.3f", PHASE, name, plannedSeconds);
    }

    static Phase parsePhase(String line) {
        String[] f = line.substring(PHASE.length()).split(" ", 2);
        return new Phase(f[0], Double.parseDouble(f[1]));
    }

    static String result(ObjectNode result) throws JsonProcessingException {
        return RESULT + Manifest.JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(result);
    }

    static ObjectNode parseResult(String line) throws JsonProcessingException {
        return (ObjectNode) Manifest.JSON.readTree(line.substring(RESULT.length()));
    }

    static String encodeParams(Map<String, String> params) throws JsonProcessingException {
        return Manifest.JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(params);
    }

    static Map<String, String> decodeParams(String line) throws JsonProcessingException {
        return Manifest.JSON.readValue(line, new TypeReference<Map<String, String>>() {});
    }
}
