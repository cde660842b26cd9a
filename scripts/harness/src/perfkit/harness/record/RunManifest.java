package perfkit.harness.record;

import perfkit.harness.os.Disk;
import perfkit.harness.measure.TimeSeries;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/** The content of one run's {@code run.json}, and every change to it, each written atomically at once. */
public final class RunManifest {
    private final Path file;
    private final ObjectNode m;

    public RunManifest(Path dir, String study, Map<String, String> params) {
        this.file = dir.resolve(Manifest.FILE_NAME);
        this.m = Manifest.newObject();
        m.put("schemaVersion", Manifest.SCHEMA_VERSION);
        m.put("study", study);
        m.put("runId", dir.getFileName().toString());
        m.put("mode", "default");
        m.put("tag", params.getOrDefault("tag", ""));
        m.put("quick", Boolean.parseBoolean(params.getOrDefault("quick", "false")));
        m.putArray("variants");
        m.set("params", Manifest.redactedParams(params));
        m.put("status", RunLayout.RUNNING);
        m.putNull("error");
        m.put("startedAt", Instant.now().toString());
        m.putNull("endedAt");
        m.put("pid", ProcessHandle.current().pid());
        m.set("host", HostInfo.host());
        m.set("jvm", HostInfo.jvm());
        m.set("kit", HostInfo.kit(RunLayout.kitRoot()));
        ObjectNode meas = m.putObject("measurement");
        meas.put("warmupSeconds", 0);
        meas.put("measureSeconds", 0);
        meas.put("repetitions", 1);
        meas.put("repetitionKind", "none");
        meas.put("warmupExcluded", !Boolean.parseBoolean(params.getOrDefault("keep-warmup", "false")));
        m.put("valid", true);
        m.putArray("invalidReasons");
        m.putObject("notes");
        m.putArray("files");
    }

    public synchronized ObjectNode notes() { return (ObjectNode) m.get("notes"); }

    /** A part of the run on another host (schema field {@code placement}); the entry may be completed later, then {@link #write()}. */
    public synchronized void placed(ObjectNode part) {
        (m.has("placement") ? (ArrayNode) m.get("placement") : m.putArray("placement")).add(part);
        write();
    }

    public synchronized String status() { return Manifest.statusOf(m); }

    public synchronized void mode(String mode) {
        m.put("mode", mode);
        write();
    }

    public synchronized void variants(List<String> variants) {
        ArrayNode a = m.putArray("variants");
        variants.forEach(a::add);
        write();
    }

    public synchronized void measurement(double warmupSeconds, double measureSeconds, long repetitions, String repetitionKind) {
        ObjectNode meas = (ObjectNode) m.get("measurement");
        meas.put("warmupSeconds", warmupSeconds);
        meas.put("measureSeconds", measureSeconds);
        meas.put("repetitions", repetitions);
        meas.put("repetitionKind", repetitionKind);
        write();
    }

    public synchronized void addFile(RunFile f) {
        ArrayNode files = (ArrayNode) m.get("files");
        for (JsonNode e : files) if (e.get("path").asText().equals(f.path())) return;
        files.add(f.toJson());
    }

    public synchronized void invalid(String reason) {
        m.put("valid", false);
        ((ArrayNode) m.get("invalidReasons")).add(reason);
        write();
    }

    /**
     * Forks run with other JVM options than the run itself, and with --java even another JVM: the manifest shows
     * the measuring JVM beside its own ({@code jvm.fork}, and its flags as {@code jvm.forkInputArguments}).
     */
    public synchronized void forkJvm(JsonNode forkJvm) {
        ObjectNode jvm = (ObjectNode) m.get("jvm");
        if (forkJvm.isObject() && !jvm.has("fork")) {
            jvm.set("forkInputArguments", forkJvm.path("inputArguments"));
            ObjectNode fork = jvm.putObject("fork");
            for (String k : List.of("vendor", "version", "vmName", "vmVersion", "home")) if (forkJvm.has(k)) fork.set(k, forkJvm.get(k));
            write();
        }
    }

    /**
     * Where the run is (the run's Progress): {@code done} of {@code total} units, and when it should end ({@code endsAt},
     * null once all are done). Read by ./bench list and show while the run goes, and kept once it ends.
     */
    public synchronized void progress(String unit, int done, int total, Instant endsAt) {
        ObjectNode p = m.putObject("progress");
        p.put("unit", unit);
        p.put("done", done);
        p.put("total", total);
        p.put("updatedAt", Instant.now().toString());
        if (endsAt != null) p.put("endsAt", endsAt.toString()); else p.putNull("endsAt");
        write();
    }

    public synchronized void end(String status, String error) {
        registerLeftoverFiles(file.getParent(), m);
        m.put("status", status);
        if (error == null) m.putNull("error"); else m.put("error", Manifest.redact(error));
        m.put("endedAt", Instant.now().toString());
        write();
    }

    public synchronized void write() {
        try {
            Manifest.writeAtomically(file, m);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write manifest " + file + ": " + Disk.reason(e), e);
        }
    }

    /** Files a fork wrote but never reported (it was stopped first) still belong in the listing. */
    public static void registerLeftoverFiles(Path dir, ObjectNode manifest) {
        ArrayNode files = manifest.withArray("files");
        Set<String> known = new HashSet<>();
        files.forEach(f -> known.add(f.path("path").asText()));
        try (Stream<Path> all = Files.walk(dir)) {
            all.filter(Files::isRegularFile)
                    .map(p -> dir.relativize(p).toString())
                    .filter(p -> !p.equals(Manifest.FILE_NAME) && !p.endsWith(".tmp") && !p.startsWith(".") && !p.startsWith(RunLayout.SCRATCH_DIR + "/")
                            && !known.contains(p))
                    .sorted()
                    .forEach(p -> files.add(RunFile.of(p, kindOf(p), "written before the run ended; may be partial").toJson()));
        } catch (IOException | UncheckedIOException ignored) {
            // listing is best effort; the data itself is on disk
        }
    }

    public static String kindOf(String path) {
        if (path.endsWith(".hlog")) return "hlog";
        if (path.equals(TimeSeries.FILE_NAME)) return "timeseries";
        if (path.endsWith(".csv")) return "table";
        if (path.equals("error.txt") || path.endsWith(".log")) return "log";
        return "other";
    }
}
