package perfkit.harness.cli;

import perfkit.harness.os.Lists;
import perfkit.harness.record.RunLayout;
import perfkit.harness.os.Ssh;
import perfkit.harness.os.UserError;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Declares a study's options and parses the command line into one normalised parameter map.
 * Accepts {@code --name value} and {@code --name=value}; {@code --quick} swaps in the quick-scale defaults.
 * <p>
 * Every value is checked and normalised here, once: {@code 1_000} becomes {@code 1000}, lists lose blanks and
 * duplicates, numbers are finite and within their bounds. The study reads these normalised strings once (through
 * {@link Params}, into its options record) and the manifest records them; a fork gets what it needs as a typed spec.
 */
public final class Cli {
    /** Normalises a value, or throws {@link IllegalArgumentException} whose message completes "expects ...". */
    interface Normaliser extends Function<String, String> {}

    record Option(String name, String defaultValue, String quickValue, String help, String kind, Normaliser normalise) {}

    /** Longest window or timeout we accept: a week. Longer is a typo, and "Infinity" never ends. */
    static final double MAX_SECONDS = 7 * 24 * 3600;
    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d+(_\\d+)*");

    private final String study;
    private final String summary;
    private final Map<String, Option> options = new LinkedHashMap<>();
    private final Map<String, String> secretEnv = new LinkedHashMap<>();
    /** Options whose default comes from an environment variable; checked like a value given on the command line. */
    private final Map<String, String> envDefaults = new LinkedHashMap<>();
    private final List<Function<Params, String>> rules = new ArrayList<>();
    private Slo slo;
    private Opt<Long> sloMs;
    /** The parts {@link #place} declared, in order, and those of them {@code --on} moves for a configuration. */
    private List<String> parts = List.of();
    private Function<Params, java.util.Collection<String>> onParts = p -> parts;

    /**
     * What a study's {@code --slo-ms} bounds, said once: which percentile of which latency, timed from when, per what.
     * The option's help is made from it, and the run records it with the value as {@code notes.slo}.
     */
    public record Slo(String percentile, String latency, String timedFrom, String per) {
        String words() { return percentile + " of " + latency + ", timed from " + timedFrom + ", per " + per; }
    }

    /** Every study's {@code --quick}, {@code --out}, {@code --tag}, {@code --java} and {@code --profile}. */
    public static final Opt<Boolean> QUICK = Opt.flag("quick", "quick scale: short windows and fewer repetitions, for demos and tests");
    public static final Opt<String> OUT = Opt.of("out", "data/runs", null, "root folder for run directories (the run goes to <out>/<study>/<run-id>)",
            "folder", Cli::folder, v -> v);
    public static final Opt<String> TAG = Opt.text("tag", "", null, "free-form label stored in the manifest, e.g. 'jdk21' or 'after-fix'");
    /** A java executable; blank for the JVM running the study. */
    public static final Opt<String> JAVA = Opt.of("java", "", null, "JDK (folder or java executable) that runs the forks and services, to compare JVMs "
            + "on one host; none means the JVM running the study; $PERFKIT_JAVA sets it too", "jdk", Cli::jdk, v -> v);

    public static final Opt<Boolean> PROFILE = Opt.flag("profile", "record a JDK Flight Recorder profile of every JVM under test, here or placed, over "
            + "each measured window, not warm-up (profiles/ in the run; the kit shows where the time went)");

    public Cli(String study, String summary) {
        this.study = study;
        this.summary = summary;
        with(QUICK, OUT, TAG, JAVA, PROFILE);
        envDefaults.put(JAVA.name(), "PERFKIT_JAVA");
    }

    public String study() { return study; }

    /** An integer in [min, Integer.MAX_VALUE]: most counts end up in an int, so larger values are refused here, not overflowed in a fork. */
    public Cli integer(String name, long defaultValue, Long quickValue, long min, String help) {
        return integer(name, defaultValue, quickValue, min, Integer.MAX_VALUE, help);
    }

    public Cli integer(String name, long defaultValue, Long quickValue, long min, long max, String help) {
        return with(Opt.integer(name, defaultValue, quickValue, min, max, help));
    }

    /**
     * {@code auto} (the study sizes it itself, e.g. by a calibration) or an integer in [min, max]; read it with
     * {@link Params#integerOrAuto}, which gives null for auto.
     */
    public Cli integerOrAuto(String name, String defaultValue, long min, long max, String help) {
        return with(Opt.integerOrAuto(name, defaultValue, min, max, help));
    }

