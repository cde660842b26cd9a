///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.kafka:kafka_2.13:4.3.1
//DEPS org.apache.kafka:kafka-clients:4.3.1
//DEPS net.openhft:chronicle-queue:2026.4
//DEPS org.slf4j:slf4j-simple:2.0.17
//SOURCES StepFork.java Transport.java KafkaAccess.java KafkaTransport.java ChronicleTransport.java KafkaBroker.java PollProbe.java Chain.java Sweep.java Placement.java RateCalibration.java
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION Kafka vs Chronicle Queue: 5-service chains at a fixed rate each (1000 msg/s as published), grown until end-to-end p99.9 passes the SLO
package perfkit.messaging;

import perfkit.harness.Cli;
import perfkit.harness.Forks;
import perfkit.harness.Lists;
import perfkit.harness.Loopback;
import perfkit.harness.Params;
import perfkit.harness.RemoteJvm;
import perfkit.harness.Run;
import perfkit.harness.Study;
import perfkit.harness.Warmup;

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

    static final Cli CLI = new Cli("messaging", "Kafka vs Chronicle Queue: chains of 5 services joined by 6 topics or queues, each chain\n"
            + "driven at a fixed rate; instances are added until end-to-end p99.9 passes the SLO. Kafka runs under each idle-poll\n"
            + "policy (--kafka-poll). CPU per process, capacity at SLO, steps not measurable on a saturated host marked as such.\n"
            + "'./bench run messaging --kafka-poll-probe' prints how each Kafka policy waits on an idle topic (JSON lines).")
            .choices("systems", List.of("kafka", "chronicle"), "kafka,chronicle", "systems to sweep, comma-separated")
            .choices("kafka-poll", KafkaTransport.Poll.names(), "original,park,blocking",
                    "how an idle Kafka consumer waits, each a cell kafka/<policy>: original = poll(ofNanos(period/8)), which Kafka rounds to 0 ms "
                            + "(spins); park = poll(ZERO) then parkNanos(period/8), Chronicle's back-off; blocking = poll(100 ms). "
                            + "Chronicle runs once, as chronicle/original (its park is the same)")
            .integerOrAuto("rate-per-chain", "1000", 1, 1_000_000, "messages per second per chain instance (the original: 1000), or auto: the highest rate at which "
                    + "one Kafka chain under the blocking policy uses at most --calibration-share of the machine, found by a short calibration")
            .integer("calibration-share", 50, null, 1, 100, "with --rate-per-chain auto: percent of the machine's CPU that one Kafka chain may use")
            .integer("repetitions", 1, null, 1, 100, "capacity searches per cell, each with fresh JVMs and a fresh broker: capacity is bracketed over them")
            .integers("chronicle-grid", "1,10,25,50,100,150,200,250,375,500", null, 1, 100_000,
                    "instance counts Chronicle Queue climbs before bisecting (the original's grid; counts above --max-instances are skipped)")
            .text("cpus", "", "pin process groups to CPUs with taskset, e.g. 'broker=0 chains=1': broker is the Kafka broker JVM, "
                    + "chains the JVM(s) of services and driver; empty: no pinning")
            .sloMs(100, new Cli.Slo("p99.9", "end-to-end latency (driver send -> 5 services -> driver receive)",
                    "each message's intended send time (corrected)", "step: all its chain instances merged"))
            .seconds("warmup", FULL_WARMUP_SECONDS, 2.0, 0, "minimum warm-up per step in seconds; warm-up then lasts until rate and CPU are stable")
            .seconds("warmup-max", 120, 8.0, 0.1, "longest warm-up per step; a step that reaches it is marked 'warm-up never settled'")
            .integer("warmup-stable", 5, 3L, 2, 600, "warm-up ends when this many consecutive per-second samples of delivered rate and CPU agree")
            .integer("warmup-tolerance", 10, null, 1, 100, "how far (percent of their mean) those samples may stray and still count as stable")
            .seconds("measure", 30, 4.0, 0.1, "measurement window per step in seconds (by intended send time)")
            .integer("max-instances", 1024, 2L, 1, 10_000, "largest instance count the sweep may try")
            .seconds("budget", 3600, 300.0, 1, "time budget for the whole run in seconds, shared among the cells; a cell stops when its next step would not fit")
            .choice("isolation", List.of("threads", "jvm"), "threads", "instances share one JVM (a thread group each) or get one JVM each")
            .choice("backoff", List.of("eighth", "busy-spin"), "eighth", "idle service: wait 1/8 of the message interval (the original) or spin (Kafka's blocking policy always waits in poll)")
            .text("bootstrap-servers", "", "use this Kafka cluster instead of starting a broker (host:port,...)")
            .text("kafka-config", "", "with --bootstrap-servers: a file of Kafka client properties for a SASL or TLS cluster (security.protocol, "
                    + "sasl.*, ssl.*), used by every client of the run; values stay in memory and reach forks only on stdin, the manifest "
                    + "names the settings but records no value beyond security.protocol and sasl.mechanism")
            .integer("replication-factor", 1, null, 1, Short.MAX_VALUE, "replication factor of the run's topics (with --bootstrap-servers)")
            .choice("acks", List.of("0", "1", "all"), "1", "producer acks")
            .seconds("drain-timeout", 10, null, 0.1, "how long a step waits, still publishing, for the window's messages to arrive; any missing then are lost")
            .jvmOptions("fork-jvm-args", "-Xmx1g", "JVM options of each step's JVM, space-separated")
            .jvmOptions("broker-jvm-args", "-Xmx512m", "JVM options of the embedded Kafka broker, space-separated")
            .rule(p -> p.seconds("warmup-max") < p.seconds("warmup")
                    ? "--warmup-max (" + p.text("warmup-max") + " s) must be at least --warmup (" + p.text("warmup") + " s)" : null)
            .rule(p -> p.seconds("budget") < p.seconds("warmup") + p.seconds("measure")
                    ? "--budget (" + p.text("budget") + " s) cannot fit one step of --warmup + --measure" : null)
            .rule(p -> p.integer("replication-factor") > 1 && p.text("bootstrap-servers").isBlank()
                    ? "--replication-factor above 1 needs --bootstrap-servers (the embedded broker is a single node)" : null)
            .rule(Messaging::checkBootstrap)
            .rule(p -> p.text("kafka-config").isBlank() ? null : p.text("bootstrap-servers").isBlank()
                    ? "--kafka-config is for a cluster of yours (--bootstrap-servers); the embedded broker has its own login" : KafkaAccess.Config.problem(p.text("kafka-config")))
            .rule(p -> p.integerOrAuto("rate-per-chain") == null && !p.list("systems").contains("kafka")
                    ? "--rate-per-chain auto calibrates on a Kafka chain: add kafka to --systems, or give a rate" : null)
            .rule(p -> Placement.check(p.text("cpus")))
            // misplacements first, before any SSH wait
            .rule(Messaging::chainsElsewhereProblem)
            .rule(p -> !p.placement().containsKey("broker") ? null
                    : !p.text("bootstrap-servers").isBlank() ? "--place broker places the run's own broker; with --bootstrap-servers there is none"
                    : !p.list("systems").contains("kafka") ? "--place broker needs kafka in --systems"
                    : Placement.parse(p.text("cpus")).cpus("broker") != null ? "--place broker and --cpus broker=... exclude each other: the broker is not on this host"
                    : null)
            // the embedded Kafka broker (the original: isolated cores) and the chains' JVMs on hosts of their own
            .place(List.of("broker", "chains"), List.of("chains"))
            .rule(p -> !p.placement().containsKey("broker") ? null : perfkit.harness.RemoteJvm.problem("broker", p.placement().get("broker"), p.text("java")))
            .rule(p -> Params.hostsOf(p.placement(), "chains").stream().distinct().map(h -> perfkit.harness.RemoteJvm.problem("chains", h, p.text("java")))
                    .filter(java.util.Objects::nonNull).findFirst().orElse(null));

    /**
     * Placed chains reach their broker across the network, and the run's own broker here listens on loopback only; a
     * step's instances share one JVM unless --isolation jvm, so only then can several hosts share a step; --cpus pins
     * JVMs of this host. Each is one line before the run.
     */
    static String chainsElsewhereProblem(Params p) {
        List<perfkit.harness.Ssh> hosts = Params.hostsOf(p.placement(), "chains");
        if (hosts.isEmpty()) return null;
        if (p.list("systems").contains("kafka")) {
            if (p.text("bootstrap-servers").isBlank() && !p.placement().containsKey("broker"))
                return "--place chains needs the Kafka broker off loopback too: --place broker=user@host, or --bootstrap-servers";
            for (String server : p.list("bootstrap-servers")) {
                if (perfkit.harness.Loopback.meansThisHost(server.substring(0, server.lastIndexOf(':'))))
                    return "--place chains needs --bootstrap-servers they can reach: " + server + " is each chain host's own loopback";
            }
        }
        if (hosts.size() > 1 && !p.text("isolation").equals("jvm"))
            return "--place chains=a+b shares a step's instances between hosts one JVM each: add --isolation jvm (with threads a step is one JVM)";
        if (Placement.parse(p.text("cpus")).cpus("chains") != null)
            return "--place chains and --cpus chains=... exclude each other: the chains are not on this host";
        if (hosts.size() > p.integer("max-instances"))
            return "--place chains names " + hosts.size() + " hosts, but no step runs more than " + p.text("max-instances") + " instance(s) (--max-instances)";
        return null;
    }

    /** host:port,... with ports 1-65535, or empty. */
    static String checkBootstrap(Params p) {
        for (String server : p.list("bootstrap-servers")) {
            int colon = server.lastIndexOf(':');
            String port = colon < 0 ? "" : server.substring(colon + 1);
            if (colon <= 0 || !port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535)
                return "option --bootstrap-servers expects host:port[,host:port...], got '" + server + "'";
        }
        return null;
    }

    /** A run's options, read once from the checked command line: nothing below reads an option by name. */
    record Options(List<String> systems, List<String> kafkaPolls, Integer ratePerChain, int calibrationSharePct, int repetitions,
                   List<Integer> chronicleGrid, Placement placement, long sloMs, Warmup.Rule warmup, double measure, int maxInstances,
                   double budget, boolean jvmPerInstance, boolean busySpin, String bootstrapServers, short replicationFactor, String acks,
                   double drainTimeout, List<String> forkJvmArgs, List<String> brokerJvmArgs, KafkaAccess.Config kafkaConfig,
                   perfkit.harness.Ssh brokerHost, List<perfkit.harness.Ssh> chainHosts) {
        static Options of(Params p) {
            return new Options(p.list("systems"), p.list("kafka-poll"), p.integerOrAuto("rate-per-chain"), p.intValue("calibration-share"),
                    p.intValue("repetitions"), p.ints("chronicle-grid"), Placement.parse(p.text("cpus")), p.integer("slo-ms"),
                    new Warmup.Rule(p.seconds("warmup"), p.seconds("warmup-max"), p.intValue("warmup-stable"), p.integer("warmup-tolerance") / 100.0,
                            WARMUP_CPU_FLOOR_PCT),
                    p.seconds("measure"), p.intValue("max-instances"), p.seconds("budget"), p.text("isolation").equals("jvm"),
                    p.text("backoff").equals("busy-spin"), p.text("bootstrap-servers"), (short) p.intValue("replication-factor"), p.text("acks"),
                    p.seconds("drain-timeout"), Lists.jvmArgs(p.text("fork-jvm-args")), Lists.jvmArgs(p.text("broker-jvm-args")),
                    KafkaAccess.Config.of(p.text("kafka-config")), p.placement().get("broker"), Params.hostsOf(p.placement(), "chains"));
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
