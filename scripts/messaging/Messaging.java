///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.kafka:kafka_2.13:4.3.1
//DEPS org.apache.kafka:kafka-clients:4.3.1
//DEPS net.openhft:chronicle-queue:2026.4
//DEPS org.slf4j:slf4j-simple:2.0.17
//SOURCES Transport.java KafkaTransport.java ChronicleTransport.java KafkaBroker.java Chain.java Sweep.java
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION Kafka vs Chronicle Queue: 5-service chains at 1000 msg/s each, grown until end-to-end p99.9 passes the SLO
package perfkit.messaging;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.Cli;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.Study;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * A chain instance is a driver and 5 services joined by 6 topics (Kafka) or 6 queues (Chronicle Queue),
 * at a fixed rate per instance. The sweep adds instances (doubling, then bisecting) until end-to-end p99.9,
 * timed from the intended send, passes the SLO; see {@link Sweep}. Each step runs in fresh JVM(s).
 */
public class Messaging {
    static final Cli CLI = new Cli("messaging", "Kafka vs Chronicle Queue: chains of 5 services joined by 6 topics or queues, each chain\n"
            + "driven at a fixed rate; instances are added until end-to-end p99.9 passes the SLO. CPU per process, capacity at SLO.")
            .choices("systems", List.of("kafka", "chronicle"), "kafka,chronicle", "systems to sweep, comma-separated")
            .integer("rate", 1000, null, 1, "messages per second per chain instance")
            .seconds("slo-ms", 100, null, "SLO on end-to-end p99.9 latency (corrected), milliseconds")
            .seconds("warmup", 10, 2.0, "warm-up per step in seconds, excluded")
            .seconds("measure", 30, 4.0, "measurement window per step in seconds")
            .integer("max-instances", 1024, 2L, 1, "largest instance count the sweep may try")
            .seconds("budget", 1800, 300.0, "time budget for the whole run in seconds; the sweep stops when a step would not fit")
            .choice("isolation", List.of("threads", "jvm"), "threads", "instances share one JVM (a thread group each) or get one JVM each")
            .choice("backoff", List.of("eighth", "busy-spin"), "eighth", "idle service: sleep 1/8 of the message interval (the original) or spin")
            .text("bootstrap-servers", "", "use this Kafka cluster instead of starting a broker (host:port,...)")
            .integer("replication-factor", 1, null, 1, "replication factor of the run's topics (with --bootstrap-servers)")
            .choice("acks", List.of("0", "1", "all"), "1", "producer acks")
            .seconds("drain-timeout", 10, null, "how long a step waits for in-flight messages after publishing stops")
            .text("fork-jvm-args", "-Xmx1g", "JVM options of each step's JVM, space-separated")
            .text("broker-jvm-args", "-Xmx512m", "JVM options of the embedded Kafka broker, space-separated");

    public static void main(String[] args) throws Exception {
        // Kafka and Chronicle log through slf4j; only errors reach the console.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        System.setProperty("chronicle.analytics.disable", "true");
        if (args.length > 0 && args[0].equals(KafkaBroker.FLAG)) {
            KafkaBroker.main(args);
            return;
        }
        Study.main(args, CLI, Messaging.class, Sweep::run, Messaging::step);
    }

