package perfkit.messaging;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.cli.Cli;
import perfkit.harness.measure.CpuSampler;
import perfkit.harness.run.Forks;
import perfkit.harness.os.Library;
import perfkit.harness.os.Lists;
import perfkit.harness.os.Loopback;
import perfkit.harness.run.ProfilingCost;
import perfkit.harness.run.Run;
import perfkit.harness.record.RunFile;
import perfkit.harness.measure.StepVerdict;
import perfkit.harness.run.Table;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The parent side. The cells are the systems under their idle policies: {@code kafka/<policy>} for each
 * {@code --kafka-poll} policy, and {@code chronicle/original}. Each cell's capacity is searched {@code --repetitions}
 * times, interleaved across cells, each search with a fresh broker: {@link CapacitySearch} doubles (Kafka) or climbs the
 * original's grid (Chronicle Queue), then bisects; each step runs in fresh JVM(s) and is judged by {@link StepVerdict}.
 * A search ends in a bracket: the largest count that met the SLO and the smallest above it that did not.
 */
final class Sweep {
    static final String CHRONICLE_JVM_FLAGS = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
            + "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED -Dchronicle.analytics.disable=true";
    static final StepVerdict.Rule VERDICT = StepVerdict.Rule.DEFAULT;
    /** JVM start, topic creation and the drain of a step beyond its warm-up and window; the budget plans with it. */
    static final double STEP_OVERHEAD_SECONDS = 10;
    /**
     * Bisection stops once the first miss is within a quarter of the last count met: a bracket that narrow cannot move
     * a ratio across an order of magnitude, and the steps it saves go to more repetitions.
     */
    static final double BRACKET_RESOLUTION = 0.25;

    /** A measured cell: a system under one idle policy, e.g. kafka/blocking. */
    record Cell(String system, String policy) {
        String name() { return system + "/" + policy; }
    }

    /** One capacity search of a cell; its steps are named {@code <cell>/n<count>}, with {@code /r<k>} from the second on. */
    record Search(Cell cell, int repetition) {
        String step(int n) { return cell.name() + "/n" + n + (repetition > 1 ? "/r" + repetition : ""); }
    }

    /** What the forks of one step reported, summed over them. */
    record StepResult(long windowExpected, long windowSent, long windowSentByEnd, long windowDelivered, long lost, long measured,
                      long duplicates, long outOfOrder, long badHops, double appCpuPct, double driverCpuPct,
                      double warmupSeconds, long warmupEndedAtMs, boolean warmupSettled, String warmupReason) {
        static StepResult of(List<StepFork.Result> forks) {
            // with one JVM per instance each fork warms up on its own: the step's warm-up is the longest one
            StepFork.Result slowest = forks.stream().max(java.util.Comparator.comparingDouble(StepFork.Result::warmupSeconds)).orElseThrow();
            return new StepResult(sum(forks, StepFork.Result::windowExpected), sum(forks, StepFork.Result::windowSent),
                    sum(forks, StepFork.Result::windowSentByEnd), sum(forks, StepFork.Result::windowDelivered), sum(forks, StepFork.Result::lost),
                    sum(forks, StepFork.Result::measured), sum(forks, StepFork.Result::duplicates), sum(forks, StepFork.Result::outOfOrder),
                    sum(forks, StepFork.Result::badHops), forks.stream().mapToDouble(StepFork.Result::appCpuPct).sum(),
                    forks.stream().mapToDouble(StepFork.Result::driverCpuPct).sum(), slowest.warmupSeconds(), slowest.warmupEndedAtMs(),
                    forks.stream().allMatch(StepFork.Result::warmupSettled), slowest.warmupReason());
        }

        private static long sum(List<StepFork.Result> forks, java.util.function.ToLongFunction<StepFork.Result> field) {
            return forks.stream().mapToLong(field).sum();
        }
    }

    private final Run run;
    private final Messaging.Options o;
    private long rate;
    private final int maxInstances;
    private final double slo, warmup, measure;
    private final long startNanos = System.nanoTime();
    private final List<String> forkJvmArgs = new ArrayList<>();
    private final String topicPrefix;
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final CpuSampler cpu = CpuSampler.forThisMachine();
    private final ArrayNode unsettled;
    private Table sweep;
    private final Placement placement;
    /** With --cpus: the CPUs each step's JVM was allowed, as its kernel said, by step. */
    private final ObjectNode placementSeen;
    private long brokerPid = -1;
    /** The embedded broker when it runs on a host of its own (--place broker): its CPU comes from that host. */
    private volatile perfkit.harness.remote.RemoteJvm remoteBroker;
    private double lastStepSeconds;

