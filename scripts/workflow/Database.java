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
    private final Set<String> liveSchemas = new LinkedHashSet<>();

    private Database(Credentials credentials, String description, boolean h2, boolean usersDatabase, PrivatePostgres postgres) {
        this.credentials = credentials; this.description = description; this.h2 = h2; this.usersDatabase = usersDatabase; this.postgres = postgres;
    }

    static Database open(Run run, boolean h2) throws Exception {
        if (h2) return new Database(new Credentials(null, "sa", ""), "H2 2.3.232 embedded (file per cell in the run's scratch folder, ANALYZE_AUTO=0)", true, false, null);
        if (!run.param("jdbc-url").isBlank()) {
            Credentials c = Credentials.of(run.typed());
            return new Database(c, "user database " + c.url(), false, true, null);
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
        try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        if (usersDatabase) {
            synchronized (liveSchemas) { liveSchemas.add(schema); }
            // right after CREATE SCHEMA: Ctrl-C, SIGTERM or a failure must not leave it in the user's database
            run.onFinish(() -> dropCell(schema));
        }
        String url = JdbcUrl.withParam(credentials.url(), "currentSchema", schema);
        return JdbcUrl.withParam(url, "ApplicationName", applicationName(schema));
    }

    /** How the cell's sessions name themselves, so the monitor can tell them apart in pg_stat_activity. */
    static String applicationName(String schema) { return "perfkit-" + schema; }

    /** Drops a cell's schema on the user's database (a private cluster goes whole). Safe to call twice. */
    void dropCell(String schema) {
        if (!usersDatabase) return;
        synchronized (liveSchemas) { if (!liveSchemas.remove(schema)) return; }
        try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '30s'");
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (Exception e) {
            System.err.println("[workflow] could not drop schema " + schema + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        }
    }

    /** The postmaster's pid, whose process tree holds all database CPU; -1 when the database is not ours. */
    long pid() { return postgres == null ? -1 : postgres.pid(); }
}
