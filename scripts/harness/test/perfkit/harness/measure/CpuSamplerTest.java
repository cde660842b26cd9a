package perfkit.harness.measure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.*;

class CpuSamplerTest {
    @TempDir Path proc;

    static String fixture(String name) throws Exception {
        return new String(CpuSamplerTest.class.getResourceAsStream("/proc/" + name).readAllBytes());
    }

    @Test
    void systemUsageIsBusyAndStealSinceLastSampleInPercentOfOneCore() throws Exception {
        CpuSampler sampler = new CpuSampler(proc, 2);
        Files.writeString(proc.resolve("stat"), fixture("stat.1"));
        assertNull(sampler.sampleSystem(), "first sample has no interval yet");
        Files.writeString(proc.resolve("stat"), fixture("stat.2"));
        CpuSampler.SystemUsage u = sampler.sampleSystem();
        // busy 1380 -> 1560 and total 9520 -> 9820 ticks: 180/300 of 2 cores = 120%; steal 20/300 of 2 cores
        assertEquals(120.0, u.busyPercent(), 1e-9);
        assertEquals(13.333, u.stealPercent(), 1e-3);
    }

    @Test
    void aWindowOfItsOwnReadsTheSameAndLeavesTheIntervalSamplerAlone() throws Exception {
        // the load driver times each phase between two readings while the run samples every second
        CpuSampler sampler = new CpuSampler(proc, 2);
        Files.writeString(proc.resolve("stat"), fixture("stat.1"));
        CpuSampler.SystemTimes from = sampler.systemTimes();
        Files.writeString(proc.resolve("stat"), fixture("stat.2"));
        CpuSampler.SystemUsage u = sampler.between(from, sampler.systemTimes());
        assertEquals(120.0, u.busyPercent(), 1e-9);
        assertNull(sampler.sampleSystem(), "the interval sampler has still had no first sample");
        assertNull(sampler.between(from, from), "no time passed: no window");
    }

    @Test
    void processTicksSurviveParenthesesAndSpacesInTheCommandName() throws Exception {
        assertEquals(250 + 75, CpuSampler.parseProcessTicks(fixture("pid-stat")));
        Files.createDirectories(proc.resolve("4242"));
        Files.writeString(proc.resolve("4242/stat"), fixture("pid-stat"));
        assertEquals(325, new CpuSampler(proc, 2).processTicks(4242));
        assertEquals(-1, new CpuSampler(proc, 2).processTicks(4243), "a gone process reads as -1");
    }

    @Test
    void percentOfOneCore() {
        assertEquals(150.0, CpuSampler.percent(100, 400, 2.0), 1e-9); // 3 s of CPU in 2 s
        assertTrue(Double.isNaN(CpuSampler.percent(-1, 400, 1.0)));
    }

    @Test
    void malformedStatIsRejectedWithAReason() {
        assertThrows(IllegalArgumentException.class, () -> CpuSampler.parseSystemStat("intr 1\n"));
        assertThrows(IllegalArgumentException.class, () -> CpuSampler.parseProcessTicks("garbage"));
    }

    @Test
    void worksOnThisMachine() throws Exception {
        CpuSampler live = CpuSampler.forThisMachine();
        assertTrue(live.available());
        assertTrue(live.processTicks(ProcessHandle.current().pid()) >= 0);
    }
}