    /**
     * Numbers in (0, max], comma-separated (rates, fractions of a rate), stored ascending without duplicates, or one
     * of {@code words} ("" among them: blank is a word too). {@code expects} completes "option --name expects ...".
     * Read it with {@link Params#numbers} (empty for a word) and {@link Params#text} (the word).
     */
    public Cli numbers(String name, String defaultValue, String quickValue, double max, List<String> words, String expects, String help) {
        return with(Opt.numbers(name, defaultValue, quickValue, max, words, expects, help));
    }

    /** The study's {@code --slo-ms}: at most this many milliseconds for the latency that {@code slo} defines. */
    public Cli sloMs(long defaultMs, Slo slo) {
        this.slo = slo;
        this.sloMs = Opt.sloMs(defaultMs, slo);
        return with(sloMs);
    }

    /** What --slo-ms means in this study; null when it has none. */
    public Slo slo() { return slo; }

    /** The run's --slo-ms, in milliseconds; the study must declare it ({@link #sloMs(long, Slo)}). */
    public long sloMs(Params p) {
        if (sloMs == null) throw new IllegalStateException(study + " declares no --slo-ms");
        return sloMs.in(p);
    }

    /** Seconds >= 0 (a warm-up or a timeout may be zero). */
    public Cli seconds(String name, double defaultValue, Double quickValue, String help) {
        return seconds(name, defaultValue, quickValue, 0, help);
    }

    /** Seconds >= min; use a positive min for measurement windows, where 0 would make an empty "complete" run. */
    public Cli seconds(String name, double defaultValue, Double quickValue, double min, String help) {
        return with(Opt.seconds(name, defaultValue, quickValue, min, help));
    }

    /** Milliseconds, a positive integer. */
    public Cli millis(String name, long defaultValue, Long quickValue, String help) {
        return with(Opt.millis(name, defaultValue, quickValue, help));
    }

    /** A comma-separated subset of {@code allowed}; stored without blanks or duplicates, in the order given. */
    public Cli choices(String name, List<String> allowed, String defaultValue, String help) {
        return choices(name, allowed, defaultValue, null, help);
    }

    /** The same, with another default at quick scale. */
    public Cli choices(String name, List<String> allowed, String defaultValue, String quickValue, String help) {
        return with(Opt.choices(name, allowed, defaultValue, quickValue, help));
    }

    /** A comma-separated list of integers in [min, max], e.g. instance counts. */
    public Cli integers(String name, String defaultValue, String quickValue, long min, long max, String help) {
        return with(Opt.integers(name, defaultValue, quickValue, min, max, help));
    }

    public Cli choice(String name, List<String> allowed, String defaultValue, String help) {
        return with(Opt.choice(name, allowed, defaultValue, help));
    }

    public Cli text(String name, String defaultValue, String help) {
        return text(name, defaultValue, null, help);
    }

    /** One line of text: a control character (a newline, an escape) has no place in a label, a URL or a name. */
    public Cli text(String name, String defaultValue, String quickValue, String help) {
        return with(Opt.text(name, defaultValue, quickValue, help));
    }

    static String oneLine(String v) {
        if (v.chars().anyMatch(Character::isISOControl)) throw new IllegalArgumentException("one line of text without control characters");
        return v;
    }

    /** JVM options as one space-separated string (read them with {@link Lists#jvmArgs}); each must start with '-'. */
    public Cli jvmOptions(String name, String defaultValue, String help) {
        return with(Opt.jvmOptions(name, defaultValue, help));
    }

    public Cli flag(String name, String help) {
        return with(Opt.flag(name, help));
    }

    /** A secret such as a database password, declared here rather than as a constant: see {@link Opt#secret}. */
    public Cli secret(String name, String envVar, String help) {
        return with(Opt.secret(name, envVar, help));
    }

    /**
     * {@code --place part=user@host,...}: which of the study's {@code parts} run on another host, reached over SSH
     * (read with {@link Params#placement}). A part left out stays where the run is. Each host must answer over SSH
     * before the run folder exists, so an unreachable one is one line and exit 2.
     */
    public Cli place(List<String> parts) {
        return place(parts, List.of());
    }

