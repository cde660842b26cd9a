package perfkit.harness.os;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SortedSet;
import java.util.TreeSet;

/** CPU lists as taskset writes them ("0", "1-3", "0,2-3"), and the machine's online CPUs. */
public final class Cpus {
    private Cpus() {}

    /** The CPUs of a taskset-style list ("0", "1-3", "0,2-3"), or null when it is not one. */
    public static SortedSet<Integer> parse(String list) {
        if (!list.matches("\\d{1,4}(-\\d{1,4})?(,\\d{1,4}(-\\d{1,4})?)*")) return null;
        SortedSet<Integer> cpus = new TreeSet<>();
        for (String range : list.split(",")) {
            String[] ends = range.split("-");
            int from = Integer.parseInt(ends[0]), to = Integer.parseInt(ends[ends.length - 1]);
            if (to < from) return null;
            for (int c = from; c <= to; c++) cpus.add(c);
        }
        return cpus;
    }

    /** The machine's online CPUs (from /sys), or 0..availableProcessors-1 where that cannot be read. */
    public static SortedSet<Integer> online() {
        try {
            SortedSet<Integer> online = parse(Files.readString(Path.of("/sys/devices/system/cpu/online")).trim());
            if (online != null) return online;
        } catch (IOException | RuntimeException ignored) { }
        SortedSet<Integer> all = new TreeSet<>();
        for (int c = 0; c < Runtime.getRuntime().availableProcessors(); c++) all.add(c);
        return all;
    }
}
