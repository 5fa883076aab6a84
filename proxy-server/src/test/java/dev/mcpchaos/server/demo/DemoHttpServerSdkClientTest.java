package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.mcpchaos.server.host.McpHttpHost;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link DemoHttpServer} talked to by the official MCP Java SDK's Streamable HTTP client: proof
 * that a third-party implementation accepts its sessions, JSON and SSE responses, the standalone
 * GET stream and the session's end.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DemoHttpServerSdkClientTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);

    private McpHttpHost server;

    @BeforeEach
    void startServer() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    @Test
    void officialSdkClientInitializesListsCallsLogsPingsAndCloses() throws Exception {
        BlockingQueue<McpSchema.ProgressNotification> progress = new LinkedBlockingQueue<>();
        BlockingQueue<McpSchema.LoggingMessageNotification> logs = new LinkedBlockingQueue<>();
        URI endpoint = server.endpoint();
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + endpoint.getHost() + ":" + endpoint.getPort())
                .endpoint(endpoint.getPath())
                .build();
        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT)
                .clientInfo(McpSchema.Implementation.builder("demo-http-server-test", "1.0").build())
                .progressConsumer(progress::add)
                .loggingConsumer(logs::add)
                .build();
        boolean closed = false;
        try {
            McpSchema.InitializeResult init = client.initialize();
            assertThat(DemoHandler.SUPPORTED_PROTOCOL_VERSIONS).contains(init.protocolVersion());
            assertThat(init.serverInfo().name()).isEqualTo("mcp-chaos-demo");
            assertThat(init.serverInfo().version()).isEqualTo(DemoServer.version());
            assertThat(init.capabilities().tools()).isNotNull();
            assertThat(init.capabilities().logging()).isNotNull();
            assertThat(server.sessionCount()).isEqualTo(1);

            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
                    .containsExactly("echo", "add", "slow", "large");
            assertThat(text(call(client, "echo", Map.of("text", "hello, chaos over http")))).isEqualTo("hello, chaos over http");
            assertThat(text(call(client, "add", Map.of("a", 40, "b", 2)))).isEqualTo("42");

            // Answered over SSE: five progress events on the POST's own stream, then the result.
            McpSchema.CallToolResult slow = client.callTool(McpSchema.CallToolRequest.builder("slow")
                    .arguments(Map.of("ms", 250))
                    .progressToken("sdk-http-progress")
                    .build());
            assertThat(text(slow)).isEqualTo("slept 250 ms");
            List<Double> steps = new ArrayList<>();
            for (int i = 0; i < DemoTools.SLOW_PROGRESS_STEPS; i++) {
                McpSchema.ProgressNotification step = progress.poll(10, TimeUnit.SECONDS);
                assertThat(step).as("progress notification %d", i + 1).isNotNull();
                assertThat(step.progressToken()).isEqualTo("sdk-http-progress");
                assertThat(step.total()).isEqualTo(5.0);
                steps.add(step.progress());
            }
            assertThat(steps).containsExactlyInAnyOrder(1.0, 2.0, 3.0, 4.0, 5.0);

            McpSchema.CallToolResult large = call(client, "large", Map.of("bytes", 200_000));
            assertThat(large.isError()).isFalse();
            assertThat(text(large)).hasSize(200_000);

            McpSchema.CallToolResult bad = call(client, "add", Map.of("a", 1));
            assertThat(bad.isError()).isTrue();
            assertThat(text(bad)).contains("'b' is required");

            // The log notification travels on the standalone GET stream the SDK opens by itself.
            client.setLoggingLevel(McpSchema.LoggingLevel.WARNING);
            McpSchema.LoggingMessageNotification log = logs.poll(10, TimeUnit.SECONDS);
            assertThat(log).as("log notification on the GET stream").isNotNull();
            assertThat(log.level()).isEqualTo(McpSchema.LoggingLevel.WARNING);
            assertThat(log.logger()).isEqualTo("mcp-chaos-demo");
            assertThat(log.data()).isEqualTo("log level set to warning");

            assertThat(client.ping()).isNotNull();

            closed = client.closeGracefully();
            assertThat(closed).as("graceful close").isTrue();
            // The SDK ends its session with DELETE.
            await().atMost(Duration.ofSeconds(10)).until(() -> server.sessionCount() == 0);
        } finally {
            if (!closed) {
                client.close();
            }
        }
    }

    private static McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        return client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build());
    }

    private static String text(McpSchema.CallToolResult result) {
        assertThat(result.content()).hasSize(1);
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }
}
