package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.cli.Main;
import dev.mcpchaos.server.record.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code mcp-chaos drill} against a server other than the demo (issue #37): server-everything from
 * npm (test-peers) as an HTTP upstream ({@code --upstream URL}) and as a stdio command
 * ({@code --server CMD}), and a cassette recorded from it ({@code --cassette FILE}), each drilling
 * the well-behaved test client. server-everything has {@code echo} and {@code get-sum} but no
 * {@code add}: out-of-order, whose fault hits calls of {@code add}, is not applicable there, with
 * the reason; the scenarios whose fault hits any tools/call or tools/list run. Needs {@code npm ci}
 * in test-peers.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DrillServersIT {

    @TempDir
    Path dir;

    private final StringWriter err = new StringWriter();

    /** The verdicts (outcome and reason, by scenario) of a drill of the test client with {@code options}. */
    private Map<String, JsonNode> drill(List<String> options, boolean stdio, String... scenarios) throws Exception {
        Path json = dir.resolve("card-" + System.nanoTime() + ".json");
        List<String> args = new ArrayList<>(List.of("drill", "--timeout", "15s", "--seed", "42", "--report-json",
                json.toString(), "--show-client-output"));
        if (stdio) {
            args.addAll(List.of("--transport", "stdio"));
        }
        for (String scenario : scenarios) {
            args.addAll(List.of("--scenario", scenario));
        }
        args.addAll(options);
        args.addAll(List.of("--", TestPeers.node().toString(),
                TestPeers.testPeersDir().resolve("drill").resolve("client.mjs").toString()));
        if (stdio) {
            args.add("--stdio");
        }
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                args.toArray(String[]::new));
        assertThat(json).as("exit %d\n%s", code, err).exists();
        JsonNode card = new ObjectMapper().readTree(json.toFile());
        assertThat(card.get("exit_code").asInt()).isEqualTo(code);
        Map<String, JsonNode> verdicts = new LinkedHashMap<>();
        card.get("scenarios").forEach(s -> verdicts.put(s.get("name").asText(), s));
        return verdicts;
    }

    private static String outcome(Map<String, JsonNode> verdicts, String scenario) {
        return verdicts.get(scenario).get("outcome").asText();
    }

    @Test
    void anHttpUpstreamIsDrilledAndWhatItsToolsCannotServeIsNotApplicable() throws Exception {
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(dir)) {
            Map<String, JsonNode> verdicts = drill(List.of("--upstream", everything.endpoint().toString()), false,
                    "answer-lost", "write-answer-dropped", "session-404");
            assertThat(verdicts.keySet()).containsExactly("answer-lost", "write-answer-dropped", "session-404");
            // tools/list lost, a call's answer lost, the session's 404: each fired on server-everything.
            assertThat(verdicts).as(err.toString()).allSatisfy((name, v) ->
                    assertThat(v.get("outcome").asText()).as(name + ": " + v.get("reason")).isEqualTo("pass"));
            assertThat(err.toString()).contains("[drill] the server at " + everything.endpoint() + " lists ")
                    .contains("echo").contains("get-sum");
        }
    }

    @Test
    void aStdioServerCommandIsDrilledFreshPerScenario() throws Exception {
        List<String> server = new ArrayList<>(List.of("--server"));
        server.addAll(TestPeers.serverEverythingStdioCommand());
        Map<String, JsonNode> verdicts = drill(server, true, "answer-lost", "out-of-order", "request-dropped");
        assertThat(outcome(verdicts, "out-of-order")).isEqualTo("not_applicable");
        assertThat(verdicts.get("out-of-order").get("reason").asText())
                .contains("tools/call of 'add'").contains("has no tool 'add'").contains("get-sum");
        assertThat(outcome(verdicts, "answer-lost")).as(err.toString()).isEqualTo("pass");
        assertThat(outcome(verdicts, "request-dropped")).as(err.toString()).isEqualTo("pass");
    }

    /** A cassette of server-everything, recorded through a proxy while the test client runs its steps once. */
    private Path recordCassette() throws Exception {
        Path cassette = dir.resolve("everything.ndjson");
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(dir);
             RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).record(Recording.to(cassette)).start()) {
            ProcessBuilder pb = new ProcessBuilder(TestPeers.node().toString(),
                    TestPeers.testPeersDir().resolve("drill").resolve("client.mjs").toString(),
                    proxy.mcpUrl().toString()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("record-client.log").toFile());
            pb.environment().put("MCP_CONFORMANCE_SCENARIO", "record");
            Process client = pb.start();
            assertThat(client.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(Files.readString(cassette)).contains("tools/list").contains("tools/call");
        return cassette;
    }

    @Test
    void aCassetteIsReplayedFreshPerScenarioOverBothTransports() throws Exception {
        Path cassette = recordCassette();
        Map<String, JsonNode> http = drill(List.of("--cassette", cassette.toString()), false,
                "answer-lost", "error-vs-iserror");
        assertThat(http).as(err.toString()).allSatisfy((name, v) ->
                assertThat(v.get("outcome").asText()).as(name + ": " + v.get("reason")).isEqualTo("pass"));
        assertThat(err.toString()).contains("[drill] the cassette " + cassette + " lists ");
        Map<String, JsonNode> stdio = drill(List.of("--cassette", cassette.toString()), true,
                "answer-lost", "out-of-order");
        assertThat(outcome(stdio, "answer-lost")).as(err.toString()).isEqualTo("pass");
        assertThat(outcome(stdio, "out-of-order")).isEqualTo("not_applicable");
    }
}