    private Sweep(Run run, Messaging.Options o) throws Exception {
        this.run = run;
        this.o = o;
        maxInstances = o.maxInstances();
        slo = o.sloMs();
        warmup = o.warmup().minSeconds();
        measure = o.measure();
        forkJvmArgs.addAll(Lists.jvmArgs(CHRONICLE_JVM_FLAGS));
        forkJvmArgs.add("-Djna.tmpdir=" + run.scratchDir().resolve("jna"));
        forkJvmArgs.addAll(o.forkJvmArgs());
        topicPrefix = "perfkit-" + run.dir().getFileName();
        unsettled = run.notes().putArray("warmupNeverSettled");
        placement = o.placement();
        placementSeen = placement.pinned() ? run.notes().putObject("placementSeen") : null;
        if (placement.cpus("broker") != null) run.pinCpus("kafka-broker", placement.cpus("broker"));
        // every step's JVM is named after its cell (kafka/..., chronicle/...), the broker is not
        if (placement.cpus("chains") != null) for (String system : o.systems()) run.pinCpus(system + "/", placement.cpus("chains"));
    }

    static List<Cell> cells(Messaging.Options o) {
        List<Cell> cells = new ArrayList<>();
        for (String system : o.systems()) {
            if (system.equals("kafka")) o.kafkaPolls().forEach(policy -> cells.add(new Cell("kafka", policy)));
            else cells.add(new Cell(system, "original")); // Chronicle's readers park: its original and park are the same policy
        }
        return cells;
    }

    static void run(Run run) throws Exception {
        Messaging.Options o = Messaging.Options.of(run.typed());
        List<Cell> cells = cells(o);
        int repetitions = o.repetitions();
        run.mode("sweep");
        run.variants(cells.stream().map(Cell::name).toList());
        run.measurement(o.warmup().minSeconds(), o.measure(), repetitions, "jvm-fork");
        describe(run, o);
        Sweep s = new Sweep(run, o);
        try (Table steps = new Table(run, "sweep.csv", "one row per sweep step (cell = <system>/<policy>/n<instances>, then /r<repetition> "
                + "from the second repetition on): latency (ms), delivery of the messages intended in the window, warm-up, CPU per process, verdict",
                "cell", "variant", "system", "policy", "repetition", "instances", "isolation", "rate_per_chain", "target_rate", "achieved_rate", "delivered_rate",
                "window_expected", "window_sent", "window_delivered", "lost", "duplicates", "out_of_order", "bad_hops",
                "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms", "p50_uncorrected_ms", "p99_uncorrected_ms", "p99_9_uncorrected_ms",
                "max_uncorrected_ms", "hop1_p99_9_ms", "cpu_broker_pct", "cpu_app_pct", "cpu_driver_pct", "cpu_system_pct", "steal_pct",
                "cpu_us_per_msg", "warmup_s", "warmup_ended_ms", "warmup_settled", "saturated", "verdict", "valid", "invalid_reason", "meets_slo");
             Table capacity = new Table(run, "capacity.csv", "capacity at the SLO per cell and repetition, as a bracket: the largest instance "
                     + "count whose p99.9 met it and the smallest above it that did not, in instances and msg/s (instances x rate per chain)",
                     "cell", "system", "policy", "repetition", "rate_per_chain", "capacity_instances", "capacity_msgs_per_s",
                     "first_missed_instances", "first_missed_msgs_per_s", "capacity_status", "slo_ms", "steps", "stop_reason")) {
            s.sweep = steps;
            s.rate = o.ratePerChain() == null ? RateCalibration.run(run, s) : o.ratePerChain();
            run.notes().put("ratePerChain", s.rate);
            run.writeManifest();
            List<Search> searches = new ArrayList<>();
            // repetitions interleaved across cells, so a drift of the host touches every cell alike
            for (int k = 1; k <= repetitions; k++) for (Cell cell : cells) searches.add(new Search(cell, k));
            List<String> summary = new ArrayList<>();
            // with --profile, what recording costs is measured after the searches, in steps the budget keeps for it: a
            // warm-up step and the pairs, planned as the searches plan a step, on a broker of their own; never more
            // than half of what is left, or the searches would be starved for it
            double costSeconds = run.profiling() ? (2.0 * repetitions + 2) * (o.warmup().minSeconds() + o.measure() + STEP_OVERHEAD_SECONDS) : 0;
            boolean measureCost = run.profiling() && costSeconds <= (o.budget() - s.elapsed()) / 2;
            if (!measureCost) costSeconds = 0;
            if (run.profiling() && !measureCost) run.notes().put("profilingCost", "not measured: --budget leaves no room for its "
                    + (2 * repetitions + 1) + " steps beside the capacity searches");
            // the searches share what is left of --budget: the plan is that budget, whatever the calibration took of it
            run.progress().plan("search", searches.size(), Math.max(o.budget() - costSeconds - s.elapsed(), 1));
            for (int i = 0; i < searches.size(); i++) {
                Search search = searches.get(i);
                // each remaining search gets an equal share of the remaining budget, so the last cell is measured too
                double share = (o.budget() - costSeconds - s.elapsed()) / (searches.size() - i);
                CapacitySearch.Result r = s.sweepCell(search, share);
                Integer missed = r.firstNotMet();
                capacity.write(Table.row().set("cell", search.cell().name()).set("system", search.cell().system()).set("policy", search.cell().policy())
                        .set("repetition", search.repetition()).set("rate_per_chain", s.rate)
                        .set("capacity_instances", r.capacity()).set("capacity_msgs_per_s", r.capacity() == null ? null : r.capacity() * s.rate)
                        .set("first_missed_instances", missed).set("first_missed_msgs_per_s", missed == null ? null : missed * s.rate)
                        .set("capacity_status", r.status().label).set("slo_ms", s.slo).set("steps", r.steps().size()).set("stop_reason", r.stopReason()));
                summary.add(String.format(Locale.ROOT, "%-18s r%d capacity %s at p99.9 <= %.0f ms (%s: %s)", search.cell().name(), search.repetition(),
                        r.capacity() == null ? "-" : r.capacity() + " instance(s)", s.slo, r.status().label, r.stopReason()));
                run.progress().unitDone();
            }
            if (measureCost) s.profilingCost(cells.get(0));
            run.progress().clear();
            summary.forEach(System.err::println);
        }
    }

