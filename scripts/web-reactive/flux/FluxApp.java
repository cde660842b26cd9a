package perfkit.webreactive.flux;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import perfkit.harness.http.HttpService;
import perfkit.webreactive.Dto;
import reactor.core.publisher.Mono;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The reactive app: Spring WebFlux on Reactor Netty with its default event loops. Each request calls the external
 * service with {@code WebClient} (Reactor Netty's client, sharing the server's event loops, as Spring Boot sets it
 * up by default) 1 or 2 times in sequence, maps the DTO and returns JSON; no thread waits on the back end.
 */
@SpringBootApplication
@RestController
public class FluxApp {
    private final WebClient client;
    private final int connections;

    /**
     * {@code perfkit.client-connections}: the client's pool, sized by the study from Little's law for the highest rate it
     * will offer (WebClient's default, 500 connections and 1,000 waiting acquires, fails requests with HTTP 500 beyond
     * that, while MVC's JDK client has no limit); waiting acquires are unbounded, as the JDK client's are.
     */
    FluxApp(@Value("${perfkit.backend-url}") String backendUrl, @Value("${perfkit.client-connections:500}") int connections) {
        this.connections = connections;
        // Spring Boot 4 moved the WebClient.Builder bean to spring-boot-webclient; the plain builder is the same
        // client: Reactor Netty on the server's event loops, here with a pool of the study's size
        reactor.netty.resources.ConnectionProvider pool = reactor.netty.resources.ConnectionProvider.builder("backend")
                .maxConnections(connections).pendingAcquireMaxCount(-1).pendingAcquireTimeout(java.time.Duration.ofSeconds(60)).build();
        this.client = WebClient.builder().baseUrl(backendUrl)
                .clientConnector(new org.springframework.http.client.reactive.ReactorClientHttpConnector(reactor.netty.http.client.HttpClient.create(pool)))
                .build();
    }

    @GetMapping("/users/{id}")
    public Mono<Dto.UserView> user(@PathVariable String id, @RequestParam(defaultValue = "1") int calls) {
        Mono<Dto.UserView> view = call(id, 1);
        for (int i = 2; i <= calls; i++) {
            int k = i;
            view = view.flatMap(previous -> call(id, k)); // sequential: the next call starts when the previous answered
        }
        return view;
    }

    private Mono<Dto.UserView> call(String id, int k) {
        return client.get().uri("/1/0/customer/customers/{c}/users/{u}", "1", id).retrieve().bodyToMono(Dto.User.class).map(u -> Dto.map(u, k));
    }

    /** Event-loop sizes as the running app has them, for the manifest. */
    @GetMapping("/__info")
    public Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("stack", "Spring WebFlux on Reactor Netty, WebClient (Reactor Netty)");
        info.put("server", "Reactor Netty");
        info.put("ioWorkerCount", reactor.netty.resources.LoopResources.DEFAULT_IO_WORKER_COUNT);
        info.put("ioSelectCount", reactor.netty.resources.LoopResources.DEFAULT_IO_SELECT_COUNT);
        info.put("clientConnectionsMax", connections);
        info.put("clientPendingAcquiresMax", "unbounded");
        info.putAll(Dto.threads());
        return info;
    }

    @EventListener
    public void started(WebServerInitializedEvent event) {
        HttpService.announce(event.getWebServer().getPort());
    }

    public static void start(String[] args) {
        SpringApplication app = new SpringApplication(FluxApp.class);
        app.setWebApplicationType(WebApplicationType.REACTIVE);
        app.run(HttpService.springArgs(args));
    }
}
