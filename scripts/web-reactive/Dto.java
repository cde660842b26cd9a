package perfkit.webreactive;

import java.util.Map;
import java.util.TreeMap;

/** The external service's user, the view both apps return, and the mapping between them (the "simple DTO mapping"). */
public final class Dto {
    private Dto() {}

    public record User(String id, String customerId, String login, String firstName, String lastName, String email, boolean active) {}

    public record UserView(String id, String name, String email, boolean active, int calls) {}

    public static UserView map(User u, int calls) {
        return new UserView(u.id(), u.firstName() + " " + u.lastName(), u.email(), u.active(), calls);
    }

    /** Live threads grouped by name without their trailing number (e.g. {@code http-nio-8080-exec-}: 200). */
    public static Map<String, Object> threads() {
        Map<String, Integer> groups = new TreeMap<>();
        var all = Thread.getAllStackTraces().keySet();
        for (Thread t : all) groups.merge(t.getName().replaceAll("\\d+$", "#").replaceAll("-\\d+-", "-#-"), 1, Integer::sum);
        return Map.of("liveThreads", all.size(), "threadGroups", groups);
    }
}
