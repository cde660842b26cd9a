package perfkit.workflow;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class DrainBottleneckTest {
    private static String classify(double sys, double engines, double db, double busy, double locks) {
        return DrainBottleneck.classify(new DrainBottleneck.Evidence(sys, 2, engines, db, busy, locks));
    }

    @Test
    void aSaturatedMachineIsCpuBoundAndNamesItsLargestConsumer() {
        assertEquals("cpu:engines", classify(196, 120, 60, 1.0, 0));
        assertEquals("cpu:database", classify(190, 60, 110, 0.3, 5));
        assertEquals("cpu:other", classify(195, 40, 50, 0.5, 0), "105% outside engines and database");
        assertEquals("cpu:engines", classify(180, 100, Double.NaN, 0.5, Double.NaN), "unknown database CPU counts as none");
    }

    @Test
    void belowSaturationLocksThenThreadsThenAcquisition() {
        assertEquals("database-locks", classify(120, 60, 40, 1.0, 2.5));
        assertEquals("executor-threads", classify(120, 60, 40, 0.97, 0.2));
        assertEquals("acquisition", classify(60, 30, 20, 0.4, 0.0));
        assertEquals("acquisition", classify(60, 30, 20, 0.4, Double.NaN), "no lock evidence on H2");
    }

    @Test
    void thresholdsScaleWithTheCoreCount() {
        assertEquals("executor-threads", DrainBottleneck.classify(new DrainBottleneck.Evidence(190, 4, 100, 80, 0.95, 0)),
                "190% is half of a 4-core machine");
    }

    @Test
    void aDatabaseOnItsOwnSaturatedHostIsTheCpuBottleneckUnlessThisHostIsSaturatedToo() {
        var dbHostFull = new DrainBottleneck.Evidence(120, 2, 100, 300, 0.4, 0, 380, 4, Double.NaN, 0);
        assertEquals("cpu:database", DrainBottleneck.classify(dbHostFull));
        assertEquals("acquisition", DrainBottleneck.classify(new DrainBottleneck.Evidence(120, 2, 100, 100, 0.4, 0, 120, 4, Double.NaN, 0)), "30% of its 4 cores");
        assertEquals("cpu:engines", DrainBottleneck.classify(new DrainBottleneck.Evidence(195, 2, 150, Double.NaN, 0.4, 0, 380, 4, Double.NaN, 0)), "this host first");
    }

    @Test
    void enginesOnTheirOwnSaturatedHostAreTheCpuBottleneckAfterThisHostAndTheDatabases() {
        // engines elsewhere: their CPU is not this host's (NaN here), and their busiest host is judged on its own cores
        var enginesHostFull = new DrainBottleneck.Evidence(30, 2, Double.NaN, Double.NaN, 0.5, 0, 100, 4, 370, 4);
        assertEquals("cpu:engines", DrainBottleneck.classify(enginesHostFull));
        assertEquals("executor-threads", DrainBottleneck.classify(new DrainBottleneck.Evidence(30, 2, Double.NaN, Double.NaN, 0.95, 0, 100, 4, 300, 4)),
                "75% of its 4 cores");
        assertEquals("cpu:database", DrainBottleneck.classify(new DrainBottleneck.Evidence(30, 2, Double.NaN, Double.NaN, 0.5, 0, 390, 4, 370, 4)),
                "the database's host first, as the rules list it");
        assertEquals("cpu:other", DrainBottleneck.classify(new DrainBottleneck.Evidence(190, 2, Double.NaN, Double.NaN, 0.5, 0, 100, 4, 370, 4)),
                "this host saturated by neither engines nor database");
    }
}
