package perfkit.harness.os;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class OpenFilesTest {
    private static final String LIMITS = """
            Limit                     Soft Limit           Hard Limit           Units
            Max processes             95744                95744                processes
            Max open files            20000                1048576              files
            Max locked memory         8388608              8388608              bytes
            """;

    @Test
    void theSoftLimitIsTheOneThatRefuses() {
        assertEquals(20_000, OpenFiles.softLimit(LIMITS));
        assertEquals(Long.MAX_VALUE, OpenFiles.softLimit(LIMITS.replace("20000     ", "unlimited ")));
        assertThrows(IllegalArgumentException.class, () -> OpenFiles.softLimit("Limit Soft Hard\n"));
    }

    @Test
    void whatAProcessHoldsCountsAgainstWhatItMayStillOpen() throws IOException {
        long pid = ProcessHandle.current().pid(), before = OpenFiles.left(pid).orElseThrow();
        List<FileChannel> held = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) held.add(FileChannel.open(Path.of("/dev/null")));
            long during = OpenFiles.left(pid).orElseThrow();
            // other threads of this JVM may open or close a few files meanwhile
            assertTrue(Math.abs(before - 50 - during) <= 5, before + " less 50 held is not " + during);
        } finally {
            for (FileChannel c : held) c.close();
        }
    }

    @Test
    void aProcessThatIsGoneHasNoAnswer() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertTrue(OpenFiles.left(p.pid()).isEmpty());
    }
}
