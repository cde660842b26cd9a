package perfkit.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.ArrayList;
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
    /** The agent's own worst case: initdb (120 s) and the server's start (60 s). */
    private static final int READY_TIMEOUT_S = 200;
    private static final int CLOSE_CHECKS_S = 20;

    /** One reading of the agent: epoch ms on the host's clock, the server tree's CPU seconds, the host's /proc/stat. */
    record Sample(long epochMs, double dbCpuSeconds, long[] stat) {}

    private final Run run;
    private final Ssh host;
    private final String password;
    private final ObjectNode placement;
    private final List<Sample> samples = new ArrayList<>();
    private final CompletableFuture<JsonNode> ready = new CompletableFuture<>();
    private final StringBuilder otherOutput = new StringBuilder();
    private volatile Supervisor.Child agent;
    private volatile List<String> gaugeSeries = List.of();
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

    /**
     * What keeps {@code host} from running the cluster (no server binaries, no setpriv, no user postgres when logged in
     * as root), in one line for the user before the run starts; null when it can. The agent itself answers, in its
     * check mode. Ask it after {@link Ssh#problem} (the {@code --place} option's own rule).
     */
    public static String problem(Ssh host) {
        try {
            Process p = new ProcessBuilder(host.command("python3", "-c", Ssh.shellWord(BOOTSTRAP))).redirectErrorStream(true).start();
            try (var in = p.getOutputStream()) {
                in.write((oneLine(message(Map.of("check", true))) + "\n").getBytes(StandardCharsets.UTF_8));
            }
            if (!p.waitFor(Ssh.CONNECT_TIMEOUT_S + 20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return host + " did not answer the PostgreSQL part's check within " + (Ssh.CONNECT_TIMEOUT_S + 20) + " s";
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (out.equals("ok")) return null;
            String last = out.isEmpty() ? "no answer" : out.lines().reduce((a, b) -> b).orElse(out);
            return "cannot place db on " + host + ": " + (last.startsWith("error ") ? last.substring(6) : last);
        } catch (IOException e) {
            return "cannot run ssh: " + Sys.reason(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking " + host;
        }
    }

    private static ObjectNode message(Map<String, Object> fields) throws IOException {
        ObjectNode m = Manifest.newObject();
        m.put("code", Files.readString(RunLayout.kitRoot().resolve("scripts/harness/parts/postgres.py")));
        fields.forEach((k, v) -> m.set(k, Manifest.JSON.valueToTree(v)));
        return m;
    }

    private static String oneLine(ObjectNode message) throws IOException {
        return Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(message);
    }

    private void launch(String part, Map<String, String> settings) throws Exception {
        String message = oneLine(message(Map.of("password", password, "settings", settings)));
        // SIGTERM ends the ssh client, which closes the session: the agent sees EOF and tidies up on its host
        Supervisor.Child a = run.supervisor().launchProgram(part + "@" + host, host.command("python3", "-c", Ssh.shellWord(BOOTSTRAP)), null, "TERM", 10,
                List.of(), message);
        agent = a;
        ChildProcess.daemon("perfkit-part-" + part, () -> read(a));
        ChildProcess.daemon("perfkit-part-heartbeat-" + part, () -> heartbeat(a));
        JsonNode r;
        try {
            r = ready.get(READY_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("PostgreSQL on " + host + " was not ready within " + READY_TIMEOUT_S + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(String.valueOf(e.getCause().getMessage()));
        }
        address = r.path("address").asText();
        port = r.path("port").asInt();
        folder = r.path("folder").asText();
        ObjectNode rtt = NetworkPath.rtt(address, port);
        // the agent listens where SSH reached it, which a jump host or NAT in between hides from this host
        if (rtt.path("samples").asInt() == 0)
            throw new IllegalStateException("PostgreSQL on " + host + " listens on " + address + ":" + port + ", which this host cannot reach "
                    + "(a jump host or NAT between them is not supported)");
        placement.put("part", part);
        placement.put("host", host.destination());
        placement.put("address", address);
        placement.put("service", r.path("server").asText());
        placement.set("fingerprint", r.path("host"));
        placement.set("rttMs", rtt);
        placement.set("link", NetworkPath.link(address));
        placement.putObject("clock").set("start", host.clockOffset());
        run.placed(placement);
        run.notes().put("postgresqlServer", r.path("server").asText());
        // the part's host in the time series, as this host is (system) and a local server is (proc:postgres)
        run.timeSeries().watchGauge("proc:postgres@" + part, "cpu_pct", () -> latest((p, q) -> 100.0 * (q.dbCpuSeconds() - p.dbCpuSeconds())
                / ((q.epochMs() - p.epochMs()) / 1000.0)));
        run.timeSeries().watchGauge("host:" + part, "cpu_pct", () -> latest((p, q) -> statPercent(p, q, false)));
        run.timeSeries().watchGauge("host:" + part, "steal_pct", () -> latest((p, q) -> statPercent(p, q, true)));
        gaugeSeries = List.of("proc:postgres@" + part, "host:" + part);
    }

    /** The agent's lines until its output ends; an end before "ready" fails the start with the last thing it said. */
    private void read(Supervisor.Child a) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(a.process().getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) onLine(line);
        } catch (IOException ignored) {
            // the session ended
        }
        ready.completeExceptionally(new IllegalStateException("PostgreSQL on " + host + " did not start: " + lastOther()));
    }

    /** A line every 2 s: the agent stops when none comes for a while, as after a link that dropped without closing. */
    private void heartbeat(Supervisor.Child a) {
        while (a.process().isAlive() && agent == a) {
            try {
                a.stdin().write('\n');
                a.stdin().flush();
                Thread.sleep(2000);
            } catch (IOException e) {
                return;
            } catch (InterruptedException e) {
                return;
            }
        }
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
    }

    private void other(String line) {
        synchronized (otherOutput) {
            if (otherOutput.length() < 4096) otherOutput.append(line.strip()).append('\n');
        }
    }

    private String lastOther() {
        synchronized (otherOutput) {
            String[] lines = otherOutput.toString().strip().split("\n");
            return lines[lines.length - 1].isEmpty() ? "the SSH session ended without a word" : lines[lines.length - 1];
        }
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

    /**
     * The database host's busy CPU in percent of one of its cores between two instants of this host's clock, from
     * its /proc/stat as the agent read it, and its core count; NaN without readings around both.
     */
    public double hostBusyPercent(long fromMs, long toMs) {
        long offset = Math.round(placement.path("clock").path("start").path("offsetMs").asDouble(0));
        Sample a = nearest(fromMs + offset), b = nearest(toMs + offset);
        return a == null || b == null || b.epochMs() <= a.epochMs() ? Double.NaN : statPercent(a, b, false);
    }

    /** The database host's logical cores, from its fingerprint. */
    public int hostCores() { return placement.path("fingerprint").path("logicalCores").asInt(1); }

    private Sample nearest(long epochMs) {
        synchronized (samples) {
            Sample best = null;
            for (Sample s : samples) if (best == null || Math.abs(s.epochMs() - epochMs) < Math.abs(best.epochMs() - epochMs)) best = s;
            return best;
        }
    }

    /**
     * A figure over about the last second of readings: the newest, and the earlier one closest to a second before it.
     * NaN before there are two, or when the newest is over 2 s old (the agent stalled: no figure rather than a stale one).
     */
    private double latest(java.util.function.BiFunction<Sample, Sample, Double> over) {
        long offset = Math.round(placement.path("clock").path("start").path("offsetMs").asDouble(0));
        synchronized (samples) {
            if (samples.size() < 2) return Double.NaN;
            Sample q = samples.get(samples.size() - 1), p = null;
            if (System.currentTimeMillis() + offset - q.epochMs() > 2000) return Double.NaN;
            for (int i = samples.size() - 2; i >= 0 && q.epochMs() - samples.get(i).epochMs() <= 2000; i--)
                if (p == null || Math.abs(q.epochMs() - samples.get(i).epochMs() - 1000) < Math.abs(q.epochMs() - p.epochMs() - 1000)) p = samples.get(i);
            return p != null && q.epochMs() > p.epochMs() ? over.apply(p, q) : Double.NaN;
        }
    }

    /**
     * The host's busy (or steal) CPU between two readings, in percent of one of its cores: /proc/stat's user, nice,
     * system, idle, iowait, irq, softirq and steal (guest time is inside user already); busy is all but idle and iowait.
     */
    private double statPercent(Sample p, Sample q, boolean steal) { return statPercent(p.stat(), q.stat(), hostCores(), steal); }

    static double statPercent(long[] before, long[] after, int cores, boolean steal) {
        if (before.length < 8 || after.length < 8) return Double.NaN;
        long total = 0;
        for (int i = 0; i < 8; i++) total += after[i] - before[i];
        if (total <= 0) return Double.NaN;
        long part = steal ? after[7] - before[7] : total - ((after[3] + after[4]) - (before[3] + before[4]));
        return 100.0 * cores * part / total;
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
        gaugeSeries.forEach(run.timeSeries()::unwatchGauges);
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
        // bounded: a host that became unreachable must not hold up a Ctrl-C
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_CHECKS_S);
        ObjectNode end = host.clockOffset();
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