    /**
     * The same, where each of {@code several} may run on several hosts at once, {@code part=user@a+user@b}: each host
     * runs a share of that part's work (the load driver's arrival rate). {@link Params#placement} names the second
     * {@code <part>2}, the third {@code <part>3}, and so on.
     */
    public Cli place(List<String> parts, List<String> several) {
        this.parts = List.copyOf(parts);
        add("on", "", null, "run the study on user@host over SSH: every part this configuration has goes there, as --place would "
                + "put it (a part named in --place goes where that says); the run, its clock and its data stay here", "user@host",
                v -> v.isBlank() ? "" : Ssh.of(v.trim()).destination());
        add("place", "", null, "run parts of the study on other hosts over SSH: " + String.join("|", parts)
                + "=user@host, comma-separated (keys or agent; PERFKIT_SSH_CONFIG names an ssh config); a part left out runs here"
                + (several.isEmpty() ? "" : "; " + String.join("|", several) + "=user@a+user@b shares its work between several hosts"), "placement", v -> {
            java.util.Map<String, String> placed = new java.util.LinkedHashMap<>();
            for (String item : Lists.commaSeparated(v)) {
                int eq = item.indexOf('=');
                String part = eq < 0 ? item : item.substring(0, eq).trim();
                if (eq < 0 || !parts.contains(part))
                    throw new IllegalArgumentException("part=user@host items with a part among " + String.join(", ", parts) + " (got '" + item + "')");
                List<String> hosts = List.of(item.substring(eq + 1).split("\\+", -1));
                if (hosts.size() > 1 && !several.contains(part))
                    throw new IllegalArgumentException("one host for " + part + " (only " + (several.isEmpty() ? "no part" : String.join(", ", several)) + " may share its work between hosts)");
                List<String> destinations = hosts.stream().map(h -> Ssh.of(h.trim()).destination()).toList();
                if (destinations.stream().distinct().count() < destinations.size())
                    throw new IllegalArgumentException("each host of " + part + " once (got '" + item + "')");
                if (placed.put(part, String.join("+", destinations)) != null)
                    throw new IllegalArgumentException("each part once (" + part + " is placed twice)");
            }
            return placed.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(java.util.stream.Collectors.joining(","));
        });
        // last among the rules, so that a typo elsewhere is not hidden behind an SSH timeout
        return rule(p -> p.placement().values().stream().distinct().map(Ssh::problem).filter(java.util.Objects::nonNull).findFirst().orElse(null));
    }

    /**
     * The parts {@code --on} places for a configuration, when not every declared part is there to place: the run's own
     * database, say, is not when the user names theirs. Declare it after {@link #place}.
     */
    public Cli onParts(Function<Params, java.util.Collection<String>> which) {
        this.onParts = which;
        return this;
    }

    /**
     * {@code --on host} as the placement it means: each part {@link #onParts} names on that host, unless --place puts it
     * elsewhere, in the declared order. One remote path: from here on the run cannot tell --on from the --place it wrote.
     */
    String onPlacement(Map<String, String> params) {
        Map<String, String> placed = new LinkedHashMap<>();
        for (String item : Lists.commaSeparated(params.get("place"))) placed.put(item.substring(0, item.indexOf('=')), item.substring(item.indexOf('=') + 1));
        java.util.Collection<String> moved = onParts.apply(new Params(params));
        Map<String, String> ordered = new LinkedHashMap<>();
        for (String part : parts) {
            if (placed.containsKey(part)) ordered.put(part, placed.get(part));
            else if (moved.contains(part)) ordered.put(part, params.get("on"));
        }
        // a part --place puts on the same host counts: --on names where the run goes, --place only repeats it
        boolean any = ordered.values().stream().anyMatch(hosts -> List.of(hosts.split("\\+")).contains(params.get("on")));
        if (!any) throw new UserError(study + ": --on: this configuration has no part left to run elsewhere"
                + (placed.isEmpty() ? " (see --help)" : ": --place already puts " + String.join(", ", placed.keySet()) + " elsewhere"));
        return ordered.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(java.util.stream.Collectors.joining(","));
    }

    /** A rule over several options, checked before the run folder exists; returns the problem, or null when fine. */
    public Cli rule(Function<Params, String> rule) {
        rules.add(rule);
        return this;
    }

