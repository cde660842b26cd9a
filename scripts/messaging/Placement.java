package perfkit.messaging;

import perfkit.harness.os.Cpus;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

/**
 * {@code --cpus}: which CPUs each process group runs on, as the original pinned its services to isolated cores.
 * Groups: {@code broker} (the embedded Kafka broker's JVM) and {@code chains} (the JVM(s) of the services and driver).
 * A group not named runs wherever the scheduler puts it.
 */
record Placement(Map<String, String> cpusByGroup) {
    static final List<String> GROUPS = List.of("broker", "chains");

    static Placement parse(String text) {
        Map<String, String> groups = new LinkedHashMap<>();
        for (String item : text.trim().split("\\s+")) {
            if (item.isEmpty()) continue;
            int eq = item.indexOf('=');
            groups.put(item.substring(0, Math.max(eq, 0)), item.substring(eq + 1));
        }
        return new Placement(groups);
    }

    /** The one line a user sees for a bad --cpus, or null when it is fine. */
    static String check(String text) {
        // the CPUs this run may use (a container's cpuset may be narrower than the machine's)
        SortedSet<Integer> online = Cpus.parse(allowedCpus("self"));
        if (online == null) online = Cpus.online();
        for (String item : text.trim().split("\\s+")) {
            if (item.isEmpty()) continue;
            int eq = item.indexOf('=');
            String group = eq < 0 ? item : item.substring(0, eq);
            if (eq < 0 || !GROUPS.contains(group))
                return "option --cpus expects groups like 'broker=0 chains=1' (groups: " + String.join(", ", GROUPS) + "), got '" + item + "'";
            SortedSet<Integer> cpus = Cpus.parse(item.substring(eq + 1));
            if (cpus == null) return "option --cpus: '" + item.substring(eq + 1) + "' for " + group + " is not a CPU list such as 0, 1-3 or 0,2";
            if (!online.containsAll(cpus)) return "option --cpus: " + group + " asks for CPU(s) " + item.substring(eq + 1) + ", but this machine has " + range(online);
        }
        return null;
    }

    boolean pinned() { return !cpusByGroup.isEmpty(); }

    String cpus(String group) { return cpusByGroup.get(group); }

    /** What the manifest says of the placement. */
    String describe() {
        if (!pinned()) return "not pinned: every process runs wherever the scheduler puts it";
        List<String> groups = GROUPS.stream().map(g -> g + " on CPU(s) " + cpusByGroup.getOrDefault(g, "any")).toList();
        return "pinned with taskset: " + String.join("; ", groups) + "; the study's own JVM is not pinned";
    }

    /** The CPUs a process may run on, as the kernel reports them ("0-1"), or "unknown"; {@code pid} may be "self". */
    static String allowedCpus(String pid) {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc", pid, "status")))
                if (line.startsWith("Cpus_allowed_list:")) return line.substring(line.indexOf(':') + 1).trim();
        } catch (java.io.IOException | RuntimeException ignored) { }
        return "unknown";
    }

    private static String range(SortedSet<Integer> cpus) {
        return cpus.size() == 1 ? "CPU " + cpus.first() : "CPUs " + cpus.first() + "-" + cpus.last();
    }
}
