package perfkit.threetier;

import perfkit.harness.os.Disk;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.record.RunLayout;
import perfkit.harness.run.ScriptJvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Cassandra 5.0.9 embedded in a child JVM (scripts/three-tier/cassandra/CassandraNode.java, a classpath of its
 * own), one node per durability setting and fork: the commit log mode is in the yaml, so it takes a fresh start.
 * On loopback with ports it picks free, no JMX, data in the run's scratch folder; supervised, so it dies with the run.
 * With --place cassandra it runs on a host of its own as a part of the run ({@link RemoteJvm}): bound to the address
 * the run reached that host on, its ports picked there, its folder the part's, its CPU from that host.
 * PasswordAuthenticator is on. The node opens its native port only after it has given the default superuser a
 * random password (CassandraNode), so the default login never works, not even for a moment at start-up. The
 * password reaches the node and the writers over their stdin, never a command line or a file.
 */
final class EmbeddedCassandra implements AutoCloseable {
    static final String VERSION = "5.0.9", DATACENTER = "datacenter1";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Cassandra's conf/jvm17-server.options (5.0): the JPMS part it cannot start without, and its Netty settings. */
    static final List<String> JDK17_OPTIONS = List.of(
            "-Djdk.attach.allowAttachSelf=true",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
            "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
            "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
            "--add-exports", "java.base/java.lang.ref=ALL-UNNAMED",
            "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
            "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
            "--add-exports", "jdk.attach/sun.tools.attach=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
            "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens", "java.base/java.io=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens", "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/java.util=ALL-UNNAMED",
            "-Dio.netty.tryReflectionSetAccessible=true",
            "-Dio.netty.allocator.useCacheForAllThreads=true",
            "-Dio.netty.allocator.maxOrder=11");
    /** The GC part of the same file. */
    static final List<String> GC_OPTIONS = List.of("-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled", "-XX:MaxTenuringThreshold=1",
            "-XX:G1HeapRegionSize=16m", "-XX:G1RSetUpdatingPauseTimePercent=5", "-XX:MaxGCPauseMillis=300", "-XX:InitiatingHeapOccupancyPercent=70");
    static final String HEAP = "-Xmx1g";

    /** The two scripts, built and their classpaths read once per run. */
    record Scripts(ScriptJvm node, String clientClasspath) {
        static Scripts prepare(Run run, boolean embedded) throws Exception {
            Path dir = RunLayout.kitRoot().resolve("scripts/three-tier/cassandra");
            Path logs = run.scratchDir().resolve("cassandra-build");
            // both builds at once: each is mostly JBang's own start-up
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                var nodeBuild = pool.submit(() -> embedded ? ScriptJvm.prepare(dir.resolve("CassandraNode.java"), "perfkit.threetier.cassandra.CassandraNode",
                        "the embedded Cassandra node", logs) : null);
                ScriptJvm client = ScriptJvm.prepare(dir.resolve("CassandraClient.java"), CqlBridge.CLIENT_CLASS, "the Cassandra driver", logs);
                ScriptJvm node = unwrap(nodeBuild);
                List<String> cmd = client.command(List.of(), List.of()); // java -cp <classpath> <main>
                return new Scripts(node, cmd.get(cmd.indexOf("-cp") + 1));
            } finally {
                pool.shutdownNow();
            }
        }

