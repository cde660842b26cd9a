package perfkit.harness.process;

import perfkit.harness.os.Disk;
import perfkit.harness.record.Manifest;
import perfkit.harness.os.Processes;
import perfkit.harness.record.RunFile;
import perfkit.harness.record.RunLayout;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Every process a run starts, and the guarantee that none outlives it. Child JVMs start through
 * {@link ChildProcess} (parameters on stdin, a parent-death watchdog); other programs start under a
 * {@link Watchdog} wrapper; and a reaper {@link Watchdog} tidies up if this JVM is killed outright. Each child
 * is recorded in the run's live file, so the {@link Janitor} can still stop it when even the reaper is gone.
 */
public final class Supervisor {
    /** A started child: its process, and the stdin pipe whose closing tells its watchdog to stop it. */
    public record Child(String name, Process process, OutputStream stdin, boolean wrapped) implements Profiler.Target {
        @Override public boolean alive() { return process.isAlive(); }

        @Override public void tell(String line) throws IOException {
            synchronized (stdin) {
                stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
        }
    }

    private final Path runDir;
    private final Class<?> mainClass;
    /** The java that runs forks and services (--java); watchdogs always use the run's own. */
    private final String childJava;
    private final List<Child> children = new CopyOnWriteArrayList<>();
    private final List<Path> tempDirs = new CopyOnWriteArrayList<>();
    private final Map<Process, Child> byProcess = new ConcurrentHashMap<>();
    private final Processes.Pid runner = Processes.Pid.of(ProcessHandle.current());
    private Process reaper;
    /** CPU lists (taskset's syntax) by series prefix: a JVM whose series starts with the prefix runs on those CPUs. */
    private final Map<String, String> placement = new java.util.LinkedHashMap<>();
    private boolean liveWriteFailed;

    public Supervisor(Path runDir, Class<?> mainClass, String childJava) {
        this(runDir, mainClass, childJava, f -> { });
    }

    /** The same, listing each JVM's GC log with {@code addFile} once the JVMs have stopped ({@link #stopAll}). */
    public Supervisor(Path runDir, Class<?> mainClass, String childJava, Consumer<RunFile> addFile) {
        this.runDir = runDir;
        this.mainClass = mainClass;
        this.childJava = childJava == null || childJava.isBlank() ? ownJava() : childJava;
        this.addFile = addFile;
    }

    private final Consumer<RunFile> addFile;
    /** Each JVM under test's GC log (unified logging), listed when the JVMs have stopped; counted by cleaned name. */
    private final List<RunFile> gcLogs = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> gcLogsByName = new ConcurrentHashMap<>();

    /**
     * {@code -Xlog:gc} into {@code logs/gc/<name>.<n>.log} (one line per collection: its kind, heap before and after,
     * and its pause, on the wall clock; one file, never rotated), the path quoted when the run's folder holds anything
     * but plain characters, as -Xlog reads a quoted name whole.
     */
    private List<String> gcLogOption(String name) throws IOException {
        Path log = runDir.resolve("logs").resolve("gc").resolve(gcLogFile(name, ""));
        if (log.toString().contains("\"")) return List.of(); // a name -Xlog cannot quote: no GC log, rather than a JVM that will not start
        String file = log.toString().matches("[A-Za-z0-9._/-]+") ? log.toString() : "\"" + log + "\"";
        java.nio.file.Files.createDirectories(log.getParent());
        return gcLogFlag(file);
    }

    /** The -Xlog option that writes {@code file}: one line per collection on the wall clock, one file, never rotated. */
    public static List<String> gcLogFlag(String file) { return List.of("-Xlog:gc:file=" + file + ":time,uptime,level,tags:filecount=0"); }

    /**
     * The name under logs/gc/ of the next GC log of {@code name}, listed in the manifest once the JVMs have stopped if
     * it is there by then: written here, or brought home from a placed JVM's host ({@code where}: " on host", or "").
     */
    public String gcLogFile(String name, String where) {
        String safe = name.replaceAll("[^A-Za-z0-9._-]+", "_");
        String file = safe + "." + gcLogsByName.merge(safe, 1, Integer::sum) + ".log";
        gcLogs.add(new RunFile("logs/gc/" + file, "log", "unified GC log (-Xlog:gc) of " + name + where + ": each collection and its pause",
                null, name, null, null, null, null));
        return file;
    }

