package perfkit.threetier;

import org.HdrHistogram.Histogram;
import perfkit.harness.process.Fork;
import perfkit.harness.db.JdbcUrl;
import perfkit.harness.measure.LatencyLog;
import perfkit.harness.measure.LatencyRecorder;
import perfkit.harness.measure.Warmup;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The measured side of an inserts cell, in a fork: W writer threads, each with its own connection (PostgreSQL) or
 * its own prepared statement on one session (Cassandra), insert one row per statement and wait for its
 * acknowledgement, back to back (a closed loop: the intended start is the actual start). Inserts that start in
 * the warm-up (until the insert rate is steady) are acknowledged and counted but not measured.
 */
final class InsertWriters {
    /** The row both databases get: an id plus two text and two numeric columns, all derived from the id. */
    static Object[] row(long id) {
        return new Object[]{id, "customer-" + (id % 10_000), "item-" + (id % 97), (int) (id % 10) + 1, (id % 10_000) / 100.0};
    }

    static final String PG_COLUMNS = "id bigint PRIMARY KEY, customer text NOT NULL, item text NOT NULL, quantity integer NOT NULL, price double precision NOT NULL";
    static final String CQL_COLUMNS = "id bigint PRIMARY KEY, customer text, item text, quantity int, price double";
    static final String INSERT = "INSERT INTO %s (id, customer, item, quantity, price) VALUES (?, ?, ?, ?, ?)";

    private InsertWriters() {}

    /** A PostgreSQL target: {@code sessionSync} is the synchronous_commit each session sets, "" for the server's. */
    record Postgres(String url, String user, String password, String sessionSync) {
        /** A connection for the run's own statements (DDL, counts), with its session's synchronous_commit. */
        Connection connect() throws Exception {
            DriverManager.setLoginTimeout(10);
            Connection c = DriverManager.getConnection(JdbcUrl.withParam(url, "connectTimeout", "10"), user, password);
            if (!sessionSync.isEmpty()) try (Statement s = c.createStatement()) { s.execute("SET synchronous_commit TO " + sessionSync); }
            return c;
        }

        @Override
        public String toString() { return "Postgres[" + url + ", " + user + ", " + sessionSync + "]"; }
    }

    /** A Cassandra target, reached through the driver on {@code classpath} (a class loader of its own). */
    record Cassandra(String classpath, String contactPoints, String datacenter, String user, String password, CqlBridge.Tls tls) {
        @Override
        public String toString() { return "Cassandra[" + contactPoints + ", " + datacenter + ", " + user + (tls == null ? "" : ", " + tls) + "]"; }
    }

    /** What one writer fork does: W writers insert into {@code table} on one of the two targets (the other is null). Passwords travel only here, over stdin. */
    record Spec(String cell, int fork, String table, int writers, double warmup, double warmupMax, double measure,
                Postgres postgres, Cassandra cassandra) {}

    /**
     * What it measured: the warm-up the rule chose, the inserts acknowledged (warm-up included) and failed, those
     * measured in the window and their latency in ms (the mean NaN for none), the writer JVM's CPU in percent of one
     * core over the window, and the Cassandra driver's version (null for PostgreSQL).
     */
    record Result(double warmupSeconds, boolean warmupSettled, String warmupReason, long acknowledged, long failed, String firstError,
                  long measured, double windowSeconds, double meanMs, double p50Ms, double p95Ms, double p99Ms, double maxMs,
                  double cpuWritersPct, String driver) {}

    static void run(Fork fork) throws Exception {
        Spec spec = fork.spec(Spec.class);
        List<AutoCloseable> resources = new ArrayList<>();
        List<Consumer<Object[]>> inserters = new ArrayList<>();
        String driver = null;
        try {
            // connections and prepared statements first: opening them is not part of any insert's latency
            if (spec.postgres() != null) {
                Postgres pg = spec.postgres();
                for (int i = 0; i < spec.writers(); i++) {
                    Connection c = DriverManager.getConnection(pg.url(), pg.user(), pg.password());
                    resources.add(c);
                    c.setAutoCommit(true); // one insert per commit
                    if (!pg.sessionSync().isEmpty())
                        try (Statement s = c.createStatement()) { s.execute("SET synchronous_commit TO " + pg.sessionSync()); }
                    PreparedStatement ps = c.prepareStatement(INSERT.formatted(spec.table()));
                    inserters.add(values -> {
                        try {
                            ps.setLong(1, (Long) values[0]);
                            ps.setString(2, (String) values[1]);
                            ps.setString(3, (String) values[2]);
                            ps.setInt(4, (Integer) values[3]);
                            ps.setDouble(5, (Double) values[4]);
                            ps.executeUpdate();
                        } catch (java.sql.SQLException e) {
                            throw new IllegalStateException(e.getMessage(), e);
                        }
                    });
                }
            } else {
                Cassandra cs = spec.cassandra();
                CqlBridge cql = CqlBridge.open(cs.classpath(), cs.contactPoints(), cs.datacenter(), cs.user(), cs.password(), cs.tls(), 10);
                resources.add(cql);
                driver = cql.driverVersion();
                for (int i = 0; i < spec.writers(); i++) inserters.add(cql.inserter(INSERT.formatted(spec.table())));
            }
            fork.result(measure(fork, spec, inserters, driver));
        } finally {
            for (AutoCloseable r : resources) {
                try { r.close(); } catch (Exception ignored) { /* the database is going away */ }
            }
        }
    }