        private static ScriptJvm unwrap(java.util.concurrent.Future<ScriptJvm> f) throws Exception {
            try {
                return f.get();
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause() instanceof Exception ex ? ex : e;
            }
        }
    }

    private final Run run;
    /** Its watchdog here, or the session of its part elsewhere. */
    private final Process process;
    /** Its folder here; null for a node elsewhere, whose folder is its part's. */
    private final Path dir;
    private final RemoteJvm remote;
    private final String password;
    private final Map<String, String> yamlSettings;
    /** address:port of its native transport, as the node announced it. */
    private final java.util.concurrent.CompletableFuture<String> contactPoint;
    /** The local copy of a node elsewhere's output; null for a node here, which writes its own log. */
    private final java.io.Closeable remoteLog;

    private EmbeddedCassandra(Run run, Process process, Path dir, RemoteJvm remote, String password, Map<String, String> yamlSettings,
                              java.util.concurrent.CompletableFuture<String> contactPoint, java.io.Closeable remoteLog) {
        this.run = run; this.process = process; this.dir = dir; this.remote = remote; this.password = password; this.yamlSettings = yamlSettings;
        this.contactPoint = contactPoint; this.remoteLog = remoteLog;
    }

    /** The commit log part of the yaml for a durability setting. */
    static Map<String, String> commitlog(String durability) {
        Map<String, String> m = new LinkedHashMap<>();
        if (durability.equals("strict")) {
            m.put("commitlog_sync", "batch"); // fsync before each write is acknowledged
        } else {
            m.put("commitlog_sync", "periodic"); // acknowledged at once, fsync every 10 s (Cassandra's default)
            m.put("commitlog_sync_period", "10000ms");
        }
        return m;
    }

    /**
     * Starts a node, here or as part {@code cassandra} on {@code host} (null: here), and waits until it answers CQL with
     * a fresh random superuser password.
     */
    static EmbeddedCassandra start(Run run, Scripts scripts, String label, String durability, perfkit.harness.os.Ssh host) throws Exception {
        Map<String, String> settings = commitlog(durability);
        Map<String, String> files = Map.of(TEMPLATE, yaml(settings), "logback.xml", LOGBACK);
        List<String> jvm = new ArrayList<>(List.of(HEAP, "-Xss512k"));
        jvm.addAll(GC_OPTIONS);
        jvm.addAll(JDK17_OPTIONS);
        // a single throwaway node: no gossip settling, and the default superuser at once so its password can be replaced
        jvm.addAll(List.of("-Dcassandra-foreground=true", "-Dcassandra.skip_wait_for_gossip_to_settle=0", "-Dcassandra.superuser_setup_delay_ms=0"));
        long t0 = System.nanoTime();
        String password = newPassword();
        var announced = new java.util.concurrent.CompletableFuture<String>();
        EmbeddedCassandra node;
        Path log;
        if (host == null) {
            Path dir = Files.createDirectories(run.scratchDir().resolve("cassandra-" + label));
            Files.createDirectories(dir.resolve("tmp"));
            for (var f : files.entrySet()) Files.writeString(dir.resolve(f.getKey()), f.getValue());
            jvm.add("-Djava.io.tmpdir=" + dir.resolve("tmp"));
            log = dir.resolve("node.log");
            // a throwaway node whose rows are already counted: SIGKILL, no drain (the folder goes with it)
            Process p = scripts.node().start(run, "cassandra", jvm, List.of(dir.toString()), log, "KILL", 5, List.of(dir), password);
            run.timeSeries().watchProcessTree("proc:cassandra", p.pid());
            node = new EmbeddedCassandra(run, p, dir, null, password, settings, announced, null);
            Path nodeLog = log;
            Thread follower = new Thread(() -> followLog(p, nodeLog, announced), "perfkit-cassandra-log");
            follower.setDaemon(true);
            follower.start();
        } else {
            log = Files.createDirectories(run.dir().resolve("logs")).resolve("cassandra-" + label + ".log");
            java.io.BufferedWriter out = Files.newBufferedWriter(log);
            RemoteJvm r;
            try {
                r = RemoteJvm.program(run, "cassandra", "cassandra", host, jvm, scripts.node(),
                        List.of("{work}"), files, password, Map.of(), line -> {
                            synchronized (out) { try { out.write(line); out.newLine(); out.flush(); } catch (IOException ignored) { } }
                            announce(line, announced);
                        });
            } catch (Exception e) {
                out.close();
                throw e;
            }
            node = new EmbeddedCassandra(run, r.session(), null, r, password, settings, announced, out);
        }
        try {
            node.awaitCql(scripts.clientClasspath(), log);
            if (node.remote != null) node.remote.record(node.port(), "Cassandra " + VERSION + " (" + label + ")");
            run.progress().say(String.format(java.util.Locale.ROOT, "Cassandra %s (%s) answers CQL%s after %.1f s", VERSION, label,
                    host == null ? "" : " on " + host, (System.nanoTime() - t0) / 1e9));
        } catch (Exception e) {
            node.close();
            throw e;
        }
        return node;
    }

    private static final String TEMPLATE = "cassandra-template.yaml", STARTED = "PERFKIT_CASSANDRA_STARTED ";
    private static final String LOGBACK = """
            <configuration>
              <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
                <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
              </appender>
              <root level="WARN"><appender-ref ref="STDOUT"/></root>
            </configuration>
            """;

    /** A line the node printed: its announcement says where its native transport listens. */
    private static void announce(String line, java.util.concurrent.CompletableFuture<String> announced) {
        if (line.startsWith(STARTED)) announced.complete(line.substring(STARTED.length()).strip());
    }

    /** Reads a local node's log as it grows, whole lines only, for its announcement. */
    private static void followLog(Process node, Path log, java.util.concurrent.CompletableFuture<String> announced) {
        while (node.isAlive() && !announced.isDone()) {
            try {
                if (Files.exists(log)) {
                    String text = Files.readString(log);
                    text.substring(0, text.lastIndexOf('\n') + 1).lines().forEach(line -> announce(line, announced)); // a line still being written waits
                }
                Thread.sleep(100);
            } catch (IOException ignored) {
                // being written: read it again
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static String newPassword() {
        byte[] secret = new byte[24];
        RANDOM.nextBytes(secret);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    /** The yaml as a template: the node fills in its address and the two ports it picked (CassandraNode). */
    private static String yaml(Map<String, String> commitlog) {
        StringBuilder y = new StringBuilder("""
                # generated by perfkit (scripts/three-tier/inserts/EmbeddedCassandra.java): one throwaway node on its host's address
                cluster_name: perfkit
                num_tokens: 1
                partitioner: org.apache.cassandra.dht.Murmur3Partitioner
                endpoint_snitch: SimpleSnitch
                seed_provider:
                  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
                    parameters:
                      - seeds: "%ADDRESS%:%STORAGE_PORT%"
                listen_address: %ADDRESS%
                rpc_address: %ADDRESS%
                storage_port: %STORAGE_PORT%
                native_transport_port: %NATIVE_PORT%
                # opened by CassandraNode once the superuser's password is set
                start_native_transport: false
                authenticator: PasswordAuthenticator
                authorizer: AllowAllAuthorizer
                role_manager: CassandraRoleManager
                # logins only: the replaced password holds at once; roles stay cached, as they are checked on every request
                credentials_validity: 0ms
                read_request_timeout: 20000ms
                range_request_timeout: 60000ms
                write_request_timeout: 10000ms
                """);
        commitlog.forEach((k, v) -> y.append(k).append(": ").append(v).append('\n'));
        return y.toString();
    }

    /** Waits for the native port (opened only once the password is set) and checks the run's login works. */
    private void awaitCql(String clientClasspath, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        String last = "no answer";
        while (true) {
            if (!process.isAlive()) throw new IllegalStateException("Cassandra did not start: " + lastProblem(log, last));
            if (System.nanoTime() > deadline) throw new IllegalStateException("Cassandra did not answer CQL within 180 s: " + last);
            if (!contactPoint.isDone() || !listening()) { // a socket is cheap; a driver session per attempt would slow the start it waits for
                Thread.sleep(200);
                continue;
            }
            try (CqlBridge cql = CqlBridge.open(clientClasspath, contactPoint(), DATACENTER, user(), password, 10)) {
                cql.execute("SELECT release_version FROM system.local");
                return;
            } catch (CqlBridge.CqlException e) {
                last = e.getMessage();
                Thread.sleep(500);
            }
        }
    }

    private boolean listening() {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(address(), port()), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private String address() {
        String point = contactPoint.join();
        return point.substring(0, point.lastIndexOf(':')).replace("[", "").replace("]", "");
    }

    private int port() {
        String point = contactPoint.join();
        return Integer.parseInt(point.substring(point.lastIndexOf(':') + 1));
    }

    private static String lastProblem(Path log, String fallback) {
        try {
            List<String> lines = Files.readAllLines(log);
            for (int i = lines.size() - 1; i >= 0; i--)
                if (lines.get(i).contains("ERROR") || lines.get(i).contains("Exception")) return lines.get(i).strip();
        } catch (IOException ignored) {
            // no log yet
        }
        return fallback;
    }

    String contactPoint() { return contactPoint.join(); }
    String user() { return "cassandra"; }
    String password() { return password; }
    /** The watchdog's pid here (its tree is the node's JVM and the watchdog's own few ticks); -1 for a node elsewhere. */
    long pid() { return remote == null ? process.pid() : -1; }
    /** The node elsewhere, whose CPU its host's readings give; null for a node here. */
    RemoteJvm remote() { return remote; }
    Map<String, String> yamlSettings() { return yamlSettings; }

    @Override
    public void close() throws InterruptedException {
        if (remote != null) {
            remote.close();
            try { remoteLog.close(); } catch (IOException ignored) { } // all it printed is in
            return;
        }
        run.timeSeries().unwatchProcess("proc:cassandra");
        ScriptJvm.stop(run, process, 20);
        Disk.deleteRecursively(dir);
    }
}
