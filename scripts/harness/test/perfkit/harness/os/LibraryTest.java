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
