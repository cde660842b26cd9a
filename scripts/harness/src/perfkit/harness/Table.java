package perfkit.harness;

import java.io.BufferedWriter;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.StringJoiner;

/** A CSV table in the run directory, flushed row by row so an interrupted run keeps every finished row. */
public final class Table implements AutoCloseable {
    private final BufferedWriter out;
    private final int columns;

    public Table(Run run, String fileName, String description, String... header) throws IOException {
        this.out = Files.newBufferedWriter(run.dir().resolve(fileName));
        this.columns = header.length;
        run.addFile(fileName, "table", description);
        write(header);
    }

    public synchronized void row(Object... values) throws IOException {
        if (values.length != columns) throw new IllegalArgumentException("expected " + columns + " values, got " + values.length);
        write(values);
    }

    private void write(Object[] values) throws IOException {
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
        return s.contains(",") || s.contains("\"") ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
