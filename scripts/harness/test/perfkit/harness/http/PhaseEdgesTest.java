package perfkit.harness.http;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The time series follows the load driver's phase lines as its log grows, a line written in two pieces included. */
class PhaseEdgesTest {
    @TempDir
    Path dir;

    private void append(Path log, String text) throws Exception {
        Files.writeString(log, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void theRunningPhasesNameIt() throws Exception {
        Path log = dir.resolve("driver.log");
        HttpLoad.PhaseEdges edges = new HttpLoad.PhaseEdges(log);
        assertEquals(Optional.empty(), edges.latest(), "no log yet");
        append(log, "INFO allocating 64 connections\nperfkit-phase warmup warmup\n");
        assertEquals(Optional.of("warmup"), edges.latest());
        assertEquals(Optional.of("warmup"), edges.latest(), "nothing new: still warming up");
        // the measured phase starts while the warm-up's last responses are still coming in
        append(log, "perfkit-phase measure step.r100.fork1\nsome output\nperfkit-phase ended warmup\nperfkit-pha");
        assertEquals(Optional.of("measure"), edges.latest(), "a measured phase running wins; an unfinished line waits");
        append(log, "se ended step.r100.fork1\n");
        assertEquals(Optional.of("drain"), edges.latest(), "the line completed by the next write counts");
        append(log, "perfkit-phase warmup warmup-2\n");
        assertEquals(Optional.of("warmup"), edges.latest(), "the next step's warm-up");
    }

    @Test
    void anEarlierDriversLinesInTheSameLogDoNotCount() throws Exception {
        Path log = dir.resolve("again.log");
        append(log, "perfkit-phase measure step.r100.fork1\n"); // a driver of the same name before, which never ended it
        HttpLoad.PhaseEdges edges = new HttpLoad.PhaseEdges(log);
        assertEquals(Optional.empty(), edges.latest());
        append(log, "perfkit-phase warmup warmup\n");
        assertEquals(Optional.of("warmup"), edges.latest());
    }
}
