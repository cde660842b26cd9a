package perfkit.harness.os;

import java.nio.file.Path;
import java.util.Properties;
import java.util.jar.JarFile;

/** What a run's notes say about the libraries it ran: their versions read from the jars, never from a comment. */
public final class Library {
    private Library() { }

    /**
     * The version of the library that holds {@code c}: its jar manifest's Implementation-Version, else the
     * pom.properties in that jar that is its own: the one whose artifact and version name the jar's file, or whose
     * group {@code c}'s package lies in (a placed host keeps jars under their hashes). A jar may carry others' it shaded
     * in (kafka-clients holds commons-net's), so any other one is no answer: "?" then.
     */
    public static String version(Class<?> c) {
        Package p = c.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        if (v != null && !v.isBlank()) return v;
        try {
            var source = c.getProtectionDomain().getCodeSource();
            if (source == null) return "?";
            Path file = Path.of(source.getLocation().toURI());
            try (JarFile jar = new JarFile(file.toFile())) {
                for (var e : jar.stream().filter(e -> e.getName().startsWith("META-INF/maven/") && e.getName().endsWith("/pom.properties")).toList()) {
                    Properties pom = new Properties();
                    try (var in = jar.getInputStream(e)) { pom.load(in); }
                    String version = pom.getProperty("version"), name = file.getFileName().toString();
                    String stem = pom.getProperty("artifactId") + "-" + version;
                    String group = pom.getProperty("groupId", "?").toLowerCase(java.util.Locale.ROOT);
                    String pkg = c.getPackageName().toLowerCase(java.util.Locale.ROOT);
                    if (version != null && (name.equals(stem + ".jar") || name.startsWith(stem + "-") || pkg.equals(group) || pkg.startsWith(group + ".")))
                        return version;
                }
                return "?";
            }
        } catch (Exception e) {
            return "?"; // a class from a folder, or a jar that cannot be read: nothing to say
        }
    }
}
