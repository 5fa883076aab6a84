package dev.mcpchaos.server.it;

import static dev.mcpchaos.server.it.HttpPeers.TIMEOUT;
import static dev.mcpchaos.server.it.HttpPeers.text;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mcp-chaos http} as a user runs it: the packaged jar as a child process
 * ({@code java -Dio.netty.leakDetection.level=paranoid -jar mcp-chaos.jar http --listen
 * 127.0.0.1:0 --upstream http://127.0.0.1:PORT/mcp --log-traffic}) in front of server-everything
 * in {@code streamableHttp} mode, with the MCP Java SDK's Streamable HTTP client: a whole session
 * through it, the traffic log on stderr, a clean stop on SIGTERM, and no leak reported.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HttpCliIT {

    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

    @TempDir
    Path tempDir;

    private final List<Process> processes = new ArrayList<>();
    private HttpPeers.ServerEverything everything;

    @AfterEach
    void stop() throws InterruptedException {
        for (Process process : processes) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (everything != null) {
            everything.close();
        }
    }

    @Test
    void theJarProxiesAWholeSdkSessionToServerEverythingAndStopsOnSigterm() throws Exception {
        everything = HttpPeers.ServerEverything.start(tempDir);
        Path stdout = tempDir.resolve("proxy.stdout");
        Path stderr = tempDir.resolve("proxy.stderr");
        ProcessBuilder builder = new ProcessBuilder(TestPeers.java().toString(),
                "-Dio.netty.leakDetection.level=paranoid", "-jar", TestPeers.mcpChaosJar().toString(),
                "http", "--listen", "127.0.0.1:0", "--upstream", everything.endpoint().toString(), "--log-traffic",
                "--control", "127.0.0.1:0")
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        builder.environment().remove("_JAVA_OPTIONS");
        builder.environment().remove("MCP_CHAOS_LOG_LEVEL");
        Process proxy = builder.start();
        processes.add(proxy);

        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> !proxy.isAlive() || LISTENING.matcher(read(stderr)).find());
        assertThat(proxy.isAlive()).as("the proxy is running; stderr:%n%s", read(stderr)).isTrue();
        Matcher listening = LISTENING.matcher(read(stderr));
        assertThat(listening.find()).isTrue();
        URI endpoint = URI.create("http://127.0.0.1:" + listening.group(1) + "/mcp");
        // The URL for clients: the proxy's address with the path of --upstream, which is not prepended.
        String clients = "clients: " + endpoint + " -> " + everything.endpoint() + " (paths pass unchanged)";
        await().atMost(TIMEOUT).until(() -> read(stderr).contains(clients));

        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        McpSyncClient client = HttpPeers.sdkClient(endpoint).progressConsumer(progress::add).build();
        try {
            McpSchema.InitializeResult init = client.initialize();
            assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
                    .contains("echo", "trigger-long-running-operation");
            assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                    .arguments(Map.of("a", 40, "b", 2)).build()))).isEqualTo("The sum of 40 and 2 is 42.");
            McpSchema.CallToolResult longRun = client.callTool(
                    McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                            .arguments(Map.of("duration", 0.3, "steps", 3))
                            .progressToken("cli-progress")
                            .build());
            assertThat(text(longRun)).isEqualTo("Long running operation completed. Duration: 0.3 seconds, Steps: 3.");
            await().atMost(TIMEOUT).until(() -> progress.size() >= 3);
            assertThat(progress).extracting(McpSchema.ProgressNotification::progress).containsExactly(1.0, 2.0, 3.0);
            assertThat(client.ping()).isNotNull();
        } finally {
            assertThat(client.closeGracefully()).isTrue();
        }
        await().atMost(TIMEOUT).until(() -> everything.log().contains("Received session termination request"));

        // --log-traffic: one line per message on stderr, both ways.
        await().atMost(TIMEOUT).until(() -> read(stderr).contains("trigger-long-running-operation"));
        String log = read(stderr);
        assertThat(log).containsPattern("c->s #\\d+ request id=\\S+ initialize")
                .containsPattern("s->c #\\d+ response id=\\S+")
                .containsPattern("s->c #\\d+ notification notifications/progress")
                .containsPattern("c->s #\\d+ request id=\\S+ tools/call get-sum");

        proxy.destroy(); // SIGTERM
        assertThat(proxy.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("the proxy stops on SIGTERM").isTrue();
        assertThat(proxy.exitValue()).isZero();
        assertThat(read(stdout)).as("nothing on stdout").isEmpty();
        assertThat(read(stderr)).as("Netty's paranoid leak detector").doesNotContain("LEAK:");
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
