package perfkit.messaging;

import perfkit.harness.measure.CpuSampler;
import perfkit.harness.process.Fork;
import perfkit.harness.measure.LatencyLog;
import perfkit.harness.measure.Warmup;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/** The measured side of messaging: one sweep step (or one instance of it) in a fresh JVM, and what it sends back. */
final class StepFork {
    /** The window opens this long after it is set, so every thread sees it before its first message is due. */
    static final long WINDOW_LEAD_NS = 100_000_000L;

    private StepFork() {}

    /** The broker side of a Kafka step: how to reach it (its credentials included), the run's topics, and how the producers write. */
    record Kafka(KafkaAccess access, String topicPrefix, String acks, short replicationFactor) {}

    /**
     * What one JVM runs: chain instances {@code firstInstance} to {@code firstInstance + count - 1} of a step of
     * {@code instances} ({@code step} names it, {@code jvm} numbers this JVM), each at {@code chainRate} msg/s, warmed up by
     * {@code warmup}, measured over {@code measure} s of intended send times, then drained for at most {@code drainTimeout} s.
     * {@code kafka} is null for Chronicle; {@code brokerPid} is -1 without a broker of ours.
     */
    record Spec(String system, String policy, String step, int instances, int firstInstance, int count, int jvm, long chainRate,
                Warmup.Rule warmup, double measure, double drainTimeout, boolean busySpin, Kafka kafka, long brokerPid) {}

    /**
     * What it measured: the CPUs it was allowed, its warm-up (s, its end as epoch ms, settled or not, why), its CPU and
     * its driver threads' in percent of one core over the window, the window's messages (expected by the schedule, sent,
     * sent by the window's end, delivered, lost), the latency samples, all messages sent and received, and the order checks.
     */
    record Result(String cpusAllowed, double warmupSeconds, long warmupEndedAtMs, boolean warmupSettled, String warmupReason,
                  double appCpuPct, double driverCpuPct, double windowSeconds, long windowExpected, long windowSent, long windowSentByEnd,
                  long windowDelivered, long lost, long measured, long sent, long received, long duplicates, long outOfOrder, long badHops) {
        /** The same with its warm-up's end on this host's clock ({@code localMs}: a fork elsewhere stamped it on its own). */
        Result onThisClock(java.util.function.LongUnaryOperator localMs) {
            return new Result(cpusAllowed, warmupSeconds, warmupEndedAtMs <= 0 ? warmupEndedAtMs : localMs.applyAsLong(warmupEndedAtMs), warmupSettled,
                    warmupReason, appCpuPct, driverCpuPct, windowSeconds, windowExpected, windowSent, windowSentByEnd, windowDelivered, lost, measured,
                    sent, received, duplicates, outOfOrder, badHops);
        }
    }

    /**
     * One sweep step (or, with --isolation jvm, one instance of it) in this fresh JVM: warm up by rule, measure the
     * messages intended in one window, keep publishing and recording through the drain until all of them arrived.
     */
    static void run(Fork f) throws Exception {
        Spec s = f.spec(Spec.class);
        String cell = s.step();
        KafkaTransport.Poll poll = KafkaTransport.Poll.of(s.policy());
        int first = s.firstInstance(), count = s.count(), jvm = s.jvm();
        long rate = s.chainRate();
        double measure = s.measure(), drain = s.drainTimeout();
        Warmup warmup = new Warmup(s.warmup());
        String what = cell.replace("/n", ", ") + " instance(s)";
        LatencyLog e2e = f.latencyLog(cell, cell + "/e2e", jvm, what + ": end-to-end latency, driver send -> driver receive", false);
        LatencyLog hop1 = f.latencyLog(cell, cell + "/hop1", jvm, what + ": first hop, driver send -> service 1 receive", false);

        Transport transport = s.system().equals("kafka")
                ? new KafkaTransport(s.kafka().access(), s.kafka().topicPrefix() + "-" + poll.name + "-n" + s.instances(), s.kafka().acks(),
                        s.kafka().replicationFactor(), poll)
                : new ChronicleTransport(f.scratchDir().resolve("chronicle").resolve(cell.replace('/', '-') + ".jvm" + jvm));
        List<Chain> chains = new ArrayList<>();
        try {
            transport.prepare(first, count);
            for (int i = first; i < first + count; i++)
                chains.add(new Chain(i, transport, rate, s.busySpin(), e2e.newRecorder(), hop1.newRecorder()));
            chains.forEach(Chain::start);
            LongSupplier received = () -> chains.stream().mapToLong(c -> c.received.get()).sum();

            f.phase("warmup", warmup.rule().maxSeconds());
            long loadStartMs = System.currentTimeMillis();
            Warmup.State warm = warmUp(f, warmup, chains, received, s.brokerPid());

            // one window by intended send time for every log and counter of this step
            long start = System.nanoTime() + WINDOW_LEAD_NS, end = start + (long) (measure * 1e9);
            Chain.Window window = new Chain.Window(start, end);
            e2e.window(start, end);
            hop1.window(start, end);
            chains.forEach(c -> c.window(window));
            sleepUntil(start);
            CpuWindow cpu = CpuWindow.open(chains);
            f.phase("measure", measure);
            f.await((end - System.nanoTime()) / 1e9, received);
            long sentByEnd = 0, expected = 0;
            for (Chain c : chains) { sentByEnd += c.windowSent(); expected += c.windowExpected(); }
            Cpu used = cpu.close(chains);
            failIfBroken(chains);

            f.phase("drain", drain);
            long deadline = System.nanoTime() + (long) (drain * 1e9);
            while (!windowComplete(chains) && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
                failIfBroken(chains);
            }
            for (Chain c : chains) c.stopPublishing();
            for (Chain c : chains) c.stop();
            failIfBroken(chains);
            e2e.close(); // after the drain: late completions of in-window messages are in
            hop1.close();

            long sent = 0, delivered = 0;
            for (Chain c : chains) { sent += c.windowSent(); delivered += c.windowDelivered(); }
            f.result(new Result(Placement.allowedCpus("self"), warm.atSeconds(), loadStartMs + Math.round(warm.atSeconds() * 1000), warm.settled(),
                    warm.reason(), used.app(), used.driver(), measure, expected, sent, sentByEnd, delivered, sent - delivered, e2e.measuredCount(),
                    chains.stream().mapToLong(c -> c.sent.get()).sum(), received.getAsLong(), chains.stream().mapToLong(c -> c.duplicates).sum(),
                    chains.stream().mapToLong(c -> c.outOfOrder).sum(), chains.stream().mapToLong(c -> c.badHops).sum()));
        } finally {
            for (Chain c : chains) c.stop();
            transport.close();
        }
    }

