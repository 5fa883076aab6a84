package dev.mcpchaos.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChildJvmTest {

    @Test
    void serialIsChosenOnlyWhenTheEnvironmentChoosesNoCollector() {
        assertThat(ChildJvm.startupOptions(Map.of())).contains("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
        assertThat(ChildJvm.startupOptions(Map.of("JAVA_TOOL_OPTIONS", "-Xmx1g -XX:+UseGCOverheadLimit")))
                .as("a GC option that picks no collector").contains("-XX:+UseSerialGC");
        assertThat(ChildJvm.startupOptions(Map.of("JAVA_TOOL_OPTIONS", "-Xmx1g -XX:+UseG1GC")))
                .doesNotContain("-XX:+UseSerialGC").contains("-XX:TieredStopAtLevel=1");
        assertThat(ChildJvm.startupOptions(Map.of("JDK_JAVA_OPTIONS", "-XX:+UseZGC")))
                .doesNotContain("-XX:+UseSerialGC");
        assertThat(ChildJvm.startupOptions(Map.of("JAVA_TOOL_OPTIONS", "-XX:-UseSerialGC")))
                .doesNotContain("-XX:+UseSerialGC");
    }

    /** A real JVM under a JAVA_TOOL_OPTIONS that picks G1 starts with these options, and refused the old ones. */
    @Test
    void aChildJvmStartsWhenTheUsersToolOptionsPickAnotherCollector() throws Exception {
        Map<String, String> environment = Map.of("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC");
        assertThat(run(environment, ChildJvm.startupOptions(environment))).isZero();
        assertThat(run(environment, List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")))
                .as("the options before: two collectors").isNotZero();
    }

    private static int run(Map<String, String> environment, List<String> options) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.add("-version");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(output).isTrue();
        return process.exitValue();
    }
}
