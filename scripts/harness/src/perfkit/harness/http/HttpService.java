package perfkit.harness.http;

import perfkit.harness.measure.JvmActivity;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A server of the system under test in a JVM of its own (the study's script with {@code --service <role>}),
 * started through the run's Supervisor so it dies with the run, here or on a host of its own ({@link RemoteJvm}).
 * It binds a free port on {@link RemoteJvm#bindAddress} (loopback here) and announces it by printing
 * {@code PERFKIT_PORT <port>}; everything else it prints goes to {@code logs/<name>.log}.
 */
public record HttpService(String name, Process process, String address, int port, JvmActivity.Listener activity, RemoteJvm remote) {
    /** The line a service prints once it listens. */
    public static final String PORT_LINE = "PERFKIT_PORT ";
    static final long START_TIMEOUT_SECONDS = 180;

    /** Starts it and waits until it has printed its port; the port goes into the manifest's notes.ports. */
    public static HttpService start(Run run, String name, List<String> jvmArgs, List<String> args) throws Exception {
        return start(run, name, jvmArgs, args, java.util.Map.of());
    }

    /** The same, handing {@code privateParams} (a password) over stdin: the service reads them with {@code ChildProcess.param}. */
    public static HttpService start(Run run, String name, List<String> jvmArgs, List<String> args, java.util.Map<String, String> privateParams)
            throws Exception {
        return start(run, name, null, jvmArgs, args, privateParams);
    }

    /** The same on another JVM: {@code java} is a java executable (null: the run's --java, else the run's own). */
    public static HttpService start(Run run, String name, String java, List<String> jvmArgs, List<String> args, java.util.Map<String, String> privateParams)
            throws Exception {
        return start(run, name, null, null, java, jvmArgs, args, privateParams);
    }

    /**
     * The same as part {@code part} on {@code host} (null: here): the run's classpath goes there and the JVM binds
     * the address the run reached it on; {@code java} is used there when that host has it, else its own java.
     */
    public static HttpService start(Run run, String name, String part, Ssh host, String java, List<String> jvmArgs, List<String> args,
                                    java.util.Map<String, String> privateParams) throws Exception {
        Path log = Files.createDirectories(run.dir().resolve("logs")).resolve(name.replace('/', '.') + ".log");
        BufferedWriter out = Files.newBufferedWriter(log);
        run.addFile("logs/" + log.getFileName(), "log", "output of " + name);
        CompletableFuture<Integer> port = new CompletableFuture<>();
        JvmActivity.Listener activity = JvmActivity.listen(run.timeSeries(), "jvm:" + name);
        // Netty loads its native transport through System.loadLibrary: JDK 22+ warns on the terminal unless native
        // access is granted (JDK 17+ accepts the option); first, so the user's own options still win
        List<String> withNative = new java.util.ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED"));
        withNative.addAll(jvmArgs);
        java.util.function.Consumer<String> lines = line -> {
            if (line.startsWith(PORT_LINE)) port.complete(Integer.parseInt(line.substring(PORT_LINE.length()).trim()));
            else if (activity.accept(line)) return;
            else synchronized (out) {
                try { out.write(line); out.newLine(); out.flush(); } catch (IOException ignored) { }
            }
        };
        RemoteJvm remote = host == null ? null : RemoteJvm.start(run, part, name, host, java, withNative, run.mainClass(), args, privateParams, lines);
        Process proc = remote == null ? run.startService(name, java, withNative, args, privateParams, lines) : remote.session();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (true) {
            try {
                HttpService s = new HttpService(name, proc, remote == null ? "127.0.0.1" : remote.address(), port.get(500, TimeUnit.MILLISECONDS), activity, remote);
                if (remote != null) {
                    try {
                        remote.record(s.port(), name);
                    } catch (RuntimeException e) {
                        remote.close(); // unreachable from here: it would serve nobody until the run ends
                        throw e;
                    }
                    HttpLoad.placed(proc.pid(), remote);
                }
                synchronized (HttpService.class) { // services may start in parallel, and the notes are a plain map
                    (run.notes().has("ports") ? (ObjectNode) run.notes().get("ports") : run.notes().putObject("ports")).put(name, s.port());
                    run.writeManifest();
                }
                return s;
            } catch (TimeoutException e) {
                String why = !proc.isAlive() ? name + " exited with code " + proc.exitValue() + " before binding a port; see logs/" + log.getFileName()
                        : System.nanoTime() > deadline ? name + " did not bind a port within " + START_TIMEOUT_SECONDS + " s; see logs/" + log.getFileName() : null;
                if (why == null) continue;
                if (remote != null) remote.close(); // its session and folder go now, not when the run ends
                throw new IllegalStateException(why);
            }
        }
    }

    /** Announces a bound port to the study (call it from the service, once it listens); from then on the service also reports its JIT and GC time. */
    public static void announce(int port) {
        System.out.println(PORT_LINE + port);
        System.out.flush();
        JvmActivity.reportEverySecond();
    }

    /** A Spring Boot service's arguments with the address it binds ({@link RemoteJvm#bindAddress}) added. */
    public static String[] springArgs(String[] args) {
        String[] out = java.util.Arrays.copyOf(args, args.length + 1);
        out[args.length] = "--server.address=" + RemoteJvm.bindAddress();
        return out;
    }

    /** Its base URL, as the load driver and the other parts reach it. */
    public String url() { return "http://" + (address.contains(":") ? "[" + address + "]" : address) + ":" + port; }

    /** True when it runs on another host: its CPU comes from that host's readings, not from a process here. */
    public boolean placed() { return remote != null; }

    public void stop(Run run) throws InterruptedException {
        if (remote != null) {
            HttpLoad.unplaced(process.pid());
            remote.close();
        } else run.stopService(name, process);
        run.timeSeries().unwatchCounter("jvm:" + name);
    }
}
