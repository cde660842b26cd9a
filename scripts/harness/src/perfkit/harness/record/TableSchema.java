package perfkit.harness.record;

import perfkit.harness.os.UserError;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The columns of a study's tables and their types, as {@code data/schema/tables/<study>.json} declares them: the one
 * declaration the notebooks' kit reads the tables by. {@link Table} refuses a header or a value that does not match,
 * so a run can never write a column the notebooks do not know, a word where they expect a number, or a status they
 * do not know (a column's {@code enum}: the only values it may hold, such as a verdict's).
 */
public final class TableSchema {
    /** A column's type in the declaration; null is every type's "no value" (an empty CSV field). */
    public enum Type {
        STRING, INTEGER, NUMBER, BOOLEAN;

        boolean accepts(Object v) {
            return v == null || switch (this) {
                case STRING -> v instanceof CharSequence || v instanceof Enum<?>;
                case INTEGER -> v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof BigInteger;
                case NUMBER -> v instanceof Number;
                case BOOLEAN -> v instanceof Boolean;
            };
        }

        String word() { return name().toLowerCase(java.util.Locale.ROOT); }
    }

    /** A declared column: its type, and the only values it may hold ({@code enum}; empty when any value of the type may). */
    public record Column(Type type, List<String> values) {
        public Column {
            values = List.copyOf(values);
        }

        /** Why {@code v} cannot be written in this column, or null when it can. */
        public String refusal(Object v) {
            if (!type.accepts(v)) return "is declared " + type.word() + ", not " + v.getClass().getSimpleName() + " '" + v + "'";
            if (v != null && !values.isEmpty() && !values.contains(v.toString())) return "holds one of " + values + ", not '" + v + "'";
            return null;
        }
    }

    private final String source;
    private final Map<String, Map<String, Column>> tables;

    private TableSchema(String source, Map<String, Map<String, Column>> tables) {
        this.source = source;
        this.tables = tables;
    }

    /** The declarations of {@code study}, from the kit's {@code data/schema/tables/}. */
    public static TableSchema of(String study) throws IOException {
        Path file = RunLayout.kitRoot().resolve("data/schema/tables").resolve(study + ".json");
        // outside the checkout (jbang run from elsewhere without PERFKIT_HOME) the declarations are not at hand
        if (!Files.isRegularFile(file))
            throw new UserError("the table declarations " + file + " are missing: run from the kit's checkout, or set PERFKIT_HOME to it");
        return read(file, "data/schema/tables/" + study + ".json");
    }

    public static TableSchema read(Path file, String source) throws IOException {
        if (!Files.isRegularFile(file)) return new TableSchema(source, Map.of());
        JsonNode doc = Manifest.JSON.readTree(file.toFile());
        Map<String, Map<String, Column>> tables = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> t : doc.path("tables").properties()) {
            Map<String, Column> columns = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> c : t.getValue().path("columns").properties()) {
                String type = c.getValue().path("type").asText();
                Type declared;
                try {
                    declared = Type.valueOf(type.toUpperCase(java.util.Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(source + ": column '" + c.getKey() + "' of " + t.getKey() + " has an unknown type '" + type + "'");
                }
                List<String> values = new java.util.ArrayList<>();
                c.getValue().path("enum").forEach(v -> values.add(v.asText()));
                if (!values.isEmpty() && declared != Type.STRING)
                    throw new IllegalStateException(source + ": column '" + c.getKey() + "' of " + t.getKey() + " lists values (enum) but is not a string");
                columns.put(c.getKey(), new Column(declared, values));
            }
            tables.put(t.getKey(), Collections.unmodifiableMap(columns));
        }
        return new TableSchema(source, tables);
    }

    /**
     * The declared columns of {@code table}, checked against the {@code header} a study is about to write: the same
     * columns, none missing and none extra. A table no one declared is refused too: the notebooks could not rely on it.
     */
    public Map<String, Column> columnsFor(String table, List<String> header) {
        Map<String, Column> declared = tables.get(table);
        if (declared == null) throw new IllegalStateException("table " + table + " is not declared in " + source + ": declare its columns there first");
        List<String> missing = declared.keySet().stream().filter(c -> !header.contains(c)).toList();
        List<String> unknown = header.stream().filter(c -> !declared.containsKey(c)).toList();
        if (!missing.isEmpty() || !unknown.isEmpty())
            throw new IllegalStateException("table " + table + " does not match " + source + ": " + String.join("; ", List.of(
                    missing.isEmpty() ? "" : "declared but not written " + missing, unknown.isEmpty() ? "" : "written but not declared " + unknown)
                    .stream().filter(s -> !s.isEmpty()).toList()));
        return declared;
    }

    /** Every declared table with its columns. */
    public Map<String, Map<String, Column>> tables() { return Collections.unmodifiableMap(tables); }
}
