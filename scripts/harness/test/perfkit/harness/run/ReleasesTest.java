package perfkit.harness.run;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** What a run creates outside itself is released once, whoever gets there first: the cell or the run's end. */
class ReleasesTest {
    @Test
    void aCellReleasesItsOwnAndTheRunsEndTheRest() throws Exception {
        Releases r = new Releases("study");
        List<String> dropped = new CopyOnWriteArrayList<>();
        r.create("a", () -> {}, () -> dropped.add("a"));
        r.create("b", () -> {}, () -> dropped.add("b"));
        r.release("a");
        r.release("a");
        assertEquals(List.of("a"), dropped, "released once");
        r.releaseAll();
        assertEquals(List.of("a", "b"), dropped);
        assertThrows(IllegalStateException.class, () -> r.create("c", () -> dropped.add("created c"), () -> {}));
        assertFalse(dropped.contains("created c"), "nothing is created once the run is ending");
    }

    @Test
    void aFailedReleaseStaysListedAndTheRunsEndTriesAgain() throws Exception {
        Releases r = new Releases("study");
        int[] tries = {0};
        r.create("schema s", () -> {}, () -> { if (++tries[0] == 1) throw new IllegalStateException("lock timeout"); });
        r.release("schema s");
        assertEquals(List.of("schema s"), r.live());
        r.releaseAll();
        assertEquals(List.of(), r.live());
        assertEquals(2, tries[0]);
    }

    /** The CI failure this class exists for: the run's end must wait for a cell's drop under way, not skip it. */
    @Test
    void theRunsEndWaitsForAReleaseUnderWay() throws Exception {
        Releases r = new Releases("study");
        CountDownLatch dropping = new CountDownLatch(1), mayFinish = new CountDownLatch(1);
        List<String> events = new CopyOnWriteArrayList<>();
        r.create("s", () -> {}, () -> { dropping.countDown(); mayFinish.await(); events.add("dropped"); });
        Thread cell = new Thread(() -> r.release("s"));
        cell.start();
        assertTrue(dropping.await(5, TimeUnit.SECONDS));
        Thread end = new Thread(() -> { r.releaseAll(); events.add("run ended"); });
        end.start();
        end.join(200);
        assertTrue(end.isAlive(), "the run's end waits while the cell drops");
        mayFinish.countDown();
        end.join(5000);
        cell.join(5000);
        assertEquals(List.of("dropped", "run ended"), events);
    }
}
