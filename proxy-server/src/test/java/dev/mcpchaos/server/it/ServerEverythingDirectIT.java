package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The official MCP Java SDK client talks over stdio directly to the real third-party
 * {@code @modelcontextprotocol/server-everything}, with no proxy in between.
 *
 * <p>This validates the harness ({@link TestPeers}, the npm install, the SDK wiring) on its
 * own, so that when a through-the-proxy variant fails, the proxy is the suspect and not the
 * peers. Each test starts a fresh server process.
 */
class ServerEverythingDirectIT {

    private static final Duration TIMEOUT = TestPeers.REQUEST_TIMEOUT;

    private final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
    private final List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private McpSyncClient client;

    @BeforeEach
    void startClient() {
        client = TestPeers.stdioClient(TestPeers.serverEverythingStdioCommand(), stderr::add)
                .progressConsumer(progress::add)
                .toolsChangeConsumer(toolsChanged::add)
                .build();
    }

    @AfterEach
    void closeClient() {
        if (client == null) {
            return;
        }
        try {
            if (client.isInitialized()) {
                // After notifications/initialized the server registers more tools and sends
                // tools/list_changed; the SDK answers with its own tools/list. Let that finish,
                // or closing cuts it off and the SDK logs an ERROR that hides real ones.
                await().atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty());
            }
        } finally {
            client.closeGracefully();
        }
    }

    @Test
    void initializeNegotiatesWithTheRealServer() {
        McpSchema.InitializeResult init = client.initialize();

        assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
        assertThat(init.serverInfo().version()).isEqualTo("2.0.0");
        // The SDK offers its newest version; the pinned server-everything accepts it.
        assertThat(init.protocolVersion()).isEqualTo("2025-11-25");
        assertThat(init.capabilities().tools()).isNotNull();
        assertThat(init.capabilities().tools().listChanged()).isTrue();
        assertThat(init.capabilities().logging()).isNotNull();
        assertThat(init.instructions()).contains("trigger-long-running-operation");
        assertThat(client.isInitialized()).isTrue();
        // The stdio launcher announces itself on stderr, which must not leak into stdout.
        await().atMost(TIMEOUT).until(() -> stderr.contains("Starting default (STDIO) server..."));
    }

    @Test
    void toolsListChangedAfterInitializedMakesTheSdkRefetchTools() {
        client.initialize();

        await().atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty());

        // simulate-research-query is registered only once the client's capabilities are known.
        assertThat(toolsChanged.get(0)).extracting(McpSchema.Tool::name)
                .contains("echo", "trigger-long-running-operation", "simulate-research-query");
    }

    @Test
    void listToolsReturnsTheDocumentedTools() {
        client.initialize();

        List<McpSchema.Tool> tools = client.listTools().tools();

        assertThat(tools).extracting(McpSchema.Tool::name)
                .contains("echo", "get-sum", "trigger-long-running-operation", "get-tiny-image");
        McpSchema.Tool echo = tools.stream().filter(t -> t.name().equals("echo")).findFirst().orElseThrow();
        assertThat(echo.description()).isEqualTo("Echoes back the input string");
        assertThat(echo.inputSchema()).containsEntry("type", "object");
        assertThat(echo.inputSchema().get("properties")).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.MAP).containsKey("message");
        assertThat(echo.inputSchema().get("required")).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.LIST).containsExactly("message");
    }

    @Test
    void echoReturnsTheMessage() {
        client.initialize();

        McpSchema.CallToolResult result = client.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("message", "hello through nothing \u00e9\u4e2d"))
                .build());

        assertThat(result.isError()).isNotEqualTo(Boolean.TRUE);
        assertThat(result.content()).singleElement()
                .isInstanceOfSatisfying(McpSchema.TextContent.class,
                        text -> assertThat(text.text()).isEqualTo("Echo: hello through nothing \u00e9\u4e2d"));
    }

    @Test
    void getSumAddsNumbers() {
        client.initialize();

        McpSchema.CallToolResult result = client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                .arguments(Map.of("a", 2, "b", 40))
                .build());

        assertThat(result.content()).singleElement()
                .isInstanceOfSatisfying(McpSchema.TextContent.class,
                        text -> assertThat(text.text()).isEqualTo("The sum of 2 and 40 is 42."));
    }

    @Test
    void longRunningOperationStreamsProgressBeforeTheResult() {
        client.initialize();

        // duration is in seconds and may be fractional: 5 steps of 100 ms keeps the test short.
        McpSchema.CallToolResult result = client.callTool(
                McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                        .arguments(Map.of("duration", 0.5, "steps", 5))
                        .progressToken("direct-progress-1")
                        .build());

        assertThat(result.content()).singleElement()
                .isInstanceOfSatisfying(McpSchema.TextContent.class, text -> assertThat(text.text())
                        .isEqualTo("Long running operation completed. Duration: 0.5 seconds, Steps: 5."));
        // The SDK may hand notifications to the consumer on another thread than the response.
        await().atMost(TIMEOUT).until(() -> progress.size() >= 5);
        assertThat(progress).hasSize(5);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken)
                .containsOnly("direct-progress-1");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::total)
                .containsOnly(5.0);
    }

    @Test
    void pingIsAnsweredWithAnEmptyResult() {
        client.initialize();

        Object pong = client.ping();

        assertThat(pong).isInstanceOf(Map.class);
        assertThat((Map<?, ?>) pong).isEmpty();
    }
}
