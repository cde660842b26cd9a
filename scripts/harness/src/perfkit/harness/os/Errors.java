package perfkit.harness.os;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** How a failure is told: one line for the terminal and the manifest, the whole stack trace in a file beside the run. */
public final class Errors {
    private Errors() {}

    /** The first message on the cause chain, on one line; the exception's class when none has a message. */
    public static String oneLine(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getMessage() == null) root = root.getCause();
        String msg = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return msg.replaceAll("\\s+", " ").trim();
    }

    public static void writeStackTrace(Path file, Throwable t) {
        try {
            StringWriter sw = new StringWriter();
            t.printStackTrace(new PrintWriter(sw));
            Files.writeString(file, sw.toString());
        } catch (Exception ignored) {
            // the one-line reason is already in the manifest (a full disk, say)
        }
    }
}
