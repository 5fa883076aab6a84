package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * The rule for tests that need what a machine may lack (a Docker engine, the image, kubectl): skipped
 * with the reason outside CI, failed with CI=true. And the guard that keeps it from falling behind:
 * every {@code *IT} here carries {@link DockerEngine}, so that {@code mvn -B verify} on a machine
 * without an engine skips them all (ContainerQuickStartIT once errored there while 13 others skipped).
 */
class DockerEngineTest {

    @TempDir
    Path dir;

    @Test
    void everyIntegrationTestOfThisModuleIsUnderTheDockerEngineRule() throws IOException {
        List<Path> its;
        try (Stream<Path> files = Files.walk(Path.of("src/test/java"))) {
            its = files.filter(f -> f.getFileName().toString().endsWith("IT.java")).sorted().toList();
        }
        assertThat(its).as("the module's ITs").isNotEmpty();
        for (Path it : its) {
            assertThat(Files.readString(it)).as("%s: every IT here needs a Docker engine, so it must be skipped "
                    + "without one as the others are (expected: @ExtendWith(DockerEngine.class))", it)
                    .contains("@ExtendWith(DockerEngine.class)");
        }
    }

    @Test
    void outsideCiAMissingEngineSkipsWithTheReason() {
        ConditionEvaluationResult result = DockerEngine.decide(false, "no Docker engine answers (start dockerd)");
        assertThat(result.isDisabled()).isTrue();
        assertThat(result.getReason()).hasValue(
                "Skipped, no Docker engine answers (start dockerd); with CI=true this fails instead");
        DockerEngine.requireOnCi(false, "no Docker engine answers (start dockerd)"); // nothing thrown
    }

    @Test
    void onCiAMissingEngineFailsTheClass() {
        assertThat(DockerEngine.decide(true, null).isDisabled()).isFalse();
        assertThatThrownBy(() -> DockerEngine.requireOnCi(true, "no Docker engine answers (start dockerd)"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("CI=true and no Docker engine answers (start dockerd)");
    }

    @Test
    void aMissingToolSkipsOutsideCiAndFailsOnCi() {
        assertThatThrownBy(() -> DockerEngine.requireTool("kubectl", "kubectl 1.21 or later", List.of(dir), false))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("Skipped, kubectl not found on PATH (kubectl 1.21 or later); "
                        + "with CI=true this fails instead");
        assertThatThrownBy(() -> DockerEngine.requireTool("kubectl", "kubectl 1.21 or later", List.of(dir), true))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("CI=true and kubectl not found on PATH (kubectl 1.21 or later)");
    }

    @Test
    void aToolThatIsThereIsFound() throws IOException {
        Path tool = Files.createFile(dir.resolve("kubectl"));
        assertThat(tool.toFile().setExecutable(true)).isTrue();
        assertThat(DockerEngine.requireTool("kubectl", "hint", List.of(dir), true)).isEqualTo(tool);
    }
}
