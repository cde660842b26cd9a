package perfkit.harness.remote;

import perfkit.harness.process.ForkProtocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** What a JVM on another host sends back: its JIT reports on this host's clock, and its files only where asked. */
class RemoteJvmTest {
    @Test
    void aJitReportIsRetimedOnArrivalAndOtherLinesPassAsTheyAre() {
        assertEquals("PERFKIT_JVM 555 120 8", RemoteJvm.retimed("PERFKIT_JVM 987654321 120 8", 555));
        assertEquals("PERFKIT_PORT 8080", RemoteJvm.retimed("PERFKIT_PORT 8080", 555));
        assertEquals("PERFKIT_JVM cut", RemoteJvm.retimed("PERFKIT_JVM cut", 555), "a cut report stays for the listener to drop");
    }

    @Test
    void aForksTickKeepsItsCountAndTakesThisHostsClock() {
        assertEquals(ForkProtocol.tick(42, 555), RemoteJvm.retimed(ForkProtocol.tick(42, 987654321), 555));
        assertEquals(new ForkProtocol.Tick(42, 555), ForkProtocol.parseTick(RemoteJvm.retimed(ForkProtocol.tick(42, 987654321), 555)));
        assertEquals("PERFKIT:TICK x 9", RemoteJvm.retimed("PERFKIT:TICK x 9", 555), "a garbled tick stays for the reader to refuse");
        assertEquals(ForkProtocol.phase("measure", 2), RemoteJvm.retimed(ForkProtocol.phase("measure", 2), 555));
    }

    @Test
    void filesLandUnderTheFolderTheirNameStartsWith(@TempDir Path dir) {
        Map<String, Path> collect = Map.of("latency", dir.resolve("latency"), "result.json", dir.resolve("load/x.result.json"));
        assertEquals(dir.resolve("latency/a.corrected.hlog"), RemoteJvm.target("latency/a.corrected.hlog", collect));
        assertEquals(dir.resolve("latency/sub/b.hlog"), RemoteJvm.target("latency/sub/b.hlog", collect));
        assertEquals(dir.resolve("load/x.result.json"), RemoteJvm.target("result.json", collect));
    }

    @Test
    void aNameNotAskedForOrClimbingOutIsRefused(@TempDir Path dir) {
        Map<String, Path> collect = Map.of("latency", dir.resolve("latency"));
        assertNull(RemoteJvm.target("secrets.txt", collect));
        assertNull(RemoteJvm.target("latency/../../etc/passwd", collect));
        assertNull(RemoteJvm.target("latency/..", collect));
        assertNull(RemoteJvm.target("latencyX/a.hlog", collect), "a prefix of the name is not its folder");
    }

    @Test
    void theSameClassesPackIntoTheSameJar(@TempDir Path dir) throws Exception {
        Path classes = Files.createDirectories(dir.resolve("classes/p"));
        Files.writeString(classes.resolve("A.class"), "a");
        Files.writeString(classes.resolve("B.class"), "b");
        Path one = RemoteJvm.packed(dir.resolve("one"), dir.resolve("classes"));
        Files.setLastModifiedTime(classes.resolve("A.class"), java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 60_000));
        Path two = RemoteJvm.packed(dir.resolve("two"), dir.resolve("classes"));
        assertEquals(RemoteJvm.sha256(one), RemoteJvm.sha256(two), "the host's cache keeps one copy");
        try (var zip = new java.util.zip.ZipFile(one.toFile())) {
            assertNotNull(zip.getEntry("p/A.class"));
        }
    }
}
