package perfkit.harness.record;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.*;

class RunIdTest {
    @TempDir Path dir;

    @Test
    void idIsUtcTimestampHostAndSuffix() {
        String id = RunLayout.newRunId(Instant.parse("2026-11-21T14:03:09Z"), "Bench_Host.local");
        assertTrue(id.matches("20261121T140309Z-bench-host-local-[0-9a-f]{6}"), id);
    }

    @Test
    void idsSortByStartTime() {
        String earlier = RunLayout.newRunId(Instant.parse("2026-01-02T03:04:05Z"), "h");
        String later = RunLayout.newRunId(Instant.parse("2026-01-02T03:04:06Z"), "h");
        assertTrue(earlier.compareTo(later) < 0);
    }

    @Test
    void runsStartedAtTheSameMomentGetDistinctDirectories() throws Exception {
        int n = 64;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Path>> dirs = new ArrayList<>();
        for (int i = 0; i < n; i++) dirs.add(pool.submit(() -> { go.await(); return RunLayout.createUniqueDir(dir); }));
        go.countDown();
        Set<Path> unique = new HashSet<>();
        for (Future<Path> f : dirs) unique.add(f.get());
        pool.shutdown();
        assertEquals(n, unique.size());
    }
}
