package perfkit.harness.os;


import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Another host of a run ({@code --place}, {@code --on}), reached with the user's own OpenSSH client, config, keys and
 * agent: BatchMode, so never a password prompt; {@code PERFKIT_SSH_CONFIG=<file>} adds {@code -F}.
 * Keep-alives make a dead link end the session, which the far side takes as the run's end.
 */
public record Ssh(String destination) {
    public static final int CONNECT_TIMEOUT_S = 10;
    private static final Pattern DESTINATION = Pattern.compile("([A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+|([A-Za-z0-9._-]+@)?\\[[0-9A-Fa-f:.]+]");

    /** {@code user@host} or {@code host}; anything else (an option, a space, a path) is refused in one line. */
    public static Ssh of(String destination) {
        if (destination == null || destination.startsWith("-") || !DESTINATION.matcher(destination).matches())
            throw new IllegalArgumentException("'" + destination + "' is not a host: expected user@host or host");
        return new Ssh(destination);
    }

    /** The host part, for addresses and messages. */
    public String host() {
        String h = destination.substring(destination.indexOf('@') + 1);
        return h.startsWith("[") ? h.substring(1, h.length() - 1) : h;
    }

    /** The ssh command that runs {@code remote} (one shell word list) there. */
    public List<String> command(String... remote) {
        // a session of its own (no shared master that would outlive the run and ignore these options), no terminal,
        // nothing forwarded
        List<String> cmd = new ArrayList<>(List.of("ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=" + CONNECT_TIMEOUT_S,
                "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR", "-o", "ControlMaster=no",
                "-o", "ControlPath=none", "-o", "ClearAllForwardings=yes", "-o", "ForwardAgent=no", "-o", "ForwardX11=no"));
        String config = System.getenv("PERFKIT_SSH_CONFIG");
        if (config != null && !config.isBlank()) cmd.addAll(List.of("-F", config));
        cmd.add("--");
        cmd.add(destination.replace("[", "").replace("]", "")); // OpenSSH takes user@::1, not user@[::1]
        cmd.addAll(List.of(remote));
        return cmd;
    }

