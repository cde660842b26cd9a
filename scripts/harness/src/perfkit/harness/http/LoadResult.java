package perfkit.harness.http;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A load-driver run's result, as the study side reads it: where it is kept ({@link #DIR}), one phase of it, what makes
 * a phase untrustworthy, and the failure of the driver itself. Shared by the driver's runs ({@link HttpLoad}) and the
 * merge of runs shared between hosts ({@link DriverShares}), which therefore need not know each other both ways.
 */
public final class LoadResult {
    /** Where the driver's YAML, results and logs go, relative to the run directory. */
    public static final String DIR = "load";

    private LoadResult() {}

    /**
     * The load driver itself failed: it hung, died (out of memory, say) or reported an error. Whatever it measured
     * says nothing about the system; an open step records it as invalid ({@link OpenStep}), anything else fails the run.
     */
    public static final class DriverFailed extends IllegalStateException {
        public DriverFailed(String message) { super(message); }
    }

    /** The phase named {@code phase} in a driver result. */
    public static JsonNode phase(JsonNode result, String phase) {
        for (JsonNode p : result.path("phases")) if (p.path("name").asText().equals(phase)) return p;
        throw new IllegalStateException("the load driver reported no phase " + phase);
    }

    /** What makes a phase's numbers untrustworthy (empty when none): blocked time, the session limit, a phase error. */
    public static List<String> problems(JsonNode phase) {
        List<String> out = new ArrayList<>();
        long blocked = phase.path("blockedTimeNs").asLong();
        if (blocked > 0) out.add(String.format(Locale.ROOT, "driver blocked %.1f ms waiting for a connection (sharedConnections below the concurrency)", blocked / 1e6));
        if (phase.path("sessionLimitExceeded").asBoolean()) out.add("driver ran out of sessions (concurrency above maxSessions)");
        if (phase.hasNonNull("error")) out.add("phase error: " + phase.get("error").asText());
        return out;
    }
}
