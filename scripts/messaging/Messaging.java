///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.kafka:kafka_2.13:4.4.0
//DEPS org.apache.kafka:kafka-clients:4.4.0
//DEPS net.openhft:chronicle-queue:2026.4
//DEPS org.slf4j:slf4j-simple:2.0.20
//SOURCES StepFork.java Transport.java KafkaAccess.java KafkaTransport.java ChronicleTransport.java KafkaBroker.java PollProbe.java Chain.java Sweep.java Placement.java RateCalibration.java
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//DESCRIPTION Kafka vs Chronicle Queue: 5-service chains at a fixed rate each (1000 msg/s as published), grown until end-to-end p99.9 passes the SLO
package perfkit.messaging;

import perfkit.harness.cli.Cli;
import perfkit.harness.run.Forks;
import perfkit.harness.os.Lists;
import perfkit.harness.os.Loopback;
import perfkit.harness.cli.Opt;
import perfkit.harness.cli.Params;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.run.Study;
import perfkit.harness.measure.Warmup;

import java.util.List;

/**
 * A chain instance is a driver and 5 services joined by 6 topics (Kafka) or 6 queues (Chronicle Queue),
 * at a fixed rate per instance. The sweep adds instances (doubling, then bisecting) until end-to-end p99.9,
 * timed from the intended send, passes the SLO; see {@link Sweep}. Each step runs in fresh JVM(s).
 */
public class Messaging {
    /** Full-scale minimum warm-up: a shorter one leaves the broker and clients JIT-compiling, and the post calls the numbers cold. */
    static final double FULL_WARMUP_SECONDS = 20;
    /** CPU moves of up to this many points of one core are noise to the warm-up rule, not a trend. */
    static final double WARMUP_CPU_FLOOR_PCT = 5;

