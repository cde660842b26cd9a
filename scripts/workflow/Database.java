package perfkit.workflow;

import perfkit.harness.JdbcUrl;
import perfkit.harness.Params;
import perfkit.harness.PrivatePostgres;
import perfkit.harness.Run;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** Where the cells' schemas live: a private PostgreSQL cluster, the user's database, or an H2 file per cell. */
final class Database {
    /** Connection details without secrets in the URL. */
    record Credentials(String url, String user, String password) {
        static Credentials of(Params p) {
            JdbcUrl u = JdbcUrl.parse(p.text("jdbc-url"));
            return new Credentials(u.url(), u.userOr(p.text("jdbc-user"), "postgres"), u.passwordOr(p.text("jdbc-password")));
        }

        Connection connect(String url) throws Exception {
            DriverManager.setLoginTimeout(10);
            return DriverManager.getConnection(JdbcUrl.withParam(url, "connectTimeout", "10"), user, password);
        }

        @Override
        public String toString() { return "Credentials[" + url + ", " + user + "]"; }
    }

    final Credentials credentials;
    final String description;
    final boolean h2, usersDatabase;
    final PrivatePostgres postgres;
    /** The cells' schemas on the user's database not yet dropped; also the lock that orders creating them against the run's end. */
    private final Set<String> liveSchemas = new LinkedHashSet<>();
    /** Set when the run's end has dropped every schema: no cell may create one after it. */
    private boolean closed;

    private Database(Credentials credentials, String description, boolean h2, boolean usersDatabase, PrivatePostgres postgres) {
        this.credentials = credentials; this.description = description; this.h2 = h2; this.usersDatabase = usersDatabase; this.postgres = postgres;
    }

    static Database open(Run run, boolean h2) throws Exception {
        if (h2) return new Database(new Credentials(null, "sa", ""), "H2 2.3.232 embedded (file per cell in the run's scratch folder, ANALYZE_AUTO=0)", true, false, null);
        if (!run.param("jdbc-url").isBlank()) {
            Credentials c = Credentials.of(run.typed());
            Database db = new Database(c, "user database " + c.url(), false, true, null);
            // registered before any schema exists: Ctrl-C or SIGTERM ends the run on another thread, maybe while a
            // cell is creating its schema, and a cleanup registered after that end would never run
            run.onFinish(db::dropAll);
            return db;
        }
        run.progress().phase("starting a private PostgreSQL cluster", 3);
        PrivatePostgres pg = PrivatePostgres.start(run, Map.of());
        run.timeSeries().watchProcessTree("proc:postgres", pg.pid()); // postmaster and backends, per second
        return new Database(new Credentials(pg.jdbcUrl(), pg.user(), pg.password()), "private PostgreSQL cluster (Debian server binaries) on 127.0.0.1:"
                + pg.port() + ", scram-sha-256 with a random per-run password, removed afterwards", false, false, pg);
    }

    /** A URL for one cell: its own schema on PostgreSQL, its own file on H2. */
    String cellUrl(Run run, String schema) throws Exception {
        if (h2) return "jdbc:h2:file:" + run.scratchDir().resolve("h2").resolve(schema) + ";ANALYZE_AUTO=0;AUTO_SERVER=TRUE";
        // under the lock the run's end takes too: a schema is either created and listed before the end drops them all,
        // or never created after it
        synchronized (liveSchemas) {
            if (closed) throw new IllegalStateException("the run is ending: no new schema on the user's database");
            try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            if (usersDatabase) liveSchemas.add(schema);
        }
        String url = JdbcUrl.withParam(credentials.url(), "currentSchema", schema);
        return JdbcUrl.withParam(url, "ApplicationName", applicationName(schema));
    }

    /** How the cell's sessions name themselves, so the monitor can tell them apart in pg_stat_activity. */
    static String applicationName(String schema) { return "perfkit-" + schema; }

    /** At the run's end, however it ends: drops every schema still on the user's database, and lets no cell create another. */
    void dropAll() {
        synchronized (liveSchemas) {
            closed = true;
            for (String schema : java.util.List.copyOf(liveSchemas)) dropCell(schema);
        }
    }

    /**
     * Drops a cell's schema on the user's database (a private cluster goes whole). Safe to call twice, and from the
     * cell and the run's end at once: the drop holds the lock and the schema stays listed until it is gone, so the run's
     * end waits for a drop under way (the JVM would otherwise exit in the middle of it, keeping the schema) and retries
     * one that failed.
     */
    void dropCell(String schema) {
        if (!usersDatabase) return;
        synchronized (liveSchemas) {
            if (!liveSchemas.contains(schema)) return;
            try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
                s.execute("SET lock_timeout = '30s'");
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                liveSchemas.remove(schema);
            } catch (Exception e) {
                System.err.println("[workflow] could not drop schema " + schema + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
            }
        }
    }

    /** The postmaster's pid, whose process tree holds all database CPU; -1 when the database is not ours. */
    long pid() { return postgres == null ? -1 : postgres.pid(); }
}
