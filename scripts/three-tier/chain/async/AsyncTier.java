package perfkit.threetier.chain.async;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import org.slf4j.LoggerFactory;
import perfkit.harness.http.HttpService;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.os.Library;
import perfkit.threetier.chain.Hop;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An async tier: Reactor Netty's HTTP server and client on the same event loops, no request owns a thread. A and B
 * call the next tier with Reactor Netty's HttpClient; C waits its delay on a timer ({@code Mono.delay}) and inserts
 * its row with R2DBC PostgreSQL through r2dbc-pool. Arguments as the sync tier's properties:
 * {@code --perfkit.tier=a|b|c}, {@code --perfkit.port=} (0: any free one), {@code --perfkit.next-url=}, {@code --perfkit.delay-ms=}, {@code --perfkit.variant=};
 * C's database comes over stdin.
 */
public final class AsyncTier {
    private final String tier, variant;
    private final Duration delay;
    private final HttpClient client;
    private final ConnectionPool db;
    private final AtomicLong ids = new AtomicLong(), answered = new AtomicLong(), failed = new AtomicLong();

    private AsyncTier(Map<String, String> props) {
        tier = props.get("tier");
        variant = props.getOrDefault("variant", "");
        delay = Duration.ofMillis(Long.parseLong(props.getOrDefault("delay-ms", "0")));
        client = tier.equals("c") ? null : HttpClient.create(ConnectionProvider.builder("chain-" + tier)
                        .maxConnections(Hop.ASYNC_CLIENT_CONNECTIONS).pendingAcquireMaxCount(-1)
                        .pendingAcquireTimeout(Duration.ofSeconds(Hop.CALL_TIMEOUT_SECONDS)).build())
                .baseUrl(props.get("next-url")).responseTimeout(Duration.ofSeconds(Hop.CALL_TIMEOUT_SECONDS))
                .headers(h -> h.set("content-type", "application/json"));
        db = tier.equals("c") ? pool(Hop.Database.fromParent()) : null;
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
    private Mono<Void> entry(HttpServerResponse res) {
        long start = System.nanoTime();
        return answer(res, call(new Hop.Request(ids.incrementAndGet(), "a")).map(a -> a.withA(Hop.msSince(start))));
    }

    /** A's request on B (passed on to C), or B's on C (waits, writes, answers). */
    private Mono<Void> hop(Mono<String> body, HttpServerResponse res) {
        long start = System.nanoTime();
        Mono<Hop.Answer> answer = body.map(s -> Hop.parse(s, Hop.Request.class))
                .flatMap(req -> tier.equals("c") ? write(req, start) : call(new Hop.Request(req.id(), tier)).map(a -> a.withB(Hop.msSince(start))));
        return answer(res, answer);
    }

    private Mono<Void> answer(HttpServerResponse res, Mono<Hop.Answer> answer) {
        return answer.map(Hop::json)
                .flatMap(json -> {
                    answered.incrementAndGet();
                    return res.header("content-type", "application/json").sendString(Mono.just(json)).then();
                })
                .onErrorResume(e -> {
                    failed.incrementAndGet();
                    return res.status(502).sendString(Mono.just(String.valueOf(e.getMessage()))).then();
                });
    }

    private Mono<Hop.Answer> call(Hop.Request req) {
        return client.post().uri(Hop.PATH).send(ByteBufMono.fromString(Mono.just(Hop.json(req))))
                .responseSingle((res, body) -> body.asString().defaultIfEmpty("").map(s -> {
                    if (res.status().code() != 200) throw new IllegalStateException("tier after " + tier + " answered " + res.status().code());
                    return Hop.parse(s, Hop.Answer.class);
                }));
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
    private Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("tier", tier);
        info.put("stack", "async");
        info.put("server", "Reactor Netty " + Library.version(HttpServer.class) + " HttpServer, Netty " + Library.version(io.netty.channel.Channel.class));
        info.put("ioWorkerCount", LoopResources.DEFAULT_IO_WORKER_COUNT);
        if (client != null) {
            info.put("client", "Reactor Netty HttpClient on the server's event loops");
            info.put("clientConnectionsMax", Hop.ASYNC_CLIENT_CONNECTIONS);
        }
        if (db != null) {
            info.put("database", "R2DBC PostgreSQL " + Library.version(PostgresqlConnectionFactory.class) + " through r2dbc-pool " + Library.version(ConnectionPool.class));
            info.put("dbPoolMax", db.getMetrics().map(m -> m.getMaxAllocatedSize()).orElse(Hop.DB_POOL));
            info.put("delayMs", delay.toMillis());
            info.put("wait", "Mono.delay (a timer; no thread held)");
        }
        info.put("answered", answered.get());
        info.put("failed", failed.get());
        info.put("threadGroups", Hop.threadGroups());
        return info;
    }

    public static void start(String[] args) throws InterruptedException {
        // without Spring Boot nobody configures Logback, whose default is DEBUG on stdout
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(ch.qos.logback.classic.Level.WARN);
        Map<String, String> props = new HashMap<>();
        for (String a : args)
            if (a.startsWith("--perfkit.") && a.contains("=")) props.put(a.substring("--perfkit.".length(), a.indexOf('=')), a.substring(a.indexOf('=') + 1));
        AsyncTier t = new AsyncTier(props);
        DisposableServer server = HttpServer.create().host(RemoteJvm.bindAddress()).port(Integer.parseInt(props.getOrDefault("port", "0")))
                .route(r -> r
                        .get(Hop.ENTRY, (req, res) -> t.entry(res))
                        .post(Hop.PATH, (req, res) -> t.hop(req.receive().aggregate().asString(), res))
                        .get(Hop.INFO, (req, res) -> res.header("content-type", "application/json").sendString(Mono.fromSupplier(() -> Hop.json(t.info()))).then()))
                .bindNow();
        HttpService.announce(server.port());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.disposeNow();
            if (t.db != null) t.db.dispose();
        }, "chain-tier-stop"));
        new CountDownLatch(1).await(); // until the run stops it (stdin EOF or SIGTERM, through ChildProcess)
    }
}
