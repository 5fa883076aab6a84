package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the {@link Tee} capture shape without the proxy: the SDK client launches
 * {@code sh -c 'tee client-sent.bin | node .../index.js stdio | tee client-got.bin'} and the
 * files hold exactly the newline-delimited JSON-RPC that crossed the pipes.
 *
 * <p>The capture directory has a space, a single quote and a {@code $} in its name, so a
 * quoting mistake in {@link Tee} breaks this test rather than the lead's byte-exactness test.
 */
class ByteCaptureDirectIT {

    private static final Duration TIMEOUT = TestPeers.REQUEST_TIMEOUT;

    @TempDir
    Path tempDir;

    @Test
    void teeAroundServerEverythingCapturesBothDirections() throws IOException {
        Tee tee = Tee.in(tempDir.resolve("it's a $HOME dir"));
        List<String> stderr = new CopyOnWriteArrayList<>();
        List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();

        McpSyncClient client = TestPeers.stdioClient(tee.direct(TestPeers.serverEverythingStdioCommand()), stderr::add)
                .toolsChangeConsumer(toolsChanged::add)
                .build();
        try {
            McpSchema.InitializeResult init = client.initialize();
            assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
            McpSchema.CallToolResult echo = client.callTool(McpSchema.CallToolRequest.builder("echo")
                    .arguments(Map.of("message", "captured"))
                    .build());
            assertThat(echo.content()).singleElement()
                    .isInstanceOfSatisfying(McpSchema.TextContent.class,
                            text -> assertThat(text.text()).isEqualTo("Echo: captured"));
            // Quiesce before closing: the SDK's own tools/list (its answer to the server's
            // tools/list_changed) must not be in flight when the pipes are torn down, or the
            // captures end mid-exchange. A byte-exactness check needs the same wait.
            await().atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty());
        } finally {
            client.closeGracefully();
        }
        tee.awaitWritersExited(TIMEOUT);

        String sent = Files.readString(tee.clientSent(), UTF_8);
        String got = Files.readString(tee.clientGot(), UTF_8);
        // stdio framing: every message is one line, and the last one is terminated too.
        assertThat(sent).endsWith("\n");
        assertThat(got).endsWith("\n");
        List<String> sentLines = sent.lines().toList();
        List<String> gotLines = got.lines().toList();

        assertThat(sentLines.get(0))
                .startsWith("{")
                .contains("\"method\":\"initialize\"")
                .contains("\"protocolVersion\":\"2025-11-25\"")
                .contains("\"name\":\"mcp-chaos-it\"");
        assertThat(sentLines).anySatisfy(line -> assertThat(line)
                .contains("\"method\":\"notifications/initialized\""));
        assertThat(sentLines).anySatisfy(line -> assertThat(line)
                .contains("\"method\":\"tools/call\"").contains("\"message\":\"captured\""));

        assertThat(gotLines).anySatisfy(line -> assertThat(line)
                .contains("\"serverInfo\":{\"name\":\"mcp-servers/everything\"")
                .contains("\"protocolVersion\":\"2025-11-25\""));
        assertThat(gotLines).anySatisfy(line -> assertThat(line)
                .contains("\"text\":\"Echo: captured\""));
        // The exchange the SDK started on its own was captured whole, both ways.
        assertThat(sentLines).anySatisfy(line -> assertThat(line).contains("\"method\":\"tools/list\""));
        assertThat(gotLines).anySatisfy(line -> assertThat(line)
                .contains("\"method\":\"notifications/tools/list_changed\""));
        assertThat(gotLines).anySatisfy(line -> assertThat(line)
                .contains("\"name\":\"simulate-research-query\""));
        // The server's stderr is not captured: it reaches the client's stderr handler.
        assertThat(gotLines).noneMatch(line -> line.contains("Starting default (STDIO) server"));
        assertThat(stderr).contains("Starting default (STDIO) server...");
    }

    @Test
    void nestedCapturesAgreeByteForByteAroundATransparentStandIn() throws IOException {
        Tee tee = Tee.in(tempDir.resolve("nested 'proxy' $dir"));
        // A transparent stand-in for the proxy (`sh -c 'exec "$@"'` runs its arguments as is),
        // so the four-file shape the lead's byte-exactness test uses is proven without the jar.
        UnaryOperator<List<String>> transparent = server -> {
            List<String> argv = new java.util.ArrayList<>(List.of("/bin/sh", "-c", "exec \"$@\"", "stand-in"));
            argv.addAll(server);
            return argv;
        };
        List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();

        McpSyncClient client = TestPeers.stdioClient(
                        tee.throughProxy(TestPeers.serverEverythingStdioCommand(), transparent), line -> { })
                .toolsChangeConsumer(toolsChanged::add)
                .progressConsumer(progress::add)
                .build();
        try {
            client.initialize();
            client.callTool(McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                    .arguments(Map.of("duration", 0.2, "steps", 2))
                    .progressToken("nested-1")
                    .build());
            client.ping();
            await().atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty() && progress.size() == 2);
        } finally {
            client.closeGracefully();
        }
        tee.awaitWritersExited(TIMEOUT);

        assertThat(tee.clientSent()).isNotEmptyFile();
        assertThat(tee.serverSent()).isNotEmptyFile();
        assertThat(tee.serverGot()).hasSameBinaryContentAs(tee.clientSent());
        assertThat(tee.clientGot()).hasSameBinaryContentAs(tee.serverSent());
        assertThat(Files.readString(tee.serverSent(), UTF_8))
                .contains("\"method\":\"notifications/progress\"")
                .contains("\"progressToken\":\"nested-1\"");
    }

    @Test
    void throughProxyNestsTheCapturesAndQuotesEveryLevel() {
        Tee tee = Tee.in(tempDir.resolve("a b'c"));
        // A stand-in for the proxy: the real jar may not be built yet, and this test is about
        // the command's shape, not about the proxy.
        UnaryOperator<List<String>> fakeProxy = server -> {
            List<String> argv = new java.util.ArrayList<>(List.of("proxy", "stdio", "--"));
            argv.addAll(server);
            return argv;
        };

        List<String> command = tee.throughProxy(List.of("node", "/x y/index.js", "stdio"), fakeProxy);

        String d = tee.dir().toString().replace("'", "'\\''");
        String inner = "tee '" + d + "/server-got.bin' | 'node' '/x y/index.js' 'stdio' | tee '"
                + d + "/server-sent.bin'";
        String innerQuoted = "'" + inner.replace("'", "'\\''") + "'";
        assertThat(command).containsExactly("/bin/sh", "-c",
                "tee '" + d + "/client-sent.bin' | 'proxy' 'stdio' '--' '/bin/sh' '-c' " + innerQuoted
                        + " | tee '" + d + "/client-got.bin'");
    }

    @Test
    void quoteSurvivesARealShell() throws Exception {
        String nasty = "it's \"$HOME\" `id` \\ ; | & \n end";

        Process p = new ProcessBuilder("/bin/sh", "-c", "printf %s " + Tee.quote(nasty))
                .redirectErrorStream(true)
                .start();
        // The output is far below a pipe buffer, so waiting before reading cannot deadlock.
        assertThat(p.waitFor(TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), UTF_8);

        assertThat(p.exitValue()).isZero();
        assertThat(out).isEqualTo(nasty);
    }
}
