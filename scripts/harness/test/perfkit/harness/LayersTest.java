package perfkit.harness;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The harness is layered: a package uses its own classes and those of the packages below it, never one above, so
 * the packages have no cycle and each can be read knowing only what lies under it (docs/layout.md draws them).
 */
class LayersTest {
    /** Lowest first. */
    static final List<String> LAYERS = List.of("os", "measure", "record", "process", "cli", "run", "remote", "db", "http");
    private static final Path SOURCES = Path.of("src/perfkit/harness");
    private static final Pattern PACKAGE = Pattern.compile("^package perfkit\\.harness\\.(\\w+);", Pattern.MULTILINE);
    private static final Pattern USE = Pattern.compile("\\bperfkit\\.harness\\.(\\w+)\\.[A-Z]");

    @Test
    void everyClassIsInALayeredPackageInTheFolderOfItsName() throws IOException {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String folder = SOURCES.relativize(f.getParent()).toString();
                assertTrue(LAYERS.contains(folder), f + " lies outside the layers " + LAYERS);
                Matcher m = PACKAGE.matcher(Files.readString(f));
                assertTrue(m.find() && m.group(1).equals(folder), f + " declares the package of its folder");
            }
        }
    }

    @Test
    void noPackageUsesOneAboveIt() throws IOException {
        List<String> upward = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String text = Files.readString(f);
                Matcher own = PACKAGE.matcher(text);
                if (!own.find()) continue; // the test above names it
                int level = LAYERS.indexOf(own.group(1));
                Matcher use = USE.matcher(text);
                while (use.find()) {
                    int used = LAYERS.indexOf(use.group(1));
                    if (used > level) upward.add(SOURCES.relativize(f) + " uses " + use.group(1));
                }
            }
        }
        assertEquals(List.of(), upward, "a lower layer reaches up: move the class, or pass what it needs down");
    }
}
