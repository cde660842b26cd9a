package perfkit.harness.run;

import perfkit.harness.record.RunFile;
import perfkit.harness.record.TableSchema;

import java.io.BufferedWriter;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * A CSV table in the run directory, flushed row by row so an interrupted run keeps every finished row.
 * Every table has a {@code cell} column naming the measured cell a row belongs to (the run format's contract),
 * and rows are bound by column name, so adding a column cannot shift the others. A run's tables are written as
 * {@link TableSchema} declares them: the same columns, each value of its declared type (and one of its declared values).
 */
public final class Table implements AutoCloseable {
    public static final String CELL = "cell";

    /** One row under construction: values by column name. */
    public static final class Row {
        private final Map<String, Object> values = new LinkedHashMap<>();

        public Row set(String column, Object value) {
            if (values.containsKey(column)) throw new IllegalArgumentException("column '" + column + "' set twice");
            values.put(column, value);
            return this;
        }

        /** Sets several columns at once (e.g. one per process). */
        public Row set(java.util.Map<String, ?> columns) {
            columns.forEach(this::set);
            return this;
        }
    }

    private final BufferedWriter out;
    private final String fileName;
    private final List<String> header;
    /** Each column as declared ({@link TableSchema}); empty for a table no declaration governs (unit tests). */
    private final Map<String, TableSchema.Column> types;

    /** A table of the run's study; its columns must be the ones {@code data/schema/tables/<study>.json} declares for it. */
    public Table(Run run, String fileName, String description, String... header) throws IOException {
        this(run.dir(), fileName, TableSchema.of(run.study()), header);
        run.addFile(RunFile.table(fileName, description));
    }

    Table(Path dir, String fileName, String... header) throws IOException {
        this(dir, fileName, null, header);
    }

    Table(Path dir, String fileName, TableSchema schema, String... header) throws IOException {
        this.fileName = fileName;
        this.header = List.of(header);
        if (!this.header.contains(CELL)) throw new IllegalArgumentException("table " + fileName + " needs a '" + CELL + "' column");
        if (this.header.stream().distinct().count() != header.length) throw new IllegalArgumentException("table " + fileName + " repeats a column");
        this.types = schema == null ? Map.of() : schema.columnsFor(fileName, this.header);
        this.out = Files.newBufferedWriter(dir.resolve(fileName));
        write(Arrays.asList((Object[]) header));
    }

    public static Row row() { return new Row(); }

    /** Writes a row; every column must be set, and no other. */
    public synchronized void write(Row row) throws IOException {
        if (!row.values.keySet().equals(new java.util.HashSet<>(header))) {
            var missing = header.stream().filter(c -> !row.values.containsKey(c)).toList();
            var unknown = row.values.keySet().stream().filter(c -> !header.contains(c)).toList();
            throw new IllegalArgumentException("row does not match the table: missing " + missing + ", unknown " + unknown);
        }
        for (Map.Entry<String, TableSchema.Column> t : types.entrySet()) {
            String refusal = t.getValue().refusal(row.values.get(t.getKey()));
            if (refusal != null) throw new IllegalArgumentException("table " + fileName + ": column '" + t.getKey() + "' " + refusal);
        }
        write(header.stream().map(row.values::get).toList());
    }

    private void write(List<Object> values) throws IOException {
        StringJoiner line = new StringJoiner(",");
        for (Object v : values) line.add(format(v));
        out.write(line.toString());
        out.newLine();
        out.flush();
    }

    static String format(Object v) {
        if (v == null) return "";
        if (v instanceof Double d) return d.isNaN() || d.isInfinite() ? "" : new BigDecimal(d).round(new MathContext(10)).stripTrailingZeros().toPlainString();
        String s = v.toString();
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
