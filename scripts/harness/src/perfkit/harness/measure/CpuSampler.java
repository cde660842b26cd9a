package perfkit.harness.measure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU use from {@code /proc}, in percent of one core (as {@code top} shows it: 200% = two busy cores): the one reader
 * of /proc's CPU counters on the Java side, the run's and the load driver's (scripts/loaddriver includes this file).
 * Call {@link #sampleSystem} once per interval; each call returns usage since the previous one.
 */
public final class CpuSampler {
    /** Linux reports process times in clock ticks; USER_HZ is 100 on every mainstream kernel. */
    static final double TICKS_PER_SECOND = 100.0;

    /** Whole-machine counters from the first line of /proc/stat, in ticks. */
    public record SystemTimes(long busy, long steal, long total) {}

    /** System busy and steal since the last sample, in percent of one core. */
    public record SystemUsage(double busyPercent, double stealPercent) {}

    private final Path proc;
    private final int cores;
    private SystemTimes lastSystem;

    public CpuSampler(Path proc, int cores) {
        this.proc = proc;
        this.cores = cores;
    }

    public static CpuSampler forThisMachine() {
        return new CpuSampler(Path.of("/proc"), Runtime.getRuntime().availableProcessors());
    }

    public boolean available() {
        return Files.isReadable(proc.resolve("stat"));
    }

    public synchronized SystemUsage sampleSystem() {
        SystemTimes now = systemTimes(), prev = lastSystem;
        if (now == null) return null;
        lastSystem = now;
        return between(prev, now);
    }

    /** The machine's counters now, for a window of the caller's own ({@link #between}); null when unreadable. */
    public SystemTimes systemTimes() {
        try { return parseSystemStat(Files.readString(proc.resolve("stat"))); }
        catch (IOException | RuntimeException e) { return null; }
    }

    /** System busy (steal not included) and steal between two readings, in percent of one core; null without a window. */
    public SystemUsage between(SystemTimes from, SystemTimes to) {
        if (from == null || to == null || to.total() <= from.total()) return null;
        double total = to.total() - from.total();
        return new SystemUsage(100.0 * cores * (to.busy() - from.busy()) / total, 100.0 * cores * (to.steal() - from.steal()) / total);
    }

    /** utime + stime of a process (all its threads), in ticks; -1 when the process is gone. */
    public long processTicks(long pid) {
        try { return parseProcessTicks(Files.readString(proc.resolve(pid + "/stat"))); }
        catch (IOException | RuntimeException e) { return -1; }
    }

    /**
     * CPU of a process and everything under it, in ticks: its own utime + stime, its reaped children's
     * cutime + cstime, and the utime + stime of every live descendant. A server such as PostgreSQL does its
     * work in child processes (backends) that come and go, so its own ticks alone miss most of it. -1 when gone.
     */
    public long treeTicks(long pid) {
        try {
            long total = parseTreeRootTicks(Files.readString(proc.resolve(pid + "/stat")));
            var handle = ProcessHandle.of(pid);
            if (handle.isPresent()) {
                for (var d : (Iterable<ProcessHandle>) handle.get().descendants()::iterator) {
                    long t = processTicks(d.pid());
                    if (t > 0) total += t;
                }
            }
            return total;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Percent of one core used between two tick readings taken {@code seconds} apart. */
    public static double percent(long ticksBefore, long ticksAfter, double seconds) {
        if (ticksBefore < 0 || ticksAfter < ticksBefore || seconds <= 0) return Double.NaN;
        return 100.0 * (ticksAfter - ticksBefore) / TICKS_PER_SECOND / seconds;
    }

    /** "cpu user nice system idle iowait irq softirq steal guest guest_nice"; guest time is already inside user. */
    static SystemTimes parseSystemStat(String stat) {
        String line = stat.lines().filter(l -> l.startsWith("cpu ")).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no aggregate 'cpu' line in /proc/stat"));
        String[] f = line.trim().split("\\s+");
        long[] v = new long[9];
        for (int i = 1; i < f.length && i <= 8; i++) v[i] = Long.parseLong(f[i]);
        long user = v[1], nice = v[2], system = v[3], idle = v[4], iowait = v[5], irq = v[6], softirq = v[7], steal = v[8];
        long total = user + nice + system + idle + iowait + irq + softirq + steal;
        return new SystemTimes(user + nice + system + irq + softirq, steal, total);
    }

    /** The command name in field 2 may contain spaces and parentheses, so count fields after the last ')'. */
    static long parseProcessTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) throw new IllegalArgumentException("malformed /proc/<pid>/stat: no ')'");
        String[] f = stat.substring(close + 1).trim().split("\\s+");
        // f[0] is field 3 (state); utime is field 14 and stime field 15.
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** utime + stime + cutime + cstime (fields 14 to 17): the process and its reaped children. */
    static long parseTreeRootTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) throw new IllegalArgumentException("malformed /proc/<pid>/stat: no ')'");
        String[] f = stat.substring(close + 1).trim().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
    }
}
