package perfkit.harness.run;

import perfkit.harness.os.Errors;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a run creates outside itself and must remove however it ends: a schema in the user's database, a keyspace on
 * the user's Cassandra cluster. A cell releases its own when it ends; the run's end ({@link Run#onFinish}, on another
 * thread after Ctrl-C or SIGTERM) releases whatever is left. Both hold one lock, so:
 * <ul>
 *   <li>nothing is created once the run's end has begun (it would never be released);</li>
 *   <li>a release under way finishes before the run's end looks (the JVM would otherwise exit in its middle, and the
 *       run's end would skip a thing already taken off the list);</li>
 *   <li>a release that failed stays listed, and the run's end tries it again.</li>
 * </ul>
 */
public final class Releases {
    /** Creates or releases one thing; may fail. */
    public interface Action { void run() throws Exception; }

    private final String study;
    private final Map<String, Action> live = new LinkedHashMap<>();
    private boolean ended;

    /** Registers the release of everything left with the run's end: call it before anything is created. */
    public Releases(Run run) {
        this(run.study());
        run.onFinish(this::releaseAll);
    }

    Releases(String study) { this.study = study; }

    /** Runs {@code create} and lists {@code release} under {@code name} in one step; refused once the run is ending. */
    public synchronized void create(String name, Action create, Action release) throws Exception {
        if (ended) throw new IllegalStateException("the run is ending: " + name + " is not created");
        if (live.containsKey(name)) throw new IllegalStateException(name + " is created twice");
        create.run();
        live.put(name, release);
    }

    /** Releases {@code name} now, if it is still listed; a failure is said in one line and left for the run's end. */
    public synchronized void release(String name) {
        Action release = live.get(name);
        if (release == null) return;
        try {
            release.run();
            live.remove(name);
        } catch (Exception e) {
            System.err.println("[" + study + "] could not release " + name + ": " + Errors.oneLine(e));
        }
    }

    /** The run's end: releases everything still listed, and creates nothing more. */
    public synchronized void releaseAll() {
        ended = true;
        for (String name : new ArrayList<>(live.keySet())) release(name);
    }

    /** What is still listed (not yet released, or failed to be). */
    public synchronized List<String> live() { return List.copyOf(live.keySet()); }
}
