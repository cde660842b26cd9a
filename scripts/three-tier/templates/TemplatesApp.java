package perfkit.threetier.templates;

import freemarker.core.HTMLOutputFormat;
import freemarker.template.Configuration;
import freemarker.template.Template;
import freemarker.template.TemplateException;
import freemarker.template.TemplateExceptionHandler;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.boot.web.server.servlet.ConfigurableServletWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.stereotype.Controller;
import perfkit.harness.http.HttpService;

import java.io.File;
import java.io.FilterWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.jar.JarFile;

/**
 * Server A of the templates round: Spring Boot MVC on Tomcat rendering one page (a title and --perfkit.items items
 * from a model built once) three ways, one endpoint each, on the same pool and with the same headers:
 * <ul>
 * <li>{@code /page/jsp}: a forward to {@code /WEB-INF/jsp/page.jsp}, compiled by Jasper from a document root on disk
 *     (JSPs do not load from a jar), development mode off so no request checks the file;</li>
 * <li>{@code /page/freemarker}: {@code page.ftlh} from the classpath, parsed once at start-up, processed into the
 *     response writer;</li>
 * <li>{@code /page/plain}: the same HTML appended to a StringBuilder (the ceiling).</li>
 * </ul>
 * Every request renders: nothing caches the output. Its own package, so component scanning sees only this app.
 */
@SpringBootApplication
@Controller
public class TemplatesApp {
    /** Where the templates are on the classpath (JBang //FILES) and where the JSP goes under the document root. */
    static final String RESOURCES = "perfkit-templates/", JSP = "/WEB-INF/jsp/page.jsp";
    static final String CONTENT_TYPE = "text/html;charset=UTF-8";
    /** Spring Boot names the servlet it registers for *.jsp "jsp". */
    static final String JSP_SERVLET = "jsp";

    private final PageModel model;
    private final Map<String, Object> freemarkerRoot;
    private final Template freemarker;
    private volatile TomcatWebServer server;

    TemplatesApp(@Value("${perfkit.items}") int items) throws IOException {
        this.model = new PageModel(items);
        this.freemarkerRoot = Map.of("model", model);
        this.freemarker = freemarkerConfiguration().getTemplate("page.ftlh");
    }

    /** FreeMarker configured by hand (the Spring Boot starter does not resolve here): no update checks, errors thrown. */
    static Configuration freemarkerConfiguration() {
        Configuration cfg = new Configuration(Configuration.VERSION_2_3_34);
        cfg.setClassForTemplateLoading(TemplatesApp.class, "/" + RESOURCES);
        cfg.setDefaultEncoding("UTF-8");
        cfg.setLocale(Locale.ROOT);
        cfg.setOutputFormat(HTMLOutputFormat.INSTANCE); // .ftlh selects it too; said here so the escaping never depends on a name
        cfg.setTemplateUpdateDelayMilliseconds(Long.MAX_VALUE); // the template is held anyway; this keeps the cache from re-checking it
        cfg.setTemplateExceptionHandler(TemplateExceptionHandler.RETHROW_HANDLER);
        cfg.setLogTemplateExceptions(false);
        cfg.setWrapUncheckedExceptions(true);
        cfg.setFallbackOnNullLoopVariable(false);
        return cfg;
    }

