package perfkit.harness.remote;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

/** A placed part host's CPU, from two of its /proc/stat readings as its agent sends them. */
class RemotePartTest {
    // user nice system idle iowait irq softirq steal guest guest_nice
    private static final long[] BEFORE = {1000, 0, 500, 8000, 100, 0, 50, 20, 0, 0};

    private static long[] after(long user, long system, long idle, long iowait, long steal) {
        long[] a = BEFORE.clone();
        a[0] += user; a[2] += system; a[3] += idle; a[4] += iowait; a[7] += steal;
        return a;
    }

    @Test
    void busyIsAllButIdleAndIowaitInPercentOfOneCore() {
        // 2 cores over 1 s = 200 ticks: 100 busy (user + system), 100 idle or waiting
        assertEquals(100.0, RemotePart.statPercent(BEFORE, after(60, 40, 80, 20, 0), 2, false), 1e-9);
        assertEquals(200.0, RemotePart.statPercent(BEFORE, after(150, 50, 0, 0, 0), 2, false), 1e-9, "a saturated 2-core host");
    }

    @Test
    void stealIsItsShareOfAllTicks() {
        assertEquals(40.0, RemotePart.statPercent(BEFORE, after(80, 0, 100, 0, 20), 4, true), 1e-9,
                "20 of 200 ticks: a tenth of a 4-core host, 40% of one of its cores");
    }

    @Test
    void noTicksOrATruncatedLineIsNoFigure() {
        assertTrue(Double.isNaN(RemotePart.statPercent(BEFORE, BEFORE.clone(), 2, false)));
        assertTrue(Double.isNaN(RemotePart.statPercent(new long[]{1, 2, 3}, BEFORE, 2, false)));
    }
}
