package perfkit.harness;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** A study's typed fork spec and result cross the process boundary whole, or not at all. */
class ForkProtocolTest {
    record Spec(String cell, int fork, double warmup, List<String> strategies, boolean keepWarmup) {}

    record Result(long events, double rate, Long samples) {}

    @Test
    void aSpecArrivesAsTheRecordItWasSentAs() throws Exception {
        Spec sent = new Spec("disruptor-1/yielding", 2, 0.5, List.of("blocking", "yielding"), true);
        ObjectNode line = ForkProtocol.decodeLine(ForkProtocol.encodeSpec(sent));
        assertEquals(sent, ForkProtocol.spec(line, Spec.class));
        // the parameter-map view a study without a spec reads: scalars as text
        assertEquals("2", ForkProtocol.params(line).get("fork"));
        assertEquals("true", ForkProtocol.params(line).get("keepWarmup"));
    }

    @Test
    void aSpecTheForkDoesNotKnowIsRefusedNotDefaulted() throws Exception {
        ObjectNode missing = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"warmup\":1.0,\"strategies\":[],\"keepWarmup\":false}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(missing, Spec.class), "a missing fork number is not 0");
        ObjectNode extra = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":1,\"warmup\":1.0,\"strategies\":[],\"keepWarmup\":false,\"rate\":5}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(extra, Spec.class), "a field the fork would ignore");
        ObjectNode nullPrimitive = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":null,\"warmup\":1.0,\"strategies\":[],\"keepWarmup\":false}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(nullPrimitive, Spec.class));
    }

    @Test
    void aResultIsReadWithoutTheHarnessFieldsAndKeepsItsNulls() throws Exception {
        ObjectNode result = Manifest.newObject();
        result.put("series", "abq-1/fork1");
        result.putArray("files");
        result.set("jvm", Manifest.JSON.valueToTree(Map.of("version", "17")));
        result.setAll((ObjectNode) Manifest.JSON.valueToTree(new Result(12, Double.NaN, null)));
        Result read = ForkProtocol.result(ForkProtocol.parseResult(ForkProtocol.result(result)), Result.class);
        assertEquals(12, read.events());
        assertTrue(Double.isNaN(read.rate()), "NaN survives the line");
        assertNull(read.samples(), "throughput mode has no samples: null, not 0");
        result.remove("events");
        assertThrows(Exception.class, () -> ForkProtocol.result(result, Result.class), "a result without its count is an error");
    }
}
