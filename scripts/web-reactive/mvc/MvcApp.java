package perfkit.webreactive.mvc;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import perfkit.harness.http.HttpService;
import perfkit.webreactive.Dto;

import java.net.http.HttpClient;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The imperative app: Spring MVC on Tomcat with its default pool (200 threads). Each request blocks its Tomcat thread
 * on {@code RestClient} (the JDK HttpClient, chosen explicitly: with Reactor Netty on the classpath Spring would
 * otherwise pick its reactive client; the JDK client completes responses on worker threads of its own, which the
 * manifest's thread groups show) for 1 or 2 sequential calls to the external service, maps the DTO and returns
 * JSON. Its own package, so component scanning sees only this app.
 */
@SpringBootApplication
@RestController
public class MvcApp {
    private final RestClient client;
    private final boolean virtual;
    private volatile TomcatWebServer server;

    MvcApp(@Value("${perfkit.backend-url}") String backendUrl, @Value("${spring.threads.virtual.enabled:false}") boolean virtual) {
        this.virtual = virtual;
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        this.client = RestClient.builder().baseUrl(backendUrl).requestFactory(new JdkClientHttpRequestFactory(jdk)).build();
    }

    @GetMapping("/users/{id}")
    public Dto.UserView user(@PathVariable String id, @RequestParam(defaultValue = "1") int calls) {
        Dto.UserView view = null;
        for (int i = 0; i < calls; i++) {
            Dto.User u = client.get().uri("/1/0/customer/customers/{c}/users/{u}", "1", id).retrieve().body(Dto.User.class);
            view = Dto.map(u, i + 1);
        }
        return view;
    }

    /** Thread pools as the running app has them, for the manifest. */
    @GetMapping("/__info")
    public Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("stack", "Spring MVC on Tomcat, RestClient on the JDK HttpClient (blocking)");
        info.put("server", "Tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber());
        info.putAll(perfkit.harness.http.TomcatPool.of(server));
        info.put("virtualThreads", virtual);
        info.put("clientConnectionsMax", "unbounded in use (the JDK HttpClient opens a connection per concurrent request); idle at most "
                + System.getProperty("jdk.httpclient.connectionPoolSize", "unbounded") + ", closed after "
                + System.getProperty("jdk.httpclient.keepalive.timeout", "1200") + " s");
        info.putAll(Dto.threads());
        return info;
    }

    @EventListener
    public void started(WebServerInitializedEvent event) {
        if (event.getWebServer() instanceof TomcatWebServer t) server = t;
        HttpService.announce(event.getWebServer().getPort());
    }

    public static void start(String[] args) {
        SpringApplication app = new SpringApplication(MvcApp.class);
        app.setWebApplicationType(WebApplicationType.SERVLET);
        app.run(HttpService.springArgs(args));
    }
}
