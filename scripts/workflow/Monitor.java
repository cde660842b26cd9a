package perfkit.workflow;

import perfkit.harness.db.JdbcUrl;
import perfkit.harness.run.Run;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Counts committed completions from the database on its own connection, as the original's monitor counted
 * the jobs left. Polls every 0.1 to 1 s: ten times the query's own duration, so counting a large backlog
 * costs the database at most a tenth of one backend.
 */
final class Monitor {
    private final Run run;
    private final Database db;
    private final String url, schema, series;
    private final long jobs;
    private final List<DrainRate.Sample> samples = new ArrayList<>();
    private double activeSum, lockSum;
    private int sessionSamples;
    private volatile boolean running;
    private volatile long last;
    private Thread thread;

    Monitor(Run run, Database db, String url, String schema, long jobs) {
        this.run = run; this.db = db; this.url = url; this.schema = schema; this.jobs = jobs;
        this.series = "db:" + schema;
    }

    void start() {
        running = true;
        thread = new Thread(this::poll, "workflow-monitor");
        thread.setDaemon(true);
        run.timeSeries().watchCounter(series, () -> last);
        thread.start();
    }

    private void poll() {
        // on PostgreSQL under a name of its own, so the session counts below leave the monitor out
        try (Connection c = db.h2 ? DriverManager.getConnection(url, db.credentials.user(), db.credentials.password())
                : db.credentials.connect(JdbcUrl.withParam(JdbcUrl.withParam(db.credentials.url(), "currentSchema", schema), "ApplicationName", "perfkit-monitor"));
             Statement s = c.createStatement()) {
            String sessions = "select count(*) filter (where state = 'active'), count(*) filter (where wait_event_type = 'Lock') "
                    + "from pg_stat_activity where application_name = '" + Database.applicationName(schema) + "'";
            while (running) {
                long t0 = System.nanoTime();
                long left = Engine.count(s, "select count(*) from act_ru_job") + Engine.count(s, "select count(*) from act_ru_timer_job")
                        + Engine.count(s, "select count(*) from act_ru_deadletter_job");
                long now = System.currentTimeMillis();
                synchronized (samples) { samples.add(new DrainRate.Sample(now, jobs - left)); }
                last = jobs - left;
                if (!db.h2) {
                    try (ResultSet r = s.executeQuery(sessions)) {
                        r.next();
                        synchronized (samples) { activeSum += r.getLong(1); lockSum += r.getLong(2); sessionSamples++; }
                    }
                }
                long took = (System.nanoTime() - t0) / 1_000_000;
                Thread.sleep(Math.max(100, Math.min(1000, 10 * took)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (running) System.err.println("[workflow] monitor stopped: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        }
    }

    void stop() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.interrupt();
            thread.join(5000);
        }
        run.timeSeries().unwatchCounter(series);
    }

    Engine.Verification verify() throws Exception {
        return Engine.verify(url, db.credentials.user(), db.credentials.password(), db.h2 ? "" : schema);
    }

    /** When a poll first found {@code committed} jobs done (dead letters count as done here; they invalidate the cell anyway). */
    long drainedAtMs(long committed) {
        synchronized (samples) { return DrainRate.drainedAtMs(samples, committed); }
    }

    double steady(long startMs, double warmup) {
        synchronized (samples) { return DrainRate.steady(samples, startMs, warmup, jobs); }
    }

    double activeMean() { synchronized (samples) { return sessionSamples == 0 ? Double.NaN : activeSum / sessionSamples; } }

    double lockWaitersMean() { synchronized (samples) { return sessionSamples == 0 ? Double.NaN : lockSum / sessionSamples; } }
}
