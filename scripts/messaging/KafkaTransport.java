package perfkit.messaging;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Kafka: one single-partition topic per hop, named {@code <prefix>-i<instance>-t<hop>}. Producers send
 * with linger.ms=0 and the configured acks; consumers are assigned their partition directly (no group),
 * reading from the earliest offset of a topic made for this step. How an idle consumer waits is the {@link Poll}
 * policy, a factor of the study.
 */
final class KafkaTransport implements Transport {
    /** How an idle Kafka consumer waits for the next record. */
    enum Poll {
        /**
         * The original's call, {@code poll(Duration.ofNanos(idle wait))}. Kafka's timer has millisecond resolution and
         * rounds anything below 1 ms down to 0, so at 1000 msg/s (125 us) an idle consumer spins on poll(0).
         */
        ORIGINAL("original", "poll(Duration.ofNanos(idle wait)), the original's call: Kafka rounds a sub-millisecond timeout down to 0 ms, so an idle consumer spins on poll(0)"),
        /** {@code poll(Duration.ZERO)}, then park for the idle wait when nothing came: the same back-off Chronicle's readers use. */
        PARK("park", "poll(Duration.ZERO), then LockSupport.parkNanos(idle wait) when nothing came: the same back-off as Chronicle Queue's readers"),
        /** {@code poll(Duration.ofMillis(100))}: blocks in the client, returns as soon as a record arrives. */
        BLOCKING("blocking", "poll(Duration.ofMillis(100)), which returns as soon as a record arrives: Kafka's usual consumer loop");

        static final Duration BLOCKING_TIMEOUT = Duration.ofMillis(100);
        final String name, description;

        Poll(String name, String description) {
            this.name = name;
            this.description = description;
        }

        static Poll of(String name) {
            for (Poll p : values()) if (p.name.equals(name)) return p;
            throw new IllegalArgumentException("unknown Kafka poll policy " + name);
        }

        static java.util.List<String> names() {
            return java.util.Arrays.stream(values()).map(p -> p.name).toList();
        }
    }

    private final KafkaAccess access;
    private final String prefix;
    private final String acks;
    private final short replication;
    private final Poll poll;
    private final List<String> topics = new ArrayList<>();

    KafkaTransport(KafkaAccess access, String prefix, String acks, short replication, Poll poll) {
        this.poll = poll;
        this.access = access;
        this.prefix = prefix;
        this.acks = acks;
        this.replication = replication;
    }

    String topic(int instance, int hop) {
        return prefix + "-i" + instance + "-t" + hop;
    }

    static Admin admin(KafkaAccess access, int timeoutMs) {
        Properties p = access.onto(new Properties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, access.bootstrap());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        return Admin.create(p);
    }

    @Override
    public void prepare(int firstInstance, int instances) throws Exception {
        List<NewTopic> newTopics = new ArrayList<>();
        for (int i = firstInstance; i < firstInstance + instances; i++)
            for (int h = 0; h < HOPS; h++) {
                topics.add(topic(i, h));
                newTopics.add(new NewTopic(topic(i, h), 1, replication));
            }
        try (Admin admin = admin(access, 30_000)) {
            admin.createTopics(newTopics).all().get(60, TimeUnit.SECONDS);
        }
    }