    // the options, each declared once: the Cli lists them, and Options reads each by its constant, never by name
    static final Opt<List<String>> SYSTEMS = Opt.choices("systems", List.of("kafka", "chronicle"), "kafka,chronicle", null, "systems to sweep, comma-separated");
    static final Opt<List<String>> KAFKA_POLL = Opt.choices("kafka-poll", KafkaTransport.Poll.names(), "original,park,blocking", null,
            "how an idle Kafka consumer waits, each a cell kafka/<policy>: original = poll(ofNanos(period/8)), which Kafka rounds to 0 ms "
                    + "(spins); park = poll(ZERO) then parkNanos(period/8), Chronicle's back-off; blocking = poll(100 ms). "
                    + "Chronicle runs once, as chronicle/original (its park is the same)");
    static final Opt<Integer> RATE_PER_CHAIN = Opt.integerOrAuto("rate-per-chain", "1000", 1, 1_000_000, "messages per second per chain instance (the "
            + "original: 1000), or auto: the highest rate at which one Kafka chain under the blocking policy uses at most --calibration-share of the machine, "
            + "found by a short calibration");
    static final Opt<Integer> CALIBRATION_SHARE = Opt.integer("calibration-share", 50, null, 1, 100, "with --rate-per-chain auto: percent of the machine's "
            + "CPU that one Kafka chain may use").map(Math::toIntExact);
    static final Opt<Integer> REPETITIONS = Opt.integer("repetitions", 1, null, 1, 100, "capacity searches per cell, each with fresh JVMs and a fresh "
            + "broker: capacity is bracketed over them").map(Math::toIntExact);
    static final Opt<List<Integer>> CHRONICLE_GRID = Opt.integers("chronicle-grid", "1,10,25,50,100,150,200,250,375,500", null, 1, 100_000,
            "instance counts Chronicle Queue climbs before bisecting (the original's grid; counts above --max-instances are skipped)");
    static final Opt<String> CPUS = Opt.text("cpus", "", null, "pin process groups to CPUs with taskset, e.g. 'broker=0 chains=1': broker is the Kafka "
            + "broker JVM, chains the JVM(s) of services and driver; empty: no pinning");
    static final Opt<Double> WARMUP = Opt.seconds("warmup", FULL_WARMUP_SECONDS, 2.0, 0, "minimum warm-up per step in seconds; warm-up then lasts until "
            + "rate and CPU are stable");
    static final Opt<Double> WARMUP_MAX = Opt.seconds("warmup-max", 120, 8.0, 0.1, "longest warm-up per step; a step that reaches it is marked "
            + "'warm-up never settled'");
    static final Opt<Integer> WARMUP_STABLE = Opt.integer("warmup-stable", 5, 3L, 2, 600, "warm-up ends when this many consecutive per-second samples of "
            + "delivered rate and CPU agree").map(Math::toIntExact);
    static final Opt<Integer> WARMUP_TOLERANCE = Opt.integer("warmup-tolerance", 10, null, 1, 100, "how far (percent of their mean) those samples may "
            + "stray and still count as stable").map(Math::toIntExact);
    static final Opt<Double> MEASURE = Opt.seconds("measure", 30, 4.0, 0.1, "measurement window per step in seconds (by intended send time)");
    static final Opt<Integer> MAX_INSTANCES = Opt.integer("max-instances", 1024, 2L, 1, 10_000, "largest instance count the sweep may try").map(Math::toIntExact);
    static final Opt<Double> BUDGET = Opt.seconds("budget", 3600, 300.0, 1, "time budget for the whole run in seconds, shared among the cells; a cell "
            + "stops when its next step would not fit");
    /** Where a step's chain instances run: threads of one JVM, or a JVM each. */
    enum Isolation { THREADS, JVM }
    static final Opt<Isolation> ISOLATION = Opt.choice("isolation", Isolation.class, Isolation.THREADS, "instances share one JVM (a thread group each) or "
            + "get one JVM each");
    /** How an idle service waits. */
    enum Backoff { EIGHTH, BUSY_SPIN }
    static final Opt<Backoff> BACKOFF = Opt.choice("backoff", Backoff.class, Backoff.EIGHTH, "idle service: wait 1/8 of the message interval (the "
            + "original) or spin (Kafka's blocking policy always waits in poll)");
    static final Opt<String> BOOTSTRAP_SERVERS = Opt.text("bootstrap-servers", "", null, "use this Kafka cluster instead of starting a broker (host:port,...)");
    static final Opt<String> KAFKA_CONFIG = Opt.text("kafka-config", "", null, "with --bootstrap-servers: a file of Kafka client properties for a SASL or "
            + "TLS cluster (security.protocol, sasl.*, ssl.*), used by every client of the run; values stay in memory and reach forks only on stdin, the "
            + "manifest names the settings but records no value beyond security.protocol and sasl.mechanism");
    static final Opt<Long> REPLICATION_FACTOR = Opt.integer("replication-factor", 1, null, 1, Short.MAX_VALUE, "replication factor of the run's topics "
            + "(with --bootstrap-servers)");
    static final Opt<String> ACKS = Opt.choice("acks", List.of("0", "1", "all"), "1", "producer acks");
    static final Opt<Double> DRAIN_TIMEOUT = Opt.seconds("drain-timeout", 10, null, 0.1, "how long a step waits, still publishing, for the window's "
            + "messages to arrive; any missing then are lost");
    static final Opt<List<String>> FORK_JVM_ARGS = Opt.jvmOptions("fork-jvm-args", "-Xmx1g", "JVM options of each step's JVM, space-separated");
    static final Opt<List<String>> BROKER_JVM_ARGS = Opt.jvmOptions("broker-jvm-args", "-Xmx512m", "JVM options of the embedded Kafka broker, space-separated");

