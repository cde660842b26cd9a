package perfkit.harness.db;

import perfkit.harness.remote.RemotePart;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;

import com.fasterxml.jackson.databind.JsonNode;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;

/**
 * A private, throwaway PostgreSQL cluster on another host ({@code --place db=user@host}), as {@link PrivatePostgres}
 * is on this one: scram-sha-256 with a random per-run password, reachable from the run's address only, and gone with
 * the run. Its agent (scripts/harness/parts/postgres.py) is a {@link RemotePart}: the run ending, the run dying and
 * the link dropping all stop the server and remove its folder; the password travels on stdin.
 */
public final class RemotePostgres implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The agent's own worst case: initdb (120 s) and the server's start (60 s). */
    private static final int READY_TIMEOUT_S = 200;

    private final RemotePart part;
    private final String password, address;
    private final int port;

    private RemotePostgres(RemotePart part, String password) {
        this.part = part;
        this.password = password;
        this.address = part.ready().path("address").asText();
        this.port = part.ready().path("port").asInt();
    }

    /** Starts the cluster on {@code host} and waits until it accepts connections; {@code settings} become {@code -c name=value}. */
    public static RemotePostgres start(Run run, String part, Ssh host, Map<String, String> settings) throws Exception {
        return start(run, part, host, settings, java.util.List.of());
    }

    /**
     * The same, admitting {@code clients} (hosts of other parts that use it, such as a placed tier) besides the run's own
     * address: each of their addresses as this host resolves them ({@link Ssh#addresses}).
     */
    public static RemotePostgres start(Run run, String part, Ssh host, Map<String, String> settings, java.util.List<Ssh> clients) throws Exception {
        byte[] secret = new byte[24];
        RANDOM.nextBytes(secret);
        String password = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        java.util.List<String> admit = new java.util.ArrayList<>();
        for (Ssh c : clients) {
            java.util.List<String> a = c.addresses();
            if (a.isEmpty()) throw new IllegalStateException("cannot tell the address of " + c + ", whose part uses the database on " + host);
            admit.addAll(a);
        }
        RemotePart p = RemotePart.start(run, part, "postgres", host, Map.of("password", password, "settings", settings, "admit", admit), "ready", READY_TIMEOUT_S,
                "proc:postgres@" + part, Map.of());
        JsonNode r = p.ready();
        p.record(r.path("port").asInt(), r.path("server").asText());
        run.notes().put("postgresqlServer", r.path("server").asText());
        return new RemotePostgres(p, password);
    }

    /**
     * What keeps {@code host} from running the cluster (no server binaries, no setpriv, no user postgres when logged in
     * as root), in one line for the user before the run starts; null when it can. Ask it after {@link Ssh#problem}.
     */
    public static String problem(Ssh host) {
        return RemotePart.problem("postgres", "db", host, Map.of());
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
    public Ssh host() { return part.host(); }

    /** The database's CPU in percent of one of its host's cores between two instants of this host's clock; NaN without readings. */
    public double cpuPercent(long fromMs, long toMs) throws InterruptedException { return part.cpuPercent(fromMs, toMs); }

    /** The database host's busy CPU in percent of one of its cores between two instants of this host's clock. */
    public double hostBusyPercent(long fromMs, long toMs) { return part.hostBusyPercent(fromMs, toMs); }

    /** The database host's logical cores, from its fingerprint. */
    public int hostCores() { return part.hostCores(); }

    /** Stops the server and checks that nothing of it is left on its host; safe to call twice. */
    @Override
    public void close() { part.close(); }
}
