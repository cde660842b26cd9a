package perfkit.harness.process;

import perfkit.harness.os.Errors;
import perfkit.harness.record.Manifest;
import perfkit.harness.os.Processes;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Entry point of every JVM a run starts (forks and services such as a broker): {@code ChildProcess <main class> <args>}.
 * It reads the first stdin line (a fork's parameters), then keeps a parent-death watchdog: when stdin reaches
 * EOF or the parent process is gone, the child exits through its shutdown hooks (so logs are flushed), and is
 * halted a few seconds later if a hook hangs. So a SIGKILLed run leaves no JVM behind. Lines after the first are
 * {@link Profile}'s commands.
 */
public final class ChildProcess {
    static final String PARENT_ENV = "PERFKIT_PARENT_PID";
    static final int EXIT_PARENT_GONE = 143;
    private static final long HALT_AFTER_MS = 5000;

    private static volatile String firstLine = "{}";
    private static volatile long parentPid = -1;
    private static volatile boolean stopping;

    private ChildProcess() {}

    public static void main(String[] args) throws Throwable {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = in.readLine();
        if (line == null) System.exit(EXIT_PARENT_GONE); // the parent died before handing over the parameters
        firstLine = line;
        // A JVM that is stopping has said what it had to: while it stops, a server's threads may still fail against
        // parts that are already gone (a database, a broker) and print stack traces to a terminal the run no longer
        // owns. The one line saying why it stops comes before this.
        Runtime.getRuntime().addShutdownHook(new Thread(ChildProcess::quiet, "perfkit-quiet-stop"));
        parentPid = parentPid();
        // a library thread that dies says so in one line; its stack trace is no use on a terminal
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if (!orphaned()) System.err.println("perfkit: thread " + t.getName() + " failed: " + Errors.oneLine(e));
        });
        watchParent(in, parentPid);
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The line the parent wrote first: a fork's parameters as JSON ({@code {}} for services). */
    static String firstLine() { return firstLine; }

    /** A parameter the parent handed over stdin (see {@code Run.startService} with private parameters); null when absent. */
    public static String param(String name) {
        try {
            com.fasterxml.jackson.databind.JsonNode v = Manifest.JSON.readTree(firstLine).get(name);
            return v == null || v.isNull() ? null : v.asText();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * True once the parent is gone (or its stdin closed): a failure now is a consequence of the run's death (the
     * database it used has stopped too), and the one line saying why this JVM stops is all the terminal should get.
     */
    static boolean orphaned() {
        return stopping || (parentPid > 0 && !Processes.running(parentPid));
    }

    /** Stops this JVM because its parent is gone, with the one line that says so. */
    static void stopOrphaned() {
        stop("its parent " + parentPid + " is gone");
    }

    private static long parentPid() {
        String env = System.getenv(PARENT_ENV);
        if (env != null && env.matches("\\d+")) return Long.parseLong(env);
        return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
    }

    /** Two daemon threads: one waits for EOF on stdin, one checks every second that the parent still lives. */
    static void watchParent(BufferedReader in, long parentPid) {
        Processes.daemon("perfkit-stdin-watchdog", () -> {
            try {
                // after the parameters only profile commands come (Profile); EOF is the signal to stop
                for (String line; (line = in.readLine()) != null; ) Profile.command(line);
            } catch (IOException ignored) {
                // a broken pipe means the same as EOF
            }
            // a live parent that closes our stdin is stopping us as planned: nothing to tell the terminal
            stop(parentPid > 0 && Processes.running(parentPid) ? null : "its stdin closed");
        });
        Processes.daemon("perfkit-parent-watchdog", () -> {
            while (true) {
                if (!Processes.running(parentPid)) stop("its parent " + parentPid + " is gone");
                try { Thread.sleep(200); } catch (InterruptedException e) { return; }
            }
        });
    }

    /**
     * Exits through the shutdown hooks (latency logs flushed, brokers shut down), halted later if a hook hangs;
     * {@code why} (null when the parent asked) is the one line the terminal gets.
     */
    private static synchronized void stop(String why) {
        if (stopping) return;
        stopping = true;
        Processes.daemon("perfkit-halt", () -> {
            try { Thread.sleep(HALT_AFTER_MS); } catch (InterruptedException ignored) { }
            Runtime.getRuntime().halt(EXIT_PARENT_GONE);
        });
        if (why != null) {
            System.err.println("perfkit: stopping " + ProcessHandle.current().pid() + ": " + why);
            System.err.flush();
        }
        quiet();
        System.exit(EXIT_PARENT_GONE);
    }

    private static void quiet() {
        System.setErr(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    }

}
