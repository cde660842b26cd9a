package perfkit.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import perfkit.harness.CpuSampler;
import perfkit.harness.Run;
import perfkit.harness.Table;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The parent side: for each system, start from 1 instance and double until a step misses the SLO (or is
 * invalid), then bisect between the last step that met it and the first that did not. The capacity is the
 * largest instance count that met the SLO. Stops early at the instance limit, when the machine saturates,
 * or when the next step would not fit in the time budget.
 */
final class Sweep {
    static final String CHRONICLE_JVM_FLAGS = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
            + "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED -Dchronicle.analytics.disable=true";
    static final double SATURATED = 0.95;

    private final Run run;
    private final long rate, maxInstances;
    private final double slo, warmup, measure, drain, budget;
    private final long startNanos = System.nanoTime();
    private final List<String> forkJvmArgs = new ArrayList<>();
    private final String topicPrefix;
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final CpuSampler cpu = CpuSampler.forThisMachine();
    private Table sweep;
    private String brokerAddress;
    private long brokerPid = -1;

    private Sweep(Run run) throws Exception {
        this.run = run;
        rate = run.integer("rate");
        maxInstances = run.integer("max-instances");
        slo = run.seconds("slo-ms");
        warmup = run.seconds("warmup");
        measure = run.seconds("measure");
        drain = run.seconds("drain-timeout");
        budget = run.seconds("budget");
        forkJvmArgs.addAll(split(CHRONICLE_JVM_FLAGS));
        forkJvmArgs.add("-Djna.tmpdir=" + run.scratchDir().resolve("jna"));
        forkJvmArgs.addAll(split(run.param("fork-jvm-args")));
        topicPrefix = "perfkit-" + run.dir().getFileName();
    }

    static List<String> split(String s) {
        return s.isBlank() ? List.of() : Arrays.asList(s.trim().split("\\s+"));
    }

    static void run(Run run) throws Exception {
        List<String> systems = Arrays.stream(run.param("systems").split(",")).map(String::trim).distinct().toList();
        run.variants(systems);
        run.measurement(run.seconds("warmup"), run.seconds("measure"), 1, "step");
        describe(run);
        Sweep s = new Sweep(run);
        try (Table steps = new Table(run, "sweep.csv", "one row per sweep step: latency (ms), delivery checks, achieved rate, CPU per process",
                "system", "instances", "isolation", "target_rate", "achieved_rate", "sent", "received", "lost", "duplicates", "out_of_order",
                "bad_hops", "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms", "p50_uncorrected_ms", "p99_uncorrected_ms",
                "p99_9_uncorrected_ms", "max_uncorrected_ms", "hop1_p99_9_ms", "cpu_broker_pct", "cpu_app_pct", "cpu_driver_pct",
                "cpu_system_pct", "steal_pct", "valid", "invalid_reason", "meets_slo");
             Table capacity = new Table(run, "capacity.csv", "capacity at SLO per system: the largest instance count whose p99.9 met the SLO",
                     "system", "capacity_instances", "capacity_msgs_per_s", "slo_ms", "steps", "stop_reason")) {
            s.sweep = steps;
            List<String> summary = new ArrayList<>();
            for (String system : systems) {
                String[] result = s.sweepSystem(system);
                capacity.row(system, Long.parseLong(result[0]), Long.parseLong(result[0]) * s.rate, s.slo, Long.parseLong(result[1]), result[2]);
                summary.add(String.format(Locale.ROOT, "%-10s capacity %s instance(s) at p99.9 <= %.0f ms (%s)", system, result[0], s.slo, result[2]));
            }
            run.progress().clear();
            summary.forEach(System.err::println);
        }
    }

    static void describe(Run run) {
        ObjectNode n = run.notes();
        n.put("chain", "driver -> 5 services -> driver over 6 topics (Kafka) or 6 queues (Chronicle Queue); each service increments the message's counter");
        n.put("message", "28 bytes: intended send time (ns), actual send time (ns), sequence number, hop counter");
        n.put("latency", "end-to-end from the intended send (corrected) and from the actual send (uncorrected, what the original measured); first hop likewise");
        n.put("delivery", "the driver checks every message arrives exactly once, in order, after 5 services; any loss, duplicate or reorder makes a step invalid");
        n.put("backoff", run.param("backoff").equals("busy-spin") ? "idle services busy-spin" : "an idle service parks for 1/8 of the message interval (the original's policy)");
        n.put("isolation", run.param("isolation").equals("jvm") ? "one JVM per instance (closer to the original)" : "all instances of a step share one JVM, a thread group each");
        n.put("kafka", run.param("bootstrap-servers").isBlank()
                ? "embedded single-node KRaft broker (kafka_2.13 4.3.1) in its own JVM on 127.0.0.1, logs in the run's scratch folder, removed afterwards; acks=" + run.param("acks") + ", replication 1"
                : "external cluster " + run.param("bootstrap-servers") + ", acks=" + run.param("acks") + ", replication factor " + run.param("replication-factor"));
        n.put("chronicle", "Chronicle Queue 2026.4, default settings, queues in the run's scratch folder and removed afterwards; analytics disabled");
        n.put("capacityRule", "double the instances until a step misses the SLO or is invalid, then bisect; capacity = largest count that met it");
        n.put("saturation", "a step is saturated when system CPU reaches " + (int) (SATURATED * 100) + "% of all cores; the sweep stops growing there");
    }

