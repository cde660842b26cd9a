///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS org.apache.cassandra:cassandra-all:5.0.9
//DESCRIPTION One embedded Cassandra 5.0.9 node for the three-tier study's inserts round (started by scripts/three-tier/inserts/EmbeddedCassandra.java)
package perfkit.threetier.cassandra;

import org.apache.cassandra.service.CassandraDaemon;

/**
 * A single Cassandra node in this JVM. Everything it needs comes from JVM options the study sets: the generated
 * yaml ({@code -Dcassandra.config}), the storage folder, Cassandra's JDK 17 option set and a quiet logback file.
 * Its own classpath: cassandra-all brings Netty 4.1 and Guava versions that clash with the study's Spring Boot 4.
 * The study's watchdog stops it with SIGTERM (Cassandra's own shutdown hook drains it), SIGKILL after a grace.
 */
public final class CassandraNode {
    public static void main(String[] args) {
        try {
            new CassandraDaemon(true).activate();
        } catch (Throwable t) {
            System.err.println("cassandra node failed to start: " + t);
            System.exit(1);
        }
        // activate() exits the JVM itself when the node cannot start; here it runs until the watchdog's signal
        System.out.println("PERFKIT_CASSANDRA_STARTED");
        System.out.flush();
    }
}
