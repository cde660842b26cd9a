///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.cassandra:cassandra-all:5.0.9
//DESCRIPTION One embedded Cassandra 5.0.9 node for the three-tier study's inserts round (started by scripts/three-tier/inserts/EmbeddedCassandra.java)
package perfkit.threetier.cassandra;

import org.apache.cassandra.auth.AuthenticatedUser;
import org.apache.cassandra.auth.IRoleManager;
import org.apache.cassandra.auth.RoleOptions;
import org.apache.cassandra.auth.RoleResource;
import org.apache.cassandra.config.DatabaseDescriptor;
import org.apache.cassandra.service.CassandraDaemon;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A single Cassandra node in this JVM, in the folder given as its one argument: there the study left a yaml template
 * and a quiet logback file; the node picks its two ports free on its address (the one a part on another host was
 * reached on, else loopback), writes {@code cassandra.yaml} from the template, keeps its data in {@code storage/}, and
 * prints {@code PERFKIT_CASSANDRA_STARTED <address>:<native port>} once it serves. Its JVM options are Cassandra's JDK
 * 17 set. Its own classpath: cassandra-all brings Netty 4.1 and Guava versions that clash with the study's Spring Boot 4.
 * <p>
 * No client ever meets the default {@code cassandra}/{@code cassandra} login: the yaml keeps the native transport
 * off, this JVM gives the default superuser the run's password (first line of stdin) through the role manager
 * itself, and only then opens the native port. stdin stays open while the study's watchdog lives: EOF means the run
 * is gone, and the node stops (its watchdog also has the kernel kill it if the watchdog itself is killed).
 */
public final class CassandraNode {
    static final String SUPERUSER = "cassandra";
    private static final int EXIT_PARENT_GONE = 143;

    /** The template's placeholders, which the node fills in. */
    static final String ADDRESS = "%ADDRESS%", NATIVE_PORT = "%NATIVE_PORT%", STORAGE_PORT = "%STORAGE_PORT%";
    static final String TEMPLATE = "cassandra-template.yaml", STARTED = "PERFKIT_CASSANDRA_STARTED ";

    public static void main(String[] args) throws Exception {
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String password = stdin.readLine();
        if (password == null || password.isBlank()) {
            System.err.println("cassandra node: no password on stdin; the run is gone");
            System.exit(EXIT_PARENT_GONE);
        }
        stopWhenStdinCloses(stdin);
        Path dir = Path.of(args[0]).toAbsolutePath();
        String address = System.getenv().getOrDefault("PERFKIT_BIND", "").isBlank() ? "127.0.0.1" : System.getenv("PERFKIT_BIND");
        int nativePort = freePort(address), storagePort = freePort(address);
        Files.writeString(dir.resolve("cassandra.yaml"), Files.readString(dir.resolve(TEMPLATE)).replace(ADDRESS, address)
                .replace(NATIVE_PORT, Integer.toString(nativePort)).replace(STORAGE_PORT, Integer.toString(storagePort)));
        // before any Cassandra class reads them
        System.setProperty("cassandra.config", dir.resolve("cassandra.yaml").toUri().toString());
        System.setProperty("cassandra.storagedir", dir.resolve("storage").toString());
        System.setProperty("logback.configurationFile", dir.resolve("logback.xml").toString());
        CassandraDaemon daemon = new CassandraDaemon(true);
        try {
            daemon.activate(); // exits the JVM itself when the node cannot start
            replaceDefaultPassword(password);
            daemon.startNativeTransport();
        } catch (Throwable t) {
            System.err.println("cassandra node failed to start: " + t);
            System.exit(1);
        }
        System.out.println(STARTED + (address.contains(":") ? "[" + address + "]" : address) + ":" + nativePort);
        System.out.flush();
    }

    /** A port free on {@code address} now; the node binds it moments later, as the run used to on its own host. */
    private static int freePort(String address) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(address))) {
            return s.getLocalPort();
        }
    }

    /**
     * Waits for the default superuser (Cassandra creates it on a scheduled task after start-up, with timestamp 0 so
     * that any later change wins) and sets its password, all inside this JVM.
     */
    private static void replaceDefaultPassword(String password) throws InterruptedException {
        IRoleManager roles = DatabaseDescriptor.getRoleManager();
        RoleResource superuser = RoleResource.role(SUPERUSER);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!roles.isExistingRole(superuser)) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("the default superuser was not created within 120 s");
            Thread.sleep(100);
        }
        RoleOptions options = new RoleOptions();
        options.setOption(IRoleManager.Option.PASSWORD, password);
        roles.alterRole(AuthenticatedUser.SYSTEM_USER, superuser, options);
    }

    private static void stopWhenStdinCloses(BufferedReader stdin) {
        Thread t = new Thread(() -> {
            try {
                while (stdin.readLine() != null) { /* nothing else is sent; EOF is the signal */ }
            } catch (IOException ignored) {
                // a broken pipe means the same
            }
            System.err.println("cassandra node: its watchdog is gone; stopping");
            System.exit(EXIT_PARENT_GONE);
        }, "perfkit-stdin-watchdog");
        t.setDaemon(true);
        t.start();
    }
}
