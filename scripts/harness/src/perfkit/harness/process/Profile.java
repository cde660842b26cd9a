package perfkit.harness.process;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;

import java.nio.file.Path;

/**
 * A JVM under test recording itself with JDK Flight Recorder while its parent says it is measured: the parent writes
 * {@code perfkit-profile start <file>} and {@code perfkit-profile stop} to its stdin ({@link Profiler}), and
 * {@link ChildProcess} hands those lines here. JFR's "profile" settings: method samples every 10 ms (20 ms for
 * native), allocation samples, GC pauses, monitor waits over 10 ms, socket I/O over 10 ms; less what describes the
 * machine rather than the work ({@link #PRIVATE_EVENTS}). A JVM that exits while recording writes what it has on its way out.
 */
public final class Profile {
    static final String LINE = "perfkit-profile ";
    private static Recording recording;

    private Profile() {}

    /**
     * The line that readies JFR before any window (its first start loads and initialises the recorder, a cost that would
     * otherwise land in the first measured second), the one that starts a recording into {@code file}, and the one
     * that stops it (the file is written then).
     */
    public static String prepare() { return LINE + "prepare"; }

    public static String start(Path file) { return start(file.toAbsolutePath().toString()); }

    /** The same for a path as the JVM sees it: one on another host is a path in its folder there. */
    public static String start(String path) { return LINE + "start " + path; }

    public static String stop() { return LINE + "stop"; }

    /** Handles one line of stdin; false when it is not a profile command. A failure is said in one line, never thrown. */
    static boolean command(String line) {
        if (!line.startsWith(LINE)) return false;
        String rest = line.substring(LINE.length());
        try {
            if (rest.equals("prepare")) { // loads and starts JFR's machinery, records nothing yet
                jdk.jfr.FlightRecorder.getFlightRecorder();
                Configuration.getConfiguration("profile").getSettings();
            }
            else if (rest.startsWith("start ")) begin(Path.of(rest.substring("start ".length())));
            else if (rest.equals("stop")) end();
        } catch (Exception | LinkageError e) { // a JDK without jdk.jfr: the stdin watchdog must go on reading
            // said once per JVM: a JDK without JFR would otherwise repeat it for every window
            if (!failed) System.err.println("perfkit: JVM " + ProcessHandle.current().pid() + " cannot profile itself, so it keeps no recording: " + e);
            failed = true;
        }
        return true;
    }

    private static volatile boolean failed;

    /**
     * Events of JFR's "profile" settings a run must not carry, since runs are shared and published: they describe the
     * machine, not the JVM's work (every process on it with its command line, this JVM's environment variables, system
     * properties and command line, the paths of the files and native libraries it touched, of the recording itself, and
     * of the processes it started: jdk.ProcessStart, JDK 22 on). Nothing the kit reads.
     */
    static final java.util.List<String> PRIVATE_EVENTS = java.util.List.of("jdk.SystemProcess", "jdk.InitialEnvironmentVariable",
            "jdk.InitialSystemProperty", "jdk.JVMInformation", "jdk.NativeLibrary", "jdk.FileRead", "jdk.FileWrite", "jdk.FileForce",
            "jdk.ActiveRecording", "jdk.ProcessStart");

    /** JFR's "profile" settings without {@link #PRIVATE_EVENTS}. */
    static java.util.Map<String, String> settings() throws java.io.IOException, java.text.ParseException {
        java.util.Map<String, String> s = new java.util.HashMap<>(Configuration.getConfiguration("profile").getSettings());
        for (String event : PRIVATE_EVENTS) s.put(event + "#enabled", "false");
        return s;
    }

    /** The fork has done its work ({@link #finish}): a window asked for after that would record its exit, not its work. */
    static volatile boolean finished;

    /**
     * Ends the open recording, if any, and records no more: a fork calls it when its work is done, before it hands over
     * its result and exits. Its parent's stop may reach it only after it began to exit, and a recording stopped
     * then races JFR's own exit hook over the file (seen as an empty file from a fork on a busy host).
     */
    public static synchronized void finish() {
        finished = true;
        try {
            end();
        } catch (RuntimeException | LinkageError e) { // the fork's result stands without its recording
            System.err.println("perfkit: JVM " + ProcessHandle.current().pid() + " could not end its recording: " + e);
        }
    }

    private static synchronized void begin(Path file) throws Exception {
        if (finished) return; // the parent lists no recording it cannot find, and says so
        if (recording != null) end(); // a window the parent never closed ends where the next begins
        if (file.getParent() != null) java.nio.file.Files.createDirectories(file.getParent()); // a placed JVM's folder there has none yet
        Recording r = new Recording(settings());
        r.setName("perfkit");
        r.setToDisk(true);
        r.setDestination(file); // written when the recording stops, or when this JVM exits first
        r.setDumpOnExit(true);
        r.start();
        recording = r;
    }

    private static synchronized void end() {
        if (recording == null) return;
        recording.stop();
        recording.close();
        recording = null;
    }
}