    static final Cli CLI = new Cli("messaging", "Kafka vs Chronicle Queue: chains of 5 services joined by 6 topics or queues, each chain\n"
            + "driven at a fixed rate; instances are added until end-to-end p99.9 passes the SLO. Kafka runs under each idle-poll\n"
            + "policy (--kafka-poll). CPU per process, capacity at SLO, steps not measurable on a saturated host marked as such.\n"
            + "'./bench run messaging --kafka-poll-probe' prints how each Kafka policy waits on an idle topic (JSON lines).")
            .with(SYSTEMS, KAFKA_POLL, RATE_PER_CHAIN, CALIBRATION_SHARE, REPETITIONS, CHRONICLE_GRID, CPUS)
            .sloMs(100, new Cli.Slo("p99.9", "end-to-end latency (driver send -> 5 services -> driver receive)",
                    "each message's intended send time (corrected)", "step: all its chain instances merged"))
            .with(WARMUP, WARMUP_MAX, WARMUP_STABLE, WARMUP_TOLERANCE, MEASURE, MAX_INSTANCES, BUDGET, ISOLATION, BACKOFF, BOOTSTRAP_SERVERS, KAFKA_CONFIG,
                    REPLICATION_FACTOR, ACKS, DRAIN_TIMEOUT, FORK_JVM_ARGS, BROKER_JVM_ARGS)
            .rule(p -> WARMUP_MAX.in(p) < WARMUP.in(p)
                    ? "--warmup-max (" + Cli.plain(WARMUP_MAX.in(p)) + " s) must be at least --warmup (" + Cli.plain(WARMUP.in(p)) + " s)" : null)
            .rule(p -> BUDGET.in(p) < WARMUP.in(p) + MEASURE.in(p)
                    ? "--budget (" + Cli.plain(BUDGET.in(p)) + " s) cannot fit one step of --warmup + --measure" : null)
            .rule(p -> REPLICATION_FACTOR.in(p) > 1 && BOOTSTRAP_SERVERS.in(p).isBlank()
                    ? "--replication-factor above 1 needs --bootstrap-servers (the embedded broker is a single node)" : null)
            .rule(Messaging::checkBootstrap)
            .rule(p -> KAFKA_CONFIG.in(p).isBlank() ? null : BOOTSTRAP_SERVERS.in(p).isBlank()
                    ? "--kafka-config is for a cluster of yours (--bootstrap-servers); the embedded broker has its own login" : KafkaAccess.Config.problem(KAFKA_CONFIG.in(p)))
            .rule(p -> RATE_PER_CHAIN.in(p) == null && !SYSTEMS.in(p).contains("kafka")
                    ? "--rate-per-chain auto calibrates on a Kafka chain: add kafka to --systems, or give a rate" : null)
            .rule(p -> Placement.check(CPUS.in(p)))
            // misplacements first, before any SSH wait
            .rule(Messaging::chainsElsewhereProblem)
            .rule(p -> !p.placement().containsKey("broker") ? null
                    : !BOOTSTRAP_SERVERS.in(p).isBlank() ? "--place broker places the run's own broker; with --bootstrap-servers there is none"
                    : !SYSTEMS.in(p).contains("kafka") ? "--place broker needs kafka in --systems"
                    : Placement.parse(CPUS.in(p)).cpus("broker") != null ? "--place broker and --cpus broker=... exclude each other: the broker is not on this host"
                    : null)
            // the embedded Kafka broker (the original: isolated cores) and the chains' JVMs on hosts of their own
            .place(List.of("broker", "chains"), List.of("chains"))
            .onParts(p -> SYSTEMS.in(p).contains("kafka") && BOOTSTRAP_SERVERS.in(p).isBlank() ? List.of("broker", "chains") : List.of("chains"))
            .rule(p -> !p.placement().containsKey("broker") ? null : perfkit.harness.remote.RemoteJvm.problem("broker", p.placement().get("broker"), Cli.JAVA.in(p)))
            .rule(p -> Params.hostsOf(p.placement(), "chains").stream().distinct().map(h -> perfkit.harness.remote.RemoteJvm.problem("chains", h, Cli.JAVA.in(p)))
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null));

    /**
     * Placed chains reach their broker across the network, and the run's own broker here listens on loopback only; a
     * step's instances share one JVM unless --isolation jvm, so only then can several hosts share a step; --cpus pins
     * JVMs of this host. Each is one line before the run.
     */
    static String chainsElsewhereProblem(Params p) {
        List<perfkit.harness.os.Ssh> hosts = Params.hostsOf(p.placement(), "chains");
        if (hosts.isEmpty()) return null;
        if (SYSTEMS.in(p).contains("kafka")) {
            if (BOOTSTRAP_SERVERS.in(p).isBlank() && !p.placement().containsKey("broker"))
                return "--place chains needs the Kafka broker off loopback too: --place broker=user@host, or --bootstrap-servers";
            for (String server : Lists.commaSeparated(BOOTSTRAP_SERVERS.in(p))) {
                if (perfkit.harness.os.Loopback.meansThisHost(server.substring(0, server.lastIndexOf(':'))))
                    return "--place chains needs --bootstrap-servers they can reach: " + server + " is each chain host's own loopback";
            }
        }
        if (hosts.size() > 1 && ISOLATION.in(p) != Isolation.JVM)
            return "--place chains=a+b shares a step's instances between hosts one JVM each: add --isolation jvm (with threads a step is one JVM)";
        if (Placement.parse(CPUS.in(p)).cpus("chains") != null)
            return "--place chains and --cpus chains=... exclude each other: the chains are not on this host";
        if (hosts.size() > MAX_INSTANCES.in(p))
            return "--place chains names " + hosts.size() + " hosts, but no step runs more than " + MAX_INSTANCES.in(p) + " instance(s) (--max-instances)";
        return null;
    }

    /** host:port,... with ports 1-65535, or empty. */
    static String checkBootstrap(Params p) {
        for (String server : Lists.commaSeparated(BOOTSTRAP_SERVERS.in(p))) {
            int colon = server.lastIndexOf(':');
            String port = colon < 0 ? "" : server.substring(colon + 1);
            if (colon <= 0 || !port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535)
                return "option --bootstrap-servers expects host:port[,host:port...], got '" + server + "'";
        }
        return null;
    }

    /** A run's options, read once from the checked command line, each by its declaration. */
    record Options(List<String> systems, List<String> kafkaPolls, Integer ratePerChain, int calibrationSharePct, int repetitions,
                   List<Integer> chronicleGrid, Placement placement, long sloMs, Warmup.Rule warmup, double measure, int maxInstances,
                   double budget, boolean jvmPerInstance, boolean busySpin, String bootstrapServers, short replicationFactor, String acks,
                   double drainTimeout, List<String> forkJvmArgs, List<String> brokerJvmArgs, KafkaAccess.Config kafkaConfig,
                   perfkit.harness.os.Ssh brokerHost, List<perfkit.harness.os.Ssh> chainHosts) {
        static Options of(Params p) {
            return new Options(SYSTEMS.in(p), KAFKA_POLL.in(p), RATE_PER_CHAIN.in(p), CALIBRATION_SHARE.in(p),
                    REPETITIONS.in(p), CHRONICLE_GRID.in(p), Placement.parse(CPUS.in(p)), CLI.sloMs(p),
                    new Warmup.Rule(WARMUP.in(p), WARMUP_MAX.in(p), WARMUP_STABLE.in(p), WARMUP_TOLERANCE.in(p) / 100.0, WARMUP_CPU_FLOOR_PCT),
                    MEASURE.in(p), MAX_INSTANCES.in(p), BUDGET.in(p), ISOLATION.in(p) == Isolation.JVM,
                    BACKOFF.in(p) == Backoff.BUSY_SPIN, BOOTSTRAP_SERVERS.in(p), REPLICATION_FACTOR.in(p).shortValue(), ACKS.in(p),
                    DRAIN_TIMEOUT.in(p), FORK_JVM_ARGS.in(p), BROKER_JVM_ARGS.in(p),
                    KafkaAccess.Config.of(KAFKA_CONFIG.in(p)), p.placement().get("broker"), Params.hostsOf(p.placement(), "chains"));
        }

        /** Where JVM {@code k} (0-based) of a step runs: here, or with --place chains on the chain hosts in turn. */
        Forks.Host chainHost(int k) {
            if (chainHosts.isEmpty()) return Forks.Host.HERE;
            int i = k % chainHosts.size();
            return RemoteJvm.forkHost(i == 0 ? "chains" : "chains" + (i + 1), chainHosts.get(i));
        }

        /** Kafka runs on a broker of the run's own (a fresh one per capacity search), not on the user's cluster. */
        boolean embeddedBroker() { return bootstrapServers.isBlank(); }
    }

    public static void main(String[] args) throws Exception {
        // Kafka and Chronicle log through slf4j; only errors reach the console.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        System.setProperty("chronicle.analytics.disable", "true");
        if (args.length > 0 && args[0].equals(KafkaBroker.FLAG)) {
            KafkaBroker.main(args);
            return;
        }
        if (args.length > 0 && args[0].equals(PollProbe.FLAG)) {
            PollProbe.main(args);
            return;
        }
        Study.main(args, CLI, Messaging.class, Sweep::run, StepFork::run);
    }
}