    /** Returns {capacity, steps, stop reason}. */
    private String[] sweepSystem(String system) throws Exception {
        Process broker = null;
        String bootstrap = run.param("bootstrap-servers");
        try {
            if (system.equals("kafka")) {
                if (bootstrap.isBlank()) {
                    broker = startBroker();
                    bootstrap = brokerAddress;
                } else {
                    KafkaTransport.checkReachable(bootstrap, 15);
                    String external = bootstrap;
                    run.onFinish(() -> {
                        try { KafkaTransport.deleteTopicsWithPrefix(external, topicPrefix); }
                        catch (Exception e) { throw new IllegalStateException("could not delete topics " + topicPrefix + "* on " + external + ": " + e.getMessage()); }
                    });
                }
            }
            long good = 0, steps = 0, n = 1;
            Long bad = null;
            String stop;
            while (true) {
                double elapsed = (System.nanoTime() - startNanos) / 1e9;
                if (elapsed + warmup + measure + drain + 15 > budget) { stop = "time budget of " + (long) budget + " s reached"; break; }
                Step s = step(system, (int) n, bootstrap);
                steps++;
                if (s.meets) {
                    good = n;
                    if (s.saturated) { stop = "machine saturated at " + n + " instance(s)"; break; }
                    if (n >= maxInstances) { stop = "reached --max-instances " + maxInstances; break; }
                } else {
                    bad = n;
                }
                if (bad != null && bad - good <= 1) {
                    stop = good == 0 ? "1 instance already misses the SLO" : "found the wall: " + bad + " instance(s) miss the SLO";
                    break;
                }
                n = bad == null ? Math.min(2 * n, maxInstances) : (good + bad) / 2;
            }
            return new String[]{String.valueOf(good), String.valueOf(steps), stop};
        } finally {
            if (broker != null) {
                run.stopService("kafka-broker", broker);
                brokerPid = -1;
            }
        }
    }

    private Process startBroker() throws Exception {
        Path kafka = run.scratchDir().resolve("kafka");
        Path tmp = java.nio.file.Files.createDirectories(kafka.resolve("tmp"));
        int brokerPort = KafkaBroker.freePort(), controllerPort = KafkaBroker.freePort();
        CountDownLatch ready = new CountDownLatch(1);
        List<String> jvm = new ArrayList<>(split(run.param("broker-jvm-args")));
        jvm.add("-Djava.io.tmpdir=" + tmp);
        run.progress().phase("starting the Kafka broker", 5);
        Process p = run.startService("kafka-broker", jvm,
                List.of(KafkaBroker.FLAG, kafka.resolve("logs").toString(), String.valueOf(brokerPort), String.valueOf(controllerPort)),
                line -> { if (line.startsWith("READY")) ready.countDown(); else System.err.println("[kafka-broker] " + line); });
        if (!ready.await(90, TimeUnit.SECONDS) || !p.isAlive())
            throw new IllegalStateException("the embedded Kafka broker did not start within 90 s" + (p.isAlive() ? "" : " (exit code " + p.exitValue() + ")"));
        brokerAddress = "127.0.0.1:" + brokerPort;
        brokerPid = p.pid();
        run.notes().put("kafkaBroker", "pid " + p.pid() + ", " + brokerAddress);
        run.writeManifest();
        return p;
    }

    record Step(boolean meets, boolean saturated) {}

    /** CPU of the broker and the whole machine over the measurement window of a step. */
    private final class CpuWindow {
        long brokerTicks = -1, t0;
        double brokerPct = Double.NaN, systemPct = Double.NaN, stealPct = Double.NaN;

        void onPhase(String phase) {
            if (phase.equals("measure")) {
                cpu.sampleSystem();
                t0 = System.nanoTime();
                brokerTicks = brokerPid > 0 ? cpu.processTicks(brokerPid) : -1;
            } else if (phase.equals("drain") && t0 > 0) {
                double seconds = (System.nanoTime() - t0) / 1e9;
                CpuSampler.SystemUsage u = cpu.sampleSystem();
                if (u != null) { systemPct = u.busyPercent(); stealPct = u.stealPercent(); }
                if (brokerTicks >= 0) brokerPct = CpuSampler.percent(brokerTicks, cpu.processTicks(brokerPid), seconds);
            }
        }
    }

