package perfkit.workflow;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private, throwaway PostgreSQL cluster from the Debian binaries: initdb into a temp folder, pg_ctl start
 * on a free port bound to 127.0.0.1, trust authentication, removed by {@link #stop()}. As root it runs the
 * tools as user postgres (initdb refuses root). The system's own cluster is never touched.
 */
final class Postgres {
    private final Path root, data, log;
    private final int port;
    private final boolean asPostgresUser;

    private Postgres(Path root, int port, boolean asPostgresUser) {
        this.root = root;
        this.data = root.resolve("data");
        this.log = root.resolve("postgres.log");
        this.port = port;
        this.asPostgresUser = asPostgresUser;
    }

    /** The newest installed server's bin folder, or null. */
    static Path binaries() {
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString().replaceAll("\\D", "0")))).orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** The cluster's folder, not started yet: register {@link #stop()} for cleanup before calling {@link #start()}. */
    static Postgres create(int port) throws IOException {
        if (binaries() == null) throw new IllegalStateException("PostgreSQL server binaries not found under /usr/lib/postgresql (./bench setup installs them), or use --database h2 or --jdbc-url");
        // a temp folder, not the run folder: user postgres must be able to reach it
        return new Postgres(Files.createTempDirectory("perfkit-pg-"), port, "root".equals(System.getProperty("user.name")));
    }

    void start() throws Exception {
        Path bin = binaries();
        if (asPostgresUser) exec(List.of("chown", "-R", "postgres:postgres", root.toString()), 30);
        run(bin.resolve("initdb"), List.of("-D", data.toString(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"), 120);
        run(bin.resolve("pg_ctl"), List.of("-D", data.toString(), "-l", log.toString(), "-w", "-t", "60", "-o",
                "-p " + port + " -k " + root + " -c listen_addresses=127.0.0.1 -c max_connections=400", "start"), 90);
    }

    String jdbcUrl() { return "jdbc:postgresql://127.0.0.1:" + port + "/postgres"; }

    int port() { return port; }

    /** The postmaster's pid (its backends are its children), or -1. */
    long pid() {
        try { return Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim()); }
        catch (Exception e) { return -1; }
    }

    /** Fast shutdown, then the folder goes. Safe to call twice. */
    void stop() {
        try {
            if (Files.exists(data.resolve("postmaster.pid")))
                run(binaries().resolve("pg_ctl"), List.of("-D", data.toString(), "-m", "fast", "-w", "stop"), 60);
        } catch (Exception e) {
            long pid = pid();
            if (pid > 0) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // already gone
        }
    }

    private void run(Path tool, List<String> args, int timeoutSeconds) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (asPostgresUser) cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        cmd.add(tool.toString());
        cmd.addAll(args);
        exec(cmd, timeoutSeconds);
    }

    private static void exec(List<String> cmd, int timeoutSeconds) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(cmd.get(cmd.size() > 3 ? 3 : 0) + " timed out");
        }
        if (p.exitValue() != 0)
            throw new IllegalStateException(String.join(" ", cmd.subList(0, Math.min(cmd.size(), 5))) + " failed: " + out.strip().replaceAll("\\s+", " "));
    }
}