    /**
     * With --profile: what recording costs, as one step of {@code cell} (one chain at the run's rate, on a broker of its
     * own for Kafka) run in --repetitions pairs, recorded and plain ({@link ProfilingCost}): the CPU of the processes
     * under test per message delivered (the offered rate is fixed, so throughput cannot show a cost) and p99.9. A step
     * of the same shape goes first, unrecorded and discarded, so neither side of the first pair meets a broker just started.
     */
    private void profilingCost(Cell cell) throws Exception {
        String where = !cell.system().equals("kafka") ? "" : o.embeddedBroker() ? " on a broker of its own" : " on the cluster of --bootstrap-servers";
        run.notes().put("profilingCost", "one " + cell.name() + " chain at " + rate + " msg/s" + where + ", after one discarded step of the same shape, run in "
                + o.repetitions() + " pair(s) of steps, one recorded and one plain, alternating which goes first; profiling.csv holds CPU per message and p99.9 of both");
        try (Broker broker = broker(cell);
             Table t = new Table(run, "profiling.csv", "what --profile cost: one chain of one cell at the run's rate, recorded and plain in pairs: CPU "
                     + "of services, driver and broker per message delivered, and p99.9", "cell", "pair", "instances", "rate_per_chain",
                     "profiled_cpu_us_per_msg", "plain_cpu_us_per_msg", "profiled_over_plain", "profiled_p99_9_ms", "plain_p99_9_ms", "valid")) {
            run.progress().say("what --profile costs: " + cell.name() + ", one chain, a warm-up step first");
            run.unrecorded(() -> measureStep(cell, cell.name() + "/n1/profiling-warmup", 1, broker.access(), rate, measure, "-prof-warmup"));
            for (ProfilingCost.Pair<Measured> p : ProfilingCost.pairs(run, o.repetitions(), (recorded, pair) -> {
                String side = (recorded ? "profiled" : "plain") + "-p" + pair;
                run.progress().say("what --profile costs: " + cell.name() + ", one chain, " + side);
                return measureStep(cell, cell.name() + "/n1/profiling-" + side, 1, broker.access(), rate, measure, "-prof-" + side);
            })) {
                double a = p.recorded().cpuUsPerMsg(), b = p.plain().cpuUsPerMsg();
                t.write(Table.row().set("cell", cell.name()).set("pair", p.pair()).set("instances", 1).set("rate_per_chain", rate)
                        .set("profiled_cpu_us_per_msg", a).set("plain_cpu_us_per_msg", b).set("profiled_over_plain", a / b)
                        .set("profiled_p99_9_ms", ms(p.recorded().e2e(), 99.9)).set("plain_p99_9_ms", ms(p.plain().e2e(), 99.9))
                        .set("valid", p.recorded().verdict().valid() && p.plain().verdict().valid()));
            }
        }
    }

