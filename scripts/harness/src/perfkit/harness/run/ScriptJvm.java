package perfkit.harness.run;

import perfkit.harness.record.RunLayout;
import perfkit.harness.process.Supervisor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Another JBang script of the kit run as a JVM of its own, with its own classpath: the HTTP load driver, an embedded
 * Cassandra node. Their dependencies clash with a study's (older Netty, Vert.x, Guava), so they cannot share its JVM.
 * <p>
 * {@link #prepare} builds the script and reads its classpath once per run, before anything is measured. Each
 * {@link #start} is then a plain {@code java} child under the run's {@link Supervisor} (a watchdog, the live file,
 * the janitor), so no JBang start-up sits in a measurement and a killed run leaves nothing behind.
 */
public final class ScriptJvm {
    private final String what, mainClass, classpath, java;

    private ScriptJvm(String what, String mainClass, String classpath, String java) {
        this.what = what;
        this.mainClass = mainClass;
        this.classpath = classpath;
        this.java = java;
    }

    /** Builds {@code script} (its dependencies are resolved on first use) and reads its classpath; build output goes to {@code logDir}. */
    public static ScriptJvm prepare(Path script, String mainClass, String what, Path logDir) throws IOException, InterruptedException {
        if (!Files.isRegularFile(script)) throw new IllegalStateException(what + " not found at " + script + " (set PERFKIT_HOME to the kit's checkout)");
        Files.createDirectories(logDir);
        String stem = script.getFileName().toString().replace(".java", "");
        Path out = logDir.resolve(stem + "-build.log"), err = logDir.resolve(stem + "-build.err"), cp = logDir.resolve(stem + "-classpath.txt");
        jbang(what, out, err, "build", script.toString());
        jbang(what, cp, err, "info", "classpath", script.toString());
        String classpath = Files.readString(cp).trim();
        if (classpath.isEmpty() || classpath.contains("\n"))
            throw new IllegalStateException("could not read the classpath of " + what + " from jbang info classpath" + diskFull(logDir));
        Files.deleteIfExists(out);
        Files.deleteIfExists(cp);
        Files.deleteIfExists(err);
        return of(what, mainClass, classpath);
    }

    /** A program already built: its main class and classpath, on the running JDK's java. */
    static ScriptJvm of(String what, String mainClass, String classpath) { return new ScriptJvm(what, mainClass, classpath, scriptJava()); }

    /** Why jbang's answer may be missing: the run's own folder has no room left for it ("" when it has). */
    private static String diskFull(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace() < 1 << 20 ? " (No space left on device where the run writes)" : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** The JBang launcher this JVM was started by (JBANG_LAUNCH_CMD), else the kit's own, else jbang on PATH. */
    static String jbang() {
        String launch = System.getenv("JBANG_LAUNCH_CMD");
        if (launch != null && !launch.isBlank() && Files.isExecutable(Path.of(launch))) return launch;
        Path kit = RunLayout.kitRoot().resolve("env/setup/jbang");
        return Files.isExecutable(kit) ? kit.toString() : "jbang";
    }

    private static void jbang(String what, Path out, Path err, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(jbang(), "--quiet"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(err.toFile())).redirectOutput(out.toFile()).start();
        if (!p.waitFor(900, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("jbang " + args[0] + " of " + what + " took over 15 minutes");
        }
        List<String> lines = Files.exists(err) ? Files.readAllLines(err) : List.of();
        if (p.exitValue() != 0)
            throw new IllegalStateException("could not " + args[0] + " " + what + " (" + (lines.isEmpty() ? "exit " + p.exitValue() : lines.get(lines.size() - 1)) + ")"
                    + diskFull(err.getParent()));
    }

    /** Its classpath, for running it on another host (a placed part's JVM). */
    public String classpath() { return classpath; }

    public String mainClass() { return mainClass; }

    /**
     * The same program on {@code java} (blank: the running JDK's), e.g. the forks' --java, so a program run beside them
     * as a yardstick runs on the JVM they run on. Its classes target the script's //JAVA floor, so a newer JDK takes them.
     */
    public ScriptJvm on(String java) { return new ScriptJvm(what, mainClass, classpath, java == null || java.isBlank() ? scriptJava() : java); }

    /** The java it starts on: the running JDK's unless {@link #on} said otherwise. */
    public String java() { return java; }

    /** The java that runs another script's JVM: the running JDK's (its own classpath was resolved for it). */
    public static String scriptJava() { return Path.of(System.getProperty("java.home"), "bin", "java").toString(); }

    /** The command that starts this script's JVM: its java, {@code jvmArgs}, the main class, {@code args}. */
    public List<String> command(List<String> jvmArgs, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", classpath, mainClass));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * Starts it as a supervised program of {@code run}, output to {@code log}; stopping it sends {@code signal}, then
     * SIGKILL after {@code graceSeconds}. {@code removeOnExit} are folders the watchdog deletes when it ends.
     */
    public Process start(Run run, String name, List<String> jvmArgs, List<String> args, Path log, String signal, double graceSeconds,
                         List<Path> removeOnExit) throws IOException {
        return start(run, name, jvmArgs, args, log, signal, graceSeconds, removeOnExit, null);
    }

    /**
     * The same, with {@code firstLine} (a secret) on the JVM's stdin, never its command line. Its stdin stays open
     * while its watchdog lives, so the JVM can take EOF as "the run is gone".
     */
    public Process start(Run run, String name, List<String> jvmArgs, List<String> args, Path log, String signal, double graceSeconds,
                         List<Path> removeOnExit, String firstLine) throws IOException {
        return run.supervisor().launchProgram(name, command(jvmArgs, args), log, signal, graceSeconds, removeOnExit, firstLine).process();
    }

    /** Stops a JVM started by {@link #start}: its signal, then SIGKILL after {@code graceSeconds}. */
    public static void stop(Run run, Process p, double graceSeconds) throws InterruptedException {
        Supervisor.Child c = run.supervisor().childOf(p);
        if (c != null) run.supervisor().stop(c, graceSeconds);
        else p.destroyForcibly();
    }
}