    /**
     * Feeds the warm-up rule one sample a second: messages delivered end to end per second, and the CPU of the processes
     * under test (this JVM, plus the broker when there is one). Returns when the rule says warm-up is over.
     */
    private static Warmup.State warmUp(Fork f, Warmup warmup, List<Chain> chains, LongSupplier received, long brokerPid) throws Exception {
        CpuSampler sampler = CpuSampler.forThisMachine();
        LongSupplier cpuNs = () -> CpuWindow.processCpuNs() + (brokerPid > 0 ? Math.max(0, sampler.processTicks(brokerPid)) * 10_000_000L : 0);
        long t0 = System.nanoTime(), lastNs = t0, lastReceived = received.getAsLong(), lastCpu = cpuNs.getAsLong();
        for (int second = 1; ; second++) {
            sleepUntil(t0 + second * 1_000_000_000L);
            long now = System.nanoTime(), got = received.getAsLong(), cpu = cpuNs.getAsLong();
            double dt = (now - lastNs) / 1e9;
            Warmup.State s = warmup.add(new Warmup.Sample((now - t0) / 1e9, (got - lastReceived) / dt, 100.0 * (cpu - lastCpu) / 1e9 / dt));
            f.report(got);
            failIfBroken(chains);
            if (s.done()) return s;
            lastNs = now;
            lastReceived = got;
            lastCpu = cpu;
        }
    }

    private static boolean windowComplete(List<Chain> chains) throws InterruptedException {
        for (Chain c : chains) if (c.windowSent() < c.windowExpected() || c.windowDelivered() < c.windowSent()) return false;
        return true;
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        for (long left; (left = nanoTime - System.nanoTime()) > 0; ) Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }

    private static void failIfBroken(List<Chain> chains) {
        for (Chain c : chains)
            if (c.failure() != null) throw new IllegalStateException("instance " + c.id + " failed: " + c.failure(), c.failure());
    }

    /** CPU of this JVM and of its driver threads over the measurement window. */
    record CpuWindow(long t0, long cpu0, long driverCpu0) {
        static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        static long processCpuNs() {
            return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        }

        static long driverCpuNs(List<Chain> chains) {
            return chains.stream().flatMap(c -> c.driverThreads().stream()).mapToLong(t -> Math.max(0, THREADS.getThreadCpuTime(t.getId()))).sum();
        }

        static CpuWindow open(List<Chain> chains) {
            return new CpuWindow(System.nanoTime(), processCpuNs(), driverCpuNs(chains));
        }

        Cpu close(List<Chain> chains) {
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new Cpu(100.0 * (processCpuNs() - cpu0) / 1e9 / seconds, 100.0 * (driverCpuNs(chains) - driverCpu0) / 1e9 / seconds);
        }
    }

    /** Percent of one core over the window: this JVM, and its driver threads (publishers and the last hop's receivers). */
    record Cpu(double app, double driver) {
    }
}
