package perfkit.harness.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

/** This host itself: whether a host name or address means it, and a free port on its loopback interface. */
public final class Loopback {
    private Loopback() {}

    /**
     * True when {@code host} (a name or an address, brackets allowed) means this host itself: localhost and its usual
     * aliases, a loopback address, or the wildcard. Addresses are read as literals, never looked up.
     */
    public static boolean meansThisHost(String host) {
        String h = host.strip().replace("[", "").replace("]", "").toLowerCase(java.util.Locale.ROOT);
        if (h.isEmpty()) return true; // no server named: a client's default is localhost
        if (h.endsWith(".")) h = h.substring(0, h.length() - 1);
        if (List.of("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback").contains(h)) return true;
        boolean ipv4 = h.matches("\\d{1,3}(\\.\\d{1,3}){0,3}") && java.util.Arrays.stream(h.split("\\.")).allMatch(o -> Integer.parseInt(o) <= 255);
        if (!ipv4 && !(h.contains(":") && h.matches("[0-9a-f:.]+"))) return false; // a name: not ours to resolve
        try {
            InetAddress a = InetAddress.getByName(h); // a literal: parsed, not looked up
            return a.isLoopbackAddress() || a.isAnyLocalAddress(); // ::ffff:127.0.0.1 parses as the IPv4 address it maps
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** A loopback port nobody listens on right now (the caller binds it a moment later). */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }
}
