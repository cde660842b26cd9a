package perfkit.messaging;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * How the study's Kafka clients (admin, producers, consumers) reach a cluster: its bootstrap servers and the client
 * settings its security asks for (SASL, TLS). The settings may hold a password, so this record travels only in a
 * fork's spec on stdin, and its text names the settings without their values.
 */
record KafkaAccess(String bootstrap, Map<String, String> settings) {
    /** The one user of the embedded broker. */
    static final String USER = "perfkit";

    /**
     * What a --kafka-config file may set: how to reach and log in to a cluster, nothing that changes what is measured
     * (batching, fetching, acks: the study sets those, and the manifest could not say what they were).
     */
    static boolean isAccessSetting(String key) {
        return key.equals("security.protocol") || key.startsWith("sasl.") || key.startsWith("ssl.") || key.equals("client.dns.lookup");
    }

    KafkaAccess {
        settings = Map.copyOf(settings);
    }

    /** The embedded broker: SASL/PLAIN over loopback as {@link #USER}, with that broker's own password. */
    static KafkaAccess embedded(String bootstrap, String password) {
        return new KafkaAccess(bootstrap, Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN",
                "sasl.jaas.config", plainLogin(password, false)));
    }

    /** A fresh random password for one broker: 128 bits, hex, so it needs no quoting in a JAAS line. */
    static String newPassword() {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The JAAS line of Kafka's PLAIN login as {@link #USER}; a broker's line also lists the user it accepts. */
    static String plainLogin(String password, boolean broker) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + USER + "\" password=\"" + password + "\""
                + (broker ? " user_" + USER + "=\"" + password + "\"" : "") + ";";
    }

    /**
     * The client settings of a --kafka-config file (Java properties: security.protocol, sasl.*, ssl.*), checked by the
     * Kafka client's own rules, or the one line that says why they cannot be used. Every value stays in memory: the
     * manifest records the file's path, the settings' names, and the values of security.protocol and sasl.mechanism.
     */
    static Map<String, String> readConfig(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("option --kafka-config: no such file " + file);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("option --kafka-config: cannot read " + file + " as Java properties (" + e.getMessage() + ")");
        }
        Map<String, String> settings = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            if (!isAccessSetting(key))
                throw new IllegalArgumentException("option --kafka-config: " + file + " sets " + key + "; it takes only security.protocol, sasl.* and ssl.* "
                        + "settings" + (key.equals("bootstrap.servers") ? " (give --bootstrap-servers)" : key.equals("acks") ? " (give --acks)" : ""));
            settings.put(key, p.getProperty(key));
        }
        if (settings.isEmpty()) throw new IllegalArgumentException("option --kafka-config: " + file + " holds no settings");
        Properties check = new Properties();
        check.putAll(settings);
        check.put("bootstrap.servers", "127.0.0.1:9092");
        try {
            new org.apache.kafka.clients.admin.AdminClientConfig(check); // a value of the wrong kind, an unknown protocol
        } catch (org.apache.kafka.common.config.ConfigException e) {
            throw new IllegalArgumentException("option --kafka-config: " + file + ": " + e.getMessage());
        }
        return settings;
    }

    /** A --kafka-config file as read: its path and settings; its text names the settings without their values. */
    record Config(String path, Map<String, String> settings) {
        static final Config NONE = new Config("", Map.of());

        Config {
            settings = Map.copyOf(settings);
        }

        /** The file at {@code path} read, or {@link #NONE} for an empty option; a file gone bad since the check is the user's error. */
        static Config of(String path) {
            if (path.isBlank()) return NONE;
            try {
                return new Config(path, readConfig(Path.of(path)));
            } catch (IllegalArgumentException e) {
                throw new perfkit.harness.os.UserError(e.getMessage());
            }
        }

        /** Why the file at {@code path} cannot be used, in one line, or null. */
        static String problem(String path) {
            try {
                readConfig(Path.of(path));
                return null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }

        /** What a reader may know of the settings: security.protocol and sasl.mechanism with their values, the rest by name. */
        String describe() {
            TreeMap<String, String> sorted = new TreeMap<>(settings);
            return String.join(", ", sorted.keySet().stream()
                    .map(k -> k.equals("security.protocol") || k.equals("sasl.mechanism") ? k + "=" + sorted.get(k) : k).toList());
        }

        @Override
        public String toString() {
            return "Config[" + path + ", settings " + new TreeMap<>(settings).keySet() + " (values not shown)]";
        }
    }

    /** These settings on a client's properties. */
    Properties onto(Properties p) {
        p.putAll(settings);
        return p;
    }

    @Override
    public String toString() {
        return "KafkaAccess[" + bootstrap + ", settings " + new TreeMap<>(settings).keySet() + " (values not shown)]";
    }
}
