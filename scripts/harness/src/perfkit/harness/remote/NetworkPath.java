package perfkit.harness.remote;

import perfkit.harness.record.Manifest;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The network between this host and a part on another: the round trip to it and the link it leaves by. */
public final class NetworkPath {
    private static final Pattern DEV = Pattern.compile("\\bdev (\\S+)");

    private NetworkPath() {}

    /**
     * The round trip to a listening port: a TCP connect takes one (SYN, SYN-ACK). Minimum and median of 20 connects,
     * so a reader can tell the link's delay from what the workload saw.
     */
    public static ObjectNode rtt(String address, int port) {
        double[] ms = new double[20];
        int n = 0;
        for (int i = 0; i < ms.length; i++) {
            try (Socket s = new Socket()) {
                long t0 = System.nanoTime();
                s.connect(new InetSocketAddress(address, port), 2000);
                ms[n++] = (System.nanoTime() - t0) / 1e6;
            } catch (IOException e) {
                // counted as missing
            }
        }
        ObjectNode o = Manifest.newObject();
        o.put("method", "TCP connect to the service's port");
        o.put("samples", n);
        if (n == 0) { o.putNull("min"); o.putNull("median"); return o; }
        double[] got = Arrays.copyOf(ms, n);
        Arrays.sort(got);
        o.put("min", got[0]);
        o.put("median", got[n / 2]);
        return o;
    }

    /**
     * The interface this host reaches {@code address} by ({@code ip route get}) and its speed in Mbit/s as the kernel
     * reports it; null fields where not readable (no iproute2, a virtual link without a speed).
     */
    public static ObjectNode link(String address) {
        ObjectNode o = Manifest.newObject();
        String dev = null;
        try {
            Process p = new ProcessBuilder("ip", "route", "get", address).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0) {
                Matcher m = DEV.matcher(out);
                if (m.find()) dev = m.group(1);
            }
        } catch (IOException e) {
            // no iproute2: unknown
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (dev == null) o.putNull("interface"); else o.put("interface", dev);
        Integer speed = dev == null ? null : speedMbps(Path.of("/sys/class/net", dev, "speed"));
        if (speed == null) o.putNull("speedMbps"); else o.put("speedMbps", speed);
        return o;
    }

    /** The kernel's speed file: Mbit/s, or -1 (or unreadable) when the link has none. */
    static Integer speedMbps(Path file) {
        try {
            int v = Integer.parseInt(Files.readString(file).trim());
            return v > 0 ? v : null;
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }
}
