package perfkit.harness.cli;

import perfkit.harness.os.UserError;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

class CliTest {
    private final Cli cli = new Cli("demo", "a test study")
            .integer("forks", 3, 1L, 1, "forks")
            .seconds("measure", 10, 2.0, "window")
            .choices("variants", List.of("a", "b", "c"), "a,b,c", "variants")
            .choice("mode", List.of("fast", "slow"), "fast", "mode");

    @Test
    void numbersArePrintedAsAnOptionTakesThem() {
        assertEquals("2", Cli.plain(2.0));
        assertEquals("0.5", Cli.plain(0.5));
        assertEquals("0.0001", Cli.plain(1e-4), "never 1.0E-4");
        assertEquals("100", Cli.plain(100), "never 1E+2");
        assertEquals("100000000000000000000", Cli.plain(1e20));
        assertEquals("NaN", Cli.plain(Double.NaN));
        assertEquals("0.0001", cli.parse(new String[]{"--measure", "0.0001"}).get("measure"), "a stored value reads back as the option");
    }

    @Test
    void defaultsFillEveryParameter() {
        Map<String, String> p = cli.parse(new String[0]);
        assertEquals("3", p.get("forks"));
        assertEquals("10", p.get("measure"));
        assertEquals("a,b,c", p.get("variants"));
        assertEquals("false", p.get("quick"));
        assertEquals("data/runs", p.get("out"));
    }

    @Test
    void quickSwapsInQuickDefaultsButExplicitValuesWin() {
        Map<String, String> p = cli.parse(new String[]{"--quick", "--measure=0.5"});
        assertEquals("true", p.get("quick"));
        assertEquals("1", p.get("forks"));
        assertEquals("0.5", p.get("measure"));
    }

    enum Speed { FAST, VERY_SLOW }

    @Test
    void anOptionDeclaredOnceIsListedHelpedCheckedAndReadTyped() {
        Opt<Integer> forks = Opt.integer("forks", 3, 1L, 1, 10, "forks").map(Math::toIntExact);
        Opt<Speed> speed = Opt.choice("speed", Speed.class, Speed.FAST, "how fast");
        Opt<List<Integer>> sizes = Opt.integers("sizes", "32,512", null, 1, 1000, "sizes");
        Opt<List<Double>> rates = Opt.numbers("rates", "search", null, 4, List.of("search", ""), "rates in (0, 4]", "rates");
        Cli declared = new Cli("demo", "a test study").with(forks, speed, sizes, rates);
        Params defaults = new Params(declared.parse(new String[0]));
        assertEquals(3, forks.in(defaults));
        assertEquals(Speed.FAST, speed.in(defaults));
        assertEquals(List.of(32, 512), sizes.in(defaults));
        assertEquals(List.of(), rates.in(defaults), "a word reads as no numbers");
        assertFalse(Cli.QUICK.in(defaults));
        Params given = new Params(declared.parse(new String[]{"--quick", "--speed", "very-slow", "--rates", "2,0.5"}));
        assertEquals(1, forks.in(given), "the quick default");
        assertEquals(Speed.VERY_SLOW, speed.in(given), "an enum constant is written in lower case with dashes");
        assertEquals(List.of(0.5, 2.0), rates.in(given));
        assertEquals("demo: option --speed expects one of fast, very-slow, got 'slow'",
                assertThrows(UserError.class, () -> declared.parse(new String[]{"--speed", "slow"})).getMessage());
        assertTrue(declared.help().contains("--speed <fast|very-slow>\n      how fast (default: fast)"), declared.help());
    }

    @Test
    void bothValueFormsAreAccepted() {
        assertEquals("b", cli.parse(new String[]{"--variants", "b"}).get("variants"));
        assertEquals("a,c", cli.parse(new String[]{"--variants=a,c"}).get("variants"));
    }

    @Test
    void anIntegerOrAutoIsReadAsNullForAutoAndRefusedOutsideItsBounds() {
        Opt<Integer> threads = Opt.integerOrAuto("threads", "auto", 1, 4096, "threads");
        Cli sized = new Cli("demo", "a test study").with(threads);
        assertNull(threads.in(new Params(sized.parse(new String[0]))));
        assertEquals(8, threads.in(new Params(sized.parse(new String[]{"--threads", " 8 "}))));
        assertEquals(1000, threads.in(new Params(sized.parse(new String[]{"--threads=1_000"}))));
        for (String bad : List.of("0", "4097", "many", "1.5", ""))
            assertEquals("demo: option --threads expects auto or an integer from 1 to 4096, got '" + bad + "'",
                    assertThrows(UserError.class, () -> sized.parse(new String[]{"--threads", bad})).getMessage());
    }

