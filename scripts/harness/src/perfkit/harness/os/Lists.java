package perfkit.harness.os;

import java.util.ArrayList;
import java.util.List;

/** Option values that hold several items: comma-separated lists, and JVM options in one string. */
public final class Lists {
    private Lists() {}

    /** JVM options given as one space-separated string, e.g. {@code --fork-jvm-args "-Xmx1g -XX:+UseG1GC"}. */
    public static List<String> jvmArgs(String spaceSeparated) {
        return spaceSeparated == null || spaceSeparated.isBlank() ? List.of() : List.of(spaceSeparated.trim().split("\\s+"));
    }

    /** A comma-separated list without blanks (items trimmed). */
    public static List<String> commaSeparated(String commaSeparated) {
        List<String> out = new ArrayList<>();
        if (commaSeparated == null) return out;
        for (String s : commaSeparated.split(",")) if (!s.trim().isEmpty()) out.add(s.trim());
        return out;
    }
}
