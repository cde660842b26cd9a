package perfkit.harness.os;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LibraryTest {
    @Test
    void aLibrarysVersionComesFromItsJar() {
        // Jackson states its own version in code too: the jar and the code must agree
        assertEquals(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString(), Library.version(ObjectMapper.class));
        assertEquals(org.HdrHistogram.Histogram.class.getPackage().getImplementationVersion() == null ? pomVersionOfHdrHistogram()
                : org.HdrHistogram.Histogram.class.getPackage().getImplementationVersion(), Library.version(org.HdrHistogram.Histogram.class));
    }

    @Test
    void aClassOutsideAnyJarHasNoVersionToTell() {
        assertEquals("?", Library.version(LibraryTest.class), "test classes come from a folder");
    }

    /**
     * A jar that shaded another project's pom.properties in (kafka-clients holds commons-net's): that version is not
     * the library's, so it is no answer; the jar's own pom, named by the jar's file or by the class's package, is.
     */
    @Test
    void aShadedProjectsPomIsNeverTakenForTheLibrarys(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path shaded = jarOfLists(dir.resolve("client-4.4.0.jar"), "commons-net", "commons-net", "3.11.1");
        assertEquals("?", Library.version(loadListsFrom(shaded)), "commons-net's pom in a jar of perfkit.harness.os classes");
        java.nio.file.Path named = jarOfLists(dir.resolve("client-4.4.0.jar.d/client-4.4.0.jar"), "org.example", "client", "4.4.0");
        assertEquals("4.4.0", Library.version(loadListsFrom(named)), "the pom whose artifact and version name the jar's file");
        java.nio.file.Path hashed = jarOfLists(dir.resolve("5f2a9c.jar"), "perfkit.harness", "harness", "1.2.3");
        assertEquals("1.2.3", Library.version(loadListsFrom(hashed)), "a jar kept under its hash: the pom whose group holds the class's package");
    }

    /** A jar holding perfkit.harness.os.Lists (no dependency beyond the JDK) and one pom.properties of the given coordinates. */
    private static java.nio.file.Path jarOfLists(java.nio.file.Path jar, String group, String artifact, String version) throws Exception {
        java.nio.file.Files.createDirectories(jar.getParent());
        try (var out = new java.util.jar.JarOutputStream(java.nio.file.Files.newOutputStream(jar));
             var cls = Lists.class.getResourceAsStream("Lists.class")) {
            out.putNextEntry(new java.util.jar.JarEntry("perfkit/harness/os/Lists.class"));
            cls.transferTo(out);
            out.putNextEntry(new java.util.jar.JarEntry("META-INF/maven/" + group + "/" + artifact + "/pom.properties"));
            out.write(("groupId=" + group + "\nartifactId=" + artifact + "\nversion=" + version + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return jar;
    }

    private static Class<?> loadListsFrom(java.nio.file.Path jar) throws Exception {
        // no parent but the platform's: the class is defined from this jar, not found on the test's classpath
        var loader = new java.net.URLClassLoader(new java.net.URL[]{jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader());
        Class<?> c = loader.loadClass("perfkit.harness.os.Lists");
        assertEquals(jar.toUri().toURL().toString(), c.getProtectionDomain().getCodeSource().getLocation().toString());
        return c;
    }

    private static String pomVersionOfHdrHistogram() {
        try (var in = org.HdrHistogram.Histogram.class.getResourceAsStream("/META-INF/maven/org.hdrhistogram/HdrHistogram/pom.properties")) {
            var p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
