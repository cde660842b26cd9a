package perfkit.harness.os;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ProcessesTest {
    @Test
    void onlyProcSayingSoMakesAProcessGone() {
        assertTrue(Processes.gone(new NoSuchFileException("/proc/42/stat")));
        assertTrue(Processes.gone(new IOException("No such process")), "ESRCH while it exits");
        assertFalse(Processes.gone(new FileSystemException("/proc/42/stat", null, "Too many open files")), "this JVM could not look");
    }

    /** A server holding thousands of connections runs out of file descriptors; its parent is still there. */
    @Test
    void aJvmOutOfFileDescriptorsStillSeesALiveProcess() throws IOException {
        long limit = OpenFiles.softLimit(Files.readString(Path.of("/proc/self/limits")));
        assumeTrue(limit <= 100_000, "a file table this large takes too long to fill in a unit test");
        List<FileChannel> held = new ArrayList<>();
        boolean full = false;
        try {
            while (!full) {
                try {
                    held.add(FileChannel.open(Path.of("/dev/null")));
                } catch (FileSystemException e) {
                    full = true; // EMFILE: the table is full
                }
            }
            assertTrue(Processes.running(ProcessHandle.current().pid()), "this JVM itself, seen through a full file table");
        } finally {
            for (FileChannel c : held) c.close();
        }
        assertTrue(full);
    }
}
