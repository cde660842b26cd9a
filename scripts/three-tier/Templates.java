package perfkit.threetier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.http.HttpService;
import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.run.Run;
import perfkit.harness.os.Ssh;
import perfkit.threetier.templates.TemplatesApp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Round 1, templates: one Spring MVC server (server A, {@link TemplatesApp}) renders the same small page with JSP,
 * FreeMarker, or plain HTML written to a StringBuilder (the ceiling). Per fork a fresh server JVM; before any load,
 * each engine's page is fetched once and compared with plain's modulo whitespace (a difference makes the run
 * invalid); then per engine, in an order rotated per fork, the closed model at saturation and the open-model
 * capacity. The published figures are read as shares of plain.
 */
final class Templates implements Rounds.Round {
    static final List<String> ENGINES = List.of("jsp", "freemarker", "plain");
    /** The engine every page is compared with. */
    static final String REFERENCE = "plain";
    /** The original's req/s (seeds/002, 2014). */
    static final Map<String, Integer> PUBLISHED = Map.of("jsp", 22_000, "freemarker", 29_000, "plain", 30_000);
    static final String PAGES = "pages";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Run run;
    private final HttpRound http;
    private final ThreeTier.Options o;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();

    Templates(Run run, ThreeTier.Options o, HttpRound http) {
        this.run = run;
        this.http = http;
        this.o = o;
    }

    static void service(String role, String[] args) throws Exception {
        TemplatesApp.start(args);
    }

    private List<String> engines() { return o.engines(); }

    @Override public List<String> cells() { return engines().stream().map(e -> "templates/" + e).toList(); }

    @Override
    public void describe(ObjectNode notes) {
        ObjectNode t = notes.putObject("templates");
        ObjectNode versions = t.putObject("versions");
        TemplatesApp.versions().forEach(versions::put);
        t.put("server", "Spring Boot " + versions.path("springBoot").asText() + " MVC on embedded Tomcat " + versions.path("tomcat").asText()
                + " (one JVM per fork, --app-jvm-args " + o.appJvmArgsText() + "); the three engines share its request pool, connector and "
                + "headers (Content-Type text/html;charset=UTF-8, Content-Length), one endpoint each: /page/jsp, /page/freemarker, /page/plain; "
                + "server.tomcat.max-keep-alive-requests=-1 so the driver's connections stay open; "
                + (o.placement().containsKey("templates") ? "on " + o.placement().get("templates") + " (placement in the manifest), bound to the address "
                        + "SSH reached it on, its document root and Tomcat folder in its work folder there, its CPU from that host's /proc"
                        : "on 127.0.0.1"));
        ObjectNode e = t.putObject("engines");
        e.put("jsp", "JSP compiled by Jasper " + versions.path("jasper").asText() + " (tomcat-embed-jasper, ECJ) from a document root in the run's "
                + "scratch area, or in its work folder on its host when placed (JSPs do not load from a jar): the handler forwards to /WEB-INF/jsp/page.jsp; scriptlets and <%= %>, no taglib (as "
                + "the original), session=\"false\"; Jasper development=false and checkInterval=0, so no request checks the file");
        e.put("freemarker", "FreeMarker " + versions.path("freemarker").asText() + " configured by hand (Configuration 2.3.34, HTML output format "
                + "escaping every ${}, template parsed once at start-up and held, update delay infinite), processed into the response writer");
        e.put("plain", "the same HTML appended to a StringBuilder and written in one go: the ceiling");
        t.put("page", "one small HTML page: a title and " + o.templateItems() + " list items (id, name, price) from an in-memory model "
                + "built once per server; names and title hold & ' < > so every engine escapes (JSP and plain with the same helper as "
                + "FreeMarker's HTML escaping); every request renders anew, nothing caches the output");
        t.put("sameBytes", "before any load, each engine's page is fetched once and compared with plain's after trimming and collapsing every "
                + "whitespace run to one space; sizes and SHA-256 of the collapsed text are in pages, the raw pages in pages/<engine>.html; "
                + "a difference makes the run invalid");
        t.put("order", "per fork a fresh server JVM, warmed up by rule on all three pages at once (JIT under 50 ms/s over 10 s, steady "
                + "throughput; notes.serverWarmup) before any engine is measured; the engines then run one after another in an order rotated by one "
                + "per fork, so order effects spread over the engines");
        t.put("load", "per engine: the closed model at saturation with --template-users " + o.templateUsers()
                + " users, then the open-model capacity at p99 <= " + o.sloMs() + " ms from the scheduled start; each step records the "
                + "server's JIT activity (jit_ms_per_s, warm)");
        ObjectNode pub = t.putObject("published");
        pub.put("source", "seeds/002 (2014): JSP 22,000, FreeMarker 29,000, plain HTML 30,000 req/s on the author's test bed");
        ObjectNode rps = pub.putObject("rps");
        ObjectNode share = pub.putObject("shareOfPlain");
        for (String engine : ENGINES) rps.put(engine, PUBLISHED.get(engine));
        for (String engine : ENGINES) share.put(engine, Math.round(1000.0 * PUBLISHED.get(engine) / PUBLISHED.get(REFERENCE)) / 1000.0);
        pub.put("meaning", "throughput of each engine as a share of plain HTML on the same server: JSP 0.73 (rendering cost a quarter of the "
                + "throughput), FreeMarker 0.97 (almost free). The hardware differs, so this host's shares are compared with these, not its req/s");
    }

