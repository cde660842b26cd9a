package perfkit.harness.process;

import perfkit.harness.record.RunFile;

import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class ProfilerTest {
    @TempDir Path runDir;

    @Test
    void aMeasuredPhaseOpensOneWindowPerJvmAndLeavingItClosesIt() throws Exception {
        List<RunFile> listed = new ArrayList<>();
        Profiler profiler = new Profiler(runDir, listed::add);
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            ByteArrayOutputStream stdin = new ByteArrayOutputStream();
            profiler.jvm(new Supervisor.Child("app", sleeper, stdin, false));
            for (String phase : List.of("setup", "warmup", "measure", "measure", "drain", "between")) profiler.phase(phase);
            Path file = runDir.resolve("profiles/app.w1.jfr");
            assertEquals(Profile.prepare() + "\n" + Profile.start(file) + "\n" + Profile.stop() + "\n", stdin.toString(StandardCharsets.UTF_8),
                    "JFR readied at once, one start as the window opens (a repeated phase is the same window), one stop as it closes");
            // a workflow drain is measured too; the JVM's second window gets a file of its own
            profiler.phase("execute");
            profiler.phase("done");
            Files.writeString(file, "written by the JVM");
            profiler.close();
            assertEquals(1, listed.size(), "the second window's file was never written, so only the first is listed");
            RunFile f = listed.get(0);
            assertEquals("profiles/app.w1.jfr", f.path());
            assertEquals("profile", f.kind());
            assertEquals("app", f.series());
            assertTrue(f.windowStartMs() != null && f.windowEndMs() >= f.windowStartMs());
            assertTrue(stdin.toString(StandardCharsets.UTF_8).contains(Profile.start(runDir.resolve("profiles/app.w2.jfr"))));
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    @Test
    void aJvmStartedInsideAWindowJoinsIt() throws Exception {
        Profiler profiler = new Profiler(runDir, f -> { });
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            profiler.phase("measure");
            ByteArrayOutputStream stdin = new ByteArrayOutputStream();
            profiler.jvm(new Supervisor.Child("queues abq-1 fork 2", sleeper, stdin, false));
            assertEquals(Profile.prepare() + "\n" + Profile.start(runDir.resolve("profiles/queues_abq-1_fork_2.w1.jfr")) + "\n",
                    stdin.toString(StandardCharsets.UTF_8));
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    /** A JVM on another host: told the path in its folder there, and its recording fetched as each window closes. */
    @Test
    void aPlacedJvmRecordsInItsFolderThereAndEachRecordingIsFetchedAsItsWindowCloses() throws Exception {
        List<RunFile> listed = new ArrayList<>();
        Profiler profiler = new Profiler(runDir, listed::add, name -> name.equals("app/fork1") ? new Profiler.Label("app", 1, true) : null);
        List<String> told = new ArrayList<>(), fetched = new ArrayList<>();
        profiler.jvm(new Profiler.Target() {
            @Override public String name() { return "app/fork1"; }
            @Override public boolean alive() { return true; }
            @Override public void tell(String line) { told.add(line); }
            @Override public String pathFor(Path local) { return "/srv/perfkit-part-1/profiles/" + local.getFileName(); }
            @Override public void fetch(Path local) { fetched.add(runDir.relativize(local).toString()); }
        });
        profiler.phase("measure");
        assertEquals(List.of(), fetched, "nothing to fetch while the window is open");
        profiler.phase("between");
        assertEquals(List.of(Profile.prepare(), Profile.start("/srv/perfkit-part-1/profiles/app_fork1.w1.jfr"), Profile.stop()), told);
        assertEquals(List.of("profiles/app_fork1.w1.jfr"), fetched, "fetched as the window closed, into the run's own path");
        Files.createDirectories(runDir.resolve("profiles"));
        Files.writeString(runDir.resolve("profiles/app_fork1.w1.jfr"), "came home");
        profiler.close();
        assertEquals(List.of("profiles/app_fork1.w1.jfr"), listed.stream().map(RunFile::path).toList());
        assertEquals("app", listed.get(0).cell(), "the cell its fork's spec names");
        assertEquals(1, listed.get(0).fork());
    }

    @Test
    void aForksLabelIsTheCellAndForkItsSpecNames() {
        assertEquals(new Profiler.Label("disruptor-1/yielding", 2, true),
                perfkit.harness.run.Forks.labelIn("{\"cell\":\"disruptor-1/yielding\",\"variant\":\"disruptor-1\",\"fork\":2}"));
        assertEquals(new Profiler.Label("abq-1", 1, false), perfkit.harness.run.Forks.labelIn("{\"cell\":\"abq-1\",\"fork\":1,\"profiled\":false}"));
        assertNull(perfkit.harness.run.Forks.labelIn("{\"stack\":\"mvc\",\"rate\":2}"), "names nothing: a service, say");
        assertNull(perfkit.harness.run.Forks.labelIn("not json"));
    }

    @Test
    void aForkWhoseSpecSaysUnprofiledIsNeverToldToRecord() throws Exception {
        Profiler profiler = new Profiler(runDir, f -> { }, name -> name.equals("abq-1/fork1/plain") ? new Profiler.Label("abq-1", 1, false) : null);
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            ByteArrayOutputStream plain = new ByteArrayOutputStream(), profiled = new ByteArrayOutputStream();
            profiler.jvm(new Supervisor.Child("abq-1/fork1/plain", sleeper, plain, false));
            profiler.jvm(new Supervisor.Child("abq-1/fork1", sleeper, profiled, false));
            profiler.phase("measure");
            profiler.phase("between");
            assertEquals("", plain.toString(StandardCharsets.UTF_8), "the plain fork measures what profiling costs: it records nothing");
            assertTrue(profiled.toString(StandardCharsets.UTF_8).contains(Profile.stop()));
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    /** The plain twin of a recorded measurement: the same JVM, told nothing while held, and recorded again after. */
    @Test
    void aHeldProfilerRecordsNoWindowAndClosesTheOpenOne() throws Exception {
        List<String> told = new ArrayList<>();
        Profiler profiler = new Profiler(runDir, f -> { });
        profiler.jvm(new Profiler.Target() {
            @Override public String name() { return "kafka-broker"; }
            @Override public boolean alive() { return true; }
            @Override public void tell(String line) { told.add(line); }
        });
        profiler.phase("measure");
        profiler.hold(true);
        assertEquals(List.of(Profile.prepare(), Profile.start(runDir.resolve("profiles/kafka-broker.w1.jfr")), Profile.stop()), told,
                "holding closes the window that was open");
        profiler.phase("between");
        profiler.phase("measure");
        profiler.phase("between");
        assertEquals(3, told.size(), "a window while held records nothing");
        profiler.hold(false);
        profiler.phase("measure");
        assertEquals(Profile.start(runDir.resolve("profiles/kafka-broker.w2.jfr")), told.get(3), "recorded again from the next window");
    }

    /** The child's side, in this JVM: the commands start and stop a JFR recording whose file holds method samples. */
    @Test
    void theCommandsRecordThisJvmBetweenStartAndStop() throws Exception {
        Path file = runDir.resolve("self.jfr");
        assertFalse(Profile.command("{\"a\":1}"), "any other line is not a profile command");
        assertTrue(Profile.command(Profile.prepare()));
        assertTrue(Profile.command(Profile.start(file)));
        long h = 0, end = System.nanoTime() + 700_000_000L;
        while (System.nanoTime() < end) h += Long.toString(h).hashCode();
        assertTrue(Profile.command(Profile.stop()));
        assertTrue(Files.size(file) > 0, "written when the recording stopped (" + h + ")");
        long samples = RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals("jdk.ExecutionSample")).count();
        assertTrue(samples > 10, samples + " method samples in 0.7 s");
        // a run is published: the recording names no process, environment variable, property or path of this machine
        List<String> names = RecordingFile.readAllEvents(file).stream().map(e -> e.getEventType().getName()).distinct().toList();
        for (String event : Profile.PRIVATE_EVENTS) assertFalse(names.contains(event), event + " in " + names);
        byte[] bytes = Files.readAllBytes(file);
        for (String folder : List.of(runDir.toString(), System.getProperty("user.home") + "/", System.getProperty("java.home")))
            assertFalse(new String(bytes, StandardCharsets.ISO_8859_1).contains(folder), "the recording names " + folder);
        assertTrue(names.contains("jdk.GarbageCollection") || names.contains("jdk.ObjectAllocationSample") || names.contains("jdk.CPULoad"),
                "the rest of the profile settings still record: " + names);
    }

    /** A fork that has done its work ends its own recording, whole, before it exits; a window asked for later records nothing. */
    @Test
    void aFinishedForkEndsItsRecordingAndStartsNoOther() throws Exception {
        Path file = runDir.resolve("fork.jfr"), late = runDir.resolve("late.jfr");
        assertTrue(Profile.command(Profile.start(file)));
        try {
            Profile.finish();
            assertTrue(Files.size(file) > 0, "written when the fork finished, not left to its exit");
            assertTrue(Profile.command(Profile.start(late)));
            assertTrue(Profile.command(Profile.stop()));
            assertFalse(Files.exists(late), "a window opened after the work ended records nothing");
        } finally {
            Profile.finished = false; // one JVM runs every test of this class
        }
    }
}
