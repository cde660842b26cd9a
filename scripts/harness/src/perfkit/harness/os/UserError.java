package perfkit.harness.os;

/** A mistake in what the user asked for: reported as one line on stderr with exit code 2, never as a stack trace. */
public final class UserError extends RuntimeException {
    public UserError(String message) {
        super(message, null, false, false);
    }
}
