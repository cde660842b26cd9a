package perfkit.harness.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Files and folders: removing a tree, saying what went wrong with a file, free space. */
public final class Disk {
    private Disk() {}

    /** Deletes a folder and everything in it; missing is fine. Returns false when something could not be removed. */
    public static boolean deleteRecursively(Path root) {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) return true;
        try (Stream<Path> all = Files.walk(root)) {
            return all.sorted(Comparator.reverseOrder()).map(p -> p.toFile().delete()).reduce(true, Boolean::logicalAnd);
        } catch (IOException | UncheckedIOException e) {
            System.err.println("perfkit: could not remove " + root + ": " + e.getMessage());
            return false;
        }
    }

    /** What went wrong with a file, in a few words: "No space left on device" rather than an exception's class. */
    public static String reason(IOException e) {
        String m = e.getMessage();
        if (e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null) return fs.getReason();
        return m == null ? e.getClass().getSimpleName() : m;
    }

    /** Bytes free for this user on the file system holding {@code path} (or its nearest existing parent); -1 if unknown. */
    public static long freeBytes(Path path) {
        Path p = path.toAbsolutePath().normalize();
        while (p != null && !Files.exists(p)) p = p.getParent();
        try {
            return p == null ? -1 : Files.getFileStore(p).getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }
}
