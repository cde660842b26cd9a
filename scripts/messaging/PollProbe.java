package perfkit.messaging;

import kafka.server.KafkaRaftServer;
import perfkit.harness.os.Disk;
import perfkit.harness.os.Loopback;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code --kafka-poll-probe [idle wait us]}: how each Kafka idle policy waits on an idle topic, measured on the
 * calling thread. Starts a throw-away broker in this JVM, opens one consumer per policy on an empty topic and
 * times its empty polls, counting the thread's voluntary context switches (Linux): a thread that never gives up
 * the CPU while idle is spinning, however busy the machine is. Prints one JSON line per policy.
 */
final class PollProbe {
    static final String FLAG = "--kafka-poll-probe";

    private PollProbe() {}

    static void main(String[] args) throws Exception {
        long idleWaitNs = (args.length > 1 ? Long.parseLong(args[1]) : 125) * 1000;
        Path dir = Files.createTempDirectory("perfkit-poll-probe");
        int port = Loopback.freePort();
        String password = KafkaAccess.newPassword();
        KafkaRaftServer broker = KafkaBroker.start(dir.resolve("logs"), "127.0.0.1", port, Loopback.freePort(), password);
        KafkaAccess access = KafkaAccess.embedded("127.0.0.1:" + port, password);
        try {
            for (KafkaTransport.Poll poll : KafkaTransport.Poll.values()) {
                try (KafkaTransport t = new KafkaTransport(access, "probe-" + poll.name, "1", (short) 1, poll)) {
                    t.prepare(0, 1);
                    try (Transport.Receiver in = t.receiver(0, 0)) {
                        Transport.Handler none = (a, b, c, d) -> { throw new IllegalStateException("the probe topic is not empty"); };
                        for (int i = 0; i < 5; i++) in.poll(none, idleWaitNs); // metadata and offsets first
                        int polls = poll == KafkaTransport.Poll.BLOCKING ? 10 : 400;
                        long[] wall = new long[polls];
                        long switches0 = voluntarySwitches(), cpu0 = cpuNs(), t0 = System.nanoTime();
                        for (int i = 0; i < polls; i++) {
                            long s = System.nanoTime();
                            in.poll(none, idleWaitNs);
                            wall[i] = System.nanoTime() - s;
                        }
                        long elapsed = System.nanoTime() - t0, switches = voluntarySwitches() - switches0, cpu = cpuNs() - cpu0;
                        Arrays.sort(wall);
                        System.out.println(String.format(Locale.ROOT,
                                "{\"policy\":\"%s\",\"idleWaitUs\":%d,\"polls\":%d,\"medianPollUs\":%.1f,\"voluntarySwitchesPerPoll\":%.3f,\"threadCpuPct\":%.1f}",
                                poll.name, idleWaitNs / 1000, polls, wall[polls / 2] / 1e3, switches < 0 ? -1.0 : (double) switches / polls,
                                100.0 * cpu / elapsed));
                    }
                }
            }
        } finally {
            broker.shutdown();
            broker.awaitShutdown();
            Disk.deleteRecursively(dir);
        }
    }

    private static long cpuNs() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    /** voluntary_ctxt_switches of this thread, or -1 off Linux. */
    private static long voluntarySwitches() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/thread-self/status")))
                if (line.startsWith("voluntary_ctxt_switches:")) return Long.parseLong(line.split(":")[1].trim());
            return -1;
        } catch (Exception e) {
            return -1;
        }
    }
}
