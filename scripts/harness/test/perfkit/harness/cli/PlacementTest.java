package perfkit.harness.cli;

import perfkit.harness.os.Ssh;
import perfkit.harness.os.UserError;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** --place part=user@host: what a placement may say, and the ssh command a part is started with. */
class PlacementTest {
    private static final Cli CLI = new Cli("demo", "a test study").place(List.of("db", "app", "driver"), List.of("driver"));

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "web=ops@h1|part=user@host items with a part among db, app, driver (got 'web=ops@h1')",
            "db|part=user@host items",
            "db=-oProxyCommand=touch /tmp/x|is not a host",
            "db=ops@h1 h2|is not a host",
            "db=ops@h1/dir|is not a host",
            "db=ops@h1,db=ops@h2|each part once (db is placed twice)",
            "app=ops@h1+ops@h2|one host for app (only driver may share its work between hosts)",
            "driver=ops@h1+ops@h1|each host of driver once",
            "driver=ops@h1+|is not a host",
            "driver=ops@h1+-oProxyCommand=x|is not a host",
    })
    void aBadPlacementIsOneLine(String value, String expected) {
        UserError e = assertThrows(UserError.class, () -> CLI.parse(new String[]{"--place", value}));
        assertTrue(e.getMessage().contains("--place") && e.getMessage().contains(expected), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    /** A study whose own database is left out when the user names theirs (the tag stands in for such an option). */
    private static final Cli ON = new Cli("demo", "a test study").place(List.of("db", "app", "driver"), List.of("driver"))
            .onParts(p -> p.text("tag").equals("own-db") ? List.of("app", "driver") : List.of("db", "app", "driver"));

    private static Map<String, String> given(String on, String place, String tag) { return Map.of("on", on, "place", place, "tag", tag); }

    @Test
    void onPlacesEveryPartTheConfigurationHasInTheDeclaredOrderAndPlaceWins() {
        assertEquals("db=ops@t,app=ops@t,driver=ops@t", ON.onPlacement(given("ops@t", "", "")));
        assertEquals("db=ops@d,app=ops@t,driver=ops@t", ON.onPlacement(given("ops@t", "driver=ops@t,db=ops@d", "")));
        assertEquals("app=ops@t,driver=ops@a+ops@b", ON.onPlacement(given("ops@t", "driver=ops@a+ops@b", "own-db")), "a part it does not start stays put");
        UserError e = assertThrows(UserError.class, () -> ON.onPlacement(given("ops@t", "db=h1,app=h2,driver=h3", "")));
        assertTrue(e.getMessage().contains("--on: this configuration has no part left to run elsewhere: --place already puts db, app, driver elsewhere"), e.getMessage());
    }

    @Test
    void onTakesOneHostAndOnlyAStudyWithPartsHasIt() {
        UserError bad = assertThrows(UserError.class, () -> ON.parse(new String[]{"--on", "-oProxyCommand=x"}));
        assertTrue(bad.getMessage().contains("option --on expects") && bad.getMessage().contains("is not a host"), bad.getMessage());
        assertTrue(ON.help().contains("  --on <user@host>"), ON.help());
        UserError none = assertThrows(UserError.class, () -> new Cli("solo", "no parts").parse(new String[]{"--on", "ops@t"}));
        assertEquals("solo: unknown option --on (see --help)", none.getMessage());
    }

    @Test
    void noPlacementIsEverythingHereAndAsksNoHost() {
        assertEquals(Map.of(), new Params(CLI.parse(new String[]{})).placement());
    }

    @Test
    void aPlacementReadsAsHostsByPartInTheOrderGiven() {
        Params p = new Params(Map.of("place", "app=ops@h2,db=h1"));
        assertEquals(List.of("app", "db"), List.copyOf(p.placement().keySet()));
        assertEquals("ops@h2", p.placement().get("app").destination());
        assertEquals("h2", p.placement().get("app").host());
        assertEquals("::1", Ssh.of("ops@[::1]").host());
        assertTrue(Ssh.of("ops@[::1]").command("true").contains("ops@::1"), "OpenSSH takes an IPv6 address without brackets");
    }

    @Test
    void theSshCommandNeverPromptsAndEndsOptionsBeforeTheHost() {
        List<String> cmd = Ssh.of("ops@h1").command("python3", "-c", Ssh.shellWord("print('it''s')"));
        assertTrue(cmd.containsAll(List.of("-T", "BatchMode=yes", "ServerAliveInterval=5", "ControlMaster=no", "ControlPath=none", "ForwardAgent=no")),
                cmd.toString());
        assertEquals(cmd.indexOf("--") + 1, cmd.indexOf("ops@h1"), "the host comes right after --, so it is never read as an option");
        assertEquals("'print('\\''it'\\'''\\''s'\\'')'", cmd.get(cmd.size() - 1));
    }

    @Test
    void aSharedPartIsItsNameOnTheFirstHostAndNumberedOnTheOthers() {
        Params p = new Params(Map.of("place", "driver=ops@h1+h2+h3,app=h4"));
        assertEquals(List.of("driver", "driver2", "driver3", "app"), List.copyOf(p.placement().keySet()));
        assertEquals(List.of("ops@h1", "h2", "h3"), Params.hostsOf(p.placement(), "driver").stream().map(Ssh::destination).toList());
        assertEquals(List.of("h4"), Params.hostsOf(p.placement(), "app").stream().map(Ssh::destination).toList());
        assertEquals(List.of(), Params.hostsOf(p.placement(), "db"));
    }
}
