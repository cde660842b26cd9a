package perfkit.threetier.chain.webflux;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import jakarta.annotation.PreDestroy;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import perfkit.harness.http.HttpService;
import perfkit.harness.os.Library;
import perfkit.threetier.chain.Hop;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A reactive tier on the same framework as the sync one: Spring WebFlux on Reactor Netty, so the chain's sync and
 * reactive variants differ in style only, not in framework. A and B call the next tier with Spring's WebClient (Reactor
 * Netty, on the server's event loops); C waits its delay on a timer ({@code Mono.delay}) and inserts its row with R2DBC
 * PostgreSQL through r2dbc-pool, the reactive counterpart of the sync tier's JDBC through HikariCP. JSON through
 * Spring's codecs on both sides, as the sync tier's message converters. Properties as the sync tier's; C's database
 * comes over stdin.
 */
@SpringBootApplication
@RestController
public class WebFluxTier {
    private final String tier, variant;
    private final Duration delay;
    private final WebClient client;
    private final ConnectionPool db;
    private final AtomicLong ids = new AtomicLong(), answered = new AtomicLong();

    WebFluxTier(@Value("${perfkit.tier}") String tier, @Value("${perfkit.next-url:}") String next, @Value("${perfkit.delay-ms:0}") long delayMs,
                @Value("${perfkit.variant:}") String variant) {
        this.tier = tier;
        this.variant = variant;
        this.delay = Duration.ofMillis(delayMs);
        this.client = tier.equals("c") ? null : WebClient.builder().baseUrl(next)
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.builder("chain-" + tier)
                        .maxConnections(Hop.ASYNC_CLIENT_CONNECTIONS).pendingAcquireMaxCount(-1)
                        .pendingAcquireTimeout(Duration.ofSeconds(Hop.CALL_TIMEOUT_SECONDS)).build())
                        .responseTimeout(Duration.ofSeconds(Hop.CALL_TIMEOUT_SECONDS))))
                .build();
        this.db = tier.equals("c") ? pool(Hop.Database.fromParent()) : null;
    }

    private static ConnectionPool pool(Hop.Database d) {
        PostgresqlConnectionConfiguration.Builder b = PostgresqlConnectionConfiguration.builder().host(d.host()).port(d.port())
                .database(d.database()).username(d.user()).password(d.password()).connectTimeout(Duration.ofSeconds(10));
        if (d.schema() != null && !d.schema().isEmpty()) b.schema(d.schema());
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(new PostgresqlConnectionFactory(b.build()))
                .name("chain-c").initialSize(Hop.DB_POOL).maxSize(Hop.DB_POOL).maxAcquireTime(Duration.ofSeconds(Hop.CALL_TIMEOUT_SECONDS)).build());
        pool.warmup().block(Duration.ofSeconds(60)); // a fixed pool, opened before the first request (and a bad password fails here)
        return pool;
    }

    /** The browser's request, on A. */
    @GetMapping(Hop.ENTRY)
    public Mono<Hop.Answer> entry() {
        long start = System.nanoTime();
        return call(new Hop.Request(ids.incrementAndGet(), "a")).map(a -> a.withA(Hop.msSince(start))).doOnSuccess(a -> answered.incrementAndGet());
    }

    /** A's request on B (passed on to C), or B's on C (waits, writes, answers). */
    @PostMapping(Hop.PATH)
    public Mono<Hop.Answer> hop(@RequestBody Hop.Request req) {
        long start = System.nanoTime();
        Mono<Hop.Answer> a = tier.equals("c") ? write(req, start) : call(new Hop.Request(req.id(), tier)).map(x -> x.withB(Hop.msSince(start)));
        return a.doOnSuccess(x -> answered.incrementAndGet());
    }

    private Mono<Hop.Answer> call(Hop.Request req) {
        return client.post().uri(Hop.PATH).bodyValue(req).retrieve().bodyToMono(Hop.Answer.class);
    }

    private Mono<Hop.Answer> write(Hop.Request req, long start) {
        return Mono.delay(delay) // a timer: no thread waits
                .then(Mono.usingWhen(db.create(),
                        c -> Mono.from(c.createStatement(Hop.INSERT_R2DBC).bind("$1", req.id()).bind("$2", variant).execute())
                                .flatMap(r -> Mono.from(r.map((row, meta) -> row.get(0, Long.class)))),
                        Connection::close))
                .map(row -> new Hop.Answer(req.id(), row, Hop.msSince(start), null, null));
    }

    /** Pools as the running tier has them, and the requests it answered. */
    @GetMapping(Hop.INFO)
    public Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("tier", tier);
        info.put("stack", "webflux");
        info.put("server", "Spring Boot " + org.springframework.boot.SpringBootVersion.getVersion() + " WebFlux on Reactor Netty " + Library.version(reactor.netty.http.server.HttpServer.class));
        info.put("ioWorkerCount", LoopResources.DEFAULT_IO_WORKER_COUNT);
        if (client != null) {
            info.put("client", "Spring WebClient on Reactor Netty, on the server's event loops");
            info.put("clientConnectionsMax", Hop.ASYNC_CLIENT_CONNECTIONS);
        }
        if (db != null) {
            info.put("database", "R2DBC PostgreSQL " + Library.version(PostgresqlConnectionFactory.class) + " through r2dbc-pool " + Library.version(ConnectionPool.class));
            info.put("dbPoolMax", db.getMetrics().map(m -> m.getMaxAllocatedSize()).orElse(Hop.DB_POOL));
            info.put("delayMs", delay.toMillis());
            info.put("wait", "Mono.delay (a timer; no thread held)");
        }
        info.put("answered", answered.get());
        info.put("threadGroups", Hop.threadGroups());
        return info;
    }

    @EventListener
    public void started(WebServerInitializedEvent event) {
        HttpService.announce(event.getWebServer().getPort());
    }

    @PreDestroy
    void close() {
        if (db != null) db.dispose();
    }

    public static void start(String[] args) {
        SpringApplication app = new SpringApplication(WebFluxTier.class);
        app.setWebApplicationType(WebApplicationType.REACTIVE);
        app.run(HttpService.springArgs(args));
    }
}
