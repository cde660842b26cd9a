package perfkit.harness.cli;

import perfkit.harness.os.Lists;
import perfkit.harness.os.Ssh;

import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The normalised parameters of a run, as the option parser produced them. A study reads them once, each through its
 * declaration ({@link Opt#in}), into its own options record; its forks receive a typed spec, never this map.
 */
public record Params(Map<String, String> values) {
    /** The value of an {@link Opt#integerOrAuto} option that leaves the number to the study. */
    static final String AUTO = "auto";

    public Params {
        values = Collections.unmodifiableMap(values);
    }

    public String text(String name) {
        String v = values.get(name);
        if (v == null) throw new IllegalArgumentException("no parameter '" + name + "'");
        return v;
    }

    /** A comma-separated parameter as a list, without blanks. */
    List<String> list(String name) { return Lists.commaSeparated(text(name)); }

    public boolean has(String name) { return values.containsKey(name); }

    /**
     * A {@link Cli#place} parameter: the host of each placed part, in the order given; empty when none is placed. A part
     * shared between hosts ({@code driver=user@a+user@b}) is {@code driver} on the first, {@code driver2} on the second, ...
     */
    public Map<String, Ssh> placement() {
        Map<String, Ssh> placed = new java.util.LinkedHashMap<>();
        if (!has("place")) return placed;
        for (String item : list("place")) {
            String part = item.substring(0, item.indexOf('='));
            String[] hosts = item.substring(item.indexOf('=') + 1).split("\\+");
            for (int i = 0; i < hosts.length; i++) placed.put(i == 0 ? part : part + (i + 1), Ssh.of(hosts[i]));
        }
        return placed;
    }

    /** The hosts of a part placed on one or several ({@link Cli#place(List, List)}), in order; empty when it runs here. */
    public static List<Ssh> hostsOf(Map<String, Ssh> placement, String part) {
        List<Ssh> hosts = new java.util.ArrayList<>();
        for (int i = 1; placement.containsKey(i == 1 ? part : part + i); i++) hosts.add(placement.get(i == 1 ? part : part + i));
        return hosts;
    }
}
