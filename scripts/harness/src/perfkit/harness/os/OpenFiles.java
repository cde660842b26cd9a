package perfkit.harness.os;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * A process's open files as Linux counts them: each connection a server accepts takes one, and a server that reaches
 * its soft limit ("Too many open files") refuses connections and fails in ways that say nothing about its speed.
 */
public final class OpenFiles {
    private OpenFiles() {}

    /** The files {@code pid} may still open: its soft limit less what it holds now; empty when /proc cannot say. */
    public static OptionalLong left(long pid) {
        Path proc = Path.of("/proc", Long.toString(pid));
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            long held = fds.count();
            return OptionalLong.of(Math.max(0, softLimit(Files.readString(proc.resolve("limits"))) - held));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty(); // gone, another user's, or this JVM out of files itself
        }
    }

    /** The soft "Max open files" of a /proc/PID/limits text; {@link Long#MAX_VALUE} when unlimited. */
    static long softLimit(String limits) {
        for (String line : limits.split("\n"))
            if (line.startsWith("Max open files")) {
                String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
            }
        throw new IllegalArgumentException("no \"Max open files\" line");
    }
}
