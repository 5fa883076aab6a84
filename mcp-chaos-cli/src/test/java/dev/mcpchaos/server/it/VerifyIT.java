package dev.mcpchaos.server.it;

import dev.mcpchaos.server.record.Cassette;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mcp-chaos replay FILE --verify -- COMMAND}: a cassette recorded from server-everything
 * over stdio verifies against a fresh server-everything (exit 0, every request "same"); the same
 * cassette with a result text changed and a tool taken out of tools/list differs at exactly those
 * requests and paths (exit 1).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerifyIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path tempDir;

    /** Records initialize, tools/list, echo and get-sum through mcp-chaos stdio --record. */
    private void record(Path cassette) {
        List<String> command = Tee.mcpChaosStdio("--record", cassette.toString())
                .apply(TestPeers.serverEverythingStdioCommand());
        StdioClientTransport stdio = new StdioClientTransport(ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size())).build(), McpJsonDefaults.getMapper());
        stdio.setStdErrorHandler(line -> { });
        McpSyncClient client = McpClient.sync(stdio).requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT).build();
        try {
            client.initialize();
            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("echo", "get-sum");
            client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", "verify me")).build());
            client.callTool(McpSchema.CallToolRequest.builder("get-sum").arguments(Map.of("a", 2, "b", 40)).build());
        } finally {
            client.closeGracefully();
        }
        // initialize, initialized, tools/list, 2 calls: 4 requests with 4 answers + 1 notification
        await().atMost(TIMEOUT).until(() -> {
            try {
                return Cassette.read(cassette).entries().size() >= 9;
            } catch (RuntimeException | IOException e) {
                return false;
            }
        });
    }

    private record Run(int exit, String stdout, String stderr) { }

    private Run verify(Path cassette, String... extra) throws Exception {
        List<String> argv = new ArrayList<>(List.of(TestPeers.java().toString(), "-jar",
                TestPeers.mcpChaosJar().toString(), "replay", cassette.toString(), "--verify"));
        argv.addAll(List.of(extra));
        argv.add("--");
        argv.addAll(TestPeers.serverEverythingStdioCommand());
        Path out = tempDir.resolve("out.txt");
        Path err = tempDir.resolve("err.txt");
        Process p = new ProcessBuilder(argv).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("verify ends").isTrue();
        Run run = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        System.out.println("verify exit " + run.exit + ":\n" + run.stdout + run.stderr);
        return run;
    }

    @Test
    void aFreshRecordingVerifiesAndAnEditedOneDiffersWhereItWasEdited() throws Exception {
        Path cassette = tempDir.resolve("everything.ndjson");
        record(cassette);

        Run same = verify(cassette);
        assertThat(same.exit).as(same.stdout).isEqualTo(0);
        assertThat(same.stdout).contains("5/5 requests answered as recorded");
        assertThat(same.stdout.lines().filter(l -> l.startsWith("same")).count()).isEqualTo(5);

        String text = Files.readString(cassette, StandardCharsets.UTF_8);
        String edited = text.replace("Echo: verify me", "Echo: edited by hand");
        assertThat(edited).isNotEqualTo(text);
        // take the tool named get-sum out of tools/list: the entry "{"name":"get-sum",...}" is found by its line
        List<String> lines = new ArrayList<>(edited.lines().toList());
        int toolsLine = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("\"tools\":[")) {
                toolsLine = i;
            }
        }
        assertThat(toolsLine).as("the tools/list answer").isNotNegative();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode line =
                (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(lines.get(toolsLine));
        com.fasterxml.jackson.databind.node.ArrayNode tools =
                (com.fasterxml.jackson.databind.node.ArrayNode) line.path("message").path("result").path("tools");
        int last = tools.size() - 1;
        tools.remove(last);
        lines.set(toolsLine, json.writeValueAsString(line));
        Path editedFile = tempDir.resolve("edited.ndjson");
        Files.writeString(editedFile, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);

        Path report = tempDir.resolve("report.json");
        Run differs = verify(editedFile, "--verify-report", report.toString());
        assertThat(differs.exit).as(differs.stdout).isEqualTo(1);
        List<String> differing = differs.stdout.lines().filter(l -> l.startsWith("differs")).toList();
        assertThat(differing).hasSize(2);
        assertThat(differing.get(0)).contains("tools/list").contains("+/result/tools/" + last);
        assertThat(differing.get(1)).contains("tools/call echo").contains("~/result/content/0/text");
        assertThat(differs.stdout.lines().filter(l -> l.startsWith("same")).count()).isEqualTo(3);
        assertThat(Files.readString(report)).contains("\"verdict\" : \"differs\"").contains("/result/content/0/text");
    }
}