    /** One sweep step (or, with --isolation jvm, one instance of it) in this fresh JVM. */
    static void step(Fork f) throws Exception {
        String system = f.param("system");
        int total = Integer.parseInt(f.param("instances"));
        int first = Integer.parseInt(f.param("first-instance")), count = Integer.parseInt(f.param("count"));
        long rate = f.integer("rate");
        double warmup = f.seconds("warmup"), measure = f.seconds("measure"), drain = f.seconds("drain-timeout");
        String name = "latency/" + system + "-n" + total;
        String jvm = ".fork" + f.param("jvm-index");
        LatencyLog e2e = f.latencyLog(name + "-e2e" + jvm, system + ", " + total + " instance(s): end-to-end latency, driver send -> driver receive");
        LatencyLog hop1 = f.latencyLog(name + "-hop1" + jvm, system + ", " + total + " instance(s): first hop, driver send -> service 1 receive");

        Transport transport = system.equals("kafka")
                ? new KafkaTransport(f.param("bootstrap"), f.param("topic-prefix") + "-n" + total, f.param("acks"), Short.parseShort(f.param("replication-factor")))
                : new ChronicleTransport(f.scratchDir().resolve("chronicle").resolve(system + "-n" + total + jvm));
        List<Chain> chains = new ArrayList<>();
        try {
            transport.prepare(first, count);
            for (int i = first; i < first + count; i++)
                chains.add(new Chain(i, transport, rate, f.param("backoff").equals("busy-spin"), e2e.newRecorder(), hop1.newRecorder()));
            chains.forEach(Chain::start);
            java.util.function.LongSupplier received = () -> chains.stream().mapToLong(c -> c.received.get()).sum();
            java.util.function.LongSupplier sent = () -> chains.stream().mapToLong(c -> c.sent.get()).sum();

            f.phase("warmup", warmup);
            f.await(warmup, received);
            failIfBroken(chains);
            Window w = Window.open(chains, sent, received);
            e2e.startMeasuring();
            hop1.startMeasuring();
            f.phase("measure", measure);
            f.await(measure, received);
            w.close(chains, sent, received, f.result());
            e2e.close(); // the window ends here: messages still in flight during the drain are counted, not timed
            hop1.close();
            f.phase("drain", drain);
            for (Chain c : chains) c.stopPublishing();
            long deadline = System.nanoTime() + (long) (drain * 1e9);
            while (received.getAsLong() < sent.getAsLong() && System.nanoTime() < deadline) Thread.sleep(20);
            failIfBroken(chains);
            for (Chain c : chains) c.stop();
            ObjectNode r = f.result();
            r.put("sent", sent.getAsLong());
            r.put("received", received.getAsLong());
            r.put("lost", chains.stream().mapToLong(Chain::lost).sum());
            r.put("duplicates", chains.stream().mapToLong(c -> c.duplicates).sum());
            r.put("outOfOrder", chains.stream().mapToLong(c -> c.outOfOrder).sum());
            r.put("badHops", chains.stream().mapToLong(c -> c.badHops).sum());
        } finally {
            for (Chain c : chains) c.stop();
            transport.close();
        }
    }

    private static void failIfBroken(List<Chain> chains) {
        for (Chain c : chains)
            if (c.failure() != null) throw new IllegalStateException("instance " + c.id + " failed: " + c.failure(), c.failure());
    }

    /** What the measurement window saw: messages, achieved rate, and CPU of this JVM and of its driver threads. */
    record Window(long t0, long sent0, long received0, long cpu0, long driverCpu0) {
        static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        static long processCpuNs() {
            return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        }

        static long driverCpuNs(List<Chain> chains) {
            return chains.stream().flatMap(c -> c.driverThreads().stream()).mapToLong(t -> Math.max(0, THREADS.getThreadCpuTime(t.getId()))).sum();
        }

        static Window open(List<Chain> chains, java.util.function.LongSupplier sent, java.util.function.LongSupplier received) {
            return new Window(System.nanoTime(), sent.getAsLong(), received.getAsLong(), processCpuNs(), driverCpuNs(chains));
        }

        void close(List<Chain> chains, java.util.function.LongSupplier sent, java.util.function.LongSupplier received, ObjectNode r) {
            double seconds = (System.nanoTime() - t0) / 1e9;
            r.put("windowSeconds", seconds);
            r.put("sentInWindow", sent.getAsLong() - sent0);
            r.put("receivedInWindow", received.getAsLong() - received0);
            r.put("achievedRate", (sent.getAsLong() - sent0) / seconds);
            r.put("appCpuPct", 100.0 * (processCpuNs() - cpu0) / 1e9 / seconds);
            r.put("driverCpuPct", 100.0 * (driverCpuNs(chains) - driverCpu0) / 1e9 / seconds);
        }
    }
}
