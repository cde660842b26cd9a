package perfkit.harness.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Processes by pid: signals, stopping a tree, whether one still runs, and finding a run's processes by their environment. */
public final class Processes {
    private Processes() {}

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
    public static int stopTree(ProcessHandle p, String signal, double grace) {
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
        } catch (IOException e) {
            // Only /proc saying the process is gone is an answer. This JVM failing to look (out of file descriptors,
            // as a server holding 15,000 connections is) is not: taken for "gone", it made a live parent's child stop
            // itself. ProcessHandle reads /proc too, so it can only stand in where there is no /proc at all.
            if (gone(e)) return false;
            return Files.isDirectory(Path.of("/proc/self")) || ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        } catch (RuntimeException e) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && !Files.isDirectory(Path.of("/proc/self"));
        }
    }

    /** Whether a failed read of /proc/<pid> says the process is gone (no entry, or ESRCH while it exits), not that the reader failed. */
    static boolean gone(IOException e) {
        return e instanceof java.nio.file.NoSuchFileException || String.valueOf(e.getMessage()).contains("No such process");
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

    /** A started daemon thread: one that never keeps the JVM alive. */
    public static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
