package perfkit.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.*;

class TableTest {
    @Test
    void formatsForCsv() {
        assertEquals("12345678.9", Table.format(12345678.9));
        assertEquals("0.12345678", Table.format(0.12345678));
        assertEquals("0.3333333333", Table.format(1.0 / 3), "ten significant digits");
        assertEquals("", Table.format(Double.NaN));
        assertEquals("", Table.format(null));
        assertEquals("\"a,b\"", Table.format("a,b"));
        assertEquals("\"say \"\"hi\"\"\"", Table.format("say \"hi\""));
    }

    @Test
    void rowsAreBoundByColumnName(@TempDir Path dir) throws Exception {
        try (Table t = new Table(dir, "t.csv", "cell", "b", "a")) {
            t.write(Table.row().set("a", 1).set("cell", "x").set("b", "two"));
        }
        assertEquals(java.util.List.of("cell,b,a", "x,two,1"), Files.readAllLines(dir.resolve("t.csv")));
    }

    @Test
    void aRowMustSetEveryColumnOnce(@TempDir Path dir) throws Exception {
        try (Table t = new Table(dir, "t.csv", "cell", "a")) {
            assertTrue(assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "x"))).getMessage().contains("missing [a]"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "x").set("a", 1).set("z", 2)))
                    .getMessage().contains("unknown [z]"));
            assertThrows(IllegalArgumentException.class, () -> Table.row().set("a", 1).set("a", 2));
        }
    }

    @Test
    void everyTableNamesItsCell(@TempDir Path dir) {
        assertThrows(IllegalArgumentException.class, () -> new Table(dir, "t.csv", "variant", "a"));
    }
}
