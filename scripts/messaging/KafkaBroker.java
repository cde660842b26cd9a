package perfkit.messaging;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * A single-node KRaft broker (broker and controller in one), run as its own JVM so its CPU is measured
 * apart from the services. Bound to 127.0.0.1, or on a host of its own ({@code --place broker}) to the address the
 * run reached it on, on ports chosen there; no replication, as in the original. Both listeners ask for SASL/PLAIN
 * as {@link KafkaAccess#USER} with a password made for this broker (handed over stdin, kept out of every file), so another local
 * user cannot read or write the run's topics. Prints "READY" once it serves, and shuts down cleanly on SIGTERM.
 */
final class KafkaBroker {
    static final String FLAG = "--kafka-broker";

    private KafkaBroker() {}

    /** args: FLAG logDir brokerPort controllerPort (0: a free one here); the password is the private parameter "password". */
    static void main(String[] args) throws Exception {
        String address = perfkit.harness.remote.RemoteJvm.bindAddress();
        int brokerPort = port(args[2], address), controllerPort = port(args[3], address);
        String password = perfkit.harness.process.ChildProcess.param("password");
        if (password == null) throw new IllegalStateException("the Kafka broker starts with its password on stdin, as a run hands it over");
        KafkaRaftServer server = start(Path.of(args[1]), address, brokerPort, controllerPort, password);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdown();
            server.awaitShutdown();
        }, "broker-shutdown"));
        System.out.println("READY " + (address.contains(":") ? "[" + address + "]" : address) + ":" + brokerPort);
        System.out.flush();
        server.awaitShutdown();
    }

    /** The port given, or with 0 one free on {@code address} here (the run chose none for a broker on another host). */
    private static int port(String given, String address) throws java.io.IOException {
        int port = Integer.parseInt(given);
        if (port != 0) return port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(address))) {
            return s.getLocalPort();
        }
    }

    /** Formats {@code logDir} and starts a broker and controller on {@code address} that admit {@code password}; returns once it serves. */
    static KafkaRaftServer start(Path logDir, String address, int brokerPort, int controllerPort, String password) throws Exception {
        Files.createDirectories(logDir);
        String host = address.contains(":") ? "[" + address + "]" : address;
        Properties props = new Properties();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@" + host + ":" + controllerPort);
        props.put("listeners", "SASL_PLAINTEXT://" + host + ":" + brokerPort + ",CONTROLLER://" + host + ":" + controllerPort);
        props.put("advertised.listeners", "SASL_PLAINTEXT://" + host + ":" + brokerPort);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "SASL_PLAINTEXT");
        props.put("listener.security.protocol.map", "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT");
        props.put("sasl.enabled.mechanisms", "PLAIN");
        props.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        props.put("sasl.mechanism.controller.protocol", "PLAIN");
        props.put("log.dirs", logDir.toString());
        props.put("offsets.topic.replication.factor", "1");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("auto.create.topics.enable", "false");
        Path propsFile = logDir.resolveSibling("broker.properties");
        try (Writer w = Files.newBufferedWriter(propsFile)) {
            props.store(w, "perfkit single-node KRaft broker");
        }
        int rc = StorageTool.execute(new String[]{"format", "-t", Uuid.randomUuid().toString(), "-c", propsFile.toString()},
                new PrintStream(OutputStream.nullOutputStream()));
        if (rc != 0) throw new IllegalStateException("formatting the Kafka log directory failed with code " + rc);
        // the logins only in memory, after the file was written: each listener admits the one user, and the
        // broker logs in with it to its own controller
        for (String listener : new String[]{"sasl_plaintext", "controller"})
            props.put("listener.name." + listener + ".plain.sasl.jaas.config", KafkaAccess.plainLogin(password, true));
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
        server.startup();
        return server;
    }
}
