package perfkit.webreactive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.http.LoadResult;
import perfkit.harness.cli.Params;
import perfkit.harness.run.Run;
import perfkit.harness.run.Table;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * siege and wrk beside the driver, both optional at run time (when missing, the run says so in its notes):
 * <ul>
 * <li>siege runs the original's command, {@code siege -b -c N -r R URL}, for a few N, as a cross-check of the
 *     closed model, with the driver's R for the cell (the original's 5 unless --step-seconds asked for more). Its own defaults stay (a new connection per request, as the original had), except the user
 *     limit (255 in Debian's siegerc), raised so large N run as asked, and its log file, which is off.</li>
 * <li>wrk loads the same endpoint at the sweep's largest N connections for a few seconds: the most this host serves
 *     to a lean C client. The driver then loads it the same way (N users looping as long, after its own warm-up);
 *     its goal is at least 0.8 x wrk's throughput, reported, not enforced.</li>
 * </ul>
 */
final class Peers {
    static final double DRIVER_GOAL = 0.8;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Run run;
    private final WebReactive.Options o;
    private final boolean siege, wrk;
    private Table table;

    Peers(Run run, WebReactive.Options o) {
        this.run = run;
        this.o = o;
        // beside a driver elsewhere, siege and wrk here would load from another host: no like-for-like comparison
        boolean placedDriver = o.placement().containsKey("driver"), on = o.peers() && !placedDriver;
        this.siege = on && onPath("siege");
        this.wrk = on && onPath("wrk");
        ObjectNode n = run.notes();
        if (placedDriver) n.put("peers", "off: the load driver ran on " + HttpLoad.where(Params.hostsOf(o.placement(), "driver")) + ", and siege and wrk run only beside a driver on the run's host");
        else if (!on) n.put("peers", "off (--peers off)");
        else n.put("peers", (siege ? "siege: the original's command for a few N (connection per request, its default)" : "siege not installed: its cross-check was skipped")
                + "; " + (wrk ? "wrk: saturation at the largest N connections, then the driver loading the same way (N users looping as long, after its warm-up); its goal is " + DRIVER_GOAL + " x wrk's throughput"
                : "wrk not installed: its cross-check was skipped") + (siege && wrk ? "" : " (./bench setup installs both when root)"));
    }

    boolean any() { return siege || wrk; }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":"))
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) return true;
        return false;
    }

    private Table table() throws IOException {
        if (table == null) table = new Table(run, "peers.csv", "siege (the original's command) and wrk (saturation) on the same endpoints, beside the driver",
                "cell", "tool", "fork", "users", "command", "requests", "failed", "seconds", "throughput_rps", "mean_ms", "driver_throughput_rps", "driver_ratio", "note");
        return table;
    }

    /**
     * The cross-checks for one cell; {@code driverRps(N)} is the driver's closed-model throughput at N (NaN when not
     * measured), whose steps made {@code repeats} requests per user: siege makes as many, so the shapes match.
     */
    void cell(String cell, int fork, String url, int repeats, java.util.function.IntToDoubleFunction driverRps) throws Exception {
        List<Integer> users = o.users();
        if (siege) {
            // siege writes a config template into $HOME/.siege on first use (and names that folder in its output): a home
            // of its own in the run's scratch, with the config already there, keeps the user's home untouched
            Path home = run.scratchDir().resolve("siege-home");
            Path rc = Files.createDirectories(home.resolve(".siege")).resolve("siege.conf");
            Files.writeString(rc, "limit = " + Math.max(255, users.stream().mapToInt(Integer::intValue).max().orElse(1)) + "\nlogging = false\nshow-logfile = false\njson_output = true\nverbose = false\n");
            for (int n : few(users)) {
                List<String> cmd = List.of("env", "HOME=" + home, "siege", "-R", rc.toString(), "-b", "-c", String.valueOf(n), "-r", String.valueOf(repeats), "-j", url);
                String out = HttpLoad.runTool(run, "siege." + cell.replace('/', '.') + ".n" + n + ".fork" + fork, cmd, 120 + n * repeats * 2.0);
                row(cell, "siege", fork, n, "siege -b -c " + n + " -r " + repeats + " <url>", siegeResult(out), driverRps.applyAsDouble(n));
            }
        }
        if (wrk) {
            int n = users.stream().mapToInt(Integer::intValue).max().orElse(1);
            double seconds = Math.max(2, o.measure());
            List<String> cmd = List.of("wrk", "-t", "2", "-c", String.valueOf(n), "-d", Math.round(seconds) + "s", "--latency", url);
            String out = HttpLoad.runTool(run, "wrk." + cell.replace('/', '.') + ".fork" + fork, cmd, 60 + seconds * 2);
            row(cell, "wrk", fork, n, "wrk -t 2 -c " + n + " -d " + Math.round(seconds) + "s <url>", wrkResult(out, seconds), driverAtSaturation(cell, fork, url, n, seconds));
        }
    }

    /**
     * The driver the way wrk loads: {@code n} users looping for {@code seconds}, after a warm-up as long (its own JVM
     * starts cold; wrk is C). A closed-model step of N x 5 requests is no fair match: it includes opening N
     * connections and ramping them up, and lasts well under a second at large N.
     */
    private double driverAtSaturation(String cell, int fork, String url, int n, double seconds) throws Exception {
        String phase = "saturation." + cell.replace('/', '.') + ".n" + n + ".fork" + fork;
        HttpLoad.Plan plan = new HttpLoad.Plan("web-reactive " + cell + " driver beside wrk, fork " + fork, url);
        plan.always("warmup", plan.path(), n, seconds, HttpLoad.Plan.Counts.WARMUP).always(phase, plan.path(), n, seconds, HttpLoad.Plan.Counts.MEASURED);
        JsonNode ph = LoadResult.phase(HttpLoad.run(run, phase, plan, java.util.Map.of(), java.util.Map.of(), 180 + 3 * seconds), phase);
        HttpLoad.addHlogs(run, ph, cell, cell + "/saturation", fork, cell + ", the driver at saturation beside wrk, " + n + " users looping, fork " + fork);
        double secs = Math.max(1, ph.path("endMs").asLong() - ph.path("startMs").asLong()) / 1000.0;
        return LoadResult.problems(ph).isEmpty() && ph.path("errors").asLong() == 0 ? ph.path("responses").asLong() / secs : Double.NaN;
    }

    /** The smallest N, the largest N up to 250 (siege's usual ceiling, the original's largest), and one between. */
    static List<Integer> few(List<Integer> users) {
        TreeSet<Integer> sorted = new TreeSet<>(users);
        TreeSet<Integer> out = new TreeSet<>();
        out.add(sorted.first());
        Integer top = sorted.floor(250);
        if (top != null) out.add(top);
        Integer mid = sorted.floor(100);
        if (mid != null) out.add(mid);
        return List.copyOf(out);
    }

    record Result(Long requests, Long failed, Double seconds, Double rps, Double meanMs, String note) {}

    static Result siegeResult(String out) {
        if (out == null) return new Result(null, null, null, null, null, "did not finish in time");
        int start = out.indexOf('{'), end = out.lastIndexOf('}');
        if (start < 0 || end < start) return new Result(null, null, null, null, null, "no JSON in its output");
        try {
            JsonNode j = JSON.readTree(out.substring(start, end + 1));
            return new Result(j.path("transactions").asLong(), j.path("failed_transactions").asLong(), j.path("elapsed_time").asDouble(),
                    j.path("transaction_rate").asDouble(), j.path("response_time").asDouble() * 1000, "");
        } catch (IOException e) {
            return new Result(null, null, null, null, null, "unreadable JSON: " + e.getMessage());
        }
    }

    private static final Pattern WRK_RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
    private static final Pattern WRK_TOTAL = Pattern.compile("(\\d+) requests in ([0-9.]+)(m?s)");
    private static final Pattern WRK_LATENCY = Pattern.compile("Latency\\s+([0-9.]+)(us|ms|s)");
    private static final Pattern WRK_ERRORS = Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");
    private static final Pattern WRK_NON2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");

    static Result wrkResult(String out, double seconds) {
        if (out == null) return new Result(null, null, null, null, null, "did not finish in time");
        Matcher rps = WRK_RPS.matcher(out), total = WRK_TOTAL.matcher(out), lat = WRK_LATENCY.matcher(out);
        if (!rps.find()) return new Result(null, null, null, null, null, "no Requests/sec in its output");
        Long requests = total.find() ? Long.parseLong(total.group(1)) : null;
        Double secs = requests == null ? seconds : Double.parseDouble(total.group(2)) / (total.group(3).equals("ms") ? 1000 : 1);
        Double mean = null;
        if (lat.find()) mean = Double.parseDouble(lat.group(1)) * switch (lat.group(2)) { case "us" -> 0.001; case "s" -> 1000.0; default -> 1.0; };
        long failed = 0;
        Matcher e = WRK_ERRORS.matcher(out), n = WRK_NON2XX.matcher(out);
        if (e.find()) for (int g = 1; g <= 4; g++) failed += Long.parseLong(e.group(g));
        if (n.find()) failed += Long.parseLong(n.group(1));
        return new Result(requests, failed, secs, Double.parseDouble(rps.group(1)), mean, "");
    }

    private void row(String cell, String tool, int fork, int users, String command, Result r, double driver) throws IOException {
        Double ratio = r.rps() == null || r.rps() <= 0 || Double.isNaN(driver) ? null : driver / r.rps();
        String note = r.note();
        if (tool.equals("wrk") && ratio != null)
            note = String.format(Locale.ROOT, "driver %s its goal of %.1f x wrk", ratio >= DRIVER_GOAL ? "meets" : "misses", DRIVER_GOAL) + (note.isEmpty() ? "" : "; " + note);
        table().write(Table.row().set("cell", cell).set("tool", tool).set("fork", fork).set("users", users).set("command", command)
                .set("requests", r.requests()).set("failed", r.failed()).set("seconds", r.seconds()).set("throughput_rps", r.rps())
                .set("mean_ms", r.meanMs()).set("driver_throughput_rps", Double.isNaN(driver) ? null : driver).set("driver_ratio", ratio).set("note", note));
        run.progress().say(String.format(Locale.ROOT, "%s %s N=%d: %s req/s%s", cell, tool, users, r.rps() == null ? "-" : String.format(Locale.ROOT, "%.0f", r.rps()),
                ratio == null ? (note.isEmpty() ? "" : " (" + note + ")") : String.format(Locale.ROOT, ", driver %.0f req/s (%.2f x)", driver, ratio)));
    }

    void close() throws IOException {
        if (table != null) table.close();
    }
}
