package perfkit.harness.run;

import perfkit.harness.measure.CapacitySearch;
import perfkit.harness.measure.StepVerdict;
import perfkit.harness.record.TableSchema;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

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

    private static TableSchema schema(Path dir, String json) throws Exception {
        Path f = dir.resolve("study.json");
        Files.writeString(f, json);
        return TableSchema.read(f, "data/schema/tables/study.json");
    }

    private static final String DECLARED = """
            {"study": "study", "tables": {"t.csv": {"columns": {
              "cell": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"}}}}}""";

    @Test
    void aDeclaredTableTakesValuesOfTheirDeclaredTypeOrNone(@TempDir Path dir) throws Exception {
        try (Table t = new Table(dir, "t.csv", schema(dir, DECLARED), "cell", "n", "x", "ok")) {
            t.write(Table.row().set("cell", "a").set("n", 3L).set("x", 2).set("ok", true));
            t.write(Table.row().set("cell", "b").set("n", null).set("x", 0.5).set("ok", null));
            String wrong = assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "c").set("n", 2.5).set("x", 1).set("ok", true)))
                    .getMessage();
            assertEquals("table t.csv: column 'n' is declared integer, not Double '2.5'", wrong);
            assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "c").set("n", 1).set("x", "fast").set("ok", true)));
            assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "c").set("n", 1).set("x", 1).set("ok", "true")));
            assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", 7).set("n", 1).set("x", 1).set("ok", true)));
        }
        assertEquals(java.util.List.of("cell,n,x,ok", "a,3,2,true", "b,,0.5,"), Files.readAllLines(dir.resolve("t.csv")), "a refused row writes nothing");
    }

    @Test
    void aTableMustHaveExactlyTheDeclaredColumns(@TempDir Path dir) throws Exception {
        TableSchema s = schema(dir, DECLARED);
        assertEquals("table t.csv does not match data/schema/tables/study.json: declared but not written [ok]; written but not declared [extra]",
                assertThrows(IllegalStateException.class, () -> new Table(dir, "t.csv", s, "cell", "n", "x", "extra")).getMessage());
        assertEquals("table u.csv is not declared in data/schema/tables/study.json: declare its columns there first",
                assertThrows(IllegalStateException.class, () -> new Table(dir, "u.csv", s, "cell")).getMessage());
        assertFalse(Files.exists(dir.resolve("u.csv")), "nothing is written for a refused table");
    }

    @Test
    void anUnknownTypeInTheDeclarationIsSaid(@TempDir Path dir) throws Exception {
        String bad = DECLARED.replace("\"boolean\"", "\"flag\"");
        assertTrue(assertThrows(IllegalStateException.class, () -> schema(dir, bad)).getMessage().contains("unknown type 'flag'"));
    }

    @Test
    void aColumnWithDeclaredValuesTakesOnlyThose(@TempDir Path dir) throws Exception {
        TableSchema s = schema(dir, """
                {"study": "study", "tables": {"t.csv": {"columns": {
                  "cell": {"type": "string"}, "verdict": {"type": "string", "enum": ["met", "missed"]}}}}}""");
        try (Table t = new Table(dir, "t.csv", s, "cell", "verdict")) {
            t.write(Table.row().set("cell", "a").set("verdict", StepVerdict.Status.MET.label));
            t.write(Table.row().set("cell", "b").set("verdict", null));
            assertEquals("table t.csv: column 'verdict' holds one of [met, missed], not 'Met'",
                    assertThrows(IllegalArgumentException.class, () -> t.write(Table.row().set("cell", "c").set("verdict", "Met"))).getMessage());
        }
        assertEquals(List.of("cell,verdict", "a,met", "b,"), Files.readAllLines(dir.resolve("t.csv")));
        String numeric = """
                {"study": "study", "tables": {"t.csv": {"columns": {"cell": {"type": "string"}, "n": {"type": "integer", "enum": ["1"]}}}}}""";
        assertTrue(assertThrows(IllegalStateException.class, () -> schema(dir, numeric)).getMessage().contains("lists values (enum) but is not a string"));
    }

    /**
     * The statuses a notebook reads are the harness's enums, written by their labels: each column that holds one declares
     * exactly those labels, so a status added in Java without being declared (or the other way round) fails here, not in a post.
     */
    @Test
    void everyStatusColumnDeclaresItsEnumsLabels() throws Exception {
        Path tables = Path.of(System.getProperty("perfkit.root", "../..")).resolve("data/schema/tables");
        List<String> step = java.util.Arrays.stream(StepVerdict.Status.values()).map(v -> v.label).toList();
        List<String> capacity = java.util.Arrays.stream(CapacitySearch.Status.values()).map(v -> v.label).toList();
        Map<String, List<String>> expected = Map.of(
                "messaging.json sweep.csv verdict", step, "messaging.json calibration.csv verdict", step,
                "three-tier.json open.csv verdict", step, "web-reactive.json open.csv verdict", step,
                "messaging.json capacity.csv capacity_status", capacity, "three-tier.json capacity.csv status", capacity,
                "web-reactive.json capacity.csv status", capacity);
        Map<String, List<String>> declared = new java.util.TreeMap<>();
        try (var files = Files.list(tables)) {
            for (Path f : files.toList()) {
                TableSchema.read(f, f.getFileName().toString()).tables().forEach((table, columns) -> columns.forEach((column, c) -> {
                    if (!c.values().isEmpty()) declared.put(f.getFileName() + " " + table + " " + column, c.values());
                }));
            }
        }
        expected.forEach((column, labels) -> assertEquals(labels, declared.get(column), column));
        // a closed-model step has no SLO to meet or miss: it was measured, or is the host's number, or invalid
        assertEquals(List.of("measured", StepVerdict.Status.NOT_MEASURABLE.label, StepVerdict.Status.INVALID.label),
                declared.get("web-reactive.json closed.csv verdict"));
        // why a three-tier open step ran: a step of the capacity search, or the chain's step at one rate for every variant
        assertEquals(List.of("search", "compare"), declared.get("three-tier.json open.csv purpose"));
        assertEquals(expected.size() + 2, declared.size(), "every column with values is checked here: " + declared.keySet());
    }

    @Test
    void everyCommittedDeclarationReads() throws Exception {
        Path tables = Path.of(System.getProperty("perfkit.root", "../..")).resolve("data/schema/tables");
        try (var files = Files.list(tables)) {
            List<Path> all = files.toList();
            assertTrue(all.size() >= 6, all.toString());
            for (Path f : all) {
                TableSchema s = TableSchema.read(f, f.getFileName().toString()); // every type is one the writer knows
                assertFalse(s.tables().isEmpty(), f.toString());
                s.tables().forEach((table, columns) -> assertTrue(columns.containsKey(Table.CELL), f + ": " + table + " has no cell column"));
            }
        }
    }
}
