package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The README's container snippet is {@code readme/ContainerQuickStartIT} as compiled and run here,
 * word for word, but for the lines marked {@value #NOT_IN_README} (the build's own skip rule).
 */
class ReadmeSnippetTest {

    /** The end of a line of the test that the README leaves out. */
    static final String NOT_IN_README = "// not in the README";

    @Test
    void theReadmeShowsTheContainerTestThatRuns() throws IOException {
        String test = Files.readString(Path.of("src/test/java/dev/mcpchaos/testcontainers/readme/ContainerQuickStartIT.java"));
        String body = test.substring(test.indexOf("import static")).lines()
                .filter(line -> !line.strip().endsWith(NOT_IN_README))
                .collect(Collectors.joining("\n")).strip();
        String readme = Files.readString(Path.of("../README.md"));
        assertThat(readme).as("README.md's snippet of ContainerQuickStartIT").contains("```java\n" + body + "\n```");
    }
}
