package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's container snippet is {@code readme/ContainerQuickStartIT} as compiled and run here, word for word. */
class ReadmeSnippetTest {

    @Test
    void theReadmeShowsTheContainerTestThatRuns() throws IOException {
        String test = Files.readString(Path.of("src/test/java/dev/mcpchaos/testcontainers/readme/ContainerQuickStartIT.java"));
        String body = test.substring(test.indexOf("import static")).strip();
        String readme = Files.readString(Path.of("../README.md"));
        assertThat(readme).as("README.md's snippet of ContainerQuickStartIT").contains("```java\n" + body + "\n```");
    }
}
