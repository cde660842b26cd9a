//DEPS com.fasterxml.jackson.core:jackson-databind:2.23.0
// the whole of one Jackson 2 for every study: a library of a study (Flowable, Kafka) asking for an older core or
// annotations would otherwise win beside databind 2.23, which needs its own (JsonSerializeAs)
//DEPS com.fasterxml.jackson.core:jackson-core:2.23.0 com.fasterxml.jackson.core:jackson-annotations:2.23
package perfkit.harness.record;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The run manifest {@code run.json}: what ran, where, how, and how it ended.
 * Its shape is fixed by {@code schema/run.schema.json}; bump {@link #SCHEMA_VERSION} when it changes.
 */
public final class Manifest {
    public static final int SCHEMA_VERSION = 2;
    public static final String FILE_NAME = "run.json";
    public static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private static final Pattern URL_CREDENTIALS = Pattern.compile("(?<=://)([^:/@\\s]+):([^@/\\s]*)@");
    private static final Pattern URL_PASSWORD_PARAM = Pattern.compile("(?i)((?:password|passwd|pwd|secret|token)=)[^&;\\s]*");
    private static final Pattern SECRET_NAME = Pattern.compile("(?i).*(password|passwd|secret|token|credential).*");

    private Manifest() {}

    public static ObjectNode newObject() {
        return JSON.createObjectNode();
    }

    /** Writes to a temp file in the same folder and renames it, so a reader never sees half a manifest. */
    public static void writeAtomically(Path file, ObjectNode manifest) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, JSON.writeValueAsBytes(manifest));
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    public static ObjectNode read(Path file) throws IOException {
        return (ObjectNode) JSON.readTree(file.toFile());
    }

    /** Removes credentials from a value: user:password@ in URLs, password=... in query strings. */
    public static String redact(String value) {
        if (value == null) return null;
        String out = URL_CREDENTIALS.matcher(value).replaceAll("$1:***@");
        return URL_PASSWORD_PARAM.matcher(out).replaceAll("$1***");
    }

    /** A JVM argument as stored: redacted, and with the kit's folder written as $PERFKIT_HOME so manifests travel between machines. */
    public static String jvmArgument(String arg) {
        String root = RunLayout.kitRoot().toString();
        String out = redact(arg);
        return root.length() > 1 ? out.replace(root, "$PERFKIT_HOME") : out;
    }

    /** Parameters as stored in the manifest: secrets by name are masked, URLs lose their passwords. */
    public static ObjectNode redactedParams(Map<String, String> params) {
        ObjectNode node = newObject();
        params.forEach((k, v) -> {
            boolean secret = SECRET_NAME.matcher(k).matches() && !v.isEmpty();
            node.put(k, secret ? "***" : redact(v));
        });
        return node;
    }

    public static String statusOf(ObjectNode manifest) {
        return manifest.path("status").asText("").toLowerCase(Locale.ROOT);
    }
}