    @Override
    public void run() throws Exception {
        List<String> engines = engines();
        int forks = o.forks();
        for (int fork = 1; fork <= forks; fork++) {
            HttpService app = startServer(fork);
            try {
                Map<String, Long> watch = Map.of("app", app.process().pid());
                recordServer(app, fork);
                checkPages(app, fork);
                List<String> order = rotated(engines, fork - 1);
                ObjectNode t = (ObjectNode) run.notes().get("templates");
                (t.has("orderByFork") ? (ObjectNode) t.get("orderByFork") : t.putObject("orderByFork")).put(String.valueOf(fork), String.join(",", order));
                Map<String, JvmActivity.Listener> servers = Map.of(app.name(), app.activity());
                // every engine warm before any is measured: the one measured first must not pay the server's JIT warm-up
                http.warm("templates", fork, order.stream().map(e -> app.url() + "/page/" + e).toList(), servers);
                for (String engine : order) {
                    String cell = "templates/" + engine, url = app.url() + "/page/" + engine;
                    double sat = http.saturation(cell, fork, url, o.templateUsers(), watch, servers);
                    CapacitySearch.Result cap = http.capacity(cell, fork, url, sat, watch, servers);
                    // at half the highest rate met, as the chain round compares at (a run of both rounds measures it there, where every tier is a JVM under test)
                    if (!o.rounds().contains("chain") && cap != null && cap.lastMet() != null) http.profilingCost(cell, fork, url, cap.lastMet() / 2.0, watch, servers);
                }
            } finally {
                app.stop(run);
            }
            run.writeManifest();
        }
    }

    /**
     * A fresh server JVM; its document root and Tomcat's work folder (compiled JSPs) are in the run's scratch area, or
     * in its work folder on its host when placed ({@code --place templates}; its agent gives it a temp folder there).
     */
    private HttpService startServer(int fork) throws Exception {
        Ssh host = o.placement().get("templates");
        String base = host != null ? "{work}" : Files.createDirectories(run.scratchDir().resolve("templates").resolve("fork" + fork)).toString();
        List<String> args = List.of(ThreeTier.SERVICE, "templates", "--perfkit.run-dir=" + run.dir(), "--perfkit.docroot=" + base + "/docroot",
                "--perfkit.items=" + o.templateItems(), "--server.tomcat.basedir=" + base + "/tomcat", "--server.port=0");
        List<String> jvm = new ArrayList<>(o.appJvmArgs());
        if (host == null) jvm.add("-Djava.io.tmpdir=" + Files.createDirectories(Path.of(base, "tmp")));
        return HttpService.start(run, "templates/fork" + fork, "templates", host, null, jvm, args, Map.of());
    }

    /** The running server's pool and JSP settings, for the manifest (fork 1; later forks are checked against it). */
    private void recordServer(HttpService app, int fork) throws Exception {
        JsonNode info = JSON.readTree(get(app.url() + "/__info").body());
        ObjectNode t = (ObjectNode) run.notes().get("templates");
        if (fork == 1) t.set("running", info);
        else if (!info.path("requestThreadsMax").equals(t.path("running").path("requestThreadsMax")))
            run.invalid("templates fork " + fork + ": request pool " + info.path("requestThreadsMax") + " differs from fork 1's "
                    + t.path("running").path("requestThreadsMax"));
        run.writeManifest();
    }

