package perfkit.harness.measure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.DoubleSupplier;

import static org.junit.jupiter.api.Assertions.*;

/** Two parts on one host feed its series (two forks there at once): it goes on while either still watches it. */
class TimeSeriesGaugeTest {
    @Test
    void aSharedGaugeGoesOnWhileAnyWatcherRemains(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("timeseries.csv");
        TimeSeries ts = new TimeSeries(file, new CpuSampler(dir, 1)); // no /proc here: no system rows
        DoubleSupplier first = () -> 11, second = () -> 22;
        ts.watchGauge("host:engines", "cpu_pct", first);
        ts.tick();
        ts.watchGauge("host:engines", "cpu_pct", second);
        ts.tick();
        ts.unwatchGauge("host:engines", "cpu_pct", second); // the later fork ends first
        ts.tick();
        ts.unwatchGauge("host:engines", "cpu_pct", first);
        ts.tick();
        ts.close();
        List<String> values = Files.readAllLines(file).stream().filter(l -> l.contains(",host:engines,cpu_pct,"))
                .map(l -> l.substring(l.lastIndexOf(',') + 1)).toList();
        assertEquals(List.of("11.0", "22.0", "11.0"), values.stream().map(v -> String.valueOf(Double.parseDouble(v))).toList(),
                "the newest watcher is read; after it stops, the earlier one again; after both, nothing");
    }
}
