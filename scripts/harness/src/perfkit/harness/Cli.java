package perfkit.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Declares a study's options and parses the command line.
 * Accepts {@code --name value} and {@code --name=value}; {@code --quick} swaps in the quick-scale defaults.
 * Every parameter, defaults included, ends up in the manifest, so a run says exactly what it did.
 */
public final class Cli {
    /** One option: its default, its quick-scale default, and how to check a value. */
    record Option(String name, String defaultValue, String quickValue, String help, String kind, Function<String, String> check) {}

    private final String study;
    private final String summary;
    private final Map<String, Option> options = new LinkedHashMap<>();

    public Cli(String study, String summary) {
        this.study = study;
        this.summary = summary;
        flag("quick", "quick scale: short windows and fewer repetitions, for demos and tests");
        text("out", "data/runs", "root folder for run directories (the run goes to <out>/<study>/<run-id>)");
        text("tag", "", "free-form label stored in the manifest, e.g. 'jdk21' or 'after-fix'");
    }

    public String study() { return study; }

    public Cli integer(String name, long defaultValue, Long quickValue, long min, String help) {
        return add(name, String.valueOf(defaultValue), quickValue == null ? null : String.valueOf(quickValue), help, "integer",
                v -> {
                    long n;
                    try { n = Long.parseLong(v.replace("_", "")); } catch (NumberFormatException e) { return "an integer"; }
                    return n < min ? "an integer >= " + min : null;
                });
    }

    public Cli seconds(String name, double defaultValue, Double quickValue, String help) {
        return add(name, fmt(defaultValue), quickValue == null ? null : fmt(quickValue), help, "seconds",
                v -> {
                    try { return Double.parseDouble(v) >= 0 ? null : "a number of seconds >= 0"; }
                    catch (NumberFormatException e) { return "a number of seconds"; }
                });
    }

    /** A comma-separated subset of {@code allowed}. */
    public Cli choices(String name, List<String> allowed, String defaultValue, String help) {
        return add(name, defaultValue, null, help, "list of " + String.join("|", allowed),
                v -> {
                    for (String item : v.split(",")) if (!allowed.contains(item.trim())) return "one or more of " + String.join(", ", allowed);
                    return null;
                });
    }

    public Cli choice(String name, List<String> allowed, String defaultValue, String help) {
        return add(name, defaultValue, null, help, String.join("|", allowed),
                v -> allowed.contains(v) ? null : "one of " + String.join(", ", allowed));
    }

    public Cli text(String name, String defaultValue, String help) {
        return text(name, defaultValue, null, help);
    }

    public Cli text(String name, String defaultValue, String quickValue, String help) {
        return add(name, defaultValue, quickValue, help, "text", v -> null);
    }

    public Cli flag(String name, String help) {
        return add(name, "false", null, help, "flag", v -> v.equals("true") || v.equals("false") ? null : "true or false");
    }

    private Cli add(String name, String def, String quick, String help, String kind, Function<String, String> check) {
        options.put(name, new Option(name, def, quick, help, kind, check));
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
            if (!arg.startsWith("--")) throw new UserError(study + ": unexpected argument '" + arg + "' (options start with --; see --help)");
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) { value = name.substring(eq + 1); name = name.substring(0, eq); }
            Option opt = options.get(name);
            if (opt == null) throw new UserError(study + ": unknown option --" + name + " (see --help)");
            if (value == null) {
                if (opt.kind().equals("flag")) value = "true";
                else if (i + 1 < args.length) value = args[++i];
                else throw new UserError(study + ": option --" + name + " needs a value");
            }
            String problem = opt.check().apply(value);
            if (problem != null) throw new UserError(study + ": option --" + name + " expects " + problem + ", got '" + value + "'");
            given.put(name, value);
        }
        boolean quick = Boolean.parseBoolean(given.getOrDefault("quick", "false"));
        Map<String, String> params = new LinkedHashMap<>();
        for (Option o : options.values()) {
            String v = given.containsKey(o.name()) ? given.get(o.name())
                    : quick && o.quickValue() != null ? o.quickValue() : o.defaultValue();
            params.put(o.name(), v);
        }
        return params;
    }

    public String help() {
        StringBuilder sb = new StringBuilder();
        sb.append("Usage: ./bench run ").append(study).append(" [options]\n\n").append(summary).append("\n\nOptions:\n");
        for (Option o : options.values()) {
            sb.append("  --").append(o.name()).append(o.kind().equals("flag") ? "" : " <" + o.kind() + ">").append('\n');
            List<String> defaults = new ArrayList<>();
            if (!o.kind().equals("flag")) defaults.add("default: " + (o.defaultValue().isEmpty() ? "none" : o.defaultValue()));
            if (o.quickValue() != null) defaults.add("with --quick: " + o.quickValue());
            sb.append("      ").append(o.help()).append(defaults.isEmpty() ? "" : " (" + String.join("; ", defaults) + ")").append('\n');
        }
        return sb.toString();
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }
}