    /** The reaper: a watchdog JVM that cleans up after this one if it is killed with SIGKILL. */
    public void startReaper() throws IOException {
        writeLive();
        ProcessBuilder pb = new ProcessBuilder(ownSession(javaCommand(List.of("-Xmx32m", "-XX:TieredStopAtLevel=1", "-Xss256k"), Watchdog.class,
                List.of(Watchdog.REAP, runDir.toString()))))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT);
        mark(pb);
        reaper = pb.start();
    }

    /** Starts a JVM of the study's main class through ChildProcess; {@code firstLine} goes to its stdin first. */
    public Child launchJvm(String name, List<String> jvmArgs, List<String> args, String firstLine) throws IOException {
        return launchJvm(name, null, jvmArgs, args, firstLine);
    }

    /** The same on another JVM ({@code java}, an executable; null: the run's --java or its own). */
    public Child launchJvm(String name, String java, List<String> jvmArgs, List<String> args, String firstLine) throws IOException {
        List<String> childArgs = new ArrayList<>();
        childArgs.add(mainClass.getName());
        childArgs.addAll(args);
        // first, so a -Djava.io.tmpdir of the user's own still wins
        List<String> jvm = new ArrayList<>(List.of("-Djava.io.tmpdir=" + tempDir()));
        jvm.addAll(gcLogOption(name)); // a user's own -Xlog adds to it
        jvm.addAll(jvmArgs);
        List<String> cmd = javaCommand(jvm, ChildProcess.class, childArgs);
        cmd.set(0, java == null ? childJava : java);
        String cpus = cpusOf(name);
        // taskset execs the JVM, so the pid stays our child's and every thread the JVM starts inherits the CPU list
        if (cpus != null) cmd.addAll(0, List.of(TASKSET, "-c", cpus));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put(ChildProcess.PARENT_ENV, Long.toString(runner.pid()));
        Child c = start(name, pb, false);
        try {
            c.stdin().write((firstLine + "\n").getBytes(StandardCharsets.UTF_8));
            c.stdin().flush();
        } catch (IOException e) {
            // a JVM that could not start (a bad option, -Xmx too small) may exit before we write: say how it ended, not "Stream closed"
            if (waitQuietly(c.process(), 5)) throw new IOException("the JVM for " + name + " exited with code " + c.process().exitValue() + " before it read its parameters", e);
            throw e;
        }
        onJvm.accept(c);
        return c;
    }

    private volatile Consumer<Profiler.Target> onJvm = c -> { };

    /** Tells {@code listener} of each JVM under test started from now on, here or elsewhere (a {@link Profiler}). */
    public void onJvm(Consumer<Profiler.Target> listener) { onJvm = listener; }

    /** A JVM under test the run started on another host (a placed fork or service), for the same listener. */
    public void jvmElsewhere(Profiler.Target jvm) { onJvm.accept(jvm); }

    static final String TASKSET = "/usr/bin/taskset";

    /** JVMs started later whose series starts with {@code seriesPrefix} run on {@code cpus} (taskset's list, e.g. 0 or 1-3). */
    public void pin(String seriesPrefix, String cpus) {
        placement.put(seriesPrefix, cpus);
    }

    private String cpusOf(String series) {
        return placement.entrySet().stream().filter(e -> series.startsWith(e.getKey())).map(Map.Entry::getValue).findFirst().orElse(null);
    }

    /**
     * Starts a non-JVM program under a watchdog JVM, output to {@code log} (null: to a pipe the caller reads). Stopping it (or this JVM's death)
     * sends it {@code signal}, SIGKILL after {@code graceSeconds}, then removes {@code removeOnExit}.
     */
    public Child launchProgram(String name, List<String> command, Path log, String signal, double graceSeconds, List<Path> removeOnExit) throws IOException {
        return launchProgram(name, command, log, signal, graceSeconds, removeOnExit, null);
    }