    @Override
    public Sender sender(int instance, int hop) {
        Properties p = access.onto(new Properties());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, access.bootstrap());
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        String topic = topic(instance, hop);
        return new Sender() {
            public void send(long intendedNs, long sentNs, long seq, int hops) {
                byte[] value = ByteBuffer.allocate(28).putLong(intendedNs).putLong(sentNs).putLong(seq).putInt(hops).array();
                producer.send(new ProducerRecord<>(topic, value));
            }

            public void close() {
                producer.close(Duration.ofSeconds(5));
            }
        };
    }

    @Override
    public Receiver receiver(int instance, int hop) {
        Properties p = access.onto(new Properties());
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, access.bootstrap());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.assign(List.of(new TopicPartition(topic(instance, hop), 0)));
        return new Receiver() {
            public int poll(Handler handler, long idleWaitNanos) throws Exception {
                ConsumerRecords<byte[], byte[]> records = switch (poll) {
                    case ORIGINAL -> consumer.poll(Duration.ofNanos(idleWaitNanos));
                    case PARK -> consumer.poll(Duration.ZERO);
                    case BLOCKING -> consumer.poll(Poll.BLOCKING_TIMEOUT);
                };
                if (records.isEmpty()) {
                    if (poll == Poll.PARK && idleWaitNanos > 0) LockSupport.parkNanos(idleWaitNanos);
                    return 0;
                }
                int n = 0;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    ByteBuffer b = ByteBuffer.wrap(r.value());
                    handler.on(b.getLong(), b.getLong(), b.getLong(), b.getInt());
                    n++;
                }
                return n;
            }

            public void close() {
                consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
            }
        };
    }

    @Override
    public void close() throws Exception {
        if (topics.isEmpty()) return;
        try (Admin admin = admin(access, 30_000)) {
            admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Deletes every topic of a run (its prefix), e.g. after an interrupted step on a user's cluster. */
    static void deleteTopicsWithPrefix(KafkaAccess access, String prefix) throws Exception {
        try (Admin admin = admin(access, 15_000)) {
            List<String> mine = admin.listTopics().names().get(20, TimeUnit.SECONDS).stream().filter(t -> t.startsWith(prefix)).toList();
            if (!mine.isEmpty()) admin.deleteTopics(mine).all().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Fails within the timeout with a clear message when nothing answers at {@code bootstrap}; at once when every
     * bootstrap server refuses a connection or names no host (a refused port will not answer Kafka in the next
     * seconds). A server that is slow to accept is left to the Kafka client's own check. A cluster that refuses the
     * client settings' credentials is the user's error (a --kafka-config for another cluster, or none).
     */
    static void checkReachable(KafkaAccess access, int timeoutSeconds) {
        String bootstrap = access.bootstrap();
        List<String> servers = List.of(bootstrap.split(",")).stream().map(String::trim).filter(s -> !s.isEmpty()).toList(), refused = new ArrayList<>();
        for (String server : servers) {
            String why = refusal(server, Math.min(3, timeoutSeconds) * 1000);
            if (why != null) refused.add(servers.size() == 1 ? why : server + " (" + why + ")");
        }
        if (!servers.isEmpty() && refused.size() == servers.size())
            throw new IllegalStateException("cannot reach Kafka at " + bootstrap + ": " + String.join(", ", refused));
        Admin admin;
        try {
            admin = admin(access, timeoutSeconds * 1000);
        } catch (org.apache.kafka.common.KafkaException e) { // settings the client cannot use: a JAAS line, a truststore
            throw new perfkit.harness.os.UserError("option --kafka-config: the Kafka client cannot use these settings: " + rootMessage(e));
        }
        try (admin) {
            admin.describeCluster().nodes().get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.AuthenticationException a)
                throw new perfkit.harness.os.UserError("Kafka at " + bootstrap + ": authentication (SASL or TLS) failed"
                        + (access.settings().isEmpty() ? " (the cluster needs client settings: give them in a --kafka-config file)" : " with the settings of --kafka-config")
                        + ": " + a.getMessage());
            throw new IllegalStateException(noAnswer(access, timeoutSeconds));
        } catch (Exception e) {
            throw new IllegalStateException(noAnswer(access, timeoutSeconds));
        }
    }

    private static String rootMessage(Throwable e) {
        while (e.getCause() != null && e.getCause() != e) e = e.getCause();
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** No server refused the connection, yet Kafka did not answer: a SASL or TLS listener closes on a client without its settings. */
    private static String noAnswer(KafkaAccess access, int timeoutSeconds) {
        return "cannot reach Kafka at " + access.bootstrap() + " within " + timeoutSeconds + " s"
                + (access.settings().isEmpty() ? " (no server refused the connection: if the cluster asks for SASL or TLS, give the client settings in --kafka-config)" : "");
    }

    /**
     * "connection refused" when every address of {@code [scheme://]host:port} refuses a TCP connection, "unknown host"
     * when the name resolves to none, or null: one accepted, or one gave no answer within {@code timeoutMs} (slow, not
     * refused), as the Kafka client tries every address of a name.
     */
    private static String refusal(String server, int timeoutMs) {
        String hostPort = server.replaceFirst("^[A-Za-z_]+://", "");
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) return null; // not host:port: the Kafka client says what is wrong with it
        java.net.InetAddress[] addresses;
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
            addresses = java.net.InetAddress.getAllByName(hostPort.substring(0, colon).replaceAll("^\\[|\\]$", ""));
        } catch (NumberFormatException e) {
            return null;
        } catch (java.net.UnknownHostException e) {
            return "unknown host";
        }
        for (java.net.InetAddress address : addresses) {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress(address, port), timeoutMs);
                return null;
            } catch (java.net.ConnectException e) {
                // refused: try the next address
            } catch (Exception e) {
                return null; // no answer in time, or something else: not a clear refusal
            }
        }
        return "connection refused";
    }
}