    /**
     * Null when the host answers over SSH with a python3 of 3.8 or later (all a part's agent needs besides its own
     * server binaries); else one line saying what is wrong, for the user before anything starts.
     */
    public String problem() {
        String config = System.getenv("PERFKIT_SSH_CONFIG");
        if (config != null && !config.isBlank() && !java.nio.file.Files.isReadable(java.nio.file.Path.of(config)))
            return "PERFKIT_SSH_CONFIG names " + config + ", which is not a readable file";
        try {
            Process p = new ProcessBuilder(command("python3", "-c", shellWord("import sys; print(sys.version_info >= (3, 8))"))).redirectErrorStream(true).start();
            p.getOutputStream().close();
            // the answer is a line or two: it fits the pipe, so waiting first cannot block on it
            if (!p.waitFor(CONNECT_TIMEOUT_S + 20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "cannot reach " + destination + " over SSH: no answer within " + (CONNECT_TIMEOUT_S + 20) + " s";
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.exitValue() == 0 && out.endsWith("True")) return null;
            if (p.exitValue() == 0) return destination + " has a python3 older than 3.8, which a part's agent needs";
            if (p.exitValue() == 255) return "cannot reach " + destination + " over SSH: " + lastLine(out) + " (keys or agent only, never a password; PERFKIT_SSH_CONFIG names an ssh config)";
            return destination + " cannot run python3, which a part's agent needs: " + lastLine(out);
        } catch (IOException e) {
            return "cannot run ssh: " + Disk.reason(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while reaching " + destination;
        }
    }

    /**
     * How far the host's clock is from this one: over one SSH session, the host answers a few pings with its time, and
     * the ping with the shortest round trip counts. The offset is the host's time minus the midpoint of that round trip;
     * the true offset lies within ± half of it ({@code uncertaintyMs}). Null fields when the host did not answer.
     */
    public ObjectNode clockOffset() {
        ObjectNode o = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        o.put("at", java.time.Instant.now().toString());
        // one line: a login shell of any kind passes it on whole
        String echo = shellWord("import sys, time; [print(time.time_ns(), flush=True) for _ in sys.stdin]");
        try {
            Process p = new ProcessBuilder(command("python3", "-c", echo)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            // a host that stops answering: its reads end when the process does
            java.util.concurrent.CompletableFuture.delayedExecutor(CONNECT_TIMEOUT_S + 10, TimeUnit.SECONDS).execute(p::destroyForcibly);
            try (OutputStream in = p.getOutputStream();
                 BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                long bestRtt = Long.MAX_VALUE, bestOffset = 0;
                for (int i = 0; i < 9; i++) {
                    java.time.Instant now = java.time.Instant.now(); // microseconds, where currentTimeMillis has whole ms
                    long t0 = now.getEpochSecond() * 1_000_000_000L + now.getNano(), n0 = System.nanoTime();
                    in.write('\n');
                    in.flush();
                    String line = out.readLine();
                    long rtt = System.nanoTime() - n0;
                    if (line == null) break;
                    long remote = Long.parseLong(line.strip());
                    if (rtt < bestRtt) { bestRtt = rtt; bestOffset = remote - (t0 + rtt / 2); }
                }
                if (bestRtt == Long.MAX_VALUE) throw new IOException("no answer");
                o.put("offsetMs", bestOffset / 1e6);
                o.put("uncertaintyMs", bestRtt / 2e6);
            } finally {
                if (!p.waitFor(CONNECT_TIMEOUT_S, TimeUnit.SECONDS)) p.destroyForcibly();
            }
        } catch (IOException | RuntimeException e) {
            o.putNull("offsetMs");
            o.putNull("uncertaintyMs");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            o.putNull("offsetMs");
            o.putNull("uncertaintyMs");
        }
        return o;
    }

    /** The host's logical cores (those this login may use), or -1 when it cannot say. */
    public int cores() {
        try {
            Process p = new ProcessBuilder(command("python3", "-c", shellWord("import os; print(len(os.sched_getaffinity(0)))"))).redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(CONNECT_TIMEOUT_S + 20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.exitValue() == 0 && out.matches("\\d+") ? Integer.parseInt(out) : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * The host's addresses as this host reaches it: the name ssh itself would connect to ({@code ssh -G}, so an alias
     * in the user's config counts), resolved here. Empty when ssh or the name cannot say.
     */
    public List<String> addresses() {
        List<String> cmd = new ArrayList<>(List.of("ssh", "-G"));
        String config = System.getenv("PERFKIT_SSH_CONFIG");
        if (config != null && !config.isBlank()) cmd.addAll(List.of("-F", config));
        cmd.add(destination.replace("[", "").replace("]", ""));
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
            String name = out.lines().filter(l -> l.startsWith("hostname ")).map(l -> l.substring(9).strip()).findFirst().orElse(host());
            List<String> addresses = new ArrayList<>();
            for (java.net.InetAddress a : java.net.InetAddress.getAllByName(name)) addresses.add(a.getHostAddress().replaceAll("%.*", "")); // no IPv6 scope
            return addresses;
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** True when {@code path} no longer exists on the host (false also when the host cannot be asked). */
    public boolean gone(String path) {
        try {
            Process p = new ProcessBuilder(command("test", "!", "-e", shellWord(path))).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            if (p.waitFor(CONNECT_TIMEOUT_S + 5, TimeUnit.SECONDS)) return p.exitValue() == 0;
            p.destroyForcibly();
            return false;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** One word for the far side's shell, whatever it holds. */
    public static String shellWord(String s) { return "'" + s.replace("'", "'\\''") + "'"; }

    private static String lastLine(String out) {
        String[] lines = out.strip().split("\n");
        return lines[lines.length - 1].strip();
    }

    @Override
    public String toString() { return destination; }
}