    /**
     * Warm-up by rule, then the window: the writers insert from the start; after at least {@code warmup} seconds, the
     * window opens once the per-second insert rate has been steady (the harness's {@link Warmup} rule: 5 samples within
     * 10%, no trend), or at {@code warmupMax}, marked as never settled. A database still filling its caches, or a JVM
     * (Cassandra's) still compiling, climbs through a fixed warm-up; the rule waits for the plateau.
     */
    private static Result measure(Fork fork, Spec spec, List<Consumer<Object[]>> inserters, String driver) throws Exception {
        String cell = spec.cell();
        int forkIndex = spec.fork();
        double warmup = spec.warmup(), warmupMax = spec.warmupMax(), measure = spec.measure();
        int writers = inserters.size();
        LatencyLog log = fork.latencyLog(cell, cell + "/insert", forkIndex, "one insert, sent to acknowledged (" + writers + " writers, closed loop)", false);
        LongAdder acknowledged = new LongAdder(), failed = new LongAdder();
        AtomicReference<String> firstError = new AtomicReference<>();
        // until the window is set, every insert is warm-up; the writers stop at its end
        java.util.concurrent.atomic.AtomicLongArray window = new java.util.concurrent.atomic.AtomicLongArray(2);
        java.util.concurrent.atomic.AtomicBoolean windowSet = new java.util.concurrent.atomic.AtomicBoolean();
        Histogram[] measured = new Histogram[writers];
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            LatencyRecorder recorder = log.newRecorder();
            Histogram h = measured[w] = new Histogram(3_600_000_000_000L, 3);
            Consumer<Object[]> insert = inserters.get(w);
            Thread t = new Thread(() -> {
                for (long seq = 0; ; seq++) {
                    long start = System.nanoTime();
                    boolean set = windowSet.get();
                    if (set && start - window.get(1) >= 0) break;
                    try {
                        insert.accept(row(seq * writers + writer)); // ids never collide across writers
                    } catch (RuntimeException e) {
                        failed.increment();
                        firstError.compareAndSet(null, String.valueOf(e.getMessage()).lines().findFirst().orElse(e.getClass().getSimpleName()));
                        continue;
                    }
                    long end = System.nanoTime();
                    acknowledged.increment();
                    // the table's count is the log's: what the log measured, nothing else
                    if (recorder.record(start, start, end)) h.recordValue(Math.min(end - start, h.getHighestTrackableValue()));
                }
            }, "insert-writer-" + w);
            threads.add(t);
        }
        fork.phase("warmup", warmup);
        long t0 = System.nanoTime();
        for (Thread t : threads) t.start();
        Warmup rule = new Warmup(new Warmup.Rule(warmup, Math.max(warmup, warmupMax), 5, 0.10, 0));
        Warmup.State state;
        long last = 0, lastNs = t0;
        do {
            fork.await(1, acknowledged::sum);
            long now = System.nanoTime(), count = acknowledged.sum();
            state = rule.add(new Warmup.Sample((now - t0) / 1e9, (count - last) * 1e9 / (now - lastNs), Double.NaN));
            last = count;
            lastNs = now;
        } while (!state.done());
        long windowStart = System.nanoTime() + 50_000_000L, windowEnd = windowStart + (long) (measure * 1e9);
        window.set(0, windowStart);
        window.set(1, windowEnd);
        windowSet.set(true);
        log.window(windowStart, windowEnd);
        fork.await((windowStart - System.nanoTime()) / 1e9, acknowledged::sum);
        fork.phase("measure", measure);
        long cpu0 = processCpuNanos(), wall0 = System.nanoTime();
        fork.await((windowEnd - System.nanoTime()) / 1e9, acknowledged::sum);
        long cpu1 = processCpuNanos(), wall1 = System.nanoTime();
        fork.phase("done", 0);
        for (Thread t : threads) t.join();
        fork.report(acknowledged.sum());
        log.close();

        Histogram all = new Histogram(3_600_000_000_000L, 3);
        for (Histogram h : measured) all.add(h);
        // no sample, no latency: NaN (an empty cell), never a 0 ms that reads as fast
        java.util.function.DoubleUnaryOperator ms = ns -> all.getTotalCount() == 0 ? Double.NaN : ns / 1e6;
        return new Result(Math.round(state.atSeconds() * 10) / 10.0, state.settled(), state.reason(), acknowledged.sum(), failed.sum(),
                firstError.get() == null ? "" : firstError.get(), all.getTotalCount(), measure, ms.applyAsDouble(all.getMean()),
                ms.applyAsDouble(all.getValueAtPercentile(50)), ms.applyAsDouble(all.getValueAtPercentile(95)), ms.applyAsDouble(all.getValueAtPercentile(99)),
                ms.applyAsDouble(all.getMaxValue()), 100.0 * (cpu1 - cpu0) / (wall1 - wall0), driver);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
