package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** --record and the redaction options: a value that cannot be used is named before anything starts. */
@Timeout(30)
class RecordOptionsTest {

    @TempDir
    Path dir;

    private final PrintStream savedOut = System.out;

    @AfterEach
    void restoreStdout() {
        System.setOut(savedOut);
    }

    private record Run(int code, String err) {
    }

    private static Run main(String... args) {
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), args);
        return new Run(code, err.toString());
    }

    @Test
    void aRedactionOptionWithoutRecordIsNamed() {
        Run run = main("stdio", "--quiet", "--redact-path", "params.x", "--", "cat");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --redact-path: given without --record (expected: --record FILE|DIR"
                + " too)\n");
    }

    @Test
    void aRedactPathThatIsNoPathIsNamed() {
        Run run = main("stdio", "--quiet", "--record", dir.resolve("c.ndjson").toString(), "--redact-path", "a..b",
                "--", "cat");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --redact-path: 'a..b' (expected: a JSON pointer such as "
                + "/params/arguments/token, or a dotted glob such as params.arguments.* or result.**.token)\n");
    }

    @Test
    void aRedactEnvThatIsNoVariableNameIsNamed() {
        Run run = main("http", "--quiet", "--listen", "127.0.0.1:0", "--control", "off", "--record",
                dir.resolve("c.ndjson").toString(), "--redact-env", "A=B", "--upstream", "http://127.0.0.1:9/mcp");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --redact-env: 'A=B' (expected: an environment variable's name, "
                + "such as GITHUB_TOKEN)\n");
    }
}
