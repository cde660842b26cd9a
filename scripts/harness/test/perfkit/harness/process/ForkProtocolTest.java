package perfkit.harness.process;

import perfkit.harness.record.Manifest;
import perfkit.harness.measure.Warmup;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** A study's typed fork spec and result cross the process boundary whole, or not at all. */
class ForkProtocolTest {
    record Spec(String cell, int fork, double warmup, List<String> strategies, boolean keepWarmup, Warmup.Rule rule, Target target) {}

    /** A nested part, as a study's database target is: read as strictly as the spec itself. */
    record Target(String url, String password) {}

    record Result(long events, double rate, Long samples) {}

    @Test
    void aSpecArrivesAsTheRecordItWasSentAs() throws Exception {
        Spec sent = new Spec("disruptor-1/yielding", 2, 0.5, List.of("blocking", "yielding"), true, new Warmup.Rule(1, 8, 3, 0.1, 5),
                new Target("jdbc:postgresql://127.0.0.1:5432/x", "s3cret"));
        assertEquals(sent, ForkProtocol.spec(ForkProtocol.decodeLine(ForkProtocol.encodeSpec(sent)), Spec.class));
        Spec none = new Spec("abq-1", 1, 0, List.of(), false, new Warmup.Rule(0, 0, 2, 0.1, 0), null);
        assertEquals(none, ForkProtocol.spec(ForkProtocol.decodeLine(ForkProtocol.encodeSpec(none)), Spec.class), "an absent part stays null");
    }

    @Test
    void aSpecTheForkDoesNotKnowIsRefusedNotDefaulted() throws Exception {
        String rest = "\"warmup\":1.0,\"strategies\":[],\"keepWarmup\":false,\"rule\":{\"minSeconds\":0,\"maxSeconds\":1,\"stableSamples\":2,"
                + "\"tolerance\":0.1,\"cpuFloorPct\":0},\"target\":null";
        assertDoesNotThrow(() -> ForkProtocol.spec(ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":1," + rest + "}"), Spec.class));
        ObjectNode missing = ForkProtocol.decodeLine("{\"cell\":\"abq-1\"," + rest + "}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(missing, Spec.class), "a missing fork number is not 0");
        ObjectNode extra = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":1," + rest + ",\"rate\":5}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(extra, Spec.class), "a field the fork would ignore");
        ObjectNode nullPrimitive = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":null," + rest + "}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(nullPrimitive, Spec.class));
        ObjectNode nestedMissing = ForkProtocol.decodeLine("{\"cell\":\"abq-1\",\"fork\":1," + rest.replace(",\"cpuFloorPct\":0", "") + "}");
        assertThrows(Exception.class, () -> ForkProtocol.spec(nestedMissing, Spec.class), "a nested part is read as strictly");
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
