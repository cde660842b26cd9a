package perfkit.harness.record;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The environment fingerprint every manifest carries: host, JVM and the kit's own git state. */
public final class HostInfo {
    private HostInfo() {}

    public static String hostname() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) return env;
        try { return InetAddress.getLocalHost().getHostName(); } catch (IOException e) { return "unknown-host"; }
    }

    public static ObjectNode host() {
        ObjectNode h = Manifest.newObject();
        h.put("hostname", hostname());
        h.put("cpuModel", cpuModel(readOr(Path.of("/proc/cpuinfo"), "")));
        h.put("logicalCores", Runtime.getRuntime().availableProcessors());
        h.put("memoryBytes", memTotalBytes(readOr(Path.of("/proc/meminfo"), "")));
        h.put("os", System.getProperty("os.name") + " " + osRelease(readOr(Path.of("/etc/os-release"), "")));
        h.put("kernel", System.getProperty("os.version"));
        h.put("arch", System.getProperty("os.arch"));
        Double limit = containerCpuLimit(readOr(Path.of("/sys/fs/cgroup/cpu.max"), null));
        if (limit == null) h.putNull("containerCpuLimit"); else h.put("containerCpuLimit", limit);
        return h;
    }

    public static ObjectNode jvm() {
        ObjectNode j = Manifest.newObject();
        j.put("vendor", System.getProperty("java.vendor"));
        j.put("version", System.getProperty("java.version"));
        j.put("vmName", System.getProperty("java.vm.name"));
        j.put("vmVersion", System.getProperty("java.vm.version"));
        j.put("home", Manifest.jvmArgument(System.getProperty("java.home")));
        var args = j.putArray("inputArguments");
        ManagementFactory.getRuntimeMXBean().getInputArguments().forEach(a -> args.add(Manifest.jvmArgument(a)));
        return j;
    }

    /** Commit of the kit checkout at {@code root}; dirty means tracked files differ from that commit. */
    public static ObjectNode kit(Path root) {
        ObjectNode k = Manifest.newObject();
        String commit = git(root, "rev-parse", "HEAD");
        if (commit == null) { k.putNull("commit"); k.putNull("dirty"); return k; }
        k.put("commit", commit);
        String status = git(root, "status", "--porcelain", "--untracked-files=no");
        if (status == null) k.putNull("dirty"); else k.put("dirty", !status.isEmpty());
        return k;
    }

    static String cpuModel(String cpuinfo) {
        for (String line : cpuinfo.split("\n"))
            if (line.startsWith("model name")) return line.substring(line.indexOf(':') + 1).trim();
        return "unknown";
    }

    static long memTotalBytes(String meminfo) {
        for (String line : meminfo.split("\n"))
            if (line.startsWith("MemTotal:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        return Runtime.getRuntime().maxMemory();
    }

    static String osRelease(String osRelease) {
        for (String line : osRelease.split("\n"))
            if (line.startsWith("PRETTY_NAME=")) return line.substring(12).replace("\"", "");
        return "";
    }

    /** cgroup v2 {@code cpu.max} is "quota period" or "max period"; the limit in cores, or null when unlimited. */
    static Double containerCpuLimit(String cpuMax) {
        if (cpuMax == null) return null;
        String[] parts = cpuMax.trim().split("\\s+");
        if (parts.length != 2 || parts[0].equals("max")) return null;
        try { return Double.parseDouble(parts[0]) / Double.parseDouble(parts[1]); }
        catch (NumberFormatException e) { return null; }
    }

    private static String readOr(Path p, String fallback) {
        try { return Files.readString(p); } catch (IOException | RuntimeException e) { return fallback; }
    }

    private static String git(Path root, String... args) {
        try {
            var cmd = new java.util.ArrayList<>(List.of("git", "-C", root.toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) return null;
            return out;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