    @Test
    void numbersAreStoredAscendingOnceAndWordsAsThemselves() {
        Opt<List<Double>> openRates = Opt.numbers("open-rates", "search", null, 4, List.of("search", "none"), "'search', 'none' or fractions in (0, 4]", "rates");
        Opt<List<Double>> fixedRates = Opt.numbers("rates", "", null, 10_000_000, List.of(""), "rates in (0, 10000000] req/s", "rates");
        Cli rates = new Cli("demo", "a test study").with(openRates, fixedRates);
        Params none = new Params(rates.parse(new String[0]));
        assertEquals("search", none.text("open-rates"));
        assertEquals(List.of(), openRates.in(none));
        assertEquals(List.of(), fixedRates.in(none), "blank is the word for 'search' here");
        Params given = new Params(rates.parse(new String[]{"--open-rates", "0.5, 0.25,0.5", "--rates", "2_000,100,150.5"}));
        assertEquals(List.of(0.25, 0.5), openRates.in(given));
        assertEquals("0.25,0.5", given.text("open-rates"));
        assertEquals(List.of(100.0, 150.5, 2000.0), fixedRates.in(given));
        assertEquals("100,150.5,2000", given.text("rates"));
        Params small = new Params(rates.parse(new String[]{"--open-rates", "0.0001"}));
        assertEquals("0.0001", small.text("open-rates"), "a plain decimal that reads back as an option");
        for (String bad : List.of("0", "4.5", "-1", "x", "1e3", ",", "NaN", "search,0.5"))
            assertEquals("demo: option --open-rates expects 'search', 'none' or fractions in (0, 4], got '" + bad + "'",
                    assertThrows(UserError.class, () -> rates.parse(new String[]{"--open-rates", bad})).getMessage());
    }

    @Test
    void theSloIsDefinedOnceAndItsHelpSaysWhatItBounds() {
        Cli.Slo slo = new Cli.Slo("p99.9", "end-to-end latency", "the intended send time (corrected)", "step");
        Cli withSlo = new Cli("demo", "a test study").sloMs(100, slo);
        assertSame(slo, withSlo.slo());
        assertEquals("250", withSlo.parse(new String[]{"--slo-ms", "250"}).get("slo-ms"));
        assertTrue(withSlo.help().contains("SLO in milliseconds on the p99.9 of end-to-end latency, timed from the intended send time (corrected), per step"),
                withSlo.help());
        assertNull(cli.slo(), "a study without an SLO has none");
    }

    @Test
    void unknownOptionIsOneClearLine() {
        UserError e = assertThrows(UserError.class, () -> cli.parse(new String[]{"--forkz", "2"}));
        assertEquals("demo: unknown option --forkz (see --help)", e.getMessage());
        assertEquals(0, e.getStackTrace().length, "user errors carry no stack trace");
    }

    @Test
    void malformedValuesNameTheOptionAndTheValue() {
        assertEquals("demo: option --forks expects an integer >= 1, got '0'",
                assertThrows(UserError.class, () -> cli.parse(new String[]{"--forks", "0"})).getMessage());
        assertEquals("demo: option --forks expects an integer, got 'many'",
                assertThrows(UserError.class, () -> cli.parse(new String[]{"--forks=many"})).getMessage());
        assertTrue(assertThrows(UserError.class, () -> cli.parse(new String[]{"--variants", "a,x"})).getMessage()
                .contains("one or more of a, b, c"));
        assertTrue(assertThrows(UserError.class, () -> cli.parse(new String[]{"--mode", "medium"})).getMessage()
                .contains("one of fast, slow"));
        assertTrue(assertThrows(UserError.class, () -> cli.parse(new String[]{"--measure", "-1"})).getMessage()
                .contains("--measure"));
    }

    @Test
    void missingValueAndStrayArgumentsAreRejected() {
        assertEquals("demo: option --forks needs a value", assertThrows(UserError.class, () -> cli.parse(new String[]{"--forks"})).getMessage());
        assertTrue(assertThrows(UserError.class, () -> cli.parse(new String[]{"forks"})).getMessage().contains("unexpected argument 'forks'"));
    }

    @Test
    void helpListsEveryOptionWithDefaultsAndReturnsNull() {
        var out = new java.io.ByteArrayOutputStream();
        var old = System.out;
        System.setOut(new java.io.PrintStream(out));
        try {
            assertNull(cli.parse(new String[]{"--help"}));
        } finally {
            System.setOut(old);
        }
        String help = out.toString();
        for (String opt : List.of("--quick", "--out", "--tag", "--forks", "--measure", "--variants", "--mode")) assertTrue(help.contains(opt), opt);
        assertTrue(help.contains("default: 3; with --quick: 1"));
    }
}
