package perfkit.harness.run;

import perfkit.harness.os.Errors;
import perfkit.harness.process.ForkProtocol;
import perfkit.harness.process.Profiler;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.record.RunFile;
import perfkit.harness.record.RunManifest;
import perfkit.harness.os.Ssh;
import perfkit.harness.process.Supervisor;
import perfkit.harness.measure.TimeSeries;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A run's forks: each repetition in a fresh JVM (same java, same classpath, the study's main class), here or on another
 * host. The study's typed spec (a record; the fork reads it with {@link Fork#spec}) goes over the fork's stdin, and the
 * fork answers with the study's result record ({@link Fork#result(Record)}): both declared once, in Java. A fork's CPU,
 * counter ticks and JIT/GC lines go into the run's time series under its series name, its JVM and files into the manifest.
 */
public final class Forks {
    private final Run run;
    private final Supervisor supervisor;
    private final RunManifest manifest;
    /** What each fork's spec names of itself (its {@code cell} and {@code fork}), by series: its profiles carry them. */
    private final java.util.Map<String, Profiler.Label> labels = new java.util.concurrent.ConcurrentHashMap<>();

    Forks(Run run, Supervisor supervisor, RunManifest manifest) {
        this.run = run;
        this.supervisor = supervisor;
        this.manifest = manifest;
    }

    /**
     * Where a fork runs: here ({@link #HERE}), or as part {@code part} on {@code host} (--place), started there by
     * {@code launcher} (the remote JVM's), where it reads the same spec, writes its files into a folder of its own that
     * come back into this run's folder when it ends, and lives under the part's agent.
     */
    public record Host(String part, Ssh host, Launcher launcher) {
        public static final Host HERE = new Host(null, null, null);
    }

    /** Runs one fork on another host to its end: each line it prints to {@code lines}, its files back in the run's folder. */
    public interface Launcher {
        Launched launch(Run run, String part, Ssh host, String series, List<String> jvmArgs, String stdinLine, Consumer<String> lines)
                throws Exception;
    }

    /** How a fork on another host ended: its exit code (null: its session ended first), and its host. */
    public record Launched(Integer exitCode, PlacedHost host) {}

    /** The host a fork ran on: its clock, and its CPU over a window of this host's epoch ms. */
    public interface PlacedHost {
        /** This host's epoch ms for an instant stamped on that host's clock. */
        long localMs(long remoteEpochMs);
        double hostBusyPercent(long fromMs, long toMs);
        double hostStealPercent(long fromMs, long toMs);
        int hostCores();
    }

    /**
     * A typed fork's result, with the data files it wrote (its latency logs), for a parent that reads them back; and,
     * for a fork on another host, that host: its clock and its CPU.
     */
    public record Forked<T extends Record>(T result, List<RunFile> files, PlacedHost placed) {
        /** This host's epoch ms for an instant the fork stamped on its own clock: the same instant for a fork here. */
        public long localMs(long forkEpochMs) { return placed == null ? forkEpochMs : placed.localMs(forkEpochMs); }
    }

    /** One fork here, to its end; {@code onPhase} hears each phase it enters. */
    public <T extends Record> T one(String series, List<String> jvmArgs, Record spec, double plannedSeconds, Consumer<String> onPhase,
                                    Class<T> resultType) throws Exception {
        return on(Host.HERE, series, jvmArgs, spec, plannedSeconds, onPhase, resultType).result();
    }

    /** One fork where {@code host} says, to its end. */
    public <T extends Record> Forked<T> on(Host host, String series, List<String> jvmArgs, Record spec, double plannedSeconds,
                                           Consumer<String> onPhase, Class<T> resultType) throws Exception {
        String specLine = ForkProtocol.encodeSpec(spec);
        Profiler.Label label = labelIn(specLine);
        if (label != null) labels.put(series, label);
        ForkLines lines = new ForkLines(series, onPhase);
        PlacedHost placed;
        try {
            placed = host.host() == null ? here(series, jvmArgs, specLine, plannedSeconds, lines)
                    : there(host, series, jvmArgs, specLine, plannedSeconds, lines);
        } finally {
            lines.close();
        }
        ObjectNode out = lines.result.get();
        manifest.forkJvm(out.path("jvm"));
        List<RunFile> files = new ArrayList<>();
        for (JsonNode f : out.path("files")) files.add(RunFile.fromJson(f));
        for (RunFile f : files) manifest.addFile(f);
        return new Forked<>(ForkProtocol.result(out, resultType), files, placed);
    }

