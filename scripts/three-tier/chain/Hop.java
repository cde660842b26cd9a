package perfkit.threetier.chain;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import perfkit.harness.process.ChildProcess;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.TreeMap;

/**
 * What travels along the chain, shared by both stacks. A sends B a {@link Request} (POST /hop, JSON), B sends it on
 * to C; C waits, writes a row and answers an {@link Answer}, and each tier adds its own field on the way back up, so
 * the browser's answer shows every tier had its say. Also the table C writes and the tiers' connection settings.
 */
public final class Hop {
    private Hop() {}

    /** The browser's GET on A. */
    public static final String ENTRY = "/chain";
    /** Tier to tier: POST of a {@link Request}, answered with an {@link Answer}. */
    public static final String PATH = "/hop";
    /** Pools and counters of a running tier, for the manifest and the row check. */
    public static final String INFO = "/__info";

    /** Connections to PostgreSQL in C, the same on both stacks (JDBC via HikariCP, R2DBC via r2dbc-pool). */
    public static final int DB_POOL = 32;
    /** Connections per downstream tier: at least the sync server's 200 threads, so no caller queues for a connection below that. */
    public static final int SYNC_CLIENT_CONNECTIONS = 200;
    /** The async client's pool: more than any concurrency the rounds offer, with no cap on waiting acquires. */
    public static final int ASYNC_CLIENT_CONNECTIONS = 1024;
    /** A downstream call that takes longer fails; the load driver's own timeout is 60 s. */
    public static final int CALL_TIMEOUT_SECONDS = 60;

    public static final String TABLE = "chain_rows";
    /** C's one write per request, as JDBC and as R2DBC PostgreSQL spell the parameters. */
    public static final String INSERT_JDBC = "INSERT INTO " + TABLE + " (request_id, variant) VALUES (?, ?) RETURNING id",
            INSERT_R2DBC = "INSERT INTO " + TABLE + " (request_id, variant) VALUES ($1, $2) RETURNING id";

    public static final ObjectMapper JSON = new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** A's request to B, and B's to C: the request's id (A numbers them) and the tier that sent it. */
    public record Request(long id, String from) {}

    /** C's row id and time; then B's and A's own time in ms, each added by that tier on the way back. */
    public record Answer(long id, long row, Double cMs, Double bMs, Double aMs) {
        public Answer withB(double ms) { return new Answer(id, row, cMs, ms, aMs); }
        public Answer withA(double ms) { return new Answer(id, row, cMs, bMs, ms); }
    }

    public static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static <T> T parse(String s, Class<T> type) {
        try {
            return JSON.readValue(s, type);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a " + type.getSimpleName() + ": " + e.getMessage());
        }
    }

    public static double msSince(long startNanos) { return (System.nanoTime() - startNanos) / 1e6; }

    /** The database, handed over stdin by the round (never on the command line): JDBC URL without credentials, user, password, schema. */
    public record Database(String jdbcUrl, String user, String password, String schema) {
        public static Database fromParent() {
            String url = ChildProcess.param("db-url");
            if (url == null) throw new IllegalStateException("tier C got no database from the round");
            return new Database(url, ChildProcess.param("db-user"), ChildProcess.param("db-password"), ChildProcess.param("db-schema"));
        }

        /** {@code jdbc:postgresql://host:port/db?...} split for R2DBC, which takes no JDBC URL. */
        public String host() { return uri().getHost(); }
        public int port() { return uri().getPort() < 0 ? 5432 : uri().getPort(); }
        public String database() { return uri().getPath().replaceFirst("^/", ""); }
        private URI uri() { return URI.create(jdbcUrl.substring("jdbc:".length())); }
    }

    /** Live threads grouped by name without their numbers (e.g. {@code http-nio-#-exec-#}: 200). */
    public static Map<String, Integer> threadGroups() {
        Map<String, Integer> groups = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) groups.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
        return groups;
    }
}
