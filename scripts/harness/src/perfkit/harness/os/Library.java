package perfkit.harness.os;

import java.nio.file.Path;
import java.util.Properties;
import java.util.jar.JarFile;

/** What a run's notes say about the libraries it ran: their versions read from the jars, never from a comment. */
public final class Library {
    private Library() { }

    /**
     * The version of the library that holds {@code c}: its jar manifest's Implementation-Version, else the one Maven
     * build's pom.properties in that jar; "?" when neither says.
     */
    public static String version(Class<?> c) {
        Package p = c.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        if (v != null && !v.isBlank()) return v;
        try {
            var source = c.getProtectionDomain().getCodeSource();
            if (source == null) return "?";
            try (JarFile jar = new JarFile(Path.of(source.getLocation().toURI()).toFile())) {
                var poms = jar.stream().filter(e -> e.getName().startsWith("META-INF/maven/") && e.getName().endsWith("/pom.properties")).toList();
                if (poms.size() != 1) return "?";
                Properties pom = new Properties();
                try (var in = jar.getInputStream(poms.get(0))) { pom.load(in); }
                return pom.getProperty("version", "?");
            }
        } catch (Exception e) {
            return "?"; // a class from a folder, or a jar that cannot be read: nothing to say
        }
    }
}