    /**
     * The same, handing {@code firstLine} (a secret, say) to the program's stdin through its watchdog, never its
     * command line. The program's stdin then stays open until its watchdog goes: EOF means "stop".
     */
    public Child launchProgram(String name, List<String> command, Path log, String signal, double graceSeconds, List<Path> removeOnExit,
                        String firstLine) throws IOException {
        List<String> args = new ArrayList<>(List.of(Watchdog.WRAP, "--signal", signal, "--grace", Double.toString(graceSeconds)));
        for (Path p : removeOnExit) args.addAll(List.of("--remove", p.toString()));
        if (firstLine != null) args.add(Watchdog.FORWARD_FIRST_LINE);
        args.add("--");
        args.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(ownSession(javaCommand(List.of("-Xmx32m", "-XX:TieredStopAtLevel=1"), Watchdog.class, args)))
                .redirectErrorStream(true);
        if (log != null) pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())); // else the caller reads it (pipeLines)
        Child c = start(name, pb, true);
        if (firstLine != null) {
            c.stdin().write((firstLine + "\n").getBytes(StandardCharsets.UTF_8));
            c.stdin().flush();
        }
        return c;
    }

    /** True when {@code p} has exited within {@code seconds}. */
    private static boolean waitQuietly(Process p, long seconds) {
        try {
            return p.waitFor(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Child start(String name, ProcessBuilder pb, boolean wrapped) throws IOException {
        mark(pb);
        Process p = pb.start();
        Child c = new Child(name, p, p.getOutputStream(), wrapped);
        children.add(c);
        byProcess.put(p, c);
        writeLive();
        return c;
    }

    /** Every process of the run carries the run's mark, and so does whatever it starts (see {@link RunLayout#MARK_ENV}). */
    private void mark(ProcessBuilder pb) {
        pb.environment().put(RunLayout.MARK_ENV, RunLayout.mark(runDir));
    }

    /** The children's temp folder, inside the run's scratch folder: it goes when the run goes, however it ends. */
    private Path tempDir() throws IOException {
        return java.nio.file.Files.createDirectories(runDir.resolve(RunLayout.SCRATCH_DIR).resolve(RunLayout.TMP_DIR));
    }

    /** A temp folder outside the run directory (e.g. a database cluster) that must go when the run goes. */
    public void registerTempDir(Path dir) {
        tempDirs.add(dir);
        writeLive();
    }

    public void forgetTempDir(Path dir) {
        tempDirs.remove(dir);
        writeLive();
    }

    public Child childOf(Process p) { return byProcess.get(p); }

    /** The java that runs forks and services: the run's --java, else its own. */
    public String childJava() { return childJava; }

    /** The study's main class: every JVM of the run starts it through ChildProcess. */
    public Class<?> mainClass() { return mainClass; }

    /** Reads a child's stdout line by line on a daemon thread. */
    public static void pipeLines(String name, Process p, Consumer<String> lines) {
        Processes.daemon("perfkit-out-" + name, () -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) lines.accept(line);
            } catch (IOException ignored) {
                // the process ended
            }
        });
    }

    /**
     * Closes its stdin, which its watchdog takes as the order to stop, and for a JVM also sends SIGTERM. A wrapped
     * program is left to its watchdog, which stops the server gracefully and removes its folder: a signal would only
     * hurry the watchdog. After the timeout, SIGKILL for it and everything below it.
     */
    public void stop(Child c, double timeoutSeconds) throws InterruptedException {
        List<ProcessHandle> tree = new ArrayList<>(c.process().descendants().toList());
        closeQuietly(c.stdin());
        if (!c.wrapped()) c.process().destroy();
        if (!c.process().waitFor((long) (timeoutSeconds * 1000), TimeUnit.MILLISECONDS)) c.process().destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        tree.addAll(c.process().descendants().toList());
        tree.stream().filter(h -> Processes.running(h.pid())).forEach(ProcessHandle::destroyForcibly);
        forget(c);
    }

    public void forget(Child c) {
        children.remove(c);
        byProcess.remove(c.process());
        writeLive();
    }

    /** How long stopAll lets the JVMs it asked to stop go quiet before it stops the servers they use. */
    static final long QUIET_BEFORE_STOP_MS = 300;

    /**
     * Stops every child: the JVMs are asked first (stdin closed) and given {@link #QUIET_BEFORE_STOP_MS} to go quiet,
     * then all are stopped at once (each gets its grace period in parallel), then anything still below this JVM.
     */
    public void stopAll() {
        java.util.Map<Child, List<ProcessHandle>> trees = new java.util.LinkedHashMap<>();
        // the JVMs first: a closed stdin makes each go quiet at once (ChildProcess), before the database or broker
        // they use is stopped under them, so their threads' failures against it never reach the terminal
        for (Child c : children) {
            trees.put(c, new ArrayList<>(c.process().descendants().toList()));
            if (!c.wrapped()) closeQuietly(c.stdin());
        }
        long quietBy = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(QUIET_BEFORE_STOP_MS);
        for (Child c : children) {
            if (c.wrapped()) continue;
            try { c.process().waitFor(Math.max(0, quietBy - System.nanoTime()), TimeUnit.NANOSECONDS); }
            catch (InterruptedException e) { Thread.currentThread().interrupt(); break; }
        }
        for (Child c : children) {
            if (c.wrapped()) closeQuietly(c.stdin());
            else c.process().destroy();
        }
        trees.forEach((c, tree) -> {
            try {
                if (!c.process().waitFor(15, TimeUnit.SECONDS)) c.process().destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                c.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
            tree.addAll(c.process().descendants().toList());
            tree.stream().filter(h -> Processes.running(h.pid())).forEach(ProcessHandle::destroyForcibly);
            forget(c);
        });
        // helpers the run started itself (an initdb still writing its cluster, say) go before the folders they write to
        List<ProcessHandle> strays = ProcessHandle.current().descendants().filter(h -> reaper == null || h.pid() != reaper.pid()).toList();
        strays.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : strays) {
            try { h.onExit().get(5, TimeUnit.SECONDS); } catch (Exception ignored) { } // gone, or beyond our reach
        }
        tempDirs.forEach(Disk::deleteRecursively);
        tempDirs.clear();
        // the JVMs have stopped, so their GC logs are whole: listed once each, where one was written
        for (RunFile f : gcLogs) if (java.nio.file.Files.isRegularFile(runDir.resolve(f.path()))) addFile.accept(f);
        gcLogs.clear();
    }

    /** The run ended properly: the live file goes, and the reaper (which reads it) may go too. */
    public void finished() {
        try { java.nio.file.Files.deleteIfExists(runDir.resolve(RunLayout.LIVE_FILE)); } catch (IOException ignored) { }
        if (reaper != null) closeQuietly(reaper.getOutputStream());
    }

    /** The live file: this JVM, each child and temp folder, for the reaper and the janitor. */
    private synchronized void writeLive() {
        ObjectNode live = Manifest.newObject();
        live.set("runner", pidJson(runner));
        ArrayNode kids = live.putArray("children");
        for (Child c : children) kids.add(pidJson(Processes.Pid.of(c.process().toHandle())).put("name", c.name()).put("wrapped", c.wrapped()));
        ArrayNode dirs = live.putArray("tempDirs");
        tempDirs.forEach(d -> dirs.add(d.toString()));
        try {
            Manifest.writeAtomically(runDir.resolve(RunLayout.LIVE_FILE), live);
        } catch (IOException e) {
            if (!liveWriteFailed) System.err.println("perfkit: cannot write " + RunLayout.LIVE_FILE + ": " + Disk.reason(e));
            liveWriteFailed = true;
        }
    }

    private static ObjectNode pidJson(Processes.Pid p) {
        return Manifest.newObject().put("pid", p.pid()).put("startMillis", p.startMillis());
    }

    private static List<String> javaCommand(List<String> jvmArgs, Class<?> main, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ownJava());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        return cmd;
    }

    /**
     * Watchdogs run in a session of their own: Ctrl-C signals the terminal's whole process group, and a server
     * such as PostgreSQL must not shut down before the run has flushed and stopped its clients. setsid execs
     * (no fork) when its caller is not a group leader, so the pid stays our child's.
     */
    private static List<String> ownSession(List<String> cmd) {
        if (!java.nio.file.Files.isExecutable(Path.of("/usr/bin/setsid"))) return cmd;
        List<String> out = new ArrayList<>(List.of("/usr/bin/setsid"));
        out.addAll(cmd);
        return out;
    }

    public static String ownJava() {
        return ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    private static void closeQuietly(OutputStream s) {
        try { s.close(); } catch (IOException ignored) { }
    }
}
