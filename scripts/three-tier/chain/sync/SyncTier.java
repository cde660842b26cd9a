package perfkit.threetier.chain.sync;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import jakarta.annotation.PreDestroy;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import perfkit.harness.http.HttpService;
import perfkit.harness.os.Library;
import perfkit.threetier.chain.Hop;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A sync tier: Spring MVC on Tomcat (its default 200 threads), one thread per request from start to end. A and B call
 * the next tier with Apache HttpClient 5 (classic, blocking, pooled); C sleeps its delay on the request's thread (the
 * stack has no other way to wait) and inserts its row with JDBC through HikariCP. Its own package, so component
 * scanning sees only this app. Properties: {@code perfkit.tier} (a, b or c), {@code perfkit.next-url} (a, b),
 * {@code perfkit.delay-ms} and {@code perfkit.variant} (c); C's database comes over stdin.
 */
@SpringBootApplication
@RestController
public class SyncTier {
    private final String tier, variant;
    private final long delayMs;
    private final String next;
    private final CloseableHttpClient client;
    private final HikariDataSource db;
    private final AtomicLong ids = new AtomicLong(), answered = new AtomicLong();
    private volatile TomcatWebServer server;

    SyncTier(@Value("${perfkit.tier}") String tier, @Value("${perfkit.next-url:}") String next, @Value("${perfkit.delay-ms:0}") long delayMs,
             @Value("${perfkit.variant:}") String variant) {
        this.tier = tier;
        this.next = next;
        this.delayMs = delayMs;
        this.variant = variant;
        this.client = tier.equals("c") ? null : client();
        this.db = tier.equals("c") ? dataSource(Hop.Database.fromParent()) : null;
    }

    private static CloseableHttpClient client() {
        PoolingHttpClientConnectionManager pool = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(Hop.SYNC_CLIENT_CONNECTIONS).setMaxConnPerRoute(Hop.SYNC_CLIENT_CONNECTIONS)
                .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(Timeout.ofSeconds(10))
                        .setSocketTimeout(Timeout.ofSeconds(Hop.CALL_TIMEOUT_SECONDS)).build())
                .build();
        return HttpClients.custom().setConnectionManager(pool)
                .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(Hop.CALL_TIMEOUT_SECONDS))
                        .setConnectionRequestTimeout(Timeout.ofSeconds(Hop.CALL_TIMEOUT_SECONDS)).build())
                .build();
    }

    private static HikariDataSource dataSource(Hop.Database d) {
        HikariConfig c = new HikariConfig();
        c.setPoolName("chain-c");
        c.setJdbcUrl(d.jdbcUrl());
        c.setUsername(d.user());
        c.setPassword(d.password());
        if (d.schema() != null && !d.schema().isEmpty()) c.setSchema(d.schema());
        c.setMaximumPoolSize(Hop.DB_POOL);
        c.setMinimumIdle(Hop.DB_POOL); // a fixed pool, opened before the first request
        return new HikariDataSource(c);
    }

    /** The browser's request, on A. */
    @GetMapping(Hop.ENTRY)
    public Hop.Answer entry() throws IOException {
        long start = System.nanoTime();
        Hop.Answer a = call(new Hop.Request(ids.incrementAndGet(), "a")).withA(Hop.msSince(start));
        answered.incrementAndGet();
        return a;
    }

    /** A's request on B (passed on to C), or B's on C (waits, writes, answers). */
    @PostMapping(Hop.PATH)
    public Hop.Answer hop(@RequestBody Hop.Request req) throws Exception {
        long start = System.nanoTime();
        Hop.Answer a = tier.equals("c") ? write(req, start) : call(new Hop.Request(req.id(), tier)).withB(Hop.msSince(start));
        answered.incrementAndGet();
        return a;
    }

    private Hop.Answer call(Hop.Request req) throws IOException {
        HttpPost post = new HttpPost(next + Hop.PATH);
        post.setEntity(new StringEntity(Hop.json(req), ContentType.APPLICATION_JSON));
        return client.execute(post, res -> {
            String body = EntityUtils.toString(res.getEntity());
            if (res.getCode() != 200) throw new IOException("tier after " + tier + " answered " + res.getCode());
            return Hop.parse(body, Hop.Answer.class);
        });
    }

    private Hop.Answer write(Hop.Request req, long start) throws Exception {
        Thread.sleep(delayMs); // holds this Tomcat thread: the sync stack cannot wait any other way
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(Hop.INSERT_JDBC)) {
            s.setLong(1, req.id());
            s.setString(2, variant);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return new Hop.Answer(req.id(), rs.getLong(1), Hop.msSince(start), null, null);
            }
        }
    }

    /** Pools as the running tier has them, and the requests it answered. */
    @GetMapping(Hop.INFO)
    public Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("tier", tier);
        info.put("stack", "sync");
        info.put("server", "Spring Boot " + org.springframework.boot.SpringBootVersion.getVersion() + " MVC on Tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber());
        info.putAll(perfkit.harness.http.TomcatPool.of(server));
        if (client != null) {
            info.put("client", "Apache HttpClient " + Library.version(CloseableHttpClient.class) + " classic (blocking), pooled");
            info.put("clientConnectionsMax", Hop.SYNC_CLIENT_CONNECTIONS);
        }
        if (db != null) {
            info.put("database", "JDBC (PostgreSQL driver " + Library.version(org.postgresql.Driver.class) + ") through HikariCP " + Library.version(HikariDataSource.class));
            info.put("dbPoolMax", db.getMaximumPoolSize());
            info.put("delayMs", delayMs);
            info.put("wait", "Thread.sleep on the request thread");
        }
        info.put("answered", answered.get());
        info.put("threadGroups", Hop.threadGroups());
        return info;
    }

    @EventListener
    public void started(WebServerInitializedEvent event) {
        if (event.getWebServer() instanceof TomcatWebServer t) server = t;
        HttpService.announce(event.getWebServer().getPort());
    }

    @PreDestroy
    void close() throws IOException {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    public static void start(String[] args) {
        SpringApplication app = new SpringApplication(SyncTier.class);
        app.setWebApplicationType(WebApplicationType.SERVLET);
        app.run(HttpService.springArgs(args));
    }
}
