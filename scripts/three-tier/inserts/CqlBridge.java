package perfkit.threetier;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The Cassandra Java driver 4.19 (scripts/three-tier/cassandra/CassandraClient.java) in a class loader of its own,
 * over that script's classpath, with only the JDK as parent: the driver's Netty 4.1 would otherwise meet Spring
 * Boot 4's Netty 4.2 on this script's classpath. Only JDK types cross the boundary, so set-up goes through
 * reflection and each insert is a plain {@link Consumer} call.
 */
final class CqlBridge implements AutoCloseable {
    static final String CLIENT_CLASS = "perfkit.threetier.cassandra.CassandraClient";

    private final Object client;
    private final Method execute, rows, inserter, close;

    private CqlBridge(Object client) throws NoSuchMethodException {
        this.client = client;
        Class<?> c = client.getClass();
        execute = c.getMethod("execute", String.class);
        rows = c.getMethod("rows", String.class);
        inserter = c.getMethod("inserter", String.class);
        close = c.getMethod("close");
    }

    /** One loader per JVM and classpath: the driver's classes load once however many sessions open. */
    private static ClassLoader loader;
    private static String loaderClasspath;

    private static synchronized ClassLoader loader(String classpath) throws Exception {
        if (loader == null || !classpath.equals(loaderClasspath)) {
            List<URL> urls = new ArrayList<>();
            for (String entry : classpath.split(java.io.File.pathSeparator)) if (!entry.isBlank()) urls.add(Path.of(entry).toUri().toURL());
            loader = new URLClassLoader("cassandra-driver", urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
            loaderClasspath = classpath;
        }
        return loader;
    }

    /** The driver's release, read from its jar in its own class loader ("?" when it cannot be told). */
    static String driverVersion(String classpath) {
        try {
            return perfkit.harness.os.Library.version(loader(classpath).loadClass("com.datastax.oss.driver.api.core.CqlSession"));
        } catch (Exception e) {
            return "?";
        }
    }

    /**
     * TLS to a user's cluster (--cassandra-truststore, --cassandra-keystore): the stores' paths and passwords, which
     * reach a writer fork in its spec over stdin; empty strings for no keystore. Null where the connection is plain.
     */
    record Tls(String truststore, String truststorePassword, String keystore, String keystorePassword) {
        /** The stores load with their passwords, and the keystore holds a key that opens with it: checked before the run, in one line. */
        String problem() {
            try {
                load("--cassandra-truststore", truststore, truststorePassword, "PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD");
                if (keystore.isEmpty()) return null;
                java.security.KeyStore keys = load("--cassandra-keystore", keystore, keystorePassword, "PERFKIT_CASSANDRA_KEYSTORE_PASSWORD");
                boolean hasKey = false;
                for (String alias : java.util.Collections.list(keys.aliases())) hasKey |= keys.isKeyEntry(alias);
                if (!hasKey) return "option --cassandra-keystore holds no private key: it needs this client's certificate with its key";
                // the same password for the key, as keytool and the JDK's key manager take it
                javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm()).init(keys, keystorePassword.toCharArray());
                return null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            } catch (Exception e) {
                return "option --cassandra-keystore: its key does not open with the store's password (" + e.getMessage() + ")";
            }
        }

        private static java.security.KeyStore load(String option, String file, String password, String env) {
            try {
                return java.security.KeyStore.getInstance(new java.io.File(file), password.toCharArray());
            } catch (Exception e) {
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                throw new IllegalArgumentException("option " + option + " cannot be read as a PKCS12 or JKS store with its password: " + why
                        + (password.isEmpty() ? " (no password given: set " + env + " or " + option + "-password-file)" : ""));
            }
        }

        @Override
        public String toString() { return "Tls[" + truststore + (keystore.isEmpty() ? "" : ", client certificate " + keystore) + "]"; }
    }

    /** Opens a session; the one-line cause when it cannot connect (no stack trace for an unreachable cluster). */
    static CqlBridge open(String classpath, String contactPoints, String datacenter, String user, String password, double connectTimeoutSeconds) throws Exception {
        return open(classpath, contactPoints, datacenter, user, password, null, connectTimeoutSeconds);
    }

    /** The same over TLS when {@code tls} is not null. */
    static CqlBridge open(String classpath, String contactPoints, String datacenter, String user, String password, Tls tls,
                          double connectTimeoutSeconds) throws Exception {
        ClassLoader cl = loader(classpath);
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(cl);
        try {
            Method open = cl.loadClass(CLIENT_CLASS).getMethod("open", String.class, String.class, String.class, String.class,
                    String.class, String.class, String.class, String.class, double.class);
            Tls plain = new Tls("", "", "", ""), s = tls == null ? plain : tls;
            return new CqlBridge(open.invoke(null, contactPoints, datacenter, user, password, s.truststore(), s.truststorePassword(), s.keystore(),
                    s.keystorePassword(), connectTimeoutSeconds));
        } catch (InvocationTargetException e) {
            throw new CqlException(e.getCause());
        } finally {
            t.setContextClassLoader(before);
        }
    }

    long execute(String cql) throws Exception { return (long) call(execute, cql); }

    @SuppressWarnings("unchecked")
    List<List<String>> rows(String cql) throws Exception { return (List<List<String>>) call(rows, cql); }

    /** A writer's own prepared statement; each accept() is one acknowledged insert, or throws. */
    @SuppressWarnings("unchecked")
    Consumer<Object[]> inserter(String cql) throws Exception { return (Consumer<Object[]>) call(inserter, cql); }

    String driverVersion() throws Exception { return (String) client.getClass().getMethod("driverVersion").invoke(client); }

    private Object call(Method m, String arg) throws Exception {
        try {
            return m.invoke(client, arg);
        } catch (InvocationTargetException e) {
            throw new CqlException(e.getCause());
        }
    }

    @Override
    public void close() {
        try {
            close.invoke(client);
        } catch (ReflectiveOperationException ignored) {
            // closing a session that failed
        }
    }

    /** A driver error, by its message: the driver's exception classes live in the other loader. */
    static final class CqlException extends Exception {
        private static final java.util.regex.Pattern TLS_FAILURE = java.util.regex.Pattern.compile("SSLHandshakeException: ([^)\\]\\n]+)");

        CqlException(Throwable cause) {
            super(summary(cause), cause);
        }

        /** The driver's messages list every node's exception; one plain clause is enough for a one-line error. */
        private static String summary(Throwable cause) {
            if (cause == null) return "Cassandra driver error";
            // a TLS failure hides inside the per-node errors, behind "could not reach any contact point"
            java.util.regex.Matcher tls = TLS_FAILURE.matcher(String.valueOf(cause.getMessage()));
            if (tls.find()) return "the TLS handshake failed: " + tls.group(1).replaceAll("[\\w.$]*Exception:?\\s*", "").strip()
                    + " (check --cassandra-truststore against the nodes' certificates and the names they are reached by, and --cassandra-keystore where the cluster asks for a client certificate)";
            String m = String.valueOf(cause.getMessage()).lines().findFirst().orElse("");
            if (m.contains("Authentication error") || m.contains("password are incorrect")) return "authentication failed (check the user and password)";
            int showing = m.indexOf(" (showing");
            if (showing > 0) m = m.substring(0, showing);
            m = m.replaceAll("[\\w.$]*Exception:?\\s*", "").trim();
            return m.isEmpty() ? "Cassandra driver error" : m;
        }
    }
}
