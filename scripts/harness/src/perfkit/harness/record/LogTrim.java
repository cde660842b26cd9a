package perfkit.harness.record;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Keeps a run's logs small once their writers have stopped: a log over the limit keeps its first and last halves
 * (whole lines) with one line saying how much was cut. A server under overload can log the same stack trace
 * thousands of times (46 MB from one WebFlux fork); the start and the end are what a reader looks at, and the
 * counts that matter are in the run's tables.
 */
public final class LogTrim {
    /** Per log file: pages of context at both ends, small enough that a reference run stays in the repository. */
    public static final long LIMIT_BYTES = 256 << 10;

    private LogTrim() {}

    /** Trims every {@code *.log} under the run directory (outside scratch); returns the logs it cut. */
    public static List<Path> trimAll(Path runDir, long limit) {
        try (Stream<Path> all = Files.walk(runDir)) {
            return all.filter(p -> p.toString().endsWith(".log") && Files.isRegularFile(p)
                            && !runDir.relativize(p).startsWith(RunLayout.SCRATCH_DIR))
                    .filter(p -> trim(p, limit))
                    .toList();
        } catch (IOException | java.io.UncheckedIOException e) { // a file that vanishes mid-walk, during an interrupt
            return List.of(); // best effort: an untrimmed log is only large
        }
    }

    /** Cuts the middle of {@code log} when it is larger than {@code limit}; true when it did. */
    static boolean trim(Path log, long limit) {
        try {
            long size = Files.size(log);
            if (size <= limit) return false;
            byte[] head, tail;
            try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
                head = read(f, 0, (int) (limit / 2));
                tail = read(f, size - limit / 2, (int) (limit / 2));
            }
            int headEnd = lastNewline(head) + 1; // whole lines only
            int tailStart = firstNewline(tail) + 1;
            long cut = size - headEnd - (tail.length - tailStart);
            String marker = String.format(Locale.ROOT, "[perfkit: %,d bytes cut from the middle of this log (over %,d bytes); its first and last lines are kept]%n",
                    cut, limit);
            Path tmp = log.resolveSibling(log.getFileName() + ".tmp");
            try (OutputStream out = Files.newOutputStream(tmp)) {
                out.write(head, 0, headEnd);
                out.write(marker.getBytes(StandardCharsets.UTF_8));
                out.write(tail, tailStart, tail.length - tailStart);
            }
            Files.move(tmp, log, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static byte[] read(RandomAccessFile f, long from, int length) throws IOException {
        byte[] b = new byte[length];
        f.seek(from);
        f.readFully(b);
        return b;
    }

    private static int lastNewline(byte[] b) {
        for (int i = b.length - 1; i >= 0; i--) if (b[i] == '\n') return i;
        return b.length - 1; // one enormous line: keep the bytes as they are
    }

    private static int firstNewline(byte[] b) {
        for (int i = 0; i < b.length; i++) if (b[i] == '\n') return i;
        return -1;
    }
}
