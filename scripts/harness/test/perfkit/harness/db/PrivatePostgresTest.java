package perfkit.harness.db;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.*;

/** Where a run finds PostgreSQL's server: the variable, then pg_config, then Debian's folders; only a folder with a server counts. */
class PrivatePostgresTest {
    @TempDir Path tmp;

    /** A bin folder holding {@code names} as executables. */
    private Path bin(String folder, String... names) throws IOException {
        Path bin = Files.createDirectories(tmp.resolve(folder));
        for (String n : names) Files.createFile(bin.resolve(n), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        return bin;
    }

    @Test
    void theVariableWinsAndAFolderWithoutAServerIsNone() throws IOException {
        Path mine = bin("mine", "postgres", "initdb");
        Path configured = bin("configured", "postgres", "initdb");
        assertEquals(mine, PrivatePostgres.binaries(mine.toString(), () -> configured, tmp.resolve("debian")));
        Path clientOnly = bin("client", "psql", "pg_dump");
        assertNull(PrivatePostgres.binaries(clientOnly.toString(), () -> configured, tmp.resolve("debian")),
                "a variable naming no server is an answer, not a reason to look elsewhere");
    }

    @Test
    void pgConfigComesNextAndAClientOnlyOneFallsBackToDebiansNewest() throws IOException {
        Path configured = bin("configured", "postgres", "initdb");
        assertEquals(configured, PrivatePostgres.binaries("", () -> configured, tmp.resolve("debian")));
        Path clientOnly = bin("client", "psql", "postgres");
        bin("debian/9.6/bin", "postgres", "initdb");
        Path newest = bin("debian/17/bin", "postgres", "initdb");
        bin("debian/18/bin", "psql");
        assertEquals(newest, PrivatePostgres.binaries(null, () -> clientOnly, tmp.resolve("debian")), "17 beats 9.6 by number, 18 has no server");
        assertEquals(newest, PrivatePostgres.binaries(null, () -> null, tmp.resolve("debian")), "no pg_config on PATH");
        assertNull(PrivatePostgres.binaries(null, () -> null, tmp.resolve("nowhere")), "not Debian, nothing configured");
    }
}
