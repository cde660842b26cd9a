package perfkit.harness.remote;

import perfkit.harness.os.Processes;

import perfkit.harness.os.Disk;
import perfkit.harness.record.Manifest;
import perfkit.harness.run.Run;
import perfkit.harness.record.RunLayout;
import perfkit.harness.os.Ssh;
import perfkit.harness.process.Supervisor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One part of a run on another host ({@code --place part=user@host}): its agent (scripts/harness/parts/host.py and the
 * part's own file) runs over SSH under a {@link Watchdog}, so the run ending, the run dying (the watchdog kills the
 * ssh client) and the link dropping (no heartbeat for 30 s) all end the part and remove its folder there. The
 * agent's text and any secret travel on stdin, never on a command line.
 * <p>
 * What the run records of the host (the manifest's {@code placement}): its fingerprint, the round trip to the part,
 * the link, the clock offset at the start and the end, whether anything was left behind; and in the time series,
 * the part's and the host's CPU from the host's own /proc.
 */
public final class RemotePart implements AutoCloseable {
    /** Reads one JSON line (the agent's text, its part's name and its message) and runs the agent with it. */
    static final String BOOTSTRAP = "import sys, json; m = json.loads(sys.stdin.buffer.readline()); "
            + "exec(compile(m.pop('code'), 'perfkit-part-' + m.pop('kind'), 'exec'), {'MESSAGE': m, '__name__': '__main__'})";
    private static final int CLOSE_CHECKS_S = 20;
    /** The handler called once the agent's output has ended, with the last thing it said. */
    static final String END = "end of output";

    /** One reading of the agent: epoch ms on the host's clock, the part's CPU seconds, the host's /proc/stat. */
    record Sample(long epochMs, double partCpuSeconds, long[] stat) {}

    private final Run run;
    private final String part, kind;
    private final Ssh host;
    private final ObjectNode placement = Manifest.newObject();
    private final List<Sample> samples = new ArrayList<>();
    private final CompletableFuture<JsonNode> ready = new CompletableFuture<>();
    private final StringBuilder otherOutput = new StringBuilder();
    private final Map<String, Consumer<String>> handlers;
    private volatile Consumer<RemotePart> onReady = p -> { };
    private volatile Supervisor.Child agent;
    /** The gauges this part feeds: series, metric and supplier, so stopping them leaves another part's on the same host alone. */
    private final List<Gauge> gauges = new java.util.concurrent.CopyOnWriteArrayList<>();

    private record Gauge(String series, String metric, java.util.function.DoubleSupplier value) {}
    private volatile String folder;

    /**
     * A part of {@code kind} (its agent: {@code parts/<kind>.py}) named {@code part}; {@code readyKind} is the line that
     * says it runs, and {@code handlers} take the agent's other kinds of line.
     */
    private RemotePart(Run run, String part, String kind, Ssh host, Map<String, Consumer<String>> handlers) {
        this.run = run;
        this.part = part;
        this.kind = kind;
        this.host = host;
        this.handlers = handlers;
    }

    /** The agent's text and {@code fields}, as the one line the bootstrap reads. */
    static String message(String kind, Map<String, ?> fields) throws IOException {
        ObjectNode m = Manifest.newObject();
        m.put("code", Files.readString(RunLayout.kitRoot().resolve("scripts/harness/parts/host.py")) + "\n"
                + Files.readString(RunLayout.kitRoot().resolve("scripts/harness/parts/" + kind + ".py")));
        m.put("kind", kind);
        fields.forEach((k, v) -> m.set(k, Manifest.JSON.valueToTree(v)));
        return Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(m);
    }

    /** The ssh command that runs a part's agent on {@code host}. */
    static List<String> agentCommand(Ssh host) {
        return host.command("python3", "-c", Ssh.shellWord(BOOTSTRAP));
    }

    /**
     * What keeps {@code host} from running a part of {@code kind}, in one line for the user before the run starts;
     * null when it can. The agent itself answers, in its check mode. Ask it after {@link Ssh#problem}.
     */
    public static String problem(String kind, String what, Ssh host, Map<String, ?> fields) {
        Map<String, Object> check = new java.util.LinkedHashMap<>(fields);
        check.put("check", true);
        try {
            Process p = new ProcessBuilder(agentCommand(host)).redirectErrorStream(true).start();
            try (var in = p.getOutputStream()) {
                in.write((message(kind, check) + "\n").getBytes(StandardCharsets.UTF_8));
            }
            if (!p.waitFor(Ssh.CONNECT_TIMEOUT_S + 20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return host + " did not answer the " + what + " part's check within " + (Ssh.CONNECT_TIMEOUT_S + 20) + " s";
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (out.equals("ok")) return null;
            String last = out.isEmpty() ? "no answer" : out.lines().reduce((a, b) -> b).orElse(out);
            return "cannot place " + what + " on " + host + ": " + (last.startsWith("error ") ? last.substring(6) : last);
        } catch (IOException e) {
            return "cannot run ssh: " + Disk.reason(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking " + host;
        }
    }

    /**
     * Starts the agent with {@code fields} as its message and waits (at most {@code readySeconds}) for its line
     * {@code readyKind}, whose JSON it returns; the part's CPU is then watched in the time series as {@code processSeries}
     * and its host's as {@code host:<part>}. {@link #record} puts it in the manifest.
     */
    public static RemotePart start(Run run, String part, String kind, Ssh host, Map<String, ?> fields, String readyKind, int readySeconds,
                            String processSeries, Map<String, Consumer<String>> handlers) throws Exception {
        return start(run, part, kind, host, fields, readyKind, readySeconds, processSeries, handlers, p -> { });
    }

    /**
     * The same, telling {@code onReady} of the part the moment its ready line arrives, before this host measures its
     * clock and its round trip (a few seconds over SSH): a fork may begin measuring by then.
     */
    public static RemotePart start(Run run, String part, String kind, Ssh host, Map<String, ?> fields, String readyKind, int readySeconds,
                            String processSeries, Map<String, Consumer<String>> handlers, Consumer<RemotePart> onReady) throws Exception {
        RemotePart p = new RemotePart(run, part, kind, host, handlers);
        p.onReady = onReady;
        run.onFinish(p::close); // however the run ends: the clock at the end, and the check that nothing is left
        p.launch(fields, readyKind, readySeconds, processSeries);
        return p;
    }

    private JsonNode readyJson;

    private void launch(Map<String, ?> fields, String readyKind, int readySeconds, String processSeries) throws Exception {
        // SIGTERM ends the ssh client, which closes the session: the agent sees EOF and tidies up on its host
        Supervisor.Child a = run.supervisor().launchProgram(part + "@" + host, agentCommand(host), null, "TERM", 10, List.of(), message(kind, fields));
        agent = a;
        Processes.daemon("perfkit-part-" + part, () -> read(a, readyKind));
        Processes.daemon("perfkit-part-heartbeat-" + part, () -> heartbeat(a));
        try {
            readyJson = ready.get(readySeconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            close(); // it may be running already: it must not work on unseen until the run ends
            throw new IllegalStateException(part + " on " + host + " was not ready within " + readySeconds + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            close();
            throw new IllegalStateException(String.valueOf(e.getCause().getMessage()));
        }
        folder = readyJson.path("folder").asText(null);
        placement.put("part", part);
        placement.put("host", host.destination());
        placement.put("address", readyJson.path("address").asText());
        placement.set("fingerprint", readyJson.path("host"));
        ObjectNode clock = host.clockOffset();
        placement.putObject("clock").set("start", clock);
        // every figure of the part is placed on this host's clock by it: without it, none would mean what it says
        if (!clock.path("offsetMs").isNumber()) throw new IllegalStateException("could not measure the clock of " + host + " against this host's");
        offsetMs = Math.round(clock.path("offsetMs").asDouble());
        gauge(processSeries, "cpu_pct", () -> latest((p, q) -> 100.0 * (q.partCpuSeconds() - p.partCpuSeconds()) / ((q.epochMs() - p.epochMs()) / 1000.0)));
        gauge("host:" + part, "cpu_pct", () -> latest((p, q) -> statPercent(p, q, false)));
        gauge("host:" + part, "steal_pct", () -> latest((p, q) -> statPercent(p, q, true)));
    }

    private void gauge(String series, String metric, java.util.function.DoubleSupplier value) {
        run.timeSeries().watchGauge(series, metric, value);
        gauges.add(new Gauge(series, metric, value));
    }

    /** The ready line's JSON. */
    public JsonNode ready() { return readyJson; }

    /**
     * Records the part in the manifest, with the round trip to {@code port} at its address and the link to it; fails
     * when this host cannot reach it there (the address SSH reached, which a jump host or NAT in between hides).
     */
    public void record(int port, String service) {
        String address = readyJson.path("address").asText();
        ObjectNode rtt = NetworkPath.rtt(address, port);
        if (rtt.path("samples").asInt() == 0)
            throw new IllegalStateException(part + " on " + host + " listens on " + address + ":" + port + ", which this host cannot reach "
                    + "(a jump host or NAT between them is not supported)");
        placement.put("service", service);
        placement.set("rttMs", rtt);
        placement.set("link", NetworkPath.link(address));
        // the manifest's order: part, host, address, service, fingerprint, rttMs, link, clock
        ObjectNode ordered = Manifest.newObject();
        for (String k : List.of("part", "host", "address", "service", "fingerprint", "rttMs", "link", "clock")) ordered.set(k, placement.get(k));
        placement.removeAll();
        placement.setAll(ordered);
        run.placed(placement);
    }

    /** Whether the part's folder was still on its host when it closed. */
    public boolean leftBehind() { return placement.path("leftBehind").asBoolean(false); }

    /** Marks this part's manifest entry: another part it stands for (a later fork of the same part) left its folder behind. */
    public void markLeftBehind() {
        synchronized (leftBehindMark) {
            placement.put("leftBehind", true);
        }
        run.writeManifest();
    }

    /** Guards the entry's leftBehind: a later fork may mark it while this part's own close sets it. */
    private final Object leftBehindMark = new Object();

    /** The agent's lines until its output ends; an end before the ready line fails the start with the last thing it said. */
    private void read(Supervisor.Child a, String readyKind) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(a.process().getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) onLine(line, readyKind);
        } catch (IOException ignored) {
            // the session ended
        }
        ready.completeExceptionally(new IllegalStateException(part + " on " + host + " did not start: " + lastOther()));
        Consumer<String> end = handlers.get(END);
        if (end != null) end.accept(lastOther());
    }

    /** A line every 2 s: the agent stops when none comes for a while, as after a link that dropped without closing. */
    private void heartbeat(Supervisor.Child a) {
        while (a.process().isAlive() && agent == a) {
            try {
                synchronized (a.stdin()) {
                    a.stdin().write('\n');
                    a.stdin().flush();
                }
                Thread.sleep(2000);
            } catch (IOException | InterruptedException e) {
                return;
            }
        }
    }

    private void onLine(String line, String readyKind) {
        int space = line.indexOf(' ');
        String k = space < 0 ? line : line.substring(0, space), payload = space < 0 ? "" : line.substring(space + 1);
        try {
            if (k.equals(readyKind)) {
                ready.complete(Manifest.JSON.readTree(payload));
                onReady.accept(this);
            }
            else if (k.equals("error")) ready.completeExceptionally(new IllegalStateException(part + " on " + host + ": " + payload));
            else if (k.equals("sample")) {
                JsonNode s = Manifest.JSON.readTree(payload);
                long[] stat = new long[s.path("stat").size()];
                for (int i = 0; i < stat.length; i++) stat[i] = s.path("stat").get(i).asLong();
                synchronized (samples) { samples.add(new Sample(s.path("epochMs").asLong(), s.path("partCpuS").asDouble(), stat)); }
            } else if (handlers.containsKey(k)) handlers.get(k).accept(payload);
            else other(line);
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

    public Ssh host() { return host; }

    /** The local process that holds the part's session (its watchdog). */
    public Process session() {
        Supervisor.Child a = agent;
        return a == null ? null : a.process();
    }

    /** The host's clock minus this one's at the start, ms; null when it could not be measured (no figure then needs it). */
    private volatile Long offsetMs;

    /** Puts {@code line} on the stdin of the part's own process (its agent passes on a {@code to-jvm} line; jvm.py). */
    public void tell(String line) throws IOException {
        Supervisor.Child a = agent;
        if (a == null) throw new IOException(part + " on " + host + " has ended");
        synchronized (a.stdin()) {
            a.stdin().write(("to-jvm " + line.replace('\n', ' ') + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            a.stdin().flush();
        }
    }

    /** Sends {@code line} to the part's agent itself, not to its process (jvm.py: {@code send-file <name>}). */
    public void ask(String line) throws IOException {
        Supervisor.Child a = agent;
        if (a == null) throw new IOException(part + " on " + host + " has ended");
        synchronized (a.stdin()) {
            a.stdin().write((line.replace('\n', ' ') + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            a.stdin().flush();
        }
    }

    /** The part host's epoch ms for an instant of this host's clock, by the offset measured at the start. */
    long remoteMs(long localEpochMs) { return localEpochMs + (offsetMs == null ? 0 : offsetMs); }

    /** This host's epoch ms for an instant of the part host's clock, by the offset measured at the start (0 when unmeasured). */
    long localMs(long remoteEpochMs) { return remoteEpochMs - (offsetMs == null ? 0 : offsetMs); }

    /**
     * The part's CPU in percent of one of its host's cores between two instants of this host's clock, from the
     * agent's readings (corrected by the clock offset measured at the start); NaN without readings around both.
     * Waits briefly for the reading after {@code toMs}.
     */
    public double cpuPercent(long fromMs, long toMs) throws InterruptedException {
        Long offset = offsetMs;
        if (offset == null) return Double.NaN;
        long a = fromMs + offset, b = toMs + offset, deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < deadline && lastSampleMs() < b) Thread.sleep(50);
        double ca = cpuAt(a), cb = cpuAt(b);
        return Double.isNaN(ca) || Double.isNaN(cb) || b <= a ? Double.NaN : 100.0 * (cb - ca) / ((b - a) / 1000.0);
    }

    /** The host's busy CPU in percent of one of its cores between two instants of this host's clock; NaN without readings. */
    public double hostBusyPercent(long fromMs, long toMs) { return hostPercent(fromMs, toMs, false); }

    /** The host's steal in percent of one of its cores between two instants of this host's clock; NaN without readings. */
    public double hostStealPercent(long fromMs, long toMs) { return hostPercent(fromMs, toMs, true); }

    private double hostPercent(long fromMs, long toMs, boolean steal) {
        Long offset = offsetMs;
        if (offset == null) return Double.NaN;
        Sample a = nearest(fromMs + offset), b = nearest(toMs + offset);
        return a == null || b == null || b.epochMs() <= a.epochMs() ? Double.NaN : statPercent(a, b, steal);
    }

    /** The host's logical cores, from its fingerprint. */
    public int hostCores() { return readyJson == null ? 1 : readyJson.path("host").path("logicalCores").asInt(1); }

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
        synchronized (samples) {
            if (samples.size() < 2) return Double.NaN;
            Sample q = samples.get(samples.size() - 1), p = null;
            Long offset = offsetMs;
            if (offset == null || System.currentTimeMillis() + offset - q.epochMs() > 2000) return Double.NaN;
            for (int i = samples.size() - 2; i >= 0 && q.epochMs() - samples.get(i).epochMs() <= 2000; i--)
                if (p == null || Math.abs(q.epochMs() - samples.get(i).epochMs() - 1000) < Math.abs(q.epochMs() - p.epochMs() - 1000)) p = samples.get(i);
            return p != null && q.epochMs() > p.epochMs() ? over.apply(p, q) : Double.NaN;
        }
    }

    private double statPercent(Sample p, Sample q, boolean steal) { return statPercent(p.stat(), q.stat(), hostCores(), steal); }

    /**
     * The host's busy (or steal) CPU between two readings, in percent of one of its cores: /proc/stat's user, nice,
     * system, idle, iowait, irq, softirq and steal (guest time is inside user already); busy is all but idle and iowait.
     */
    static double statPercent(long[] before, long[] after, int cores, boolean steal) {
        if (before.length < 8 || after.length < 8) return Double.NaN;
        long total = 0;
        for (int i = 0; i < 8; i++) total += after[i] - before[i];
        if (total <= 0) return Double.NaN;
        long busy = steal ? after[7] - before[7] : total - ((after[3] + after[4]) - (before[3] + before[4]));
        return 100.0 * cores * busy / total;
    }

    private long lastSampleMs() {
        synchronized (samples) { return samples.isEmpty() ? Long.MIN_VALUE : samples.get(samples.size() - 1).epochMs(); }
    }

    /** The part's CPU seconds at {@code epochMs}, interpolated between the readings around it. */
    private double cpuAt(long epochMs) {
        synchronized (samples) {
            for (int i = 1; i < samples.size(); i++) {
                Sample p = samples.get(i - 1), q = samples.get(i);
                if (p.epochMs() <= epochMs && epochMs <= q.epochMs())
                    return q.epochMs() == p.epochMs() ? q.partCpuSeconds()
                            : p.partCpuSeconds() + (q.partCpuSeconds() - p.partCpuSeconds()) * (epochMs - p.epochMs()) / (q.epochMs() - p.epochMs());
            }
            return Double.NaN;
        }
    }

    /**
     * Ends the part through its agent and checks that its folder is gone from the host; the clock offset at the end
     * goes into the manifest. Safe to call twice; the run calls it too when it ends.
     */
    @Override
    public synchronized void close() { // a second caller (the run's end) waits for a close under way (a fork's waiter)
        if (agent == null) return;
        Supervisor.Child a = agent;
        agent = null;
        // a fork's waiter interrupted because another fork failed still stops its part and checks its host in full
        boolean interrupted = Thread.interrupted();
        try {
            closeAgent(a);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private void closeAgent(Supervisor.Child a) {
        for (Gauge g : gauges) run.timeSeries().unwatchGauge(g.series(), g.metric(), g.value());
        try {
            a.stdin().close();
        } catch (IOException ignored) {
            // the watchdog is gone already
        }
        try {
            // the watchdog ends the ssh client; the agent on the host then stops the part and removes its folder
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
        synchronized (leftBehindMark) {
            placement.put("leftBehind", !gone || leftBehind()); // a later fork of the part may have marked it already
        }
        run.writeManifest();
        if (!gone) run.progress().say("warning: " + part + "'s folder " + folder + " is still on " + host + " after the run");
    }
}
