package dev.mcpchaos.junit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's extension snippet is {@code readme/SlowEchoTest} as compiled and run here, word for word. */
class ReadmeSnippetTest {

    @Test
    void theReadmeShowsTheTestThatRuns() throws IOException {
        String test = Files.readString(Path.of("src/test/java/dev/mcpchaos/junit/readme/SlowEchoTest.java"));
        String body = test.substring(test.indexOf("import static")).strip();
        String readme = Files.readString(Path.of("../README.md"));
        assertThat(readme).as("README.md's snippet of SlowEchoTest").contains("```java\n" + body + "\n```");
    }
}