    private Step step(String system, int n, String bootstrap) throws Exception {
        Map<String, String> base = new LinkedHashMap<>(run.params());
        base.put("system", system);
        base.put("instances", String.valueOf(n));
        base.put("bootstrap", bootstrap == null ? "" : bootstrap);
        base.put("topic-prefix", topicPrefix);
        CpuWindow window = new CpuWindow();
        double planned = warmup + measure + drain;
        boolean perJvm = run.param("isolation").equals("jvm");
        List<ObjectNode> results;
        if (!perJvm) {
            Map<String, String> p = new LinkedHashMap<>(base);
            p.put("first-instance", "0");
            p.put("count", String.valueOf(n));
            p.put("jvm-index", "1");
            results = List.of(run.fork(system + "-n" + n, forkJvmArgs, p, planned, window::onPhase));
        } else {
            List<String> series = new ArrayList<>();
            List<Map<String, String>> params = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Map<String, String> p = new LinkedHashMap<>(base);
                p.put("first-instance", String.valueOf(i));
                p.put("count", "1");
                p.put("jvm-index", String.valueOf(i + 1));
                params.add(p);
                series.add(system + "-n" + n + "/jvm" + (i + 1));
            }
            results = run.forkAll(series, forkJvmArgs, params, planned, window::onPhase);
        }
        Histogram e2e = merge(results, "-e2e.", ".corrected."), e2eRaw = merge(results, "-e2e.", ".uncorrected."), hop1 = merge(results, "-hop1.", ".corrected.");
        long sent = sum(results, "sent"), received = sum(results, "received"), lost = sum(results, "lost"), dups = sum(results, "duplicates"),
                order = sum(results, "outOfOrder"), hops = sum(results, "badHops");
        double achieved = results.stream().mapToDouble(r -> r.get("achievedRate").asDouble()).sum();
        double appCpu = results.stream().mapToDouble(r -> r.get("appCpuPct").asDouble()).sum();
        double driverCpu = results.stream().mapToDouble(r -> r.get("driverCpuPct").asDouble()).sum();
        List<String> reasons = new ArrayList<>();
        if (achieved < 0.99 * rate * n) reasons.add(String.format(Locale.ROOT, "driver held %.0f of %d msg/s", achieved, rate * n));
        if (lost > 0) reasons.add(lost + " lost");
        if (dups > 0) reasons.add(dups + " duplicated");
        if (order > 0) reasons.add(order + " out of order");
        if (hops > 0) reasons.add(hops + " skipped a service");
        if (e2e.getTotalCount() == 0) reasons.add("no message completed the chain in the window");
        boolean valid = reasons.isEmpty();
        double p999 = ms(e2e, 99.9);
        boolean meets = valid && p999 <= slo;
        boolean saturated = window.systemPct >= SATURATED * 100 * cores;
        sweep.row(system, n, run.param("isolation"), rate * n, achieved, sent, received, lost, dups, order, hops,
                ms(e2e, 50), ms(e2e, 90), ms(e2e, 99), p999, ms(e2e, 100), ms(e2eRaw, 50), ms(e2eRaw, 99), ms(e2eRaw, 99.9), ms(e2eRaw, 100),
                ms(hop1, 99.9), window.brokerPct, appCpu, driverCpu, window.systemPct, window.stealPct, valid, String.join("; ", reasons), meets);
        run.progress().say(String.format(Locale.ROOT, "%s x%d: p50 %.2f ms, p99.9 %.2f ms (uncorrected %.2f), system CPU %.0f%%, %s",
                system, n, ms(e2e, 50), p999, ms(e2eRaw, 99.9), window.systemPct,
                !valid ? "INVALID: " + String.join("; ", reasons) : meets ? "meets the SLO" : "misses the SLO"));
        return new Step(meets, saturated);
    }

    private Histogram merge(List<ObjectNode> results, String kind, String timing) throws Exception {
        Histogram total = new Histogram(3);
        for (ObjectNode r : results)
            for (JsonNode f : r.get("files")) {
                String path = f.get("path").asText();
                if (!path.contains(kind) || !path.contains(timing)) continue;
                try (HistogramLogReader reader = new HistogramLogReader(new File(run.dir().toFile(), path))) {
                    for (var h = reader.nextIntervalHistogram(); h != null; h = reader.nextIntervalHistogram()) total.add((Histogram) h);
                }
            }
        return total;
    }

    private static long sum(List<ObjectNode> results, String field) {
        return results.stream().mapToLong(r -> r.get(field).asLong()).sum();
    }

    private static double ms(Histogram h, double percentile) {
        if (h.getTotalCount() == 0) return Double.NaN;
        return (percentile >= 100 ? h.getMaxValue() : h.getValueAtPercentile(percentile)) / 1e6;
    }
}
