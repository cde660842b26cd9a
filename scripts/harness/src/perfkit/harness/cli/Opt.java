package perfkit.harness.cli;

import perfkit.harness.os.Lists;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One option of a study, declared once: its name, kind, default, quick-scale default, help and check (a {@link Cli}
 * lists it), and how its checked value reads as a typed value ({@link #in}). A study keeps its options as constants and
 * reads each with {@code FORKS.in(params)}, never by name: a typo does not compile, and a choice is an enum, not text.
 *
 * @param <T> the value's type as the study reads it
 */
public final class Opt<T> {
    final Cli.Option option;
    /** A secret's environment variable, null for any other option. */
    final String secretEnv;
    private final Function<String, T> read;

    private Opt(Cli.Option option, String secretEnv, Function<String, T> read) {
        this.option = option;
        this.secretEnv = secretEnv;
        this.read = read;
    }

    public String name() { return option.name(); }

    /** The checked value in a run's parameters, typed. */
    public T in(Params p) { return read.apply(p.text(option.name())); }

    /** The same option read as another type (an integer as an int, a list as the study's cells). */
    public <R> Opt<R> map(Function<? super T, ? extends R> f) { return new Opt<>(option, secretEnv, v -> f.apply(read.apply(v))); }

    /** An option that is on or off, as {@link #choice(String, Class, Enum, String)} reads it. */
    public enum Switch { ON, OFF }

    static <T> Opt<T> of(String name, String def, String quick, String help, String kind, Cli.Normaliser check, Function<String, T> read) {
        return new Opt<>(new Cli.Option(name, def, quick, help, kind, check), null, read);
    }

    /** An integer in [min, Integer.MAX_VALUE]: most counts end up in an int, so larger values are refused here, not overflowed in a fork. */
    public static Opt<Long> integer(String name, long def, Long quick, long min, String help) {
        return integer(name, def, quick, min, Integer.MAX_VALUE, help);
    }

    public static Opt<Long> integer(String name, long def, Long quick, long min, long max, String help) {
        return of(name, String.valueOf(def), quick == null ? null : String.valueOf(quick), help, "integer",
                v -> String.valueOf(Cli.parseInteger(v, min, max)), Long::parseLong);
    }

    /** {@code auto} (the study sizes it itself, e.g. by a calibration; read as null) or an integer in [min, max]. */
    public static Opt<Integer> integerOrAuto(String name, String def, long min, long max, String help) {
        return of(name, def, null, help, "auto|integer", v -> {
            if (v.trim().equals(Params.AUTO)) return Params.AUTO;
            try {
                return String.valueOf(Cli.parseInteger(v, min, max));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("auto or an integer from " + min + " to " + max);
            }
        }, v -> v.equals(Params.AUTO) ? null : Math.toIntExact(Long.parseLong(v)));
    }

    /**
     * Numbers in (0, max], comma-separated (rates, fractions of a rate), stored ascending without duplicates, or one of
     * {@code words} ("" among them: blank is a word too), read as an empty list; {@code expects} completes "option
     * --name expects ...". The word itself is {@link Params#text}.
     */
    public static Opt<List<Double>> numbers(String name, String def, String quick, double max, List<String> words, String expects, String help) {
        List<String> named = words.stream().filter(w -> !w.isEmpty()).toList();
        return of(name, def, quick, help, named.isEmpty() ? "list of numbers" : "list of numbers|" + String.join("|", named), v -> {
            String t = v.trim();
            if (words.contains(t)) return t;
            java.util.TreeSet<Double> values = new java.util.TreeSet<>();
            for (String item : Lists.commaSeparated(t)) {
                String s = item.replace("_", "");
                if (!s.matches("\\d+\\.?\\d*|\\.\\d+")) throw new IllegalArgumentException(expects);
                double d = Double.parseDouble(s);
                if (!(d > 0 && d <= max)) throw new IllegalArgumentException(expects);
                values.add(d);
            }
            if (values.isEmpty()) throw new IllegalArgumentException(expects);
            return String.join(",", values.stream().map(Cli::plain).toList());
        }, v -> words.contains(v) ? List.of() : Lists.commaSeparated(v).stream().map(Double::parseDouble).toList());
    }

    /** Seconds >= min; use a positive min for measurement windows, where 0 would make an empty "complete" run. */
    public static Opt<Double> seconds(String name, double def, Double quick, double min, String help) {
        return of(name, Cli.plain(def), quick == null ? null : Cli.plain(quick), help, "seconds",
                v -> Cli.plain(Cli.parseSeconds(v, min)), Double::parseDouble);
    }

    /** Milliseconds, a positive integer. */
    public static Opt<Long> millis(String name, long def, Long quick, String help) {
        return of(name, String.valueOf(def), quick == null ? null : String.valueOf(quick), help, "milliseconds",
                v -> String.valueOf(Cli.parseInteger(v, 1, Integer.MAX_VALUE)), Long::parseLong);
    }

    /** A comma-separated subset of {@code allowed}; stored without blanks or duplicates, in the order given. */
    public static Opt<List<String>> choices(String name, List<String> allowed, String def, String quick, String help) {
        return of(name, def, quick, help, "list of " + String.join("|", allowed), v -> {
            LinkedHashSet<String> items = new LinkedHashSet<>(Lists.commaSeparated(v));
            if (items.isEmpty() || !allowed.containsAll(items)) throw new IllegalArgumentException("one or more of " + String.join(", ", allowed));
            return String.join(",", items);
        }, Lists::commaSeparated);
    }

    /** A comma-separated list of integers in [min, max], e.g. instance counts. */
    public static Opt<List<Integer>> integers(String name, String def, String quick, long min, long max, String help) {
        return of(name, def, quick, help, "list of integers", v -> {
            LinkedHashSet<String> items = new LinkedHashSet<>();
            for (String item : Lists.commaSeparated(v)) items.add(String.valueOf(Cli.parseInteger(item, min, max)));
            if (items.isEmpty()) throw new IllegalArgumentException("a comma-separated list of integers");
            return String.join(",", items);
        }, v -> Lists.commaSeparated(v).stream().map(Integer::parseInt).toList());
    }

    /** One of {@code allowed}, as text. */
    public static Opt<String> choice(String name, List<String> allowed, String def, String help) {
        return of(name, def, null, help, String.join("|", allowed), v -> {
            if (!allowed.contains(v.trim())) throw new IllegalArgumentException("one of " + String.join(", ", allowed));
            return v.trim();
        }, v -> v);
    }

    /**
     * One constant of {@code type}, written on the command line in lower case with dashes ({@code BUSY_SPIN} is
     * {@code busy-spin}).
     */
    public static <E extends Enum<E>> Opt<E> choice(String name, Class<E> type, E def, String help) {
        List<String> allowed = java.util.Arrays.stream(type.getEnumConstants()).map(Opt::word).toList();
        return choice(name, allowed, word(def), help).map(v -> Enum.valueOf(type, v.toUpperCase(Locale.ROOT).replace('-', '_')));
    }

    /** How an enum constant is written as an option's value. */
    public static String word(Enum<?> e) { return e.name().toLowerCase(Locale.ROOT).replace('_', '-'); }

    /** One line of text: a control character (a newline, an escape) has no place in a label, a URL or a name. */
    public static Opt<String> text(String name, String def, String quick, String help) {
        return of(name, def, quick, help, "text", Cli::oneLine, v -> v);
    }

    /** JVM options as one space-separated string, read as a list; each must start with '-'. */
    public static Opt<List<String>> jvmOptions(String name, String def, String help) {
        return of(name, def, null, help, "jvm options", v -> {
            List<String> args = Lists.jvmArgs(v);
            if (!args.stream().allMatch(a -> a.startsWith("-"))) throw new IllegalArgumentException("JVM options that each start with '-'");
            return String.join(" ", args);
        }, Lists::jvmArgs);
    }

    /**
     * A secret such as a database password. Its value comes from {@code --<name>-file} (a file holding it), the
     * environment variable {@code envVar}, or, with a warning, {@code --<name>} itself, which other local users can read
     * in the process list. The manifest masks it; forks receive it over stdin, never argv.
     */
    public static Opt<String> secret(String name, String envVar, String help) {
        return new Opt<>(new Cli.Option(name, "", null, help + " (prefer $" + envVar + " or --" + name + "-file: a value given here shows in the "
                + "process list)", "secret", v -> v), envVar, v -> v);
    }

    /** The milliseconds of an SLO, the help saying what it bounds. */
    static Opt<Long> sloMs(long def, Cli.Slo slo) {
        return millis("slo-ms", def, null, "SLO in milliseconds on the " + slo.words());
    }

    public static Opt<Boolean> flag(String name, String help) {
        return of(name, "false", null, help, "flag", v -> {
            if (!v.equals("true") && !v.equals("false")) throw new IllegalArgumentException("true or false");
            return v;
        }, Boolean::parseBoolean);
    }
}
