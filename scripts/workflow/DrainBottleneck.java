package perfkit.workflow;

/**
 * Names what limits a drain, from evidence taken during it. The rules, in order:
 * <ol>
 * <li>{@code cpu:<owner>}: the machine is at or above {@link #CPU_SATURATED} of all its cores; the owner is the
 *     largest consumer among the engines, the database and everything else here; or, with the database on a host of
 *     its own (--place db), that host is, and the owner is the database; or, with the engines on hosts of their own
 *     (--place engines), the busiest of those is, and the owner is the engines;</li>
 * <li>{@code database-locks}: on average at least {@link #LOCK_WAITERS} of the run's database sessions wait on a lock;</li>
 * <li>{@code executor-threads}: the executor's threads are busy at least {@link #THREADS_BUSY} of the time, so each
 *     job's own time on its thread (the job plus its database round trips and commit) sets the rate;</li>
 * <li>{@code acquisition}: otherwise threads sit idle while jobs are still due, so jobs are not fetched fast
 *     enough (acquire size, acquire wait, the global acquire lock).</li>
 * </ol>
 */
public final class DrainBottleneck {
    public static final double CPU_SATURATED = 0.90, THREADS_BUSY = 0.90, LOCK_WAITERS = 1.0;

    /**
     * CPU in percent of one core (200 = two busy cores); {@code threadsBusy} as a fraction of the executor's
     * thread-time spent running jobs; {@code lockWaiters} the mean number of the run's sessions waiting on a lock
     * (NaN when unknown, e.g. on H2); {@code dbHostCpuPct} and {@code dbHostCores} the database host's busy CPU and cores
     * when it is not this one (NaN and 0 when it is); {@code enginesHostCpuPct} and {@code enginesHostCores} the same
     * for the busiest engine host when the engines run elsewhere. A part elsewhere has NaN as its CPU here.
     */
    public record Evidence(double systemCpuPct, int cores, double enginesCpuPct, double dbCpuPct, double threadsBusy, double lockWaiters,
                           double dbHostCpuPct, int dbHostCores, double enginesHostCpuPct, int enginesHostCores) {
        /** The database and the engines share this host. */
        public Evidence(double systemCpuPct, int cores, double enginesCpuPct, double dbCpuPct, double threadsBusy, double lockWaiters) {
            this(systemCpuPct, cores, enginesCpuPct, dbCpuPct, threadsBusy, lockWaiters, Double.NaN, 0, Double.NaN, 0);
        }
    }

    private DrainBottleneck() {}

    public static String classify(Evidence e) {
        if (e.systemCpuPct() >= CPU_SATURATED * 100.0 * e.cores()) {
            double engines = nz(e.enginesCpuPct()), db = nz(e.dbCpuPct()), rest = e.systemCpuPct() - engines - db;
            String owner = engines >= db && engines >= rest ? "engines" : db >= rest ? "database" : "other";
            return "cpu:" + owner;
        }
        if (e.dbHostCores() > 0 && e.dbHostCpuPct() >= CPU_SATURATED * 100.0 * e.dbHostCores()) return "cpu:database";
        if (e.enginesHostCores() > 0 && e.enginesHostCpuPct() >= CPU_SATURATED * 100.0 * e.enginesHostCores()) return "cpu:engines";
        if (e.lockWaiters() >= LOCK_WAITERS) return "database-locks";
        if (e.threadsBusy() >= THREADS_BUSY) return "executor-threads";
        return "acquisition";
    }

    private static double nz(double v) { return Double.isNaN(v) ? 0 : v; }
}
