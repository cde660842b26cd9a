package perfkit.messaging;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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

/**
 * Kafka: one single-partition topic per hop, named {@code <prefix>-i<instance>-t<hop>}. Producers send
 * with linger.ms=0 and the configured acks; consumers are assigned their partition directly (no group),
 * reading from the earliest offset of a topic made for this step. An idle consumer waits inside poll(),
 * which returns as soon as a message arrives.
 */
final class KafkaTransport implements Transport {
    private final String bootstrap;
    private final String prefix;
    private final String acks;
    private final short replication;
    private final List<String> topics = new ArrayList<>();

    KafkaTransport(String bootstrap, String prefix, String acks, short replication) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
        this.acks = acks;
        this.replication = replication;
    }

    String topic(int instance, int hop) {
        return prefix + "-i" + instance + "-t" + hop;
    }

    static Admin admin(String bootstrap, int timeoutMs) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
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
        try (Admin admin = admin(bootstrap, 30_000)) {
            admin.createTopics(newTopics).all().get(60, TimeUnit.SECONDS);
        }
    }

    @Override
    public Sender sender(int instance, int hop) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
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
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.assign(List.of(new TopicPartition(topic(instance, hop), 0)));
        return new Receiver() {
            public int poll(Handler handler, long idleWaitNanos) throws Exception {
                int n = 0;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofNanos(idleWaitNanos))) {
                    ByteBuffer b = ByteBuffer.wrap(r.value());
                    handler.on(b.getLong(), b.getLong(), b.getLong(), b.getInt());
                    n++;
                }
                return n;
            }

            public void close() {
                consumer.close(Duration.ofSeconds(5));
            }
        };
    }

    @Override
    public void close() throws Exception {
        if (topics.isEmpty()) return;
        try (Admin admin = admin(bootstrap, 30_000)) {
            admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Deletes every topic of a run (its prefix), e.g. after an interrupted step on a user's cluster. */
    static void deleteTopicsWithPrefix(String bootstrap, String prefix) throws Exception {
        try (Admin admin = admin(bootstrap, 15_000)) {
            List<String> mine = admin.listTopics().names().get(20, TimeUnit.SECONDS).stream().filter(t -> t.startsWith(prefix)).toList();
            if (!mine.isEmpty()) admin.deleteTopics(mine).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Fails within the timeout with a clear message when nothing answers at {@code bootstrap}. */
    static void checkReachable(String bootstrap, int timeoutSeconds) {
        try (Admin admin = admin(bootstrap, timeoutSeconds * 1000)) {
            admin.describeCluster().nodes().get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot reach Kafka at " + bootstrap + " within " + timeoutSeconds + " s");
        }
    }

}
