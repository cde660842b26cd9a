package perfkit.webreactive;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import perfkit.harness.http.HttpService;
import perfkit.harness.remote.RemoteJvm;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * The external service: {@code GET /1/0/customer/customers/{c}/users/{u}} answers a small JSON user after a fixed
 * delay. It runs on Reactor Netty and waits with {@code Mono.delay} (a timer), so a waiting request holds no thread:
 * its own latency stays at the delay however many requests wait at once, and any queueing the study sees is in the
 * app under test. It binds 127.0.0.1 on a free port (the host's address when placed on another host) and announces it ({@link HttpService#announce}).
 * <p>
 * {@code GET /__stats} answers its own response times (handler entry to answer ready) since the previous call,
 * so a caller that asks at a step's start and end gets that step's numbers: the proof the delay was honoured.
 */
final class Backend {
    private Backend() {}

    static void main(long delayMs) throws InterruptedException {
        Recorder recorder = new Recorder(3_600_000_000_000L, 3);
        Duration delay = Duration.ofMillis(delayMs);
        DisposableServer server = HttpServer.create().host(RemoteJvm.bindAddress()).port(0)
                .route(routes -> routes
                        .get("/1/0/customer/customers/{c}/users/{u}", (req, res) -> {
                            long start = System.nanoTime();
                            String c = req.param("c"), u = req.param("u");
                            // recorded as the answer is ready, before any byte leaves: a caller that has its answer
                            // (and a probe after it) always finds the call counted
                            Mono<String> body = Mono.delay(delay).map(x -> {
                                recorder.recordValue(System.nanoTime() - start);
                                return user(c, u);
                            });
                            return res.header("content-type", "application/json").sendString(body).then();
                        })
                        .get("/__stats", (req, res) -> res.header("content-type", "application/json")
                                .sendString(Mono.fromSupplier(() -> stats(recorder.getIntervalHistogram(), delayMs)))))
                .bindNow();
        HttpService.announce(server.port());
        Runtime.getRuntime().addShutdownHook(new Thread(server::disposeNow, "backend-stop"));
        new CountDownLatch(1).await(); // until the run stops it (stdin EOF or SIGTERM, through ChildProcess)
    }

    static String user(String customer, String user) {
        return "{\"id\":" + json(user) + ",\"customerId\":" + json(customer) + ",\"login\":" + json("user-" + user)
                + ",\"firstName\":\"Ada\",\"lastName\":\"Lovelace\",\"email\":" + json("user-" + user + "@example.org") + ",\"active\":true}";
    }

    private static String json(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    static String stats(Histogram h, long delayMs) {
        long n = h.getTotalCount();
        return String.format(Locale.ROOT, "{\"count\":%d,\"delayMs\":%d,\"p50Ms\":%s,\"p99Ms\":%s,\"maxMs\":%s,\"meanMs\":%s}", n, delayMs,
                ms(n, h.getValueAtPercentile(50)), ms(n, h.getValueAtPercentile(99)), ms(n, h.getMaxValue()), n == 0 ? "null" : String.format(Locale.ROOT, "%.3f", h.getMean() / 1e6));
    }

    private static String ms(long n, long nanos) {
        return n == 0 ? "null" : String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }
}