    /** Lists the options, each declared once as an {@link Opt} the study reads its value with. */
    public Cli with(Opt<?>... opts) {
        for (Opt<?> o : opts) {
            options.put(o.name(), o.option);
            if (o.secretEnv == null) continue;
            secretEnv.put(o.name(), o.secretEnv);
            add(o.name() + "-file", "", null, "file holding --" + o.name() + " (first line)", "file", v -> v);
        }
        return this;
    }

    private Cli add(String name, String def, String quick, String help, String kind, Normaliser normalise) {
        options.put(name, new Option(name, def, quick, help, kind, normalise));
        return this;
    }

    /** Parses args into a complete parameter map. Returns null when --help was asked for (help already printed). */
    public Map<String, String> parse(String[] args) {
        Map<String, String> given = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                System.out.print(help());
                return null;
            }
            if (!arg.startsWith("--")) throw new UserError(study + ": unexpected argument '" + shown(arg) + "' (options start with --; see --help)");
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) { value = name.substring(eq + 1); name = name.substring(0, eq); }
            Option opt = options.get(name);
            if (opt == null) throw new UserError(study + ": unknown option --" + shown(name) + " (see --help)");
            if (given.containsKey(name)) throw new UserError(study + ": option --" + name + " is given twice; give it once");
            if (value == null) {
                if (opt.kind().equals("flag")) value = "true";
                else if (i + 1 < args.length) value = args[++i];
                else throw new UserError(study + ": option --" + name + " needs a value");
            }
            given.put(name, normalise(opt, value));
            if (opt.kind().equals("secret") && !value.isEmpty())
                System.err.println("warning: --" + name + " is visible to other local users in the process list; prefer $"
                        + secretEnv.get(name) + " or --" + name + "-file");
        }
        boolean quick = Boolean.parseBoolean(given.getOrDefault("quick", "false"));
        Map<String, String> params = new LinkedHashMap<>();
        for (Option o : options.values()) {
            String v = given.containsKey(o.name()) ? given.get(o.name())
                    : fromEnvironment(o) != null ? fromEnvironment(o)
                    : quick && o.quickValue() != null ? o.quickValue() : o.defaultValue();
            params.put(o.name(), v);
        }
        secretEnv.forEach((name, env) -> params.put(name, secretValue(name, env, params)));
        boolean on = !params.getOrDefault("on", "").isEmpty();
        if (on) params.put("place", onPlacement(params));
        Params typed = new Params(params);
        for (Function<Params, String> rule : rules) {
            String problem = rule.apply(typed);
            // a rule speaks of --place; say what --on made of it, so the user sees which part it means
            if (problem != null) throw new UserError(study + ": " + problem + (on && problem.contains("--place") ? " (--on " + params.get("on") + " placed " + params.get("place") + ")" : ""));
        }
        return params;
    }

    /** The option's default from its environment variable, checked as strictly as a command-line value; null when unset. */
    private String fromEnvironment(Option o) {
        String var = envDefaults.get(o.name());
        String v = var == null ? null : System.getenv(var);
        if (v == null || v.isBlank()) return null;
        try {
            return o.normalise().apply(v);
        } catch (IllegalArgumentException e) {
            throw new UserError(study + ": $" + var + " (the default of --" + o.name() + ") expects " + e.getMessage() + ", got '" + shown(v) + "'");
        }
    }

    private String normalise(Option opt, String value) {
        try {
            return opt.normalise().apply(value);
        } catch (IllegalArgumentException e) {
            throw new UserError(study + ": option --" + opt.name() + " expects " + e.getMessage() + ", got '" + shown(value) + "'");
        }
    }

    /** A value as it can be shown in one line: control characters as escapes ({@code \n}, {@code \u001b}). */
    static String shown(String v) {
        StringBuilder sb = new StringBuilder();
        for (char c : v.toCharArray()) {
            if (c == '\n') sb.append("\\n");
            else if (Character.isISOControl(c)) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.toString();
    }

    private String secretValue(String name, String envVar, Map<String, String> params) {
        if (!params.get(name).isEmpty()) return params.get(name);
        String file = params.get(name + "-file");
        if (!file.isEmpty()) {
            try {
                return Files.readAllLines(Path.of(file)).stream().findFirst().orElse("").strip();
            } catch (java.nio.file.NoSuchFileException e) {
                throw new UserError(study + ": cannot read --" + name + "-file " + file + ": no such file");
            } catch (IOException | RuntimeException e) {
                throw new UserError(study + ": cannot read --" + name + "-file " + file + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
            }
        }
        String env = System.getenv(envVar);
        return env == null ? "" : env;
    }

    public String help() {
        StringBuilder sb = new StringBuilder();
        sb.append("Usage: ./bench run ").append(study).append(" [options]\n\n").append(summary).append("\n\nOptions:\n");
        for (Option o : options.values()) {
            sb.append("  --").append(o.name()).append(o.kind().equals("flag") ? "" : " <" + o.kind() + ">").append('\n');
            List<String> defaults = new ArrayList<>();
            if (!o.kind().equals("flag") && !o.kind().equals("secret")) defaults.add("default: " + (o.defaultValue().isEmpty() ? "none" : o.defaultValue()));
            if (o.quickValue() != null) defaults.add("with --quick: " + o.quickValue());
            sb.append("      ").append(o.help()).append(defaults.isEmpty() ? "" : " (" + String.join("; ", defaults) + ")").append('\n');
        }
        return sb.toString();
    }

    // ---- the checks, shared with Params ---------------------------------------------------------------

    static long parseInteger(String v, long min, long max) {
        String s = v.trim();
        long n;
        try {
            if (!INTEGER.matcher(s).matches()) throw new NumberFormatException();
            n = Long.parseLong(s.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(s.matches("[+-]?[\\d_]+") ? "an integer from " + min + " to " + max : "an integer");
        }
        if (n < min && max >= Integer.MAX_VALUE) throw new IllegalArgumentException("an integer >= " + min);
        if (n < min || n > max) throw new IllegalArgumentException("an integer from " + min + " to " + max);
        return n;
    }

    static double parseSeconds(String v, double min) {
        double d;
        try {
            String s = v.trim().replace("_", "");
            if (!s.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)")) throw new NumberFormatException();
            d = Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a number of seconds" + (min > 0 ? " > 0" : " >= 0") + " (at most " + plain(MAX_SECONDS) + ")");
        }
        if (d < min || (min == 0 && d < 0) || d > MAX_SECONDS || (min > 0 && d <= 0))
            throw new IllegalArgumentException("a number of seconds " + (min > 0 ? ">= " + plain(min) : ">= 0") + " and <= " + plain(MAX_SECONDS));
        return d;
    }


    /** The run root must be a folder, or a path whose nearest existing parent is a writable folder. */
    private static String folder(String v) {
        if (v.isBlank()) throw new IllegalArgumentException("a folder");
        Path p = RunLayout.kitRoot().resolve(v).normalize();
        if (Files.exists(p) && !Files.isDirectory(p)) throw new IllegalArgumentException("a folder (it is a file)");
        Path existing = p;
        while (existing != null && !Files.exists(existing)) existing = existing.getParent();
        if (existing == null || !Files.isDirectory(existing)) throw new IllegalArgumentException("a folder that can be created (" + existing + " is not a folder)");
        if (!Files.isWritable(existing)) throw new IllegalArgumentException("a writable folder (" + existing + " is not writable)");
        return v;
    }

    /** A JDK folder or a java executable, 17 or newer (the harness is compiled for 17); stored as the executable's path. */
    private static String jdk(String v) {
        if (v.isBlank()) return "";
        Path p = Path.of(v).toAbsolutePath().normalize();
        Path exe = Files.isDirectory(p) ? p.resolve("bin/java") : p;
        if (!Files.isExecutable(exe)) throw new IllegalArgumentException("a JDK folder or java executable (no bin/java in " + p + ")");
        int major = javaMajor(exe);
        if (major < 17) throw new IllegalArgumentException("a JDK 17 or newer (" + exe + " is " + (major < 0 ? "not a working java" : "Java " + major) + ")");
        return exe.toString();
    }

    private static int javaMajor(Path exe) {
        try {
            Process p = new ProcessBuilder(exe.toString(), "-version").redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) { p.destroyForcibly(); return -1; }
            var m = java.util.regex.Pattern.compile("version \"(1\\.)?(\\d+)").matcher(out);
            return m.find() ? Integer.parseInt(m.group(2)) : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * A number the way an option takes it: a plain decimal without trailing zeros (2, 0.5, 0.0001; never 2.0 or
     * 1.0E-4), so a value the kit prints or stores reads back as the same option. NaN and infinities as Java writes them.
     */
    public static String plain(double d) {
        return Double.isFinite(d) ? java.math.BigDecimal.valueOf(d).stripTrailingZeros().toPlainString() : String.valueOf(d);
    }
}
