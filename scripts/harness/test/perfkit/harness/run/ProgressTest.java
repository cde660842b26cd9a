package perfkit.harness.run;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ProgressTest {
    @Test
    void beforeTheFirstUnitEndsTheTimeLeftIsThePlanAsItStands() {
        Progress.Overall o = Progress.Overall.of("cell", 0, 4, 400, 30);
        assertEquals(370, o.secondsLeft(), 1e-9);
        assertEquals("cell 1 of 4, 30 s elapsed, about 6 min left", o.line());
    }

    @Test
    void afterThatTheTimeLeftFollowsThePaceSoFar() {
        // half the cells done in 400 s where 200 were planned: the other half should take 400 s too, not 200
        Progress.Overall o = Progress.Overall.of("cell", 2, 4, 400, 400);
        assertEquals(400, o.secondsLeft(), 1e-9);
        assertEquals("cell 3 of 4, 7 min elapsed, about 7 min left", o.line());
        assertEquals("search 4 of 4, 1 h 05 min elapsed, ending", Progress.Overall.of("search", 4, 4, 3000, 3900).line());
    }

    @Test
    void eachUnitReachesTheListenerAndARunWithoutAPlanHasNone() {
        Progress p = new Progress("test");
        assertNull(p.overall());
        p.unitDone(); // no plan: nothing to count
        List<Integer> seen = new ArrayList<>();
        p.onUnit(o -> seen.add(o.done()));
        p.plan("cell", 2, 10);
        p.unitDone();
        p.unitDone();
        p.unitDone(); // never past the total
        assertEquals(List.of(0, 1, 2, 2), seen);
        assertThrows(IllegalArgumentException.class, () -> p.plan("cell", 0, 10));
    }
}
