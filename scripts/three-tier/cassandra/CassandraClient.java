///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.cassandra:java-driver-core:4.19.2
//DEPS org.slf4j:slf4j-api:2.0.20
//DEPS org.slf4j:slf4j-nop:2.0.20
//DESCRIPTION The Apache Cassandra Java driver 4.19 behind plain JDK types, loaded in an isolated class loader by the three-tier study
package perfkit.threetier.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.EndPoint;
import com.datastax.oss.driver.api.core.ssl.SslEngineFactory;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import java.io.File;
import java.security.KeyStore;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A CQL session that the study drives through JDK types only ({@code long}, {@code List<List<String>>},
 * {@code Consumer<Object[]>}): the driver 4.x brings Netty 4.1, which clashes with Spring Boot 4's Netty 4.2 on
 * the study's classpath, so the study loads this class and the driver in a class loader of their own.
 */
public final class CassandraClient implements AutoCloseable {
    private final CqlSession session;

    private CassandraClient(CqlSession session) { this.session = session; }

    /**
     * Connects to {@code contactPoints} (host:port,...) as {@code user}; the password never leaves this call's arguments.
     * With a {@code truststore} (PKCS12 or JKS) the connection is TLS and the node's certificate must match the contact
     * point's host name or address; a {@code keystore} adds the client's own certificate (a cluster that requires one).
     * Empty strings mean none.
     */
    public static CassandraClient open(String contactPoints, String datacenter, String user, String password, String truststore,
                                       String truststorePassword, String keystore, String keystorePassword, double timeoutSeconds) throws Exception {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder(CassandraClient.class.getClassLoader())
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(120)) // DDL and count(*) over every row
                .withDuration(DefaultDriverOption.CONNECTION_CONNECT_TIMEOUT, Duration.ofMillis((long) (timeoutSeconds * 1000)))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofMillis((long) (timeoutSeconds * 1000)))
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
                .build();
        var builder = CqlSession.builder().withConfigLoader(config).withLocalDatacenter(datacenter)
                .withClassLoader(CassandraClient.class.getClassLoader());
        for (String hp : contactPoints.split(",")) {
            String s = hp.trim();
            int colon = s.lastIndexOf(':');
            builder.addContactPoint(new InetSocketAddress(s.substring(0, colon), Integer.parseInt(s.substring(colon + 1))));
        }
        if (!user.isEmpty()) builder.withAuthCredentials(user, password);
        if (!truststore.isEmpty()) builder.withSslEngineFactory(new NamedPeerTls(tls(truststore, truststorePassword, keystore, keystorePassword)));
        return new CassandraClient(builder.build());
    }

    /**
     * TLS whose server certificate must name the address as the client was given it: a contact point's host name or IP
     * as written, a discovered node's IP. The driver's own factory checks a reverse-DNS name instead, so a certificate
     * made for an IP would fail wherever that IP has a name, and one made for a name would pass for any IP that
     * resolves back to it.
     */
    private record NamedPeerTls(SSLContext context) implements SslEngineFactory {
        @Override
        public SSLEngine newSslEngine(EndPoint endPoint) {
            SocketAddress address = endPoint.resolve();
            SSLEngine engine = address instanceof InetSocketAddress a ? context.createSSLEngine(a.getHostString(), a.getPort()) : context.createSSLEngine();
            engine.setUseClientMode(true);
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS"); // RFC 2818: the certificate's names against the peer as given
            engine.setSSLParameters(parameters);
            return engine;
        }

        @Override
        public void close() {}
    }

    private static SSLContext tls(String truststore, String truststorePassword, String keystore, String keystorePassword) throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(KeyStore.getInstance(new File(truststore), truststorePassword.toCharArray()));
        KeyManagerFactory keys = null;
        if (!keystore.isEmpty()) {
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(KeyStore.getInstance(new File(keystore), keystorePassword.toCharArray()), keystorePassword.toCharArray());
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
        return context;
    }

    /** Runs a statement; returns the first column of the first row as a number, or -1. */
    public long execute(String cql) {
        Row r = session.execute(cql).one();
        if (r == null || r.getColumnDefinitions().size() == 0) return -1;
        Object v = r.getObject(0);
        return v instanceof Number n ? n.longValue() : -1;
    }

    /** Runs a query; every row as strings. */
    public List<List<String>> rows(String cql) {
        List<List<String>> out = new ArrayList<>();
        for (Row r : session.execute(cql)) {
            List<String> row = new ArrayList<>();
            for (int i = 0; i < r.getColumnDefinitions().size(); i++) row.add(String.valueOf(r.getObject(i)));
            out.add(row);
        }
        return out;
    }

    /** One writer's own prepared statement: each call binds the values and waits for the acknowledgement. */
    public Consumer<Object[]> inserter(String insertCql) {
        PreparedStatement ps = session.prepare(insertCql);
        return values -> session.execute(ps.bind(values));
    }

    /** The driver's version, for the manifest. */
    public String driverVersion() {
        return "Apache Cassandra Java driver " + com.datastax.oss.driver.api.core.session.Session.OSS_DRIVER_COORDINATES.getVersion();
    }

    @Override
    public void close() { session.close(); }

    public static void main(String[] args) {
        System.out.println("a library for the three-tier study; see scripts/three-tier/inserts/");
    }
}
