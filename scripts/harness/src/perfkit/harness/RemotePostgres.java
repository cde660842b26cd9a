package perfkit.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A private, throwaway PostgreSQL cluster on another host ({@code --place db=user@host}), as {@link PrivatePostgres}
 * is on this one: scram-sha-256 with a random per-run password, reachable from the run's address only, and gone with
 * the run. Its agent (scripts/harness/parts/postgres.py) runs over SSH under a {@link Watchdog}; the agent stops the
 * server and removes its folder when its stdin closes, so the run ending, the run dying (its watchdog kills the
 * ssh client) and the link dropping all end it. Nothing of it is a secret on a command line: the agent's text and
 * the password travel on stdin.
 * <p>
 * What the run records of the host (the manifest's {@code placement}): its fingerprint, the round trip to the server's
 * port, the clock offset at the start and the end, and the database's CPU from the host's own /proc.
 */
public final class RemotePostgres implements AutoCloseable {
    /** Reads one JSON line (the agent's text, the password, the settings) and runs the agent with it. */
    static final String BOOTSTRAP = "import sys, json; m = json.loads(sys.stdin.readline()); "
            + "exec(compile(m.pop('code'), 'perfkit-part-postgres', 'exec'), {'MESSAGE': m, '__name__': '__main__'})";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int READY_TIMEOUT_S = 120;

    /** One reading of the agent: epoch ms on the host's clock, the server tree's CPU seconds, the host's /proc/stat. */
    record Sample(long epochMs, double dbCpuSeconds, long[] stat) {}

    private final Run run;
    private final Ssh host;
    private final String password;
    private final ObjectNode placement;
    private final List<Sample> samples = new ArrayList<>();
    private final CompletableFuture<JsonNode> ready = new CompletableFuture<>();
    private final StringBuilder otherOutput = new StringBuilder();
    private Supervisor.Child agent;
    private String address, folder;
    private int port;

    private RemotePostgres(Run run, Ssh host, String password) {
        this.run = run;
        this.host = host;
        this.password = password;
        this.placement = Manifest.newObject();
    }

    /** Starts the cluster on {@code host} and waits until it accepts connections; {@code settings} become {@code -c name=value}. */
    public static RemotePostgres start(Run run, String part, Ssh host, Map<String, String> settings) throws Exception {
        byte[] secret = new byte[24];
        RANDOM.nextBytes(secret);
        RemotePostgres pg = new RemotePostgres(run, host, Base64.getUrlEncoder().withoutPadding().encodeToString(secret));
        run.onFinish(pg::close); // however the run ends: the clock at the end, and the check that nothing is left
        pg.launch(part, settings);
        return pg;
    }

    private void launch(String part, Map<String, String> settings) throws Exception {
        ObjectNode message = Manifest.newObject();
        message.put("code", Files.readString(RunLayout.kitRoot().resolve("scripts/harness/parts/postgres.py")));
        message.put("password", password);
        settings.forEach(message.putObject("settings")::put);
        if (!message.has("settings")) message.putObject("settings");
        // SIGTERM ends the ssh client, which closes the session: the agent sees EOF and tidies up on its host
        agent = run.supervisor().launchProgram(part + "@" + host, host.command("python3", "-c", Ssh.shellWord(BOOTSTRAP)), null, "TERM", 10,
                List.of(), Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(message)); // one line
        Supervisor.pipeLines(part, agent.process(), this::onLine);
        JsonNode r;
        try {
            r = ready.get(READY_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("PostgreSQL on " + host + " was not ready within " + READY_TIMEOUT_S + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause().getMessage());
        }
        address = r.path("address").asText();
        port = r.path("port").asInt();
        folder = r.path("folder").asText();
        placement.put("part", part);
        placement.put("host", host.destination());
        placement.put("address", address);
        placement.put("service", r.path("server").asText());
        placement.set("fingerprint", r.path("host"));
        placement.set("rttMs", connectRtt(address, port));
        placement.putObject("clock").set("start", host.clockOffset());
        run.placed(placement);
        run.notes().put("postgresqlServer", r.path("server").asText());
    }

    private void onLine(String line) {
        int space = line.indexOf(' ');
        String kind = space < 0 ? line : line.substring(0, space), payload = space < 0 ? "" : line.substring(space + 1);
        try {
            switch (kind) {
                case "ready" -> ready.complete(Manifest.JSON.readTree(payload));
                case "error" -> ready.completeExceptionally(new IllegalStateException("PostgreSQL on " + host + ": " + payload));
                case "sample" -> {
                    JsonNode s = Manifest.JSON.readTree(payload);
                    long[] stat = new long[s.path("stat").size()];
                    for (int i = 0; i < stat.length; i++) stat[i] = s.path("stat").get(i).asLong();
                    synchronized (samples) { samples.add(new Sample(s.path("epochMs").asLong(), s.path("dbCpuS").asDouble(), stat)); }
                }
                default -> other(line);
            }
        } catch (IOException e) {
            other(line);
        }
        if (!agent.process().isAlive() && !ready.isDone())
            ready.completeExceptionally(new IllegalStateException("PostgreSQL on " + host + " did not start: " + lastOther()));
    }

    private void other(String line) {
        synchronized (otherOutput) {
            if (otherOutput.length() < 4096) otherOutput.append(line.strip()).append('\n');
        }
        // the agent never started (ssh failed): its output ends without a ready line
        if (!ready.isDone() && agent != null) CompletableFuture.runAsync(() -> {
            try { agent.process().waitFor(5, TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
            if (!agent.process().isAlive())
                ready.completeExceptionally(new IllegalStateException("PostgreSQL on " + host + " did not start: " + lastOther()));
        });
    }

    private String lastOther() {
        synchronized (otherOutput) {
            String[] lines = otherOutput.toString().strip().split("\n");
            return lines[lines.length - 1];
        }
    }

    /**
     * The round trip from here to the server's port: a TCP connect takes one (SYN, SYN-ACK). Minimum and median of
     * 20 connects, so a reader can tell the link's delay from what the drain saw.
     */
    static ObjectNode connectRtt(String address, int port) {
        double[] ms = new double[20];
        int n = 0;
        for (int i = 0; i < ms.length; i++) {
            try (Socket s = new Socket()) {
                long t0 = System.nanoTime();
                s.connect(new InetSocketAddress(address, port), 2000);
                ms[n++] = (System.nanoTime() - t0) / 1e6;
            } catch (IOException e) {
                // counted as missing
            }
        }
        ObjectNode o = Manifest.newObject();
        o.put("method", "TCP connect to the service's port");
        o.put("samples", n);
        if (n == 0) { o.putNull("min"); o.putNull("median"); return o; }
        double[] got = Arrays.copyOf(ms, n);
        Arrays.sort(got);
        o.put("min", got[0]);
        o.put("median", got[n / 2]);
        return o;
    }

    public String jdbcUrl() {
        String h = address.contains(":") ? "[" + address + "]" : address;
        return "jdbc:postgresql://" + h + ":" + port + "/postgres";
    }

    public String user() { return "postgres"; }
    /** The per-run password; pass it to forks in their parameters (stdin), never print or store it. */
    public String password() { return password; }
    public String address() { return address; }
    public int port() { return port; }
    public Ssh host() { return host; }

    /**
     * The database's CPU in percent of one of its host's cores between two instants of this host's clock, from the
     * agent's readings (corrected by the clock offset measured at the start); NaN without readings around both.
     * Waits briefly for the reading after {@code toMs}.
     */
    public double cpuPercent(long fromMs, long toMs) throws InterruptedException {
        long offset = Math.round(placement.path("clock").path("start").path("offsetMs").asDouble(0));
        long a = fromMs + offset, b = toMs + offset, deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < deadline && lastSampleMs() < b) Thread.sleep(50);
        double ca = cpuAt(a), cb = cpuAt(b);
        return Double.isNaN(ca) || Double.isNaN(cb) || b <= a ? Double.NaN : 100.0 * (cb - ca) / ((b - a) / 1000.0);
    }

    private long lastSampleMs() {
        synchronized (samples) { return samples.isEmpty() ? Long.MIN_VALUE : samples.get(samples.size() - 1).epochMs(); }
    }

    /** The server's CPU seconds at {@code epochMs}, interpolated between the readings around it. */
    private double cpuAt(long epochMs) {
        synchronized (samples) {
            for (int i = 1; i < samples.size(); i++) {
                Sample p = samples.get(i - 1), q = samples.get(i);
                if (p.epochMs() <= epochMs && epochMs <= q.epochMs())
                    return q.epochMs() == p.epochMs() ? q.dbCpuSeconds()
                            : p.dbCpuSeconds() + (q.dbCpuSeconds() - p.dbCpuSeconds()) * (epochMs - p.epochMs()) / (q.epochMs() - p.epochMs());
            }
            return Double.NaN;
        }
    }

    /**
     * Stops the server through its agent and checks that its folder is gone from the host; the clock offset at the
     * end goes into the manifest. Safe to call twice; the run calls it too when it ends.
     */
    @Override
    public void close() {
        if (agent == null) return;
        Supervisor.Child a = agent;
        agent = null;
        try {
            a.stdin().close();
        } catch (IOException ignored) {
            // the watchdog is gone already
        }
        try {
            // the watchdog ends the ssh client; the agent on the host then stops the server and removes its folder
            run.supervisor().stop(a, 20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (folder == null) return;
        ObjectNode end = host.clockOffset();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean gone;
        while (!(gone = host.gone(folder)) && System.nanoTime() < deadline) {
            try { Thread.sleep(500); } catch (InterruptedException e) { Thread.currentThread().interrupt(); break; }
        }
        ((ObjectNode) placement.path("clock")).set("end", end);
        placement.put("leftBehind", !gone);
        run.writeManifest();
        if (!gone) run.progress().say("warning: PostgreSQL's folder " + folder + " is still on " + host + " after the run");
    }
}
