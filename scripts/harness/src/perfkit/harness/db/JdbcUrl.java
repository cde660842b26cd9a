package perfkit.harness.db;

import perfkit.harness.os.Loopback;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A user's JDBC URL split into what the driver connects to and the credentials it carried. PostgreSQL's driver
 * does not read {@code user:password@} in the authority, and a password inside the URL would travel wherever the
 * URL does, so both go: {@code url} holds neither userinfo nor {@code user=}/{@code password=} query parameters.
 */
public record JdbcUrl(String url, String user, String password) {
    private static final Pattern SHAPE = Pattern.compile("(jdbc:[a-z0-9]+://)(?:([^:/@?\\s]*)(?::([^/@?\\s]*))?@)?([^/?\\s]+)(/[^?\\s]*)?(?:\\?(\\S*))?");

    /** Splits {@code raw}; throws {@link IllegalArgumentException} naming the expected shape when it is not a JDBC URL. */
    public static JdbcUrl parse(String raw) {
        Matcher m = SHAPE.matcher(raw.trim());
        if (!m.matches()) throw new IllegalArgumentException("a URL such as jdbc:postgresql://host:5432/database");
        String user = emptyToNull(m.group(2)), password = m.group(3);
        List<String> kept = new ArrayList<>();
        if (m.group(6) != null) {
            for (String kv : m.group(6).split("&")) {
                if (kv.isEmpty()) continue;
                String key = kv.contains("=") ? kv.substring(0, kv.indexOf('=')) : kv, value = kv.substring(key.length()).replaceFirst("^=", "");
                if (key.equalsIgnoreCase("user")) user = user == null ? value : user;
                else if (key.equalsIgnoreCase("password")) password = password == null ? value : password;
                else kept.add(kv);
            }
        }
        String url = m.group(1) + m.group(4) + (m.group(5) == null ? "" : m.group(5)) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
        return new JdbcUrl(url, user, password);
    }

    /** The user: an explicit one wins, then the URL's, then {@code fallback}. */
    public String userOr(String explicit, String fallback) {
        if (explicit != null && !explicit.isBlank()) return explicit;
        return user != null ? user : fallback;
    }

    /** The password: an explicit one (option, file or environment) wins; the URL's is the last resort. */
    public String passwordOr(String explicit) {
        if (explicit != null && !explicit.isEmpty()) return explicit;
        return password == null ? "" : password;
    }

    /**
     * True when the URL's server is on loopback (or names none): a part placed on another host that used it would
     * reach its own host, not this one.
     */
    public static boolean onLoopback(String raw) {
        Matcher m = SHAPE.matcher(raw.trim());
        if (!m.matches()) return true; // no server named: the driver's default is localhost
        String authority = m.group(4);
        String host = authority.startsWith("[") ? authority.substring(1, Math.max(1, authority.indexOf(']')))
                : authority.contains(":") ? authority.substring(0, authority.indexOf(':')) : authority;
        return Loopback.meansThisHost(host);
    }

    /** {@code url} with one more query parameter. */
    public static String withParam(String url, String key, String value) {
        return url + (url.contains("?") ? "&" : "?") + key + "=" + value;
    }

    private static String emptyToNull(String s) { return s == null || s.isEmpty() ? null : s; }

    @Override
    public String toString() { return "JdbcUrl[" + url + (user == null ? "" : ", user " + user) + (password == null ? "" : ", password ***") + "]"; }
}
