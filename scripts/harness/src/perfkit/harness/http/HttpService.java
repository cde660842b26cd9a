package perfkit.harness;

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
 * started through the run's Supervisor so it dies with the run. It binds a free loopback port and announces it by
 * printing {@code PERFKIT_PORT <port>}; everything else it prints goes to {@code logs/<name>.log}.
 */
public record HttpService(String name, Process process, int port, JvmActivity.Listener activity) {
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
        Path log = Files.createDirectories(run.dir().resolve("logs")).resolve(name.replace('/', '.') + ".log");
        BufferedWriter out = Files.newBufferedWriter(log);
        run.addFile("logs/" + log.getFileName(), "log", "output of " + name);
        CompletableFuture<Integer> port = new CompletableFuture<>();
        JvmActivity.Listener activity = JvmActivity.listen(run.timeSeries(), "jvm:" + name);
        // Netty loads its native transport through System.loadLibrary: JDK 22+ warns on the terminal unless native
        // access is granted (JDK 17+ accepts the option); first, so the user's own options still win
        List<String> withNative = new java.util.ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED"));
        withNative.addAll(jvmArgs);
        Process proc = run.startService(name, java, withNative, args, privateParams, line -> {
            if (line.startsWith(PORT_LINE)) port.complete(Integer.parseInt(line.substring(PORT_LINE.length()).trim()));
            else if (activity.accept(line)) return;
            else synchronized (out) {
                try { out.write(line); out.newLine(); out.flush(); } catch (IOException ignored) { }
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (true) {
            try {
                HttpService s = new HttpService(name, proc, port.get(500, TimeUnit.MILLISECONDS), activity);
                synchronized (HttpService.class) { // services may start in parallel, and the notes are a plain map
                    (run.notes().has("ports") ? (ObjectNode) run.notes().get("ports") : run.notes().putObject("ports")).put(name, s.port());
                    run.writeManifest();
                }
                return s;
            } catch (TimeoutException e) {
                if (!proc.isAlive()) throw new IllegalStateException(name + " exited with code " + proc.exitValue() + " before binding a port; see logs/" + log.getFileName());
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException(name + " did not bind a port within " + START_TIMEOUT_SECONDS + " s; see logs/" + log.getFileName());
            }
        }
    }

    /** Announces a bound port to the study (call it from the service, once it listens); from then on the service also reports its JIT and GC time. */
    public static void announce(int port) {
        System.out.println(PORT_LINE + port);
        System.out.flush();
        JvmActivity.reportEverySecond();
    }

    public String url() { return "http://127.0.0.1:" + port; }

    public void stop(Run run) throws InterruptedException {
        run.stopService(name, process);
        run.timeSeries().unwatchCounter("jvm:" + name);
    }
}