    @GetMapping("/page/jsp")
    public void jsp(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException {
        request.setAttribute("model", model);
        request.getRequestDispatcher(JSP).forward(request, response);
    }

    @GetMapping("/page/freemarker")
    public void freemarker(HttpServletResponse response) throws IOException, TemplateException {
        response.setContentType(CONTENT_TYPE);
        freemarker.process(freemarkerRoot, new UnflushedWriter(response.getWriter()));
    }

    /**
     * FreeMarker flushes its writer at the end of a template, which would commit the response and make Tomcat send it
     * chunked; the other engines end with the response uncommitted, so Tomcat sets Content-Length. Ignoring that
     * flush keeps the headers (and the write pattern) the same for all three.
     */
    static final class UnflushedWriter extends FilterWriter {
        UnflushedWriter(Writer out) { super(out); }

        @Override public void flush() { }
    }

    @GetMapping("/page/plain")
    public void plain(HttpServletResponse response) throws IOException {
        response.setContentType(CONTENT_TYPE);
        response.getWriter().write(model.renderPlain());
    }

    /** The running server as it is: request pool, Jasper's settings, versions; for the manifest. */
    @GetMapping("/__info")
    @ResponseBody
    public Map<String, Object> info(HttpServletRequest request) {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("stack", "Spring Boot " + org.springframework.boot.SpringBootVersion.getVersion() + " MVC on Tomcat");
        info.putAll(versions());
        info.putAll(perfkit.harness.http.TomcatPool.of(server));
        if (server != null) info.put("maxConnections", server.getTomcat().getConnector().getProperty("maxConnections"));
        ServletRegistration jsp = request.getServletContext().getServletRegistration(JSP_SERVLET);
        info.put("jspServlet", jsp == null ? null : Map.of("className", jsp.getClassName(), "initParameters", jsp.getInitParameters()));
        info.put("items", model.getItems().size());
        info.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        info.put("java", Runtime.version().toString());
        return info;
    }

    /** Versions of the three engines' libraries on this classpath (the study's parent reads them too). */
    public static Map<String, String> versions() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("tomcat", org.apache.catalina.util.ServerInfo.getServerNumber());
        v.put("jasper", jarVersion(org.apache.jasper.servlet.JspServlet.class));
        v.put("freemarker", Configuration.getVersion().toString());
        v.put("springBoot", org.springframework.boot.SpringBootVersion.getVersion());
        return v;
    }

    /** The Bundle-Version (else Implementation-Version) of the jar a class came from. */
    static String jarVersion(Class<?> c) {
        try (JarFile jar = new JarFile(new File(c.getProtectionDomain().getCodeSource().getLocation().toURI()))) {
            var attrs = jar.getManifest().getMainAttributes();
            String v = attrs.getValue("Bundle-Version");
            return v != null ? v : attrs.getValue("Implementation-Version");
        } catch (Exception e) {
            return "unknown (" + e.getClass().getSimpleName() + ")";
        }
    }

    /** Tomcat serves JSPs from this folder (written at start-up), not from a jar. Static: the factory is customized before this app exists. */
    @Bean
    static WebServerFactoryCustomizer<ConfigurableServletWebServerFactory> documentRoot(@Value("${perfkit.docroot}") String docroot) {
        return factory -> factory.setDocumentRoot(new File(docroot));
    }

    @EventListener
    public void started(WebServerInitializedEvent event) {
        if (event.getWebServer() instanceof TomcatWebServer t) server = t;
        HttpService.announce(event.getWebServer().getPort());
    }

    /**
     * Writes page.jsp into the document root, then starts the server. The study passes --perfkit.docroot (in the
     * run's scratch area), --perfkit.items, the port and Tomcat's base directory; the rest are fixed here so that
     * every run configures the engines alike.
     */
    public static void start(String[] args) throws IOException {
        String docroot = null;
        for (String a : args) if (a.startsWith("--perfkit.docroot=")) docroot = a.substring("--perfkit.docroot=".length());
        if (docroot == null) throw new IllegalArgumentException("--perfkit.docroot=<folder> is required");
        Path jsp = Path.of(docroot, JSP.substring(1));
        Files.createDirectories(jsp.getParent());
        try (InputStream in = TemplatesApp.class.getClassLoader().getResourceAsStream(RESOURCES + "page.jsp")) {
            if (in == null) throw new IllegalStateException(RESOURCES + "page.jsp is not on the classpath");
            Files.copy(in, jsp, StandardCopyOption.REPLACE_EXISTING);
        }
        SpringApplication app = new SpringApplication(TemplatesApp.class);
        app.setWebApplicationType(WebApplicationType.SERVLET);
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("spring.main.banner-mode", "off");
        defaults.put("logging.level.root", "WARN");
        defaults.put("server.tomcat.max-keep-alive-requests", "-1"); // the driver's connections stay open, whichever engine
        defaults.put("server.tomcat.keep-alive-timeout", "10m"); // and are not reset after a minute idle between steps
        defaults.put("server.servlet.jsp.registered", "true");
        defaults.put("server.servlet.jsp.init-parameters.development", "false"); // no modification check per request
        defaults.put("server.servlet.jsp.init-parameters.checkInterval", "0"); // no background recompilation either
        defaults.put("server.servlet.jsp.init-parameters.compilerSourceVM", "17");
        defaults.put("server.servlet.jsp.init-parameters.compilerTargetVM", "17");
        defaults.put("server.servlet.session.persistent", "false");
        app.setDefaultProperties(defaults);
        app.run(HttpService.springArgs(args)); // it binds 127.0.0.1, or the address SSH reached its host on when placed
    }
}
