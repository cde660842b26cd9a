package perfkit.harness.record;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class HostInfoTest {
    @Test
    void containerCpuLimitFromCgroupV2() {
        assertEquals(2.0, HostInfo.containerCpuLimit("200000 100000\n"));
        assertEquals(0.5, HostInfo.containerCpuLimit("50000 100000"));
        assertNull(HostInfo.containerCpuLimit("max 100000"));
        assertNull(HostInfo.containerCpuLimit(null));
    }

    @Test
    void parsesProcFiles() {
        assertEquals("Intel(R) Core(TM) i7-4720HQ CPU @ 2.60GHz",
                HostInfo.cpuModel("processor\t: 0\nmodel name\t: Intel(R) Core(TM) i7-4720HQ CPU @ 2.60GHz\n"));
        assertEquals(16L * 1024 * 1024 * 1024, HostInfo.memTotalBytes("MemTotal:       16777216 kB\nMemFree: 1 kB\n"));
        assertEquals("Debian GNU/Linux 12 (bookworm)", HostInfo.osRelease("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"));
    }

    @Test
    void hostFingerprintHasTheEssentials() {
        var h = HostInfo.host();
        assertTrue(h.get("logicalCores").asInt() >= 1);
        assertTrue(h.get("memoryBytes").asLong() > 0);
        assertFalse(h.get("hostname").asText().isBlank());
    }
}
