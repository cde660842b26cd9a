package perfkit.harness;

import org.junit.jupiter.api.Test;

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
}