    /**
     * Several forks at once, one spec each (e.g. one JVM per instance), fork k where {@code hosts} k says (null: all
     * here); returns their results in order, each with its files, or throws the first failure. Only the first fork's
     * phases reach {@code onPhase}.
     */
    public <T extends Record> List<Forked<T>> all(List<String> series, List<String> jvmArgs, List<? extends Record> specs, List<Host> hosts,
                                                  double plannedSeconds, Consumer<String> onPhase, Class<T> resultType) throws Exception {
        List<Host> where = hosts == null ? Collections.nCopies(series.size(), Host.HERE) : hosts;
        int n = series.size();
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "perfkit-fork-waiter");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Forked<T>>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                futures.add(pool.submit(() -> on(where.get(k), series.get(k), jvmArgs, specs.get(k), plannedSeconds, k == 0 ? onPhase : ph -> {}, resultType)));
            }
            List<Forked<T>> results = new ArrayList<>();
            for (Future<Forked<T>> f : futures) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ex ? ex : e;
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /** The cell and fork the fork of {@code series} measures, as its spec names them; null for a JVM that is no fork. */
    public Profiler.Label labelOf(String series) { return labels.get(series); }

    /**
     * A spec's {@code cell} (text), {@code fork} (a number) and {@code profiled} (false keeps its JVM out of
     * {@code --profile}), the components a study's spec names them by; null when it names none of them.
     */
    public static Profiler.Label labelIn(String specLine) {
        try {
            JsonNode spec = perfkit.harness.record.Manifest.JSON.readTree(specLine);
            String cell = spec.path("cell").isTextual() ? spec.path("cell").asText() : null;
            Integer fork = spec.path("fork").canConvertToInt() ? spec.path("fork").asInt() : null;
            boolean profiled = !spec.path("profiled").isBoolean() || spec.path("profiled").asBoolean();
            return cell == null && fork == null && profiled ? null : new Profiler.Label(cell, fork, profiled);
        } catch (IOException e) {
            return null;
        }
    }

    private PlacedHost here(String series, List<String> jvmArgs, String stdinLine, double plannedSeconds, ForkLines lines) throws Exception {
        Supervisor.Child child = supervisor.launchJvm(series, jvmArgs, List.of(ForkProtocol.FLAG, run.dir().toString(), series), stdinLine);
        Process p = child.process();
        run.timeSeries().watchProcess("proc:" + series, p.pid());
        run.progress().phase(series + " starting", plannedSeconds);
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) lines.accept(line);
            lines.check(p.waitFor(), "");
        } finally {
            run.timeSeries().unwatchProcess("proc:" + series);
            supervisor.forget(child);
        }
        return null;
    }

    private PlacedHost there(Host host, String series, List<String> jvmArgs, String stdinLine, double plannedSeconds, ForkLines lines) throws Exception {
        run.progress().phase(series + " starting on " + host.host(), plannedSeconds);
        Launched end = host.launcher().launch(run, host.part(), host.host(), series, jvmArgs, stdinLine, lines);
        if (end.exitCode() == null) throw new IllegalStateException("fork " + series + " on " + host.host() + ": its session ended before it did");
        lines.check(end.exitCode(), " on " + host.host());
        for (JsonNode f : lines.result.get().path("files"))
            if (!Files.isRegularFile(run.dir().resolve(f.path("path").asText())))
                throw new IllegalStateException("fork " + series + " on " + host.host() + " wrote " + f.path("path").asText() + ", which did not come back");
        return end.host();
    }

    /** What a fork says on stdout, line by line: ticks, phases and its result; any other line goes to the terminal. */
    private final class ForkLines implements Consumer<String> {
        private final String series;
        private final Consumer<String> onPhase;
        private final TimeSeries.Counter counter;
        private final JvmActivity.Listener activity;
        final AtomicReference<ObjectNode> result = new AtomicReference<>();
        private volatile Exception unreadable;

        ForkLines(String series, Consumer<String> onPhase) {
            this.series = series;
            this.onPhase = onPhase;
            this.counter = run.timeSeries().counter(series);
            this.activity = JvmActivity.listen(run.timeSeries(), "jvm:" + series);
        }

        @Override
        public void accept(String line) {
            try {
                if (line.startsWith(ForkProtocol.TICK)) {
                    ForkProtocol.Tick t = ForkProtocol.parseTick(line);
                    counter.report(t.count(), t.nanos());
                } else if (line.startsWith(ForkProtocol.PHASE)) {
                    ForkProtocol.Phase ph = ForkProtocol.parsePhase(line);
                    run.timeSeries().phase(ph.name());
                    run.progress().phase(series + " " + ph.name(), ph.plannedSeconds());
                    onPhase.accept(ph.name());
                } else if (line.startsWith(ForkProtocol.RESULT)) {
                    result.set(ForkProtocol.parseResult(line));
                } else if (!activity.accept(line)) {
                    System.err.println(line);
                }
            } catch (IOException | RuntimeException e) {
                if (unreadable == null) unreadable = e;
            }
        }

        /** Fails unless the fork exited 0 with a readable result. */
        void check(int code, String where) throws Exception {
            if (unreadable != null) throw new IllegalStateException("fork " + series + where + " said something unreadable: " + Errors.oneLine(unreadable), unreadable);
            if (code != 0 || result.get() == null)
                throw new IllegalStateException("fork " + series + where + " exited with code " + code + (result.get() == null ? " without a result" : ""));
        }

        void close() {
            run.timeSeries().unwatchCounter(series);
            run.timeSeries().unwatchCounter("jvm:" + series);
            run.timeSeries().phase("between");
        }
    }
}
