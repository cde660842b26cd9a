package perfkit.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Small operating-system helpers every study needs, kept in one place. */
public final class Sys {
    private Sys() {}

    /** Deletes a folder and everything in it; missing is fine. Returns false when something could not be removed. */
    public static boolean deleteRecursively(Path root) {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) return true;
        try (Stream<Path> all = Files.walk(root)) {
            return all.sorted(Comparator.reverseOrder()).map(p -> p.toFile().delete()).reduce(true, Boolean::logicalAnd);
        } catch (IOException | UncheckedIOException e) {
            System.err.println("perfkit: could not remove " + root + ": " + e.getMessage());
            return false;
        }
    }

    /** What went wrong with a file, in a few words: "No space left on device" rather than an exception's class. */
    public static String reason(IOException e) {
        String m = e.getMessage();
        if (e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null) return fs.getReason();
        return m == null ? e.getClass().getSimpleName() : m;
    }

    /** Bytes free for this user on the file system holding {@code path} (or its nearest existing parent); -1 if unknown. */
    public static long freeBytes(Path path) {
        Path p = path.toAbsolutePath().normalize();
        while (p != null && !Files.exists(p)) p = p.getParent();
        try {
            return p == null ? -1 : Files.getFileStore(p).getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }

    /** An installed JDK: its java executable and feature version (17, 21, 25 ...). */
    public record Jdk(Path java, int feature, String version) {}

    /**
     * The newest JDK of at least {@code minFeature} installed beside this one (the folders under /usr/lib/jvm, as Debian
     * and the Temurin packages lay them out), read from each JDK's {@code release} file; empty when there is none.
     */
    public static java.util.Optional<Jdk> newestJdk(int minFeature) {
        try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/jvm"))) {
            return dirs.filter(d -> Files.isExecutable(d.resolve("bin/java")) && Files.isRegularFile(d.resolve("release")) && !Files.isSymbolicLink(d))
                    .map(d -> {
                        try {
                            var m = java.util.regex.Pattern.compile("(?m)^JAVA_VERSION=\"((\\d+)[^\"]*)\"").matcher(Files.readString(d.resolve("release")));
                            return m.find() ? new Jdk(d.resolve("bin/java"), Integer.parseInt(m.group(2)), m.group(1)) : null;
                        } catch (IOException | NumberFormatException e) {
                            return null;
                        }
                    })
                    .filter(j -> j != null && j.feature() >= minFeature)
                    .max(Comparator.comparingInt(Jdk::feature));
        } catch (IOException | UncheckedIOException e) {
            return java.util.Optional.empty();
        }
    }

    /**
     * True when {@code host} (a name or an address, brackets allowed) means this host itself: localhost and its usual
     * aliases, a loopback address, or the wildcard. Addresses are read as literals, never looked up.
     */
    public static boolean isLoopbackHost(String host) {
        String h = host.strip().replace("[", "").replace("]", "").toLowerCase(java.util.Locale.ROOT);
        if (h.isEmpty()) return true; // no server named: a client's default is localhost
        if (h.endsWith(".")) h = h.substring(0, h.length() - 1);
        if (List.of("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback").contains(h)) return true;
        boolean ipv4 = h.matches("\\d{1,3}(\\.\\d{1,3}){0,3}") && java.util.Arrays.stream(h.split("\\.")).allMatch(o -> Integer.parseInt(o) <= 255);
        if (!ipv4 && !(h.contains(":") && h.matches("[0-9a-f:.]+"))) return false; // a name: not ours to resolve
        try {
            InetAddress a = InetAddress.getByName(h); // a literal: parsed, not looked up
            return a.isLoopbackAddress() || a.isAnyLocalAddress(); // ::ffff:127.0.0.1 parses as the IPv4 address it maps
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** A loopback port nobody listens on right now (the caller binds it a moment later). */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    /** The CPUs of a taskset-style list ("0", "1-3", "0,2-3"), or null when it is not one. */
    public static java.util.SortedSet<Integer> cpuList(String list) {
        if (!list.matches("\\d{1,4}(-\\d{1,4})?(,\\d{1,4}(-\\d{1,4})?)*")) return null;
        java.util.SortedSet<Integer> cpus = new java.util.TreeSet<>();
        for (String range : list.split(",")) {
            String[] ends = range.split("-");
            int from = Integer.parseInt(ends[0]), to = Integer.parseInt(ends[ends.length - 1]);
            if (to < from) return null;
            for (int c = from; c <= to; c++) cpus.add(c);
        }
        return cpus;
    }

    /** The machine's online CPUs (from /sys), or 0..availableProcessors-1 where that cannot be read. */
    public static java.util.SortedSet<Integer> onlineCpus() {
        try {
            java.util.SortedSet<Integer> online = cpuList(java.nio.file.Files.readString(Path.of("/sys/devices/system/cpu/online")).trim());
            if (online != null) return online;
        } catch (IOException | RuntimeException ignored) { }
        java.util.SortedSet<Integer> all = new java.util.TreeSet<>();
        for (int c = 0; c < Runtime.getRuntime().availableProcessors(); c++) all.add(c);
        return all;
    }

    /** JVM options given as one space-separated string, e.g. {@code --fork-jvm-args "-Xmx1g -XX:+UseG1GC"}. */
    public static List<String> jvmArgs(String spaceSeparated) {
        return spaceSeparated == null || spaceSeparated.isBlank() ? List.of() : List.of(spaceSeparated.trim().split("\\s+"));
    }

    /** A comma-separated list without blanks (items trimmed). */
    public static List<String> list(String commaSeparated) {
        List<String> out = new ArrayList<>();
        if (commaSeparated == null) return out;
        for (String s : commaSeparated.split(",")) if (!s.trim().isEmpty()) out.add(s.trim());
        return out;
    }

    /** Sends a named signal (INT, TERM, QUIT, KILL) to a process; Java's API only has TERM and KILL. */
    public static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(pid)).redirectErrorStream(true).start();
            kill.getInputStream().readAllBytes();
            kill.waitFor();
        } catch (IOException e) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Signal, wait up to {@code grace} seconds, then SIGKILL whatever is left of it and its descendants; 0 when it stopped in time, else 137. */
    static int stopTree(ProcessHandle p, String signal, double grace) {
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        if (p.isAlive()) signal(p.pid(), signal);
        boolean clean = true;
        try {
            p.onExit().get((long) (grace * 1000), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (Exception timedOut) {
            clean = false;
            p.destroyForcibly();
            try { p.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS); } catch (Exception ignored) { } // reaped, not left a zombie
        }
        tree.addAll(p.descendants().toList());
        tree.stream().filter(h -> running(h.pid())).forEach(ProcessHandle::destroyForcibly);
        return clean ? 0 : 137;
    }

    /**
     * Whether a process is running, not merely present: a killed process whose parent has not reaped it yet is a
     * zombie, which {@link ProcessHandle#isAlive()} still reports as alive. A process that is exiting (its memory
     * already released, its command line empty, its files about to close) counts as gone too.
     */
    public static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            char state = stat.substring(stat.lastIndexOf(')') + 2).charAt(0);
            if (state == 'Z' || state == 'X') return false;
            try (var cmdline = Files.newInputStream(Path.of("/proc", Long.toString(pid), "cmdline"))) {
                return cmdline.read() >= 0; // /proc files report size 0: read a byte
            }
        } catch (IOException | RuntimeException e) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && !Files.isDirectory(Path.of("/proc/self"));
        }
    }

    /**
     * Running processes whose environment holds {@code name=value}, this JVM excepted. The environment is the one
     * each process started with, inherited by its children, so it finds a run's processes however they were
     * re-parented. Processes of other users cannot be read, and are not ours.
     */
    public static List<ProcessHandle> marked(String name, String value) {
        byte[] wanted = (name + "=" + value).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(d -> d.getFileName().toString().matches("\\d+"))
                    .filter(d -> Long.parseLong(d.getFileName().toString()) != self)
                    .filter(d -> environHas(d.resolve("environ"), wanted))
                    .map(d -> ProcessHandle.of(Long.parseLong(d.getFileName().toString())))
                    .flatMap(java.util.Optional::stream)
                    .filter(h -> running(h.pid()))
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            return List.of();
        }
    }

    /** The environment a process started with (empty when it cannot be read: another user's, or gone). */
    public static java.util.Map<String, String> environment(long pid) {
        java.util.Map<String, String> env = new java.util.HashMap<>();
        try {
            for (String kv : new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ")), java.nio.charset.StandardCharsets.UTF_8).split("\0")) {
                int eq = kv.indexOf('=');
                if (eq > 0) env.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        } catch (IOException | RuntimeException ignored) {
            // not ours to read, or gone
        }
        return env;
    }

    private static boolean environHas(Path environ, byte[] wanted) {
        byte[] env;
        try {
            env = Files.readAllBytes(environ);
        } catch (IOException | RuntimeException e) {
            return false;
        }
        for (int start = 0; start < env.length; ) {
            int end = start;
            while (end < env.length && env[end] != 0) end++;
            if (end - start == wanted.length && java.util.Arrays.equals(env, start, end, wanted, 0, wanted.length)) return true;
            start = end + 1;
        }
        return false;
    }

    /** A process identity that survives pid reuse: the pid plus its start time. */
    public record Pid(long pid, long startMillis) {
        public static Pid of(ProcessHandle h) {
            return new Pid(h.pid(), h.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(-1L));
        }

        /** The live process with this pid and (within a second) this start time. */
        public java.util.Optional<ProcessHandle> live() {
            return ProcessHandle.of(pid).filter(h -> running(h.pid())).filter(h -> startMillis < 0
                    || h.info().startInstant().map(t -> Math.abs(t.toEpochMilli() - startMillis) < 1000).orElse(true));
        }
    }
}
