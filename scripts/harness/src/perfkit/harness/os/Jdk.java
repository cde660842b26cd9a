package perfkit.harness.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** An installed JDK: its java executable and feature version (17, 21, 25 ...). */
public record Jdk(Path java, int feature, String version) {
    /**
     * The newest JDK of at least {@code minFeature} installed beside this one (the folders under /usr/lib/jvm, as Debian
     * and the Temurin packages lay them out), read from each JDK's {@code release} file; empty when there is none.
     */
    public static Optional<Jdk> newest(int minFeature) {
        try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/jvm"))) {
            return dirs.filter(d -> Files.isExecutable(d.resolve("bin/java")) && Files.isRegularFile(d.resolve("release")) && !Files.isSymbolicLink(d))
                    .map(d -> {
                        try {
                            var m = Pattern.compile("(?m)^JAVA_VERSION=\"((\\d+)[^\"]*)\"").matcher(Files.readString(d.resolve("release")));
                            return m.find() ? new Jdk(d.resolve("bin/java"), Integer.parseInt(m.group(2)), m.group(1)) : null;
                        } catch (IOException | NumberFormatException e) {
                            return null;
                        }
                    })
                    .filter(j -> j != null && j.feature() >= minFeature)
                    .max(Comparator.comparingInt(Jdk::feature));
        } catch (IOException | UncheckedIOException e) {
            return Optional.empty();
        }
    }
}
