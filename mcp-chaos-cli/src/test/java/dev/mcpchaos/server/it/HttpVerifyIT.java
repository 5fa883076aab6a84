package dev.mcpchaos.server.it;

import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mcp-chaos replay FILE --verify-url URL}: a cassette recorded from server-everything over
 * Streamable HTTP (through the proxy, with the MCP Java SDK client) verifies against the same kind
 * of server in a live session of its own (exit 0); the cassette with a result edited differs at
 * exactly that request (exit 1), and {@code --update} re-records it (then it verifies); an unreachable URL and a bad one are exit 2 with what was expected.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpVerifyIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path tempDir;

    private static HttpPeers.ServerEverything everything;
    private static Path cassette;

    @BeforeAll
    static void recordOnce() {
        everything = HttpPeers.ServerEverything.start(tempDir);
        cassette = tempDir.resolve("everything-http.ndjson");
        try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).record(cassette).start()) {
            McpSyncClient client = HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                    .requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT).build();
            try {
                client.initialize();
                assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("echo", "get-sum");
                client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", "verify me")).build());
                client.callTool(McpSchema.CallToolRequest.builder("get-sum").arguments(Map.of("a", 2, "b", 40)).build());
            } finally {
                client.closeGracefully();
            }
        }
    }

    @AfterAll
    static void stopServer() {
        if (everything != null) {
            everything.close();
        }
    }

    private record Run(int exit, String stdout, String stderr) { }

    private static Run verify(Path file, String url, String... extra) throws Exception {
        List<String> argv = new ArrayList<>(List.of(TestPeers.java().toString(), "-jar",
                TestPeers.mcpChaosJar().toString(), "replay", file.toString(), "--verify-url", url));
        argv.addAll(List.of(extra));
        Path out = Files.createTempFile(tempDir, "verify-", ".out");
        Path err = Files.createTempFile(tempDir, "verify-", ".err");
        Process p = new ProcessBuilder(argv).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("verify ends").isTrue();
        Run run = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        System.out.println("verify exit " + run.exit + ":\n" + run.stdout + run.stderr);
        return run;
    }

    @Test
    void aFreshRecordingVerifiesAgainstALiveServerAndAnEditedOneDiffersWhereItWasEdited() throws Exception {
        // The SDK may list the tools twice (once more after server-everything's list_changed): count them.
        long requests = dev.mcpchaos.server.record.Cassette.read(cassette).entries().stream()
                .filter(e -> e.direction() == dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER && e.message() != null
                        && e.message().has("method") && e.message().has("id")).count();
        assertThat(requests).isGreaterThanOrEqualTo(4);
        Run same = verify(cassette, everything.endpoint().toString());
        assertThat(same.exit).as(same.stdout + same.stderr).isEqualTo(0);
        assertThat(same.stdout).contains(requests + "/" + requests + " requests answered as recorded");
        assertThat(same.stdout.lines().filter(l -> l.startsWith("same")).toList()).hasSize((int) requests)
                .anyMatch(l -> l.contains("initialize")).anyMatch(l -> l.contains("tools/call echo"))
                .anyMatch(l -> l.contains("tools/call get-sum"));

        String text = Files.readString(cassette, StandardCharsets.UTF_8);
        String edited = text.replace("Echo: verify me", "Echo: edited by hand");
        assertThat(edited).isNotEqualTo(text);
        Path editedFile = tempDir.resolve("edited.ndjson");
        Files.writeString(editedFile, edited, StandardCharsets.UTF_8);
        Run differs = verify(editedFile, everything.endpoint().toString());
        assertThat(differs.exit).as(differs.stdout).isEqualTo(1);
        assertThat(differs.stdout.lines().filter(l -> l.startsWith("differs")).toList()).singleElement()
                .satisfies(l -> assertThat(l).contains("tools/call echo").contains("~/result/content/0/text"));
        assertThat(differs.stdout.lines().filter(l -> l.startsWith("same")).count()).isEqualTo(requests - 1);

        // --update re-records the differing answer from the live server; then the cassette verifies.
        Run updated = verify(editedFile, everything.endpoint().toString(), "--update");
        assertThat(updated.exit).as(updated.stderr).isEqualTo(0);
        assertThat(updated.stderr).contains("--update: 1 answer(s) re-recorded into " + editedFile);
        String rewritten = Files.readString(editedFile, StandardCharsets.UTF_8);
        assertThat(rewritten).contains("Echo: verify me").doesNotContain("edited by hand");
        assertThat(rewritten.lines().count()).as("no line added or lost").isEqualTo(text.lines().count());
        Run again = verify(editedFile, everything.endpoint().toString());
        assertThat(again.exit).as(again.stdout).isEqualTo(0);
    }

    @Test
    void anUnreachableOrMalformedUrlIsExit2WithWhatWasExpected() throws Exception {
        int closed = HttpPeers.freePort();
        Run unreachable = verify(cassette, "http://127.0.0.1:" + closed + "/mcp");
        assertThat(unreachable.exit).isEqualTo(2);
        assertThat(unreachable.stderr).contains("--verify-url: http://127.0.0.1:" + closed + "/mcp cannot be reached")
                .contains("expected: a running Streamable HTTP MCP server's endpoint");
        Run malformed = verify(cassette, "ftp://127.0.0.1/mcp");
        assertThat(malformed.exit).isEqualTo(2);
        assertThat(malformed.stderr).contains("--verify-url: 'ftp://127.0.0.1/mcp' (expected: an http:// or https:// URL");
    }
}
