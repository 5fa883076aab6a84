package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mcp-chaos validate}: a valid file lists its rules; an invalid one gets one line and exit 2. */
class ValidateCommandTest {

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private PrintStream savedOut;
    private PrintStream savedErr;

    @BeforeEach
    void capture() {
        savedOut = System.out;
        savedErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setOut(savedOut);
        System.setErr(savedErr);
    }

    private Path file(String text) throws IOException {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void aValidFileListsItsRules() throws IOException {
        Path file = file("seed: 3\nrules:\n  - {name: slow, fault: {type: latency, latency: 1s}}\n"
                + "  - {name: paused, enabled: false, fault: {type: drop}}\n");
        assertThat(Main.run("validate", file.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(file + ": 2 rules, seed 3, valid\n"
                + "  slow: latency\n  paused: drop (disabled)\n");
        assertThat(err.size()).isZero();
    }

    @Test
    void anInvalidFileGetsOneLineAndExitCode2() throws IOException {
        Path file = file("rules:\n  - {name: x, fault: {type: latency, latency: -5ms}}\n");
        assertThat(Main.run("validate", file.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("mcp-chaos: " + file
                + ": rule 'x': fault.latency: '-5ms' (expected: a duration >= 0, such as 250ms)\n");
        assertThat(out.size()).isZero();
    }

    @Test
    void aYamlSyntaxErrorSaysTheParsersProblemAtItsLineAndColumn() throws IOException {
        Path tab = file("rules:\n  - name: x\n\tfault: {type: drop}\n");
        assertThat(Main.run("validate", tab.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("mcp-chaos: " + tab + ": line 3, column 1: "
                + "not valid YAML/JSON: tabs are not allowed for indentation (use spaces)\n");
        err.reset();

        Path open = file("rules:\n  - name: x\n    fault: {type: drop\n");
        assertThat(Main.run("validate", open.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("mcp-chaos: " + open + ": line 4, column 1: "
                + "not valid YAML/JSON: expected ',' or '}', but got the end of the file (in the {...} mapping that "
                + "starts at line 3, column 12)\n");
        assertThat(out.size()).isZero();

        Path good = file("rules:\n  - name: x\n    fault: {type: drop}\n");
        assertThat(Main.run("validate", good.toString())).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(good + ": 1 rule, valid\n  x: drop\n");
    }

    @Test
    void aRuleThatCannotWorkOnTheTransportIsRefused() throws IOException {
        Path file = file("rules:\n  - {name: busy, fault: {type: http_status, status: 503}}\n");
        assertThat(Main.run("validate", "--transport", "http", file.toString())).isZero();
        assertThat(Main.run("validate", "--transport", "stdio", file.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("rule 'busy': http_status: only applies to the http transport");
    }
}
