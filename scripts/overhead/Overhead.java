///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.openjdk.jmh:jmh-core:1.37
//DEPS org.openjdk.jmh:jmh-generator-annprocess:1.37
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//DESCRIPTION JMH: what one latency sample costs the harness's recording path
package perfkit.overhead;

import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import perfkit.harness.cli.Cli;
import perfkit.harness.cli.Opt;
import perfkit.harness.measure.LatencyRecorder;
import perfkit.harness.run.Run;
import perfkit.harness.run.Study;
import perfkit.harness.run.Table;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The harness measures itself: time and bytes per latency sample on the recording path that every
 * study's hot loop calls ({@link LatencyRecorder#record}). Targets: median <= 30 ns and 0 bytes per sample.
 * Two comparison points put the number in context: the same call plus reading the clock, and the
 * naive design (two HdrHistogram Recorders) the harness avoids.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Overhead {
    static final double TARGET_NS = 30, TARGET_BYTES = 0.01; // "0 bytes": under one byte per hundred samples
    /** JMH's own result file, as {@code -rf json -rff jmh.json} writes it: jmh.morethan.me and other visualisers load it. */
    static final String JMH_JSON = "jmh.json";

    static final Opt<Integer> FORKS = Opt.integer("forks", 3, 1L, 1, 100, "JMH forks (fresh JVMs)").map(Math::toIntExact);
    static final Opt<Integer> WARMUP_ITERATIONS = Opt.integer("warmup-iterations", 5, 3L, 0, 1000, "JMH warm-up iterations per fork, excluded").map(Math::toIntExact);
    static final Opt<Integer> ITERATIONS = Opt.integer("iterations", 10, 5L, 1, 1000, "JMH measurement iterations per fork").map(Math::toIntExact);
    static final Opt<Double> ITERATION_TIME = Opt.seconds("iteration-time", 1, 1.0, 0.01, "seconds per iteration");

    static final Cli CLI = new Cli("overhead", "JMH benchmark of the harness's recording path: ns and bytes allocated per latency sample\n"
            + "(targets: median <= 30 ns, 0 bytes). Results go to a normal run directory.")
            .with(FORKS, WARMUP_ITERATIONS, ITERATIONS, ITERATION_TIME);

    /** Latencies spread over several histogram buckets, so the benchmark does not hit one hot counter. */
    private final long[] latencies = new long[1024];
    private int next;
    private final LatencyRecorder recorder = new LatencyRecorder();
    private final Recorder naiveCorrected = new Recorder(3), naiveUncorrected = new Recorder(3);

    @Setup
    public void fill() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < latencies.length; i++) latencies[i] = 1_000 + (long) Math.exp(random.nextDouble() * 16);
    }

    /** The target: what a study's consumer thread pays per sample, given the three timestamps. */
    @Benchmark
    public void record() {
        long end = latencies[next++ & 1023];
        recorder.record(0, 50, end);
    }

    /** The same plus reading the end time from the clock, as a consumer does (context, not the target). */
    @Benchmark
    public void recordWithClock() {
        long end = System.nanoTime();
        recorder.record(end - latencies[next++ & 1023], end - 50, end);
    }

    /** The design the harness avoids: two HdrHistogram Recorders, each with its own phaser. */
    @Benchmark
    public void twoHdrRecorders() {
        long end = latencies[next++ & 1023];
        naiveCorrected.recordValue(end);
        naiveUncorrected.recordValue(end - 50);
    }

    public static void main(String[] args) {
        Study.main(args, CLI, Overhead.class, Overhead::measure, null);
    }

    static void measure(Run run) throws Exception {
        int forks = FORKS.in(run.typed());
        int warmups = WARMUP_ITERATIONS.in(run.typed()), iterations = ITERATIONS.in(run.typed());
        double seconds = ITERATION_TIME.in(run.typed());
        run.mode("jmh");
        run.variants(List.of("record", "recordWithClock", "twoHdrRecorders"));
        run.measurement(warmups * seconds, iterations * seconds, forks, "jmh-fork");
        run.notes().put("targets", "record: median <= " + TARGET_NS + " ns per sample and <= " + TARGET_BYTES + " bytes per sample (i.e. 0)");
        run.notes().put("bytesPerSample", "JMH GCProfiler gc.alloc.rate.norm per iteration");
        run.addFile("jmh.log", "log", "JMH's own report");
        run.addFile(JMH_JSON, "other", "JMH's own results as JSON (-rf json), for JMH's visualisers");

        run.progress().phase("JMH: 3 benchmarks x " + forks + " fork(s)", 3.0 * forks * (warmups + iterations) * seconds);
        TimeValue t = TimeValue.milliseconds((long) (seconds * 1000));
        Collection<RunResult> results = new Runner(new OptionsBuilder()
                .include(Overhead.class.getName() + "\\.")
                .forks(forks).warmupIterations(warmups).warmupTime(t).measurementIterations(iterations).measurementTime(t)
                .addProfiler(GCProfiler.class)
                .output(run.dir().resolve("jmh.log").toString())
                .resultFormat(ResultFormatType.JSON).result(run.dir().resolve(JMH_JSON).toString())
                .build()).run();

        List<String> verdicts = new ArrayList<>();
        try (Table raw = new Table(run, "jmh.csv", "one row per JMH iteration: ns and bytes allocated per sample",
                "cell", "benchmark", "fork", "iteration", "ns_per_sample", "bytes_per_sample");
             Table summary = new Table(run, "summary.csv", "median over all iterations and forks, with the targets",
                     "cell", "benchmark", "median_ns", "min_ns", "max_ns", "median_bytes", "target_ns", "target_bytes", "meets_target")) {
            for (RunResult rr : results) {
                String name = rr.getParams().getBenchmark().substring(rr.getParams().getBenchmark().lastIndexOf('.') + 1);
                List<Double> ns = new ArrayList<>(), bytes = new ArrayList<>();
                int fork = 0;
                for (BenchmarkResult br : rr.getBenchmarkResults()) {
                    fork++;
                    int it = 0;
                    for (IterationResult ir : br.getIterationResults()) {
                        Result<?> alloc = ir.getSecondaryResults().get("gc.alloc.rate.norm");
                        double b = alloc == null ? Double.NaN : alloc.getScore();
                        raw.write(Table.row().set("cell", name).set("benchmark", name).set("fork", fork).set("iteration", ++it)
                                .set("ns_per_sample", ir.getPrimaryResult().getScore()).set("bytes_per_sample", b));
                        ns.add(ir.getPrimaryResult().getScore());
                        bytes.add(b);
                    }
                }
                double medianNs = median(ns), medianBytes = median(bytes);
                boolean target = name.equals("record");
                boolean meets = medianNs <= TARGET_NS && medianBytes <= TARGET_BYTES;
                summary.write(Table.row().set("cell", name).set("benchmark", name).set("median_ns", medianNs)
                        .set("min_ns", ns.stream().mapToDouble(d -> d).min().orElse(Double.NaN))
                        .set("max_ns", ns.stream().mapToDouble(d -> d).max().orElse(Double.NaN)).set("median_bytes", medianBytes)
                        .set("target_ns", target ? TARGET_NS : null).set("target_bytes", target ? TARGET_BYTES : null)
                        .set("meets_target", target ? meets : null));
                verdicts.add(String.format(Locale.ROOT, "%-16s median %7.1f ns/sample, %.3f bytes/sample%s", name, medianNs, medianBytes,
                        target ? (meets ? "  (meets target)" : "  (MISSES target: <= 30 ns, 0 bytes)") : ""));
                if (target) run.notes().put("recordMeetsTarget", meets);
            }
        }
        run.progress().clear();
        verdicts.forEach(System.err::println);
    }

    static double median(List<Double> xs) {
        List<Double> s = xs.stream().filter(d -> !d.isNaN()).sorted().toList();
        if (s.isEmpty()) return Double.NaN;
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
}
