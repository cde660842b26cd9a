package perfkit.harness.http;

import org.springframework.boot.tomcat.TomcatWebServer;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The request pool of a running Spring Boot Tomcat, as a server under test reports it (its {@code /__info}): the
 * pool a study claims is the pool that ran. For studies whose servers run Spring MVC on Tomcat
 * ({@code //SOURCES ../harness/src/perfkit/harness/http/*.java}).
 */
public final class TomcatPool {
    private TomcatPool() {}

    /** requestThreadsMax, requestThreadsCore and requestThreadsLargest (ever busy at once), or the executor's text; empty before the server runs. */
    public static Map<String, Object> of(TomcatWebServer server) {
        Map<String, Object> info = new LinkedHashMap<>();
        Executor e = server == null ? null : server.getTomcat().getConnector().getProtocolHandler().getExecutor();
        if (e instanceof org.apache.tomcat.util.threads.ThreadPoolExecutor tpe) { // Tomcat's own, not java.util.concurrent's
            info.put("requestThreadsMax", tpe.getMaximumPoolSize());
            info.put("requestThreadsCore", tpe.getCorePoolSize());
            info.put("requestThreadsLargest", tpe.getLargestPoolSize());
        } else if (e != null) {
            info.put("executor", e.toString());
        }
        return info;
    }
}
