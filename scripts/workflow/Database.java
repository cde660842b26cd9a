package perfkit.workflow;

import perfkit.harness.db.JdbcUrl;
import perfkit.harness.cli.Params;
import perfkit.harness.db.PrivatePostgres;
import perfkit.harness.db.RemotePostgres;
import perfkit.harness.run.Releases;
import perfkit.harness.run.Run;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;

/**
 * Where the cells' schemas live: a private PostgreSQL cluster here or on a host of its own (--place db), the user's
 * database, or an H2 file per cell.
 */
final class Database {
    /** Connection details without secrets in the URL. */
    record Credentials(String url, String user, String password) {
        static Credentials of(Params p) {
            JdbcUrl u = JdbcUrl.parse(Workflow.JDBC_URL.in(p));
            return new Credentials(u.url(), u.userOr(Workflow.JDBC_USER.in(p), "postgres"), u.passwordOr(Workflow.JDBC_PASSWORD.in(p)));
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
    /** The private cluster on another host (--place db), or null. */
    final RemotePostgres placed;
    /** The cells' schemas on the user's database, dropped by their cell or, however the run ends, by the run. */
    private final Releases schemas;

    private Database(Run run, Credentials credentials, String description, boolean h2, boolean usersDatabase, PrivatePostgres postgres, RemotePostgres placed) {
        this.credentials = credentials; this.description = description; this.h2 = h2; this.usersDatabase = usersDatabase; this.postgres = postgres; this.placed = placed;
        // before any schema exists (a private cluster goes whole, so only the user's database needs it)
        this.schemas = usersDatabase ? new Releases(run) : null;
    }

    static Database open(Run run, Workflow.Options o) throws Exception {
        if (o.h2()) return new Database(run, new Credentials(null, "sa", ""), "H2 2.3.232 embedded (file per cell in the run's scratch folder, ANALYZE_AUTO=0)", true, false, null, null);
        if (o.usersDatabase() != null) {
            Credentials c = o.usersDatabase();
            return new Database(run, c, "user database " + c.url(), false, true, null, null);
        }
        if (o.dbHost() != null) {
            run.progress().phase("starting a private PostgreSQL cluster on " + o.dbHost(), 3);
            // placed engines connect from their own hosts: the cluster admits those too
            RemotePostgres pg = RemotePostgres.start(run, "db", o.dbHost(), Map.of(), o.engineHosts().stream().distinct().toList());
            return new Database(run, new Credentials(pg.jdbcUrl(), pg.user(), pg.password()), "private PostgreSQL cluster (the host's server binaries) on "
                    + o.dbHost().destination() + ", at " + pg.address() + ":" + pg.port() + " (placement in the manifest), scram-sha-256 with a random per-run "
                    + "password, reachable from the run's address" + (o.engineHosts().isEmpty() ? "" : " and the engine hosts'") + " only, removed afterwards",
                    false, false, null, pg);
        }
        run.progress().phase("starting a private PostgreSQL cluster", 3);
        PrivatePostgres pg = PrivatePostgres.start(run, Map.of());
        run.timeSeries().watchProcessTree("proc:postgres", pg.pid()); // postmaster and backends, per second
        return new Database(run, new Credentials(pg.jdbcUrl(), pg.user(), pg.password()), "private PostgreSQL cluster (Debian server binaries) on 127.0.0.1:"
                 + pg.port() + ", scram-sha-256 with a random per-run password, removed afterwards", false, false, pg, null);
    }

    /** A URL for one cell: its own schema on PostgreSQL, its own file on H2. */
    String cellUrl(Run run, String schema) throws Exception {
        if (h2) return "jdbc:h2:file:" + run.scratchDir().resolve("h2").resolve(schema) + ";ANALYZE_AUTO=0;AUTO_SERVER=TRUE";
        if (usersDatabase) schemas.create("schema " + schema, () -> execute("CREATE SCHEMA " + schema), () -> drop(schema));
        else execute("CREATE SCHEMA " + schema);
        String url = JdbcUrl.withParam(credentials.url(), "currentSchema", schema);
        return JdbcUrl.withParam(url, "ApplicationName", applicationName(schema));
    }

    /** How the cell's sessions name themselves, so the monitor can tell them apart in pg_stat_activity. */
    static String applicationName(String schema) { return "perfkit-" + schema; }

    /** Drops a cell's schema on the user's database now (a private cluster goes whole); the run's end retries a failure. */
    void dropCell(String schema) {
        if (usersDatabase) schemas.release("schema " + schema);
    }

    private void drop(String schema) throws Exception {
        try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '30s'");
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private void execute(String sql) throws Exception {
        try (Connection c = credentials.connect(credentials.url()); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** The postmaster's pid, whose process tree holds all database CPU; -1 when the database is not here or not ours. */
    long pid() { return postgres == null ? -1 : postgres.pid(); }

    /**
     * The placed database's CPU between two instants of this host's clock, in percent of one of its host's cores,
     * from its agent's readings; NaN when the database is not placed.
     */
    double placedCpuPercent(long fromMs, long toMs) throws InterruptedException {
        return placed == null ? Double.NaN : placed.cpuPercent(fromMs, toMs);
    }
}
