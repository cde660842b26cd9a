package perfkit.harness.process;

import perfkit.harness.measure.TimeSeries;
import perfkit.harness.record.RunFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@code --profile}: each JVM the run starts as a child (forks and services: the JVMs under test; the load driver and
 * the watchdogs are programs, not children of this kind) records itself with JDK Flight Recorder over each measured
 * window, and only then: one file per JVM and window in {@code profiles/}, listed in the manifest as kind
 * {@code profile}, its series the JVM's name and its window the epoch ms the recording was asked to cover. A window
 * is a stretch of the time series in a measured phase ({@code measure}; a workflow drain's {@code execute}).
 * A JVM placed on another host records there, into its folder, and each recording comes home when its window closes.
 */
public final class Profiler {
    public static final String DIR = "profiles";
    static final Set<String> MEASURED = Set.of("measure", "execute");

    private final Path runDir;
    private final Consumer<RunFile> addFile;
    private final java.util.function.Function<String, Label> labels;
    private final List<Target> jvms = new ArrayList<>();
    private final Map<Target, Open> open = new LinkedHashMap<>();
    private final Map<String, Integer> windows = new HashMap<>();
    private final List<RunFile> asked = new ArrayList<>();
    private boolean measuring;
    /** A plain twin is being measured: windows opened now record nothing ({@link #hold}). */
    private boolean held;

    private record Open(Path file, long startMs) {}

    /** A JVM under test that records itself when told: a child here ({@link Supervisor.Child}), or a placed part's JVM. */
    public interface Target {
        String name();

        boolean alive();

        /** Puts a profile command ({@link Profile}) on the JVM's stdin. */
        void tell(String line) throws IOException;

        /** Where the JVM writes the recording that belongs at {@code local} in the run: there itself, for a JVM here. */
        default String pathFor(Path local) { return local.toAbsolutePath().toString(); }

        /** Its window closed and it was told to write {@code local}'s recording: bring it into the run (here: it is there). */
        default void fetch(Path local) {}
    }

    /**
     * What a fork's spec says of it: the cell and fork it measures (a profile's own, for a reader; null when it names
     * none), and whether to record it at all (false: the plain fork beside a profiled one, to measure what profiling costs).
     */
    public record Label(String cell, Integer fork, boolean profiled) {}

    public Profiler(Path runDir, Consumer<RunFile> addFile) {
        this(runDir, addFile, name -> null);
    }

    /** The same, each recording listed with the cell and fork {@code labels} gives its JVM's name (null: none). */
    public Profiler(Path runDir, Consumer<RunFile> addFile, java.util.function.Function<String, Label> labels) {
        this.runDir = runDir;
        this.addFile = addFile;
        this.labels = labels;
    }

    /**
     * Profiles the JVMs {@code supervisor} starts over the windows {@code timeSeries} marks, each labelled by
     * {@code labels}; listed by {@code onFinish}, after they stop. Returns the profiler, to {@link #hold} it.
     */
    public static Profiler attach(Path runDir, Consumer<RunFile> addFile, java.util.function.Function<String, Label> labels, Supervisor supervisor,
                              TimeSeries timeSeries, Consumer<Runnable> onFinish) {
        Profiler p = new Profiler(runDir, addFile, labels);
        supervisor.onJvm(p::jvm);
        timeSeries.onPhase(p::phase);
        onFinish.accept(p::close);
        return p;
    }

    /** A JVM under test has started; one that starts inside a window (a fork of a running step) joins it. */
    public synchronized void jvm(Target c) {
        Label label = labels.apply(c.name());
        if (label != null && !label.profiled()) return;
        jvms.add(c);
        try {
            tell(c, Profile.prepare());
        } catch (IOException stopping) {
            return; // it exited at once
        }
        if (measuring && !held) begin(c);
    }

    /**
     * While held, no window records: the plain twin of a recorded measurement runs with every JVM under test as it
     * is, only not recording. Holding closes any window that is open; letting go records from the next measured phase.
     */
    public synchronized void hold(boolean on) {
        held = on;
        if (on) for (Target c : List.copyOf(open.keySet())) end(c);
    }

    /** The time series entered {@code phase}: a window opens on entering a measured phase and closes on leaving it. */
    public synchronized void phase(String phase) {
        boolean now = MEASURED.contains(phase);
        if (now == measuring) return;
        measuring = now;
        jvms.removeIf(c -> !c.alive() && !open.containsKey(c));
        for (Target c : List.copyOf(jvms)) {
            if (!now) end(c);
            else if (!held) begin(c);
        }
    }

    /**
     * Closes every window and lists the recordings that were written: call it once the JVMs have stopped (a JVM that
     * exits while recording writes its file on the way out; one killed outright leaves none, and none is listed).
     */
    public synchronized void close() {
        for (Target c : List.copyOf(open.keySet())) end(c);
        java.util.Set<String> without = new java.util.TreeSet<>();
        for (RunFile f : asked) {
            if (Files.isRegularFile(runDir.resolve(f.path()))) addFile.accept(f);
            else without.add(f.series());
        }
        if (!without.isEmpty()) System.err.println("perfkit: --profile kept no recording of " + String.join(", ", without)
                + " (its JVM could not profile itself, had ended its work before the window opened, or was killed before it wrote one)");
        asked.clear();
    }

    private void begin(Target c) {
        if (!c.alive()) return;
        // counted by the file's name, so two JVMs whose names clean up alike never write one file
        String safe = c.name().replaceAll("[^A-Za-z0-9._-]+", "_");
        int n = windows.merge(safe, 1, Integer::sum);
        Path file = runDir.resolve(DIR).resolve(safe + ".w" + n + ".jfr");
        try {
            Files.createDirectories(file.getParent());
            tell(c, Profile.start(c.pathFor(file)));
            open.put(c, new Open(file, System.currentTimeMillis()));
        } catch (IOException e) {
            System.err.println("perfkit: cannot profile " + c.name() + ": " + e.getMessage()); // its stdin closed: it is stopping
        }
    }

    private void end(Target c) {
        Open o = open.remove(c);
        if (o == null) return;
        try {
            tell(c, Profile.stop());
        } catch (IOException stopping) {
            // it exited or is exiting: it writes its recording on the way out
        }
        c.fetch(o.file());
        Label label = labels.apply(c.name());
        asked.add(new RunFile(runDir.relativize(o.file()).toString(), "profile",
                "JDK Flight Recorder recording (settings: profile) of " + c.name() + " over one measured window", label == null ? null : label.cell(),
                c.name(), label == null ? null : label.fork(), null, o.startMs(), System.currentTimeMillis()));
    }

    private static void tell(Target c, String line) throws IOException {
        c.tell(line);
    }
}
