package perfkit.harness.process;

import perfkit.harness.os.Disk;
import perfkit.harness.os.Processes;
import perfkit.harness.record.RunLayout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A small JVM that ties other processes to a run's life, in two modes:
 * <ul>
 * <li>{@code Watchdog --wrap [--signal INT] [--grace S] [--remove DIR]... [--forward-first-line] -- command...}: runs a
 *     server (e.g. {@code postgres -D}, a Cassandra node) as its child. When its stdin reaches EOF or its parent dies, it
 *     stops the child with the signal, then SIGKILL after the grace period, and removes the folders. Closing its stdin
 *     is also how the run stops the server normally. The child gets the same signal from the kernel if this watchdog
 *     is killed outright ({@code setpriv --pdeathsig}), so it never outlives both. With {@code --forward-first-line}
 *     the first line of this watchdog's stdin (a secret) goes to the child's stdin, which stays open while the
 *     watchdog lives; so does every later line (a remote part's heartbeat, see {@link RemotePostgres}).</li>
 * <li>{@code Watchdog --reap RUN_DIR}: started with every run. When the run's JVM is gone, it waits for it to be
 *     really dead and, if the manifest still says running (SIGKILL, a crash), cleans up like the {@link Janitor}:
 *     children stopped, scratch and temp folders removed, the run marked interrupted.</li>
 * </ul>
 * Both start in a session of their own ({@link Supervisor}), so a Ctrl-C for the run's process group does not
 * reach them: the run handles Ctrl-C, and they must outlive it.
 */
public final class Watchdog {
    static final String WRAP = "--wrap", REAP = "--reap", FORWARD_FIRST_LINE = "--forward-first-line";
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

    private Watchdog() {}

    public static void main(String[] args) throws Exception {
        long parent = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        if (args.length >= 2 && args[0].equals(REAP)) reap(Path.of(args[1]), parent);
        else if (args.length >= 1 && args[0].equals(WRAP)) wrap(Arrays.asList(args).subList(1, args.length), parent);
        else {
            System.err.println("usage: Watchdog --wrap [--signal SIG] [--grace S] [--remove DIR]... -- command... | --reap RUN_DIR");
            System.exit(2);
        }
    }

    private static void wrap(List<String> args, long parent) throws Exception {
        String signal = "TERM";
        double grace = 10;
        boolean forward = false;
        List<Path> remove = new ArrayList<>();
        int i = 0;
        for (; i < args.size() && !args.get(i).equals("--"); i++) {
            switch (args.get(i)) {
                case "--signal" -> signal = args.get(++i);
                case "--grace" -> grace = Double.parseDouble(args.get(++i));
                case "--remove" -> remove.add(Path.of(args.get(++i)));
                case FORWARD_FIRST_LINE -> forward = true;
                default -> throw new IllegalArgumentException("unknown watchdog option " + args.get(i));
            }
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        String firstLine = forward ? in.readLine() : null;
        if (forward && firstLine == null) System.exit(ChildProcess.EXIT_PARENT_GONE); // the run went before handing it over
        // Started from this (the main) thread, which lives as long as the watchdog: the parent-death signal fires
        // when the thread that started a process ends.
        Process child = new ProcessBuilder(withParentDeathSignal(args.subList(i + 1, args.size()), signal))
                .inheritIO().redirectInput(ProcessBuilder.Redirect.PIPE).start();
        if (forward) {
            child.getOutputStream().write((firstLine + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            child.getOutputStream().flush();
        }
        // A SIGTERM to the watchdog itself must not orphan the server: the hook stops it first.
        String stopSignal = signal;
        double stopGrace = grace;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (child.isAlive()) Processes.stopTree(child.toHandle(), stopSignal, stopGrace);
            remove.forEach(Disk::deleteRecursively);
        }, "perfkit-watchdog-stop"));
        CountDownLatch stop = new CountDownLatch(1);
        watch(in, parent, stop, !forward ? null : line -> {
            try {
                child.getOutputStream().write((line + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                child.getOutputStream().flush();
            } catch (IOException e) {
                // the program is gone; its exit stops this watchdog
            }
        });
        Processes.daemon("perfkit-child-exit", () -> {
            try { child.waitFor(); } catch (InterruptedException ignored) { }
            stop.countDown();
        });
        stop.await();
        if (!Processes.running(parent)) awaitClientsGone(5);
        int code = Processes.stopTree(child.toHandle(), signal, grace);
        remove.forEach(Disk::deleteRecursively);
        System.exit(code);
    }

    /**
     * The run died under its server: its client JVMs (forks, services) see it at the same moment and stop. A server
     * that stopped first would make them fail loudly against it, so it waits for them, at most {@code seconds}.
     */
    private static void awaitClientsGone(double seconds) throws InterruptedException {
        String mark = System.getenv(RunLayout.MARK_ENV);
        if (mark == null) return;
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        // clients are the JVMs ChildProcess runs, which alone carry the parent's pid (a command line is no guide: the
        // kernel may show it cut short)
        while (System.nanoTime() < deadline && Processes.marked(RunLayout.MARK_ENV, mark).stream()
                .anyMatch(h -> Processes.environment(h.pid()).containsKey(ChildProcess.PARENT_ENV)))
            Thread.sleep(50);
    }

    /**
     * {@code command} with the kernel told to send {@code signal} to it when this watchdog dies, through util-linux
     * {@code setpriv --pdeathsig}. A command that already starts with setpriv (dropping root for PostgreSQL) gets the
     * option in that same call: a change of user clears the parent-death signal, so it must be set after it.
     */
    static List<String> withParentDeathSignal(List<String> command, String signal) {
        if (!java.nio.file.Files.isExecutable(SETPRIV)) return command;
        List<String> out = new ArrayList<>();
        if (!command.isEmpty() && Path.of(command.get(0)).getFileName().toString().equals("setpriv")) {
            out.add(command.get(0));
            out.addAll(List.of("--pdeathsig", signal));
            out.addAll(command.subList(1, command.size()));
        } else {
            out.addAll(List.of(SETPRIV.toString(), "--pdeathsig", signal, "--"));
            out.addAll(command);
        }
        return out;
    }

    private static void reap(Path runDir, long parent) throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        watch(new BufferedReader(new InputStreamReader(System.in)), parent, stop);
        // Processes the run started without the Supervisor (JMH forks, helpers of helpers) are only known while
        // the run lives: once it dies they are re-parented. So remember every descendant as it appears.
        java.util.Set<Processes.Pid> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        long self = ProcessHandle.current().pid();
        Processes.daemon("perfkit-descendants", () -> {
            while (stop.getCount() > 0) {
                ProcessHandle.of(parent).ifPresent(p -> p.descendants().filter(d -> d.pid() != self).forEach(d -> seen.add(Processes.Pid.of(d))));
                try { Thread.sleep(500); } catch (InterruptedException e) { return; }
            }
        });
        stop.await();
        // stdin may close a moment before the JVM is gone; the manifest is only ours once it is
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (Processes.running(parent) && System.nanoTime() < deadline) Thread.sleep(50);
        if (Janitor.clean(runDir, "the run's process ended without finishing the run (SIGKILL or a crash); its watchdog cleaned up"))
            Janitor.stop(List.copyOf(seen));
    }

    /** Counts {@code stop} down when stdin reaches EOF or the parent process is gone. */
    private static void watch(BufferedReader stdin, long parent, CountDownLatch stop) {
        watch(stdin, parent, stop, null);
    }

    /** The same, handing every further stdin line to {@code lines} (a wrapped program's heartbeat from the run). */
    private static void watch(BufferedReader stdin, long parent, CountDownLatch stop, java.util.function.Consumer<String> lines) {
        Processes.daemon("perfkit-stdin", () -> {
            try (BufferedReader in = stdin) {
                for (String line; (line = in.readLine()) != null; ) if (lines != null) lines.accept(line); // EOF is the signal
            } catch (Exception ignored) {
                // same as EOF
            }
            stop.countDown();
        });
        Processes.daemon("perfkit-parent", () -> {
            var handle = ProcessHandle.of(parent);
            while (handle.isPresent() && Processes.running(parent)) {
                try { Thread.sleep(200); } catch (InterruptedException e) { return; }
            }
            stop.countDown();
        });
    }
}
