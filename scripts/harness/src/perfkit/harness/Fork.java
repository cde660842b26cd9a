package perfkit.harness;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * The child side of a repetition: a fresh JVM started by {@link Run#fork}. It talks to the parent through
 * tagged stdout lines (progress ticks, phase changes, one final result) and writes its own data files into
 * the run directory. On SIGTERM or Ctrl-C its shutdown hook flushes every latency log it opened.
 */
public final class Fork {
    static final String FLAG = "--perfkit-fork";
    static final String TICK = "PERFKIT:TICK ", PHASE = "PERFKIT:PHASE ", RESULT = "PERFKIT:RESULT ";

    private final Path dir;
    private final String series;
    private final Map<String, String> params;
    private final ObjectNode result = Manifest.newObject();
    private final List<LatencyLog> logs = new CopyOnWriteArrayList<>();

    private Fork(Path dir, String series, Map<String, String> params) {
        this.dir = dir;
        this.series = series;
        this.params = params;
        result.put("series", series);
        result.putArray("files");
        var jvmArgs = result.putArray("jvmInputArguments");
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().forEach(a -> jvmArgs.add(Manifest.jvmArgument(a)));
    }

    static void main(String[] args, Study.ForkBody body) {
        try {
            Map<String, String> params = Manifest.JSON.readValue(args[3], new TypeReference<Map<String, String>>() {});
            Fork fork = new Fork(Path.of(args[1]), args[2], params);
            Runtime.getRuntime().addShutdownHook(new Thread(fork::closeLogs, "perfkit-fork-shutdown"));
            body.run(fork);
            fork.closeLogs();
            System.out.println(RESULT + Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(fork.result));
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            System.err.println("fork failed: " + Study.oneLine(t));
            t.printStackTrace();
            System.exit(1);
        }
    }

    public Path dir() { return dir; }

    /** The run's scratch space, shared with the parent and deleted when the run ends. */
    public Path scratchDir() throws java.io.IOException { return java.nio.file.Files.createDirectories(dir.resolve(Run.SCRATCH_DIR)); }
    public String series() { return series; }
    public String param(String name) { return params.get(name); }
    public long integer(String name) { return Long.parseLong(params.get(name)); }
    public double seconds(String name) { return Double.parseDouble(params.get(name)); }

    /** What this repetition reports back; the study fills it in. */
    public ObjectNode result() { return result; }

    public void phase(String name, double plannedSeconds) {
        System.out.printf(Locale.ROOT, "%s%s %.3f%n", PHASE, name, plannedSeconds);
    }

    /** Waits {@code seconds} while reporting the cumulative count to the parent once a second. */
    public void await(double seconds, LongSupplier cumulative) throws InterruptedException {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            Thread.sleep(Math.max(1, Math.min(1000, left / 1_000_000)));
            System.out.println(TICK + cumulative.getAsLong());
        }
    }

    /** Opens the two interval logs of a latency series in the run directory and lists them in the result. */
    public LatencyLog latencyLog(String name, String description) throws Exception {
        LatencyLog log = new LatencyLog(dir, name, description, Boolean.parseBoolean(params.getOrDefault("keep-warmup", "false")));
        logs.add(log);
        ArrayNode files = (ArrayNode) result.get("files");
        files.addObject().put("path", name + LatencyLog.CORRECTED).put("kind", "hlog")
                .put("description", description + "; corrected for coordinated omission (from intended start), ns");
        files.addObject().put("path", name + LatencyLog.UNCORRECTED).put("kind", "hlog")
                .put("description", description + "; uncorrected (from actual start), ns");
        return log;
    }

    private void closeLogs() {
        logs.forEach(LatencyLog::close);
    }
}
