package perfkit.harness.run;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ScriptJvmTest {
    private final ScriptJvm minimal = ScriptJvm.of("the minimal program", "perfkit.queues.Minimal1P1C", "/kit/minimal.jar");

    @Test
    void aProgramRunsOnTheRunningJdkUnlessToldOtherwise() {
        assertEquals(List.of(ScriptJvm.scriptJava(), "-Xmx1g", "-cp", "/kit/minimal.jar", "perfkit.queues.Minimal1P1C", "abq"),
                minimal.command(List.of("-Xmx1g"), List.of("abq")));
        assertEquals(ScriptJvm.scriptJava(), minimal.on("").java(), "a blank --java is the run's own");
        assertEquals(ScriptJvm.scriptJava(), minimal.on(null).java());
    }

    @Test
    void aYardstickBesideTheForksRunsOnTheirJava() {
        // queues' minimal program beside forks on --java: harness/minimal must compare one JVM, not two
        ScriptJvm onForksJava = minimal.on("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
        assertEquals("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java", onForksJava.command(List.of(), List.of()).get(0));
        assertEquals(minimal.classpath(), onForksJava.classpath());
        assertEquals(minimal.mainClass(), onForksJava.mainClass());
        assertEquals(ScriptJvm.scriptJava(), minimal.java(), "on() leaves the original as it was");
    }
}
