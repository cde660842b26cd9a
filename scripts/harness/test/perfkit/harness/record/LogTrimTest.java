package perfkit.harness.record;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class LogTrimTest {
    @Test
    void aLargeLogKeepsItsFirstAndLastWholeLinesAndSaysWhatWasCut(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) lines.add("line " + i + " of a repeated stack trace");
        Path log = Files.createDirectories(dir.resolve("logs")).resolve("app.log");
        Files.write(log, lines);
        long before = Files.size(log);

        assertEquals(List.of(log), LogTrim.trimAll(dir, 64 * 1024));

        List<String> kept = Files.readAllLines(log);
        assertTrue(Files.size(log) <= 64 * 1024 + 200, "the limit plus one marker line");
        assertEquals("line 0 of a repeated stack trace", kept.get(0));
        assertEquals("line 19999 of a repeated stack trace", kept.get(kept.size() - 1));
        String marker = kept.stream().filter(l -> l.startsWith("[perfkit:")).findFirst().orElseThrow();
        int at = kept.indexOf(marker);
        assertEquals(kept.get(at - 1), lines.get(at - 1), "the head ends on a whole line");
        assertTrue(lines.contains(kept.get(at + 1)), "the tail starts on a whole line");
        long keptBytes = Files.size(log) - marker.length() - 1;
        assertTrue(marker.contains(String.format(java.util.Locale.ROOT, "%,d bytes cut", before - keptBytes)), marker);
    }

    @Test
    void smallLogsOtherFilesAndScratchAreLeftAlone(@TempDir Path dir) throws Exception {
        Path small = Files.writeString(dir.resolve("small.log"), "ok\n");
        Path table = Files.writeString(dir.resolve("big.csv"), "x\n".repeat(50_000));
        Path scratch = Files.createDirectories(dir.resolve(RunLayout.SCRATCH_DIR)).resolve("db.log");
        Files.writeString(scratch, "y\n".repeat(50_000));

        assertEquals(List.of(), LogTrim.trimAll(dir, 1024));
        assertEquals("ok\n", Files.readString(small));
        assertEquals(100_000, Files.size(table));
        assertEquals(100_000, Files.size(scratch));
    }
}
