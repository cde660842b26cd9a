package perfkit.harness.cli;

import perfkit.harness.record.Manifest;
import perfkit.harness.run.Study;
import perfkit.harness.os.UserError;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** Every bad input named in the hardening issue, and the good ones beside it: one line, or one normalised value. */
class CliBadInputTest {
    private static final Cli CLI = new Cli("demo", "a test study")
            .integer("rate", 0, null, 0, "events/s")
            .integer("capacity", 65536, null, 2, 1 << 30, "ring size")
            .seconds("measure", 10, 2.0, 0.1, "window")
            .seconds("warmup", 5, 1.0, "warm-up")
            .integers("instances", "1,2", null, 1, 64, "instances")
            .choices("variants", java.util.List.of("a", "b"), "a,b", "variants")
            .rule(p -> Double.parseDouble(p.text("warmup")) > 3600 && Double.parseDouble(p.text("measure")) < 1 ? "a long warm-up with a tiny window is a typo" : null);

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
            "--rate|1_000|1000",
            "--rate|+5|5",
            "--capacity|1073741824|1073741824",
            "--measure|0.5|0.5",
            "--measure|3|3",
            "--warmup|0|0",
            "--instances|1, 2,2 ,4|1,2,4",
            "--variants|b, a|b,a",
    })
    void goodValuesAreNormalisedOnce(String option, String value, String stored) {
        assertEquals(stored, CLI.parse(new String[]{option, value}).get(option.substring(2)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
            "--rate|1__000|expects an integer",
            "--rate|-1|expects an integer >= 0",
            "--rate|1e3|expects an integer",
            "--rate|99999999999999999999|expects an integer from 0 to 2147483647",
            "--capacity|2147483648|expects an integer from 2 to 1073741824",
            "--measure|Infinity|expects a number of seconds",
            "--measure|NaN|expects a number of seconds",
            "--measure|0|expects a number of seconds >= 0.1",
            "--measure|1e400|expects a number of seconds",
            "--measure|999999999|<= 604800",
            "--warmup|-1|expects a number of seconds",
            "--instances|0|expects an integer from 1 to 64",
            "--instances|,|expects a comma-separated list of integers",
            "--variants|a,c|one or more of a, b",
            "--out|/proc/version|expects a folder (it is a file)",
            "--out|/proc/version/x|is not a folder",
    })
    void badValuesAreOneLine(String option, String value, String expected) {
        UserError e = assertThrows(UserError.class, () -> CLI.parse(new String[]{option, value}));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().startsWith("demo: option " + option), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @org.junit.jupiter.api.Test
    void anOptionGivenTwiceIsRefusedRatherThanSilentlyOverridden() {
        UserError e = assertThrows(UserError.class, () -> CLI.parse(new String[]{"--rate", "1", "--rate=2"}));
        assertEquals("demo: option --rate is given twice; give it once", e.getMessage());
    }

    @org.junit.jupiter.api.Test
    void textIsOneLineAndTheErrorShowsControlCharactersEscaped() {
        UserError e = assertThrows(UserError.class, () -> CLI.parse(new String[]{"--tag", "a\n# b\u001b[31m"}));
        assertEquals("demo: option --tag expects one line of text without control characters, got 'a\\n# b\\u001b[31m'", e.getMessage());
        assertEquals("a [b](c) | <d>", CLI.parse(new String[]{"--tag", "a [b](c) | <d>"}).get("tag"), "markup is data: the kit escapes it");
    }

    @org.junit.jupiter.api.Test
    void crossOptionRulesRunBeforeAnythingElse() {
        UserError e = assertThrows(UserError.class, () -> CLI.parse(new String[]{"--warmup", "7200", "--measure", "0.5"}));
        assertEquals("demo: a long warm-up with a tiny window is a typo", e.getMessage());
    }

    @org.junit.jupiter.api.Test
    void secretsComeFromAFileOrTheEnvironmentAndNeverNeedTheCommandLine(@TempDir Path dir) throws Exception {
        Cli cli = new Cli("demo", "s").secret("db-password", "PERFKIT_TEST_UNSET_VARIABLE", "password");
        Path file = dir.resolve("pw");
        Files.writeString(file, "s3cret\nignored\n");
        Map<String, String> p = cli.parse(new String[]{"--db-password-file", file.toString()});
        assertEquals("s3cret", p.get("db-password"));
        assertEquals("", cli.parse(new String[0]).get("db-password"));
        assertTrue(assertThrows(UserError.class, () -> cli.parse(new String[]{"--db-password-file", dir.resolve("missing").toString()}))
                .getMessage().startsWith("demo: cannot read --db-password-file"));
        assertEquals("***", Manifest.redactedParams(p).get("db-password").asText(), "the manifest masks it");
    }

    @org.junit.jupiter.api.Test
    void theTestsRefusalCheckAnswersEveryCommandLineInOneJvmAndRunsNothing(@TempDir Path dir) throws Exception {
        Path cases = Files.writeString(dir.resolve("cases.json"), "[[\"--rate\", \"-5\"], [\"--measure\", \"2\"], [\"--warmup\", \"4000\", \"--measure\", \"0.5\"]]");
        var out = new java.io.ByteArrayOutputStream();
        var stdout = System.out;
        System.setOut(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            Study.main(new String[]{"--perfkit-check-options", cases.toString()}, CLI, CliBadInputTest.class,
                    run -> fail("a refusal check runs nothing"), fork -> fail("a refusal check starts no fork"));
        } finally {
            System.setOut(stdout);
        }
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var answers = out.toString(java.nio.charset.StandardCharsets.UTF_8).lines().map(l -> {
            try { return json.readTree(l).get("error"); } catch (Exception e) { throw new AssertionError(l, e); }
        }).toList();
        assertEquals(3, answers.size(), answers.toString());
        assertTrue(answers.get(0).asText().startsWith("error: demo: option --rate expects"), answers.get(0).asText());
        assertTrue(answers.get(1).isNull(), "a good command line is accepted");
        assertEquals("error: demo: a long warm-up with a tiny window is a typo", answers.get(2).asText(), "the study's rules are checked too");
    }
}
