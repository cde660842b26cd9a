package perfkit.harness.db;

import perfkit.harness.os.Loopback;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class JdbcUrlTest {
    @Test
    void credentialsInTheAuthorityAreTakenOut() {
        JdbcUrl u = JdbcUrl.parse("jdbc:postgresql://bench:hunter2@db.example:5432/flow");
        assertEquals("jdbc:postgresql://db.example:5432/flow", u.url());
        assertEquals("bench", u.user());
        assertEquals("hunter2", u.password());
        assertFalse(u.toString().contains("hunter2"), "never printed");
    }

    @Test
    void credentialsInTheQueryAreTakenOutAndOtherParametersKept() {
        JdbcUrl u = JdbcUrl.parse("jdbc:postgresql://h/db?sslmode=require&password=p%40ss&user=me&ApplicationName=x");
        assertEquals("jdbc:postgresql://h/db?sslmode=require&ApplicationName=x", u.url());
        assertEquals("me", u.user());
        assertEquals("p%40ss", u.password());
    }

    @Test
    void aPlainUrlIsUnchanged() {
        JdbcUrl u = JdbcUrl.parse("jdbc:postgresql://127.0.0.1:5433/postgres");
        assertEquals("jdbc:postgresql://127.0.0.1:5433/postgres", u.url());
        assertNull(u.user());
        assertNull(u.password());
        assertEquals("postgres", u.userOr("", "postgres"));
        assertEquals("", u.passwordOr(""));
    }

    @Test
    void explicitCredentialsWinAndTheUrlsPasswordIsTheLastResort() {
        JdbcUrl u = JdbcUrl.parse("jdbc:postgresql://bench:fromurl@h/db");
        assertEquals("fromenv", u.passwordOr("fromenv"));
        assertEquals("fromurl", u.passwordOr(""));
        assertEquals("admin", u.userOr("admin", "postgres"));
        assertEquals("bench", u.userOr("", "postgres"));
    }

    @Test
    void somethingElseIsRefused() {
        for (String bad : new String[]{"postgres://h/db", "jdbc:postgresql:/h", "db.example:5432", "jdbc:postgresql://"})
            assertThrows(IllegalArgumentException.class, () -> JdbcUrl.parse(bad), bad);
        assertEquals("jdbc:postgresql://h/db?a=1&b=2", JdbcUrl.withParam(JdbcUrl.withParam("jdbc:postgresql://h/db", "a", "1"), "b", "2"));
    }

    @Test
    void aServerOnLoopbackIsToldFromOneAcrossTheNetwork() {
        for (String here : new String[]{"jdbc:postgresql://localhost:5432/db", "jdbc:postgresql://127.0.0.1/db", "jdbc:postgresql://[::1]:5432/db",
                "jdbc:postgresql://me:secret@127.0.0.2:5432/db", "jdbc:postgresql:///db", "jdbc:postgresql://0.0.0.0/db",
                "jdbc:postgresql://[0:0:0:0:0:0:0:1]:5432/db", "jdbc:postgresql://[::ffff:127.0.0.1]/db", "jdbc:postgresql://LOCALHOST./db",
                "jdbc:postgresql://localhost.localdomain/db", "jdbc:postgresql://ip6-localhost/db", "jdbc:postgresql://127.1/db"})
            assertTrue(JdbcUrl.onLoopback(here), here);
        for (String there : new String[]{"jdbc:postgresql://db.example:5432/db", "jdbc:postgresql://10.0.0.5/db", "jdbc:postgresql://[fd00::5]:5432/db",
                "jdbc:postgresql://localhost@db.example:5432/db", "jdbc:postgresql://db.example/db?host=127.0.0.1",
                "jdbc:postgresql://localhostess/db", "jdbc:postgresql://[fe80::1]/db", "jdbc:postgresql://128.0.0.1/db"})
            assertFalse(JdbcUrl.onLoopback(there), there);
    }

    @Test
    void aHostIsLoopbackByItsNameOrItsLiteralAndNeverLookedUp() {
        for (String here : new String[]{"", "localhost", "[::1]", "0.0.0.0", "127.0.0.1", "::"})
            assertTrue(Loopback.meansThisHost(here), here);
        // names are not resolved: a dotted string that is no address is a name, whatever DNS would say of it
        for (String there : new String[]{"1.2.3.4.5", "999.1.1.1", ".", "db", "10.0.0.1", "fd00::1"})
            assertFalse(Loopback.meansThisHost(there), there);
    }
}
