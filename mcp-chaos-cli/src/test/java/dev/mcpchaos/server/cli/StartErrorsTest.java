package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.net.URI;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.server.McpChaosProxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Options whose value cannot be used, found as the command starts: one line on stderr that names
 * the option, the value and what is wrong, exit code 2, no usage, and nothing started.
 */
@Timeout(30) // a value taken by mistake starts a proxy that runs until stopped
class StartErrorsTest {

    @TempDir
    Path dir;

    /** The stdio command points System.out at System.err for the protocol's sake: put it back. */
    private final PrintStream savedOut = System.out;

    @AfterEach
    void restoreStdout() {
        System.setOut(savedOut);
    }

    /** What a run printed on picocli's err, and its exit code. */
    private record Run(int code, String err) {
    }

    private static Run main(String... args) {
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), args);
        return new Run(code, err.toString());
    }

    @ParameterizedTest
    @CsvSource({
            "stdio, --control-head-timeout, 0s",
            "stdio, --control-body-timeout, soon",
            "http, --control-head-timeout, -1s",
            "http, --control-body-timeout, 0ms",
    })
    void aControlTimeoutThatIsNoDurationAboveZeroIsNamed(String transport, String option, String value) {
        Run run = transport.equals("stdio")
                ? main("stdio", "--quiet", "--control", "127.0.0.1:0", option, value, "--", "cat")
                : main("http", "--quiet", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", option, value,
                "--upstream", "http://127.0.0.1:9/mcp");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: " + option + ": '" + value + "' (expected: a duration > 0, "
                + "such as 10s or 1.5s)\n");
    }

    @Test
    void aJournalCapacityThatIsNotACountOrOffIsRefused() {
        Run zero = main("stdio", "--quiet", "--journal", "0", "--", "cat");
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).isEqualTo("mcp-chaos: --journal: '0' (expected: a number of entries >= 1, such as 10000,"
                + " or off)\n");
        Run word = main("http", "--quiet", "--control", "off", "--listen", "127.0.0.1:0", "--upstream",
                "http://127.0.0.1:9/mcp", "--journal", "lots");
        assertThat(word.code()).isEqualTo(2);
        assertThat(word.err()).isEqualTo("mcp-chaos: --journal: 'lots' (expected: a number of entries >= 1, such as "
                + "10000, or off)\n");
        assertThat(ChaosOptions.journalCapacity("off")).isZero();
        assertThat(ChaosOptions.journalCapacity("OFF")).isZero();
        assertThat(ChaosOptions.journalCapacity("250")).isEqualTo(250);
    }

    @Test
    void aWorkingDirectoryThatDoesNotExistIsNamedNotTheCommand() {
        Path missing = dir.resolve("missing");
        Run run = main("stdio", "--quiet", "--cwd", missing.toString(), "--", "cat");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --cwd: '" + missing + "' does not exist (expected: the directory "
                + "to start the server in)\n");
    }

    @Test
    void aWorkingDirectoryThatIsAFileIsNamed() throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "x");
        Run run = main("stdio", "--quiet", "--cwd", file.toString(), "--", "cat");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --cwd: '" + file + "' is not a directory (expected: the directory "
                + "to start the server in)\n");
    }

    @Test
    void aCeilingOnBufferedBytesOfNothingIsRefusedWithTheOptionsName() {
        Run run = main("http", "--quiet", "--control", "off", "--listen", "127.0.0.1:0", "--upstream",
                "http://127.0.0.1:9/mcp", "--max-buffered", "0");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --max-buffered: 0 bytes (expected: at least 1B)\n");
    }

    @Test
    void aRecordingThatCannotBeWrittenIsOneStartFailureOnBothTransports() {
        Path missing = dir.resolve("missing").resolve("session.ndjson");
        String cannot = "mcp-chaos: record: '" + missing + "' cannot be written";
        Run http = mainCapturingStderr("http", "--quiet", "--control", "off", "--listen", "127.0.0.1:0", "--upstream",
                "http://127.0.0.1:9/mcp", "--record", missing.toString());
        assertThat(http.code()).isEqualTo(1);
        assertThat(http.err()).startsWith(cannot);
        Run stdio = mainCapturingStderr("stdio", "--quiet", "--record", missing.toString(), "--", "cat");
        assertThat(stdio.code()).isEqualTo(1);
        assertThat(stdio.err()).startsWith(cannot);
        assertThatThrownBy(() -> McpChaosProxy.http(URI.create("http://127.0.0.1:9/mcp")).record(missing).start())
                .isInstanceOf(ProxyStartException.class)
                .hasMessageStartingWith("record: '" + missing + "' cannot be written")
                .extracting(e -> ((ProxyStartException) e).reason()).isEqualTo(ProxyStartException.Reason.CONFIGURATION);
    }

    /** {@link #main}, with what the command prints on System.err itself (start failures) in {@code err}. */
    private static Run mainCapturingStderr(String... args) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            Run run = main(args);
            return new Run(run.code(), run.err() + bytes.toString(java.nio.charset.StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    @Test
    void anExistingWorkingDirectoryIsTaken() {
        assertThat(StdioCommand.requireDirectory(dir)).isEqualTo(dir);
    }

    @Test
    void anEventLogInADirectoryThatDoesNotExistSaysSoInOneLine() {
        Path events = dir.resolve("missing").resolve("ev.jsonl");
        Run run = main("stdio", "--quiet", "--events", events.toString(), "--", "cat");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --events: '" + events + "' cannot be opened: the directory "
                + dir.resolve("missing") + " does not exist (expected: a file to append to, or - for stderr)\n");
    }

    @Test
    void anEventLogBelowAFileOrThatIsADirectorySaysWhich() throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "x");
        Run below = main("stdio", "--quiet", "--events", file.resolve("ev.jsonl").toString(), "--", "cat");
        assertThat(below.code()).isEqualTo(2);
        assertThat(below.err()).isEqualTo("mcp-chaos: --events: '" + file.resolve("ev.jsonl") + "' cannot be opened: "
                + file + " is not a directory (expected: a file to append to, or - for stderr)\n");

        Run directory = main("stdio", "--quiet", "--events", dir.toString(), "--", "cat");
        assertThat(directory.code()).isEqualTo(2);
        assertThat(directory.err()).isEqualTo("mcp-chaos: --events: '" + dir + "' cannot be opened: it is a "
                + "directory (expected: a file to append to, or - for stderr)\n");
    }

    @Test
    void whyAnEventLogCannotBeOpenedFallsBackToTheReasonTheSystemGave() {
        Path file = dir.resolve("ev.jsonl"); // its directory exists: the reason is the exception's own
        assertThat(ChaosOptions.whyNotWritable(file, new NoSuchFileException(file.toString(), null, "no space")))
                .isEqualTo("no space");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            127.0.0.1:3001                    | an http:// or https:// URL such as http://127.0.0.1:3001/mcp
            localhost:3001                    | an http:// or https:// URL such as http://127.0.0.1:3001/mcp
            mcp.example.com/mcp               | an http:// or https:// URL such as http://127.0.0.1:3001/mcp
            ftp://127.0.0.1:3001/mcp          | an http:// or https:// URL such as http://127.0.0.1:3001/mcp
            http://127.0.0.1:3001/a b         | an http:// or https:// URL such as http://127.0.0.1:3001/mcp
            http:///mcp                       | an http:// or https:// URL with a host such as http://127.0.0.1:3001/mcp
            http://127.0.0.1:70000/mcp        | an http:// or https:// URL with a port from 1 to 65535, or none such as http://127.0.0.1:3001/mcp
            http://127.0.0.1:3001/mcp?x=1     | an http:// or https:// URL without a query such as http://127.0.0.1:3001/mcp; clients' query strings pass unchanged
            http://127.0.0.1:3001/mcp#top     | an http:// or https:// URL without a fragment such as http://127.0.0.1:3001/mcp
            http://me:pw@127.0.0.1:3001/mcp   | an http:// or https:// URL without user info such as http://127.0.0.1:3001/mcp; clients' Authorization header passes unchanged
            """)
    void anUpstreamThatIsNotAnHttpUrlIsRefusedInOneLine(String upstream, String expected) {
        Run run = main("http", "--quiet", "--listen", "127.0.0.1:0", "--control", "off", "--upstream", upstream);
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: --upstream: '" + upstream + "' (expected: " + expected + ")\n");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            --max-sessions         | 0    | --max-sessions: 0 (expected: >= 1)
            --max-sessions         | -3   | --max-sessions: -3 (expected: >= 1)
            --session-idle-timeout | 0s   | --session-idle-timeout: '0s' (expected: > 0)
            --session-idle-timeout | soon | --session-idle-timeout: 'soon' (expected: a number and a unit, such as 30s, 30m, 1h)
            """)
    void aSessionLimitThatCannotBeUsedIsNamedInOneLine(String option, String value, String expected) {
        Run run = main("http", "--quiet", "--listen", "127.0.0.1:0", "--control", "off", "--upstream",
                "http://127.0.0.1:3001/mcp", option, value);
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("mcp-chaos: " + expected + "\n");
    }

    @Test
    void sessionLimitsThatCanBeUsedAreTaken() {
        assertThat(HttpCommand.atLeastOne(1, "--max-sessions")).isEqualTo(1);
        assertThat(HttpCommand.positive("1ms", "--session-idle-timeout")).isEqualTo(java.time.Duration.ofMillis(1));
        assertThat(HttpCommand.positive("2h", "--session-idle-timeout")).isEqualTo(java.time.Duration.ofHours(2));
    }
}
