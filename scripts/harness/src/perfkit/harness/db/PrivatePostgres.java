package perfkit.harness.db;

import perfkit.harness.os.Disk;
import perfkit.harness.process.Janitor;
import perfkit.harness.os.Loopback;
import perfkit.harness.os.Processes;
import perfkit.harness.run.Run;
import perfkit.harness.process.Supervisor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private, throwaway PostgreSQL cluster from the installed server binaries (Debian's {@code postgresql}),
 * for one run. {@code postgres -D} runs as a direct child under a {@link Watchdog}, never detached the way
 * {@code pg_ctl start} does, so it dies with the run even on SIGKILL, and its folder goes with it.
 * <p>
 * Secure by default: it listens on 127.0.0.1 only, its socket sits in a 0700 folder, and every connection needs
 * {@code scram-sha-256} with a random per-run password that is never written to the run's files or a command line
 * (initdb reads it from a 0600 file that is deleted at once). As root, the server runs as user {@code postgres}
 * (it refuses root) through {@code setpriv}, which execs, so the server stays the watchdog's own child.
 */
public final class PrivatePostgres implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Run run;
    private final Path root, data;
    private final int port;
    private final String password;
    private Supervisor.Child server;

    private PrivatePostgres(Run run, Path root, int port, String password) {
        this.run = run;
        this.root = root;
        this.data = root.resolve("data");
        this.port = port;
        this.password = password;
    }

    /** What a run says when no server is found, before the study's own way out. */
    public static final String NOT_FOUND = "PostgreSQL server binaries not found (PERFKIT_PG_BINDIR, pg_config --bindir, "
            + "/usr/lib/postgresql/*/bin; ./bench setup installs them on Debian)";

    /**
     * The server's bin folder, or null: {@code PERFKIT_PG_BINDIR} when set, else {@code pg_config --bindir}, else the
     * newest under Debian's {@code /usr/lib/postgresql}. A folder counts only with both {@code postgres} and
     * {@code initdb} in it: a client-only pg_config names a folder without them.
     */
    public static Path binaries() {
        return binaries(System.getenv("PERFKIT_PG_BINDIR"), PrivatePostgres::pgConfigBindir, Path.of("/usr/lib/postgresql"));
    }

    /** {@link #binaries()} from what it looks at: the variable's value, pg_config (asked only when needed), Debian's root. */
    static Path binaries(String given, java.util.function.Supplier<Path> pgConfig, Path debianRoot) {
        if (given != null && !given.isBlank()) return serverIn(Path.of(given)) ? Path.of(given) : null;
        Path configured = pgConfig.get();
        if (configured != null && serverIn(configured)) return configured;
        try (Stream<Path> versions = Files.list(debianRoot)) {
            return versions.map(v -> v.resolve("bin")).filter(PrivatePostgres::serverIn)
                    .max(Comparator.comparing((Path b) -> versionOf(b.getParent().getFileName().toString()), java.util.Arrays::compare)).orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** A version folder's name as numbers, "9.6" as [9, 6] and "17" as [17], so that 17 is newer than 9.6. */
    static int[] versionOf(String name) {
        return java.util.Arrays.stream(name.split("\\D+")).filter(s -> !s.isEmpty()).mapToInt(s -> Integer.parseInt(s.length() > 9 ? s.substring(0, 9) : s)).toArray();
    }

    private static boolean serverIn(Path bin) {
        return Files.isExecutable(bin.resolve("postgres")) && Files.isExecutable(bin.resolve("initdb"));
    }

    private static Path pgConfigBindir() {
        try {
            Process p = new ProcessBuilder("pg_config", "--bindir").redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && !out.isEmpty() ? Path.of(out) : null;
        } catch (IOException e) {
            return null; // no pg_config on PATH
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Creates and starts a cluster; {@code settings} become {@code -c name=value} server options (e.g.
     * {@code synchronous_commit=off}). It stops with the run, or earlier with {@link #close()}.
     */
    public static PrivatePostgres start(Run run, Map<String, String> settings) throws Exception {
        Path bin = binaries();
        if (bin == null) throw new IllegalStateException(NOT_FOUND);
        boolean asRoot = "root".equals(System.getProperty("user.name"));
        if (asRoot && !Files.isExecutable(Path.of("/usr/bin/setpriv")))
            throw new IllegalStateException("running as root needs /usr/bin/setpriv (util-linux) to start PostgreSQL as user postgres");
        // a temp folder, not the run folder: user postgres must be able to reach it
        Path root = Files.createTempDirectory(Janitor.CLUSTER_PREFIX, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        run.supervisor().registerTempDir(root);
        Processes.Pid owner = Processes.Pid.of(ProcessHandle.current());
        Files.writeString(root.resolve(Janitor.CLUSTER_OWNER_FILE), owner.pid() + " " + owner.startMillis() + "\n");
        byte[] secret = new byte[24];
        RANDOM.nextBytes(secret);
        PrivatePostgres pg = new PrivatePostgres(run, root, Loopback.freePort(), Base64.getUrlEncoder().withoutPadding().encodeToString(secret));
        pg.initdb(bin, asRoot);
        pg.launch(bin, asRoot, settings);
        run.notes().put("postgresqlServer", serverVersion(bin));
        return pg;
    }

    /** "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)", from the binary itself: a post names the server a run used. */
    static String serverVersion(Path bin) {
        try {
            Process p = new ProcessBuilder(bin.resolve("postgres").toString(), "--version").redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 && out.startsWith("postgres (PostgreSQL) "))
                return "PostgreSQL " + out.substring("postgres (PostgreSQL) ".length());
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
        }
        return "PostgreSQL " + bin.getParent().getFileName(); // the major version, from the install folder
    }

    private void initdb(Path bin, boolean asRoot) throws Exception {
        Path pwfile = root.resolve("pwfile");
        Files.writeString(pwfile, password + "\n");
        Files.setPosixFilePermissions(pwfile, PosixFilePermissions.fromString("rw-------"));
        if (asRoot) exec(List.of("chown", "-R", "postgres:postgres", root.toString()), 30);
        try {
            exec(asUser(asRoot, bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "postgres", "--auth=scram-sha-256",
                    "--pwfile=" + pwfile, "-E", "UTF8", "--no-locale", "--no-sync"), 120);
        } finally {
            Files.deleteIfExists(pwfile);
        }
    }

    private void launch(Path bin, boolean asRoot, Map<String, String> settings) throws Exception {
        List<String> cmd = asUser(asRoot, bin.resolve("postgres").toString(), "-D", data.toString(), "-p", Integer.toString(port),
                "-k", root.toString(), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400", "-c", "unix_socket_permissions=0700");
        settings.forEach((k, v) -> { cmd.add("-c"); cmd.add(k + "=" + v); });
        // SIGINT is PostgreSQL's fast shutdown: clients are cut off, the cluster stops cleanly, then the folder goes
        server = run.supervisor().launchProgram("postgres", cmd, Files.createTempFile(run.scratchDir(), "postgres", ".log"), "INT", 10, List.of(root));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ready()) {
            if (!server.process().isAlive()) throw new IllegalStateException("PostgreSQL did not start (see the server log in the run's scratch folder)");
            if (System.nanoTime() > deadline) throw new IllegalStateException("PostgreSQL did not become ready within 60 s");
            Thread.sleep(50);
        }
    }

    /** postmaster.pid's last line says "ready" once the server accepts connections. */
    private boolean ready() {
        try {
            List<String> lines = Files.readAllLines(data.resolve("postmaster.pid"));
            return lines.size() >= 8 && lines.get(7).trim().equals("ready");
        } catch (IOException e) {
            return false;
        }
    }

    public String jdbcUrl() { return "jdbc:postgresql://127.0.0.1:" + port + "/postgres"; }
    public String user() { return "postgres"; }
    /** The per-run password; pass it to forks in their parameters (stdin), never print or store it. */
    public String password() { return password; }
    public int port() { return port; }

    /** The postmaster's pid (its backends are its children), or -1. */
    public long pid() {
        try { return Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim()); }
        catch (IOException | RuntimeException e) { return -1; }
    }

    /** Fast shutdown, then the folder goes. Safe to call twice; the run calls it too when it ends. */
    @Override
    public void close() {
        if (server == null) return;
        try {
            run.supervisor().stop(server, 20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server = null;
        Disk.deleteRecursively(root);
        run.supervisor().forgetTempDir(root);
    }

    private static List<String> asUser(boolean asRoot, String... cmd) {
        List<String> out = new ArrayList<>();
        if (asRoot) out.addAll(List.of("/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"));
        out.addAll(List.of(cmd));
        return out;
    }

    private static void exec(List<String> cmd, int timeoutSeconds) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(Path.of(cmd.get(cmd.size() > 5 ? 5 : 0)).getFileName() + " timed out");
        }
        if (p.exitValue() != 0)
            throw new IllegalStateException(String.join(" ", cmd.subList(0, Math.min(cmd.size(), 7))) + " failed: " + out.strip().replaceAll("\\s+", " "));
    }
}