    /**
     * Fetches each engine's page once (and plain's as the reference), compares them modulo whitespace and their
     * headers, records size and hash, and saves fork 1's pages. A page that does not render fails the run.
     */
    private void checkPages(HttpService app, int fork) throws Exception {
        Set<String> fetched = new LinkedHashSet<>(engines());
        fetched.add(REFERENCE);
        Map<String, HttpResponse<byte[]>> pages = new LinkedHashMap<>();
        for (String engine : fetched) {
            HttpResponse<byte[]> r = get(app.url() + "/page/" + engine);
            if (r.statusCode() != 200)
                throw new IllegalStateException("templates/" + engine + ": the page did not render (HTTP " + r.statusCode() + "); see logs/templates.fork" + fork + ".log");
            pages.put(engine, r);
        }
        String reference = collapsed(pages.get(REFERENCE).body());
        Set<String> referenceHeaders = headerNames(pages.get(REFERENCE));
        ObjectNode t = (ObjectNode) run.notes().get("templates");
        ObjectNode out = fork == 1 ? t.putObject("pages") : null;
        List<String> differ = new ArrayList<>();
        for (var e : pages.entrySet()) {
            String engine = e.getKey(), text = collapsed(e.getValue().body());
            boolean same = text.equals(reference);
            Set<String> headers = headerNames(e.getValue());
            String contentType = e.getValue().headers().firstValue("content-type").orElse("");
            boolean sameHeaders = headers.equals(referenceHeaders)
                    && contentType.equals(pages.get(REFERENCE).headers().firstValue("content-type").orElse(""));
            if (!same) differ.add(engine + " differs from plain modulo whitespace (first difference at character " + firstDifference(text, reference) + ")");
            if (!sameHeaders) differ.add(engine + " sends headers " + headers + " (" + contentType + "), plain " + referenceHeaders);
            if (out != null) {
                ObjectNode page = out.putObject(engine);
                page.put("bytes", e.getValue().body().length);
                page.put("collapsedChars", text.length());
                page.put("sha256Collapsed", sha256(text));
                page.put("sameAsPlain", same);
                page.put("contentType", contentType);
                page.put("headers", String.join(",", headers));
                page.put("file", PAGES + "/" + engine + ".html");
                Path file = Files.createDirectories(run.dir().resolve(PAGES)).resolve(engine + ".html");
                Files.write(file, e.getValue().body());
                run.addFile(PAGES + "/" + engine + ".html", "other", "the page as " + (engines().contains(engine) ? "templates/" + engine : "the plain reference")
                        + " rendered it, fetched once before the load (fork 1)");
            }
        }
        if (out != null) t.put("sameModuloWhitespace", differ.isEmpty());
        for (String d : differ) run.invalid("templates fork " + fork + ": " + d);
        run.progress().say("templates fork " + fork + ": pages " + (differ.isEmpty() ? "the same modulo whitespace (" + pages.keySet() + ")" : "DIFFER"));
        run.writeManifest();
    }

    private HttpResponse<byte[]> get(String url) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).header("cache-control", "no-store").build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The page trimmed, with every whitespace run collapsed to one space. */
    static String collapsed(byte[] page) {
        return new String(page, StandardCharsets.UTF_8).strip().replaceAll("\\s+", " ");
    }

    /** Header names (lower case) apart from date, which changes by the second. */
    private static Set<String> headerNames(HttpResponse<?> r) {
        Set<String> names = new TreeSet<>();
        for (String name : r.headers().map().keySet()) if (!name.equalsIgnoreCase("date") && !name.equals(":status")) names.add(name.toLowerCase(Locale.ROOT));
        return names;
    }

    private static int firstDifference(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) if (a.charAt(i) != b.charAt(i)) return i;
        return n;
    }

    private static String sha256(String s) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    }

    /** {@code list} rotated left by {@code by}: fork 1 keeps the order, fork 2 starts with the second engine, ... */
    static <T> List<T> rotated(List<T> list, int by) {
        List<T> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) out.add(list.get((i + by) % list.size()));
        return out;
    }
}
