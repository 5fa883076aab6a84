package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * The rule of the deploy ITs ({@code KubernetesManifestsIT}, {@code DeployPrometheusIT}) for a tool
 * the machine lacks, as the container tests have it for the Docker engine: skipped with the reason
 * outside CI, so the README's {@code mvn -B verify} passes on a machine without kubectl or Prometheus,
 * failed with CI=true, so CI cannot pass by skipping.
 */
class DeployToolsTest {

    @TempDir
    Path dir;

    @Test
    void aMissingToolSkipsTheTestWithTheReasonOutsideCi() {
        assertThatThrownBy(() -> DeployTools.requireTool("promtool", "Debian's prometheus package", List.of(dir), false))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("Skipped, promtool not found on PATH (Debian's prometheus package); "
                        + "with CI=true this fails instead");
    }

    @Test
    void aMissingToolFailsTheTestOnCi() {
        assertThatThrownBy(() -> DeployTools.requireTool("promtool", "Debian's prometheus package", List.of(dir), true))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("CI=true and promtool not found on PATH (Debian's prometheus package)");
    }

    @Test
    void aToolThatIsThereIsUsed() throws IOException {
        Path tool = Files.createFile(dir.resolve("kubectl"));
        assertThat(tool.toFile().setExecutable(true)).isTrue();
        assertThat(DeployTools.requireTool("kubectl", "hint", List.of(dir), true)).isEqualTo(tool);
    }
}
