package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code mcp-chaos replay}'s options on the command line: exit codes, --on-exhausted, --rules. */
class ReplayCommandTest {

    private static final String CASSETTE = String.join("\n",
            "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                    + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
            "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":"
                    + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}}",
            "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":"
                    + "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"v\":1}}}") + "\n";

    @TempDir
    Path dir;

    private record Run(int code, List<String> out, String err) {
    }

    private Run run(String input, String... args) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        int code = runOn(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out, err, args);
        return new Run(code, out.toString(StandardCharsets.UTF_8).lines().toList(), err.toString());
    }

    private int runOn(InputStream in, OutputStream out, String... args) {
        return runOn(in, out, new StringWriter(), args);
    }

    private int runOn(InputStream in, OutputStream out, StringWriter err, String... args) {
        Path cassette = dir.resolve("c.ndjson");
        try {
            Files.writeString(cassette, CASSETTE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // As Main builds it, with this replay command on in-memory streams in place of stdin and stdout.
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(new ReplayCommand(in, out));
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        cli.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 4];
        all[0] = "replay";
        all[1] = cassette.toString();
        all[2] = "--quiet";
        all[3] = "--journal=off";
        System.arraycopy(args, 0, all, 4, args.length);
        return Main.execute(cli, all);
    }

    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}\n";
    private static final String OTHER = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\n";

    @Test
    void failOnUnmatchedExitsOneOnlyWhenARequestHadNoRecording() throws IOException {
        Run matched = run(CALL + CALL, "--fail-on-unmatched");
        assertThat(matched.code()).isZero();
        assertThat(matched.out()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"v\":1}}",
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"v\":1}}");

        Run unmatched = run(CALL + OTHER, "--fail-on-unmatched");
        assertThat(unmatched.code()).isEqualTo(1);
        assertThat(unmatched.out()).hasSize(2);
        assertThat(unmatched.out().get(1)).contains("\"code\":-32601");

        assertThat(run(CALL + OTHER).code()).as("without --fail-on-unmatched").isZero();
    }

    @Test
    void onExhaustedErrorAnswersTheSecondRepeatWithAnErrorAndCountsIt() throws IOException {
        Run run = run(CALL + CALL, "--on-exhausted", "error", "--fail-on-unmatched");
        assertThat(run.out().get(0)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"v\":1}}");
        assertThat(run.out().get(1)).contains("\"code\":-32601", "no recording left for tools/call");
        assertThat(run.code()).isEqualTo(1);
    }

    @Test
    void aBadOnExhaustedValueIsRefusedNamingIt() throws IOException {
        Run run = run(CALL, "--on-exhausted", "loop");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).contains("--on-exhausted: 'loop' (expected: last or error)");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void rulesApplyToTheReplayedAnswers() throws IOException {
        Path rules = dir.resolve("r.yaml");
        Files.writeString(rules, "rules:\n  - name: fail-it\n    match: {kind: response, method: tools/call}\n"
                + "    times: 1\n    fault: {type: error, code: -32603, message: injected}\n");
        Run run = run(CALL + CALL, "--rules", rules.toString(), "--seed", "3");
        assertThat(run.code()).isZero();
        assertThat(run.out()).hasSize(2);
        assertThat(run.out().get(0)).contains("\"id\":5", "-32603", "injected");
        assertThat(run.out().get(1)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"v\":1}}");
    }

    /** docs/record-replay.md: a crash rule ends the replayed server as SIGKILL ends a live one, and the exit says so. */
    @Test
    void aCrashRuleEndsTheReplayWithTheKilledServersCode137AsStdioDoes() throws IOException {
        Path rules = dir.resolve("crash.yaml");
        Files.writeString(rules, "rules:\n  - name: crash-it\n    match: {direction: client_to_server, method: tools/call}\n"
                + "    fault: {type: crash}\n");
        Run run = run(CALL, "--rules", rules.toString());
        assertThat(run.out()).as("the request went nowhere").isEmpty();
        assertThat(run.code()).isEqualTo(137);
    }

    @Test
    void theKilledServersCodeWinsOverFailOnUnmatched() throws Exception {
        Path rules = dir.resolve("crash.yaml");
        Files.writeString(rules, "rules:\n  - name: crash-on-n\n"
                + "    match: {direction: client_to_server, kind: request, method: tools/call, tool: n}\n"
                + "    fault: {type: crash}\n");
        // The client's input stays open, as a client's does: the crash alone ends the session, and
        // the call with no recording is answered (and counted) before the one that crashes is sent.
        PipedOutputStream client = new PipedOutputStream();
        PipedInputStream in = new PipedInputStream(client);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(
                () -> runOn(in, out, "--rules", rules.toString(), "--fail-on-unmatched"));
        try (client) {
            client.write(OTHER.getBytes(StandardCharsets.UTF_8));
            client.flush();
            await("the answer to the call with no recording").atMost(Duration.ofSeconds(30))
                    .until(() -> out.toString(StandardCharsets.UTF_8).contains("-32601"));
            client.write(CALL.getBytes(StandardCharsets.UTF_8));
            client.flush();

            assertThat(code.get(30, TimeUnit.SECONDS)).as("the crash ended the session, not the unmatched request")
                    .isEqualTo(137);
        }
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(1);
    }

    @Test
    void aCrashRuleWithSignalTermEndsTheReplayWithCode143() throws IOException {
        Path rules = dir.resolve("term.yaml");
        Files.writeString(rules, "rules:\n  - name: stop-it\n    match: {direction: client_to_server, method: tools/call}\n"
                + "    fault: {type: crash, signal: TERM}\n");
        Run run = run(CALL, "--rules", rules.toString());
        assertThat(run.out()).isEmpty();
        assertThat(run.code()).isEqualTo(128 + 15);
    }

    @Test
    void checkOnAReplayReportsWhatTheClientBrokeAndATwinOfCleanTrafficReportsNoError() throws IOException {
        Path report = dir.resolve("checks.json");
        String badEnvelope = "{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}\n";
        Run bad = run(CALL + badEnvelope, "--check-report", report.toString());
        assertThat(bad.out()).as("the checks change nothing: both answered").hasSize(2);
        com.fasterxml.jackson.databind.JsonNode found = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(report.toFile());
        assertThat(found.path("errors").asInt()).isEqualTo(1);
        assertThat(found.toString()).contains("jsonrpc.invalid-envelope", "jsonrpc \\\"1.0\\\" (expected: \\\"2.0\\\")");

        Files.delete(report);
        String another = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}\n";
        Run clean = run(CALL + another, "--check-report", report.toString());
        assertThat(clean.out()).hasSize(2);
        com.fasterxml.jackson.databind.JsonNode none = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(report.toFile());
        assertThat(none.path("messages").asInt()).isEqualTo(4);
        assertThat(none.path("errors").asInt()).as(none.toString()).isZero();
        assertThat(none.path("warnings").asInt()).as("tools/call before initialize, twice").isEqualTo(2);
    }
}
