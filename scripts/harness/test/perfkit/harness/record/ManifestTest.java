package perfkit.harness.record;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

class ManifestTest {
    @TempDir Path dir;

    @Test
    void roundTripKeepsEveryField() throws Exception {
        ObjectNode m = Manifest.newObject();
        m.put("schemaVersion", Manifest.SCHEMA_VERSION).put("study", "queues").put("status", "running").putNull("error");
        m.putArray("variants").add("abq-1").add("disruptor-1");
        m.set("host", HostInfo.host());
        m.set("jvm", HostInfo.jvm());
        Path file = dir.resolve(Manifest.FILE_NAME);
        Manifest.writeAtomically(file, m);
        assertEquals(m, Manifest.read(file));
    }

    @Test
    void atomicWriteReplacesAndLeavesNoTempFile() throws Exception {
        Path file = dir.resolve(Manifest.FILE_NAME);
        Manifest.writeAtomically(file, Manifest.newObject().put("status", "running"));
        Manifest.writeAtomically(file, Manifest.newObject().put("status", "complete"));
        assertEquals("complete", Manifest.read(file).get("status").asText());
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "only run.json remains");
        }
    }

    @Test
    void concurrentReadersNeverSeeAPartialManifest() throws Exception {
        Path file = dir.resolve(Manifest.FILE_NAME);
        ObjectNode big = Manifest.newObject();
        for (int i = 0; i < 2000; i++) big.put("k" + i, "value " + i);
        big.put("round", -1);
        Manifest.writeAtomically(file, big);
        Thread writer = new Thread(() -> {
            for (int i = 0; i < 200; i++) {
                try { Manifest.writeAtomically(file, big.put("round", i)); } catch (Exception e) { throw new RuntimeException(e); }
            }
        });
        writer.start();
        int reads = 0;
        while (writer.isAlive()) {
            assertEquals(2001, Manifest.read(file).size()); // throws on a truncated document
            reads++;
        }
        writer.join();
        assertTrue(reads > 0);
    }

    @Test
    void credentialsInUrlsAreRedacted() {
        assertEquals("jdbc:postgresql://bench:***@db.example:5432/flow",
                Manifest.redact("jdbc:postgresql://bench:s3cret@db.example:5432/flow"));
        assertEquals("jdbc:postgresql://db:5432/flow?user=bench&password=***&ssl=true",
                Manifest.redact("jdbc:postgresql://db:5432/flow?user=bench&password=s3cret&ssl=true"));
        assertEquals("kafka://127.0.0.1:9092", Manifest.redact("kafka://127.0.0.1:9092"));
    }

    @Test
    void secretParametersAreMaskedByName() {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("jdbc-url", "postgresql://u:pw@h/db");
        params.put("jdbc-password", "hunter2");
        params.put("api-token", "abc");
        params.put("forks", "3");
        params.put("password-file", "");
        ObjectNode p = Manifest.redactedParams(params);
        assertEquals("postgresql://u:***@h/db", p.get("jdbc-url").asText());
        assertEquals("***", p.get("jdbc-password").asText());
        assertEquals("***", p.get("api-token").asText());
        assertEquals("3", p.get("forks").asText());
        assertEquals("", p.get("password-file").asText(), "an empty secret stays visibly empty");
        assertFalse(p.toString().contains("hunter2") || p.toString().contains(":pw@"));
    }
}