    private double elapsed() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** The Kafka client library that ran (the embedded broker is the same release: one version everywhere). */
    private static String kafkaVersion() {
        // where Kafka's own AppInfoParser reads it (an internal class since 4.x): Gradle builds the jar, so no pom.properties
        try (var in = org.apache.kafka.clients.producer.KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            var p = new java.util.Properties();
            if (in != null) p.load(in);
            return p.getProperty("version", "?");
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    static void describe(Run run, Messaging.Options o) {
        ObjectNode n = run.notes();
        n.put("chain", "driver -> 5 services -> driver over 6 topics (Kafka) or 6 queues (Chronicle Queue); each service increments the message's counter");
        n.put("message", "28 bytes: intended send time (ns), actual send time (ns), sequence number, hop counter");
        n.put("latency", "end-to-end from the intended send (corrected) and from the actual send (uncorrected, what the original measured); first hop likewise");
        n.put("window", "one window per step by intended send time, shared by every log and counter of the step; publishing and recording go on "
                + "through the drain until every message intended in the window arrived; those still missing at --drain-timeout are lost");
        n.put("delivery", "the driver checks every message arrives exactly once, in order, after 5 services; any loss, duplicate or reorder makes a step invalid");
        ObjectNode policies = n.putObject("kafkaPoll");
        for (KafkaTransport.Poll poll : KafkaTransport.Poll.values()) policies.put(poll.name, poll.description);
        n.put("chroniclePoll", "Chronicle Queue runs once, as chronicle/original: its idle reader parks for the idle wait, so its original and park policies are the same");
        n.put("backoff", o.busySpin() ? "idle services busy-spin (Kafka's blocking policy still waits in poll)"
                : "the idle wait is 1/8 of the message interval (the original's)");
        n.put("isolation", o.jvmPerInstance() ? "one JVM per instance (closer to the original); each warms up on its own"
                : "all instances of a step share one JVM, a thread group each");
        n.put("kafka", o.embeddedBroker()
                ? "embedded single-node KRaft broker (kafka_2.13 " + kafkaVersion() + ") in its own JVM " + (o.brokerHost() == null ? "on 127.0.0.1" : "on " + o.brokerHost()
                        + " at the address the run reached it on (notes.kafkaBroker)") + ", a fresh one per capacity search, logs in its scratch folder, removed afterwards; "
                        + "SASL/PLAIN with a random password per broker (handed over stdin, in no file); acks=" + o.acks() + ", replication 1"
                : "external cluster " + o.bootstrapServers() + ", acks=" + o.acks() + ", replication factor " + o.replicationFactor()
                        + (o.kafkaConfig().settings().isEmpty() ? ", no client settings" : ", client settings from --kafka-config: " + o.kafkaConfig().describe()));
        ObjectNode versions = n.putObject("versions");
        versions.put("kafka", kafkaVersion());
        versions.put("chronicle", Library.version(net.openhft.chronicle.queue.ChronicleQueue.class));
        n.put("chronicle", "Chronicle Queue " + versions.path("chronicle").asText() + ", default settings, queues in the step JVM's scratch folder (on its chain host with --place chains) "
                + "and removed afterwards; analytics disabled");
        n.put("warmupRule", String.format(Locale.ROOT, "at least %s s, then until the last %d per-second samples of delivered rate and of CPU "
                        + "(this JVM plus the broker when both run on this host; the JVM's own on a chain host) lie within %d%% of their mean with no trend; "
                        + "at %s s it is marked 'warm-up never settled'",
                Cli.plain(o.warmup().minSeconds()), o.warmup().stableSamples(), Math.round(o.warmup().tolerance() * 100), Cli.plain(o.warmup().maxSeconds())));
        boolean cold = o.warmup().minSeconds() < Messaging.FULL_WARMUP_SECONDS;
        n.put("coldWarmup", cold);
        if (cold) n.put("coldWarmupReason", "minimum warm-up " + Cli.plain(o.warmup().minSeconds()) + " s is below the full-scale " + (int) Messaging.FULL_WARMUP_SECONDS
                + " s: the broker and clients may still be JIT-compiling, so latency and CPU read high (cold numbers)");
        n.put("placement", o.placement().describe());
        if (!o.chainHosts().isEmpty())
            n.put("chains", "each step's JVM (" + (o.jvmPerInstance() ? "one per instance, the i-th on the i-th host of --place chains in turn" : "one per step")
                    + ") on a host of its own (" + String.join(", ", o.chainHosts().stream().map(perfkit.harness.os.Ssh::destination).toList())
                    + "; placement in the manifest), its latency logs sent back; a step's cpu_system_pct and steal_pct, and the saturation its verdict "
                    + "judges, are the busiest chain host's over the window; the warm-up rule there judges the JVM's own CPU (the broker's is not visible from it); "
                    + "its warm-up end is put on this host's clock by the host's measured offset; its latency logs, their windows included, keep its own host's clock");
        Integer given = o.ratePerChain();
        n.put("rate", given == null ? "calibrated (notes.calibration, calibration.csv); the chosen rate is notes.ratePerChain"
                : given + " msg/s per chain" + (given == RateCalibration.PUBLISHED_RATE ? ", as published" : ""));
        n.put("capacityRule", "Kafka doubles the instances, Chronicle Queue climbs --chronicle-grid (the original's grid), until a step does not meet "
                + "the SLO; then bisect until the first miss lies within " + Math.round(BRACKET_RESOLUTION * 100) + "% of the last count met. "
                + "Capacity is a bracket: the largest count that met it and the smallest above that did not; each of --repetitions searches gives one. "
                + "A step that misses while the machine is saturated (system CPU >= " + (int) (VERDICT.saturatedFraction() * 100)
                + "% of all cores) or with steal above " + (int) VERDICT.maxStealPct() + "% of a core is 'not measurable on this host'; "
                + "if the first step is, so is the capacity (never 0). A step whose driver fell behind or that lost messages is invalid.");
        n.put("saturation", "a step that meets the SLO on a saturated machine does not end the search: the original asked how many chains fit on its "
                + "hardware, where services and driver share the cores (its Kafka broke the SLA at 700%, saturated). The first step above the last one met "
                + "closes the bracket of this host's capacity (capacity.csv first_missed_*) whatever its verdict; the verdict stays in sweep.csv");
    }

    private CapacitySearch.Result sweepCell(Search search, double budget) throws Exception {
        long cellStart = System.nanoTime();
        Cell cell = search.cell();
        try (Broker broker = broker(cell)) {
            double planned = warmup + measure + STEP_OVERHEAD_SECONDS;
            // the original asked how many chains fit on its hardware, services and driver sharing it: a saturated machine
            // ends nothing, and the step that misses above it closes the bracket of this host's capacity
            CapacitySearch.Plan plan = (cell.system().equals("chronicle")
                    ? CapacitySearch.Plan.grid(o.chronicleGrid(), maxInstances, BRACKET_RESOLUTION)
                    : new CapacitySearch.Plan(CapacitySearch.Plan.doubling(maxInstances).ladder(), BRACKET_RESOLUTION)).throughSaturation();
            return CapacitySearch.search(plan, budget, () -> (System.nanoTime() - cellStart) / 1e9,
                    () -> Math.max(planned, lastStepSeconds), n -> step(search, n, broker.access()), n -> n + " instance(s)");
        }
    }

    /** The Kafka cluster a search talks to: a fresh embedded broker, the user's cluster, or none (Chronicle Queue). */
    final class Broker implements AutoCloseable {
        private final Process process;
        private final KafkaAccess access;

        Broker(Process process, KafkaAccess access) { this.process = process; this.access = access; }

        /** How clients reach it; null for Chronicle Queue. */
        KafkaAccess access() { return access; }

        @Override
        public void close() throws InterruptedException {
            perfkit.harness.remote.RemoteJvm remote = remoteBroker;
            if (remote != null) {
                remoteBroker = null;
                remote.close();
                return;
            }
            if (process == null) return;
            run.stopService("kafka-broker", process);
            brokerPid = -1;
        }
    }

    Broker broker(Cell cell) throws Exception {
        if (!cell.system().equals("kafka")) return new Broker(null, null);
        if (o.embeddedBroker() && o.brokerHost() != null) {
            String password = KafkaAccess.newPassword();
            return new Broker(null, KafkaAccess.embedded(startBrokerElsewhere(cell, password), password));
        }
        if (o.embeddedBroker()) {
            String password = KafkaAccess.newPassword();
            Process proc = startBroker(cell, password);
            return new Broker(proc, KafkaAccess.embedded("127.0.0.1:" + brokerPort, password));
        }
        KafkaAccess access = new KafkaAccess(o.bootstrapServers(), o.kafkaConfig().settings());
        String bootstrap = access.bootstrap();
        KafkaTransport.checkReachable(access, 15);
        if (!cleanupRegistered) {
            cleanupRegistered = true;
            run.onFinish(() -> {
                try { KafkaTransport.deleteTopicsWithPrefix(access, topicPrefix); }
                catch (Exception e) { throw new IllegalStateException("could not delete topics " + topicPrefix + "* on " + bootstrap + ": " + e.getMessage()); }
            });
        }
        return new Broker(null, access);
    }

    private boolean cleanupRegistered;

    private int brokerPort, brokersStarted;

    private Process startBroker(Cell cell, String password) throws Exception {
        Path kafka = run.scratchDir().resolve("kafka-" + cell.policy() + "-" + (++brokersStarted));
        Path tmp = Files.createDirectories(kafka.resolve("tmp"));
        brokerPort = Loopback.freePort();
        int controllerPort = Loopback.freePort();
        CountDownLatch ready = new CountDownLatch(1);
        List<String> jvm = new ArrayList<>(o.brokerJvmArgs());
        jvm.add("-Djava.io.tmpdir=" + tmp);
        run.progress().phase("starting a Kafka broker for " + cell.name(), 5);
        Process proc = run.startService("kafka-broker", jvm,
                List.of(KafkaBroker.FLAG, kafka.resolve("logs").toString(), String.valueOf(brokerPort), String.valueOf(controllerPort)),
                Map.of("password", password), line -> { if (line.startsWith("READY")) ready.countDown(); else System.err.println("[kafka-broker] " + line); });
        if (!ready.await(90, TimeUnit.SECONDS) || !proc.isAlive())
            throw new IllegalStateException("the embedded Kafka broker did not start within 90 s" + (proc.isAlive() ? "" : " (exit code " + proc.exitValue() + ")"));
        brokerPid = proc.pid();
        run.notes().put("kafkaBroker", "pid " + proc.pid() + ", 127.0.0.1:" + brokerPort + ", CPUs " + Placement.allowedCpus(Long.toString(proc.pid())));
        run.writeManifest();
        return proc;
    }

    /**
     * The embedded broker on its own host, its ports and log folder chosen there; returns where clients reach it. Its
     * password goes over stdin, as to a local one.
     */
    private String startBrokerElsewhere(Cell cell, String password) throws Exception {
        java.util.concurrent.CompletableFuture<String> ready = new java.util.concurrent.CompletableFuture<>();
        run.progress().phase("starting a Kafka broker for " + cell.name() + " on " + o.brokerHost(), 5);
        perfkit.harness.remote.RemoteJvm remote = perfkit.harness.remote.RemoteJvm.service(run, "broker", "kafka-broker", o.brokerHost(), o.brokerJvmArgs(),
                List.of(KafkaBroker.FLAG, "{work}/logs", "0", "0"), Map.of("password", password),
                line -> { if (line.startsWith("READY ")) ready.complete(line.substring(6).strip()); else System.err.println("[kafka-broker] " + line); });
        remoteBroker = remote;
        String bootstrap;
        try {
            bootstrap = ready.get(90, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the embedded Kafka broker on " + o.brokerHost() + " did not start within 90 s");
        }
        remote.record(Integer.parseInt(bootstrap.substring(bootstrap.lastIndexOf(':') + 1)), "Kafka broker for " + cell.name());
        run.notes().put("kafkaBroker", "on " + o.brokerHost() + " at " + bootstrap + " (placement in the manifest); its CPU from that host's /proc");
        run.writeManifest();
        return bootstrap;
    }

    /** CPU of the broker and the whole machine over the measurement window of a step, sampled at the fork's phase edges. */
    private final class CpuWindow {
        long brokerTicks = -1, t0, t0Ms, t1Ms;
        double brokerPct = Double.NaN, systemPct = Double.NaN, stealPct = Double.NaN;
        /** The cores of the machine the system and steal figures are of: this one, or the busiest chain host. */
        int cores = Sweep.this.cores;

        void onPhase(String phase) {
            if (phase.equals("measure")) {
                cpu.sampleSystem();
                t0 = System.nanoTime();
                t0Ms = System.currentTimeMillis();
                brokerTicks = brokerPid > 0 ? cpu.processTicks(brokerPid) : -1;
            } else if (phase.equals("drain") && t0 > 0) {
                t1Ms = System.currentTimeMillis();
                double seconds = (System.nanoTime() - t0) / 1e9;
                CpuSampler.SystemUsage u = cpu.sampleSystem();
                if (u != null) { systemPct = u.busyPercent(); stealPct = u.stealPercent(); }
                if (brokerTicks >= 0) brokerPct = CpuSampler.percent(brokerTicks, cpu.processTicks(brokerPid), seconds);
                perfkit.harness.remote.RemoteJvm remote = remoteBroker;
                if (remote != null) {
                    try {
                        brokerPct = remote.cpuPercent(t0Ms, System.currentTimeMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }

        /**
         * With the chains on hosts of their own (--place chains) the step's system CPU and steal are theirs over the
         * window, not this host's (which then runs only the run's own JVM): the busiest chain host's, by share of its cores.
         */
        void onChainHosts(List<Forks.Forked<StepFork.Result>> forks) {
            boolean placed = false;
            double busiest = -1;
            for (Forks.Forked<StepFork.Result> f : forks) {
                if (f.placed() == null) continue;
                if (!placed) { systemPct = Double.NaN; stealPct = Double.NaN; placed = true; }
                if (t0Ms == 0 || t1Ms == 0) continue;
                double busy = f.placed().hostBusyPercent(t0Ms, t1Ms), steal = f.placed().hostStealPercent(t0Ms, t1Ms);
                int hostCores = f.placed().hostCores();
                if (!Double.isNaN(busy) && busy / hostCores > busiest) {
                    busiest = busy / hostCores;
                    systemPct = busy;
                    cores = hostCores;
                }
                // steal on any chain host disturbs the step, the busiest or not: the most of them
                if (!Double.isNaN(steal) && !(steal <= stealPct)) stealPct = steal;
            }
        }
    }

    /**
     * One step as measured: what its forks reported, the merged logs, CPU over its window (system and steal of the
     * machine the chains ran on, which has {@code cores}), and the verdict.
     */
    record Measured(StepResult r, Histogram e2e, Histogram e2eRaw, Histogram hop1, double target, double achieved, double delivered,
                    double brokerPct, double systemPct, double stealPct, int cores, StepVerdict verdict) {
        /** CPU of the processes under test (services, driver, and the broker), in % of one core. */
        double testedCpuPct() { return r.appCpuPct() + (Double.isNaN(brokerPct) ? 0 : brokerPct); }

        /** CPU time of the processes under test per message delivered end to end, µs; NaN when none was delivered. */
        double cpuUsPerMsg() { return delivered > 0 ? testedCpuPct() / 100 * 1e6 / delivered : Double.NaN; }
    }

    private StepVerdict step(Search search, int n, KafkaAccess access) throws Exception {
        long began = System.nanoTime();
        Cell cell = search.cell();
        String name = search.step(n);
        Measured m = measureStep(cell, name, n, access, rate, measure, search.repetition() > 1 ? "-r" + search.repetition() : "");
        StepResult r = m.r();
        StepVerdict v = m.verdict();
        if (!r.warmupSettled()) {
            unsettled.add(name);
            run.writeManifest();
        }
        sweep.write(Table.row().set("cell", name).set("variant", cell.name()).set("system", cell.system()).set("policy", cell.policy())
                .set("repetition", search.repetition()).set("instances", n).set("isolation", o.jvmPerInstance() ? "jvm" : "threads").set("rate_per_chain", rate)
                .set("target_rate", m.target()).set("achieved_rate", m.achieved())
                .set("delivered_rate", m.delivered()).set("window_expected", r.windowExpected()).set("window_sent", r.windowSent())
                .set("window_delivered", r.windowDelivered()).set("lost", r.lost()).set("duplicates", r.duplicates())
                .set("out_of_order", r.outOfOrder()).set("bad_hops", r.badHops())
                .set("p50_ms", ms(m.e2e(), 50)).set("p90_ms", ms(m.e2e(), 90)).set("p99_ms", ms(m.e2e(), 99)).set("p99_9_ms", ms(m.e2e(), 99.9))
                .set("max_ms", ms(m.e2e(), 100))
                .set("p50_uncorrected_ms", ms(m.e2eRaw(), 50)).set("p99_uncorrected_ms", ms(m.e2eRaw(), 99)).set("p99_9_uncorrected_ms", ms(m.e2eRaw(), 99.9))
                .set("max_uncorrected_ms", ms(m.e2eRaw(), 100)).set("hop1_p99_9_ms", ms(m.hop1(), 99.9))
                .set("cpu_broker_pct", m.brokerPct()).set("cpu_app_pct", r.appCpuPct()).set("cpu_driver_pct", r.driverCpuPct())
                .set("cpu_system_pct", m.systemPct()).set("steal_pct", m.stealPct())
                // CPU time of the processes under test (services + driver JVM, and the broker) per message delivered end to end
                .set("cpu_us_per_msg", m.cpuUsPerMsg())
                .set("warmup_s", r.warmupSeconds()).set("warmup_ended_ms", r.warmupEndedAtMs()).set("warmup_settled", r.warmupSettled())
                .set("saturated", v.saturated()).set("verdict", v.status().label).set("valid", v.valid()).set("invalid_reason", v.valid() ? "" : v.reason())
                .set("meets_slo", v.meets()));
        run.progress().say(String.format(Locale.ROOT, "%s: warm-up %.0f s%s, p50 %.2f ms, p99.9 %.2f ms (uncorrected %.2f), system CPU %.0f%%: %s%s",
                name, r.warmupSeconds(), r.warmupSettled() ? "" : " (never settled)", ms(m.e2e(), 50), ms(m.e2e(), 99.9), ms(m.e2eRaw(), 99.9), m.systemPct(),
                v.status().label, v.reason().isEmpty() ? "" : " (" + v.reason() + ")"));
        lastStepSeconds = (System.nanoTime() - began) / 1e9;
        return v;
    }

    /**
     * Runs {@code n} chains of {@code cell} at {@code chainRate} msg/s each in fresh JVM(s) named {@code name}, over a window of
     * {@code windowSeconds}, and judges the step. {@code topicSuffix} keeps the topics of another search on the same cluster apart.
     */
    Measured measureStep(Cell cell, String name, int n, KafkaAccess access, long chainRate, double windowSeconds, String topicSuffix) throws Exception {
        StepFork.Kafka kafka = cell.system().equals("kafka") ? new StepFork.Kafka(access, topicPrefix + topicSuffix, o.acks(),
                o.replicationFactor()) : null;
        // one JVM for the step, or (--isolation jvm) one per instance
        boolean jvmEach = o.jvmPerInstance();
        List<String> series = new ArrayList<>();
        List<StepFork.Spec> specs = new ArrayList<>();
        List<Forks.Host> hosts = new ArrayList<>();
        for (int i = 0; i < (jvmEach ? n : 1); i++) {
            // a JVM on another host cannot read the broker's CPU here: its warm-up rule then judges its own CPU only
            Forks.Host host = o.chainHost(i);
            specs.add(new StepFork.Spec(cell.system(), cell.policy(), name, n, i, jvmEach ? 1 : n, i + 1, chainRate, o.warmup(), windowSeconds,
                    o.drainTimeout(), o.busySpin(), kafka, host.host() == null ? brokerPid : -1));
            series.add(jvmEach ? name + "/jvm" + (i + 1) : name);
            hosts.add(host);
        }
        CpuWindow window = new CpuWindow();
        double planned = o.warmup().maxSeconds() + windowSeconds + o.drainTimeout();
        List<Forks.Forked<StepFork.Result>> forks = run.forks().all(series, forkJvmArgs, specs, hosts, planned, window::onPhase, StepFork.Result.class);
        List<StepFork.Result> results = forks.stream().map(f -> f.result().onThisClock(f::localMs)).toList();
        window.onChainHosts(forks);
        StepResult r = StepResult.of(results);
        if (placement.pinned()) placementSeen.put(name, results.get(0).cpusAllowed());
        Histogram e2e = merge(forks, name + "/e2e", RunFile.CORRECTED), e2eRaw = merge(forks, name + "/e2e", RunFile.UNCORRECTED),
                hop1 = merge(forks, name + "/hop1", RunFile.CORRECTED);
        double target = r.windowExpected() / windowSeconds, achieved = r.windowSentByEnd() / windowSeconds, delivered = r.windowDelivered() / windowSeconds;
        List<String> problems = new ArrayList<>();
        if (r.windowSent() < r.windowExpected()) problems.add((r.windowExpected() - r.windowSent()) + " in-window message(s) never sent");
        if (r.duplicates() > 0) problems.add(r.duplicates() + " duplicated");
        if (r.outOfOrder() > 0) problems.add(r.outOfOrder() + " out of order");
        if (r.badHops() > 0) problems.add(r.badHops() + " skipped a service");
        StepVerdict v = StepVerdict.judge(new StepVerdict.Measurement(target, achieved, e2e.getTotalCount(), r.lost(), problems,
                ms(e2e, 99.9), slo, window.systemPct, window.stealPct, window.cores), VERDICT);
        return new Measured(r, e2e, e2eRaw, hop1, target, achieved, delivered, window.brokerPct, window.systemPct, window.stealPct, window.cores, v);
    }

    long brokerPid() { return brokerPid; }

    Messaging.Options options() { return o; }

    /** Merges the intervals of one latency series from every fork of a step, found by the manifest fields, not by file name. */
    private Histogram merge(List<Forks.Forked<StepFork.Result>> forks, String series, String timing) throws Exception {
        Histogram total = new Histogram(3);
        for (Forks.Forked<StepFork.Result> fork : forks)
            for (RunFile f : fork.files()) {
                if (!series.equals(f.series()) || !timing.equals(f.timing())) continue;
                try (HistogramLogReader reader = new HistogramLogReader(run.dir().resolve(f.path()).toFile())) {
                    for (var h = reader.nextIntervalHistogram(); h != null; h = reader.nextIntervalHistogram()) total.add((Histogram) h);
                }
            }
        return total;
    }

    static double ms(Histogram h, double percentile) {
        if (h.getTotalCount() == 0) return Double.NaN;
        return (percentile >= 100 ? h.getMaxValue() : h.getValueAtPercentile(percentile)) / 1e6;
    }
}
