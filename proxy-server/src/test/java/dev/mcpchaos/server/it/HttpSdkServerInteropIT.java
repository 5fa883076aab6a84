package dev.mcpchaos.server.it;

import static dev.mcpchaos.server.it.HttpPeers.TIMEOUT;
import static dev.mcpchaos.server.it.HttpPeers.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MCP Java SDK on both ends of the HTTP proxy: its Streamable HTTP client
 * ({@code HttpClientStreamableHttpTransport}) through {@code McpChaosProxy.http(...)} to its
 * servlet server ({@code HttpServletStreamableServerTransportProvider}) in an embedded Tomcat.
 *
 * <p>Covers initialize (the session learned from {@code Mcp-Session-Id}), tools/list, tool calls
 * answered over SSE with progress and log notifications on the request's stream, a
 * server-to-client request (roots/list) on that stream answered by the client's POST, a
 * notification on the standalone GET stream, ping, and the session's end by DELETE; and two
 * sessions at once through one proxy, each with its own notifications.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpSdkServerInteropIT {

    @TempDir
    Path tempDir;

    private HttpPeers.SdkServer upstream;
    private RunningHttp proxy;
    private final List<McpSyncClient> clients = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        upstream = HttpPeers.SdkServer.start(tempDir);
        proxy = McpChaosProxy.http(upstream.endpoint()).start();
    }

    @AfterEach
    void stop() {
        try {
            for (McpSyncClient client : clients) {
                client.close();
            }
        } finally {
            try {
                proxy.close();
            } finally {
                upstream.close();
            }
        }
    }

    @Test
    void sdkClientAndSdkServerSpeakEveryShapeThroughTheProxy() {
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        List<McpSchema.LoggingMessageNotification> logs = new CopyOnWriteArrayList<>();
        List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();
        McpSyncClient client = track(HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .progressConsumer(progress::add)
                .loggingConsumer(logs::add)
                .toolsChangeConsumer(toolsChanged::add)
                .roots(new McpSchema.Root("file:///it/root-a", "a"), new McpSchema.Root("file:///it/root-b", "b"))
                .build());

        McpSchema.InitializeResult init = client.initialize();

        assertThat(init.serverInfo().name()).isEqualTo("sdk-it-server");
        assertThat(init.serverInfo().version()).isEqualTo("1.2.3");
        assertThat(init.protocolVersion()).isEqualTo("2025-11-25");
        assertThat(init.capabilities().tools()).isNotNull();
        assertThat(init.capabilities().logging()).isNotNull();
        assertThat(proxy.sessionCount()).as("the session learned from the initialize answer").isEqualTo(1);

        assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
                .containsExactlyInAnyOrder("echo", "progress", "log", "roots");

        assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("text", "through the proxy \u00e9\u4e2d\ud83d\ude00")).build())))
                .isEqualTo("through the proxy \u00e9\u4e2d\ud83d\ude00");

        // Progress notifications on the POST's SSE stream, before the result.
        McpSchema.CallToolResult done = client.callTool(McpSchema.CallToolRequest.builder("progress")
                .arguments(Map.of("steps", 4))
                .progressToken("sdk-progress-1")
                .build());
        assertThat(text(done)).isEqualTo("completed 4 steps");
        await().atMost(TIMEOUT).until(() -> progress.size() >= 4);
        // The server sends the four back to back and the SDK client hands notifications to the
        // consumer on worker threads, so their order here is not the wire's (HttpByteExactIT
        // checks the wire order).
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).containsOnly("sdk-progress-1");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactlyInAnyOrder(1.0, 2.0, 3.0, 4.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::total).containsOnly(4.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::message)
                .containsExactlyInAnyOrder("step 1", "step 2", "step 3", "step 4");

        // A log notification on the request's stream.
        assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("log")
                .arguments(Map.of("message", "logged through the proxy")).build()))).isEqualTo("logged");
        await().atMost(TIMEOUT).until(() -> !logs.isEmpty());
        assertThat(logs).singleElement().satisfies(log -> {
            assertThat(log.level()).isEqualTo(McpSchema.LoggingLevel.INFO);
            assertThat(log.logger()).isEqualTo("sdk-it");
            assertThat(log.data()).isEqualTo("logged through the proxy");
        });

        // A server-to-client request on the SSE stream; the client answers with a POST.
        assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("roots").arguments(Map.of()).build())))
                .isEqualTo("file:///it/root-a\nfile:///it/root-b");

        assertThat(client.ping()).isInstanceOf(Map.class).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.MAP).isEmpty();

        // The standalone GET stream: the SDK client opens it after initialize; once the server
        // has registered it, a tools/list_changed notification travels on it.
        await().atMost(TIMEOUT).until(() -> upstream.handled.stream()
                .anyMatch(r -> r.startsWith("GET ") && !r.equals("GET null")));
        String sessionId = upstream.handled.stream().filter(r -> r.startsWith("GET ")).findFirst().orElseThrow()
                .substring(4);
        upstream.server().addTool(McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder("late", Map.of("type", "object")).description("added later").build())
                .callHandler((exchange, request) -> McpSchema.CallToolResult.builder().addTextContent("late").build())
                .build());
        await().atMost(TIMEOUT).until(() -> !toolsChanged.isEmpty());
        assertThat(toolsChanged.get(toolsChanged.size() - 1)).extracting(McpSchema.Tool::name).contains("late");

        // DELETE ends the session upstream and in the proxy.
        assertThat(client.closeGracefully()).isTrue();
        await().atMost(TIMEOUT).until(() -> upstream.handled.contains("DELETE " + sessionId));
        await().atMost(TIMEOUT).until(() -> proxy.sessionCount() == 0);
    }

    @Test
    void twoSessionsAtOnceEachGetTheirOwnProgress() throws Exception {
        List<McpSchema.ProgressNotification> first = new CopyOnWriteArrayList<>();
        List<McpSchema.ProgressNotification> second = new CopyOnWriteArrayList<>();
        McpSyncClient a = track(HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .progressConsumer(first::add).build());
        McpSyncClient b = track(HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .progressConsumer(second::add).build());
        a.initialize();
        b.initialize();
        assertThat(proxy.sessionCount()).isEqualTo(2);

        CompletableFuture<McpSchema.CallToolResult> callA = CompletableFuture.supplyAsync(() -> a.callTool(
                McpSchema.CallToolRequest.builder("progress").arguments(Map.of("steps", 20)).progressToken("a")
                        .build()));
        CompletableFuture<McpSchema.CallToolResult> callB = CompletableFuture.supplyAsync(() -> b.callTool(
                McpSchema.CallToolRequest.builder("progress").arguments(Map.of("steps", 30)).progressToken(7)
                        .build()));

        assertThat(text(callA.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))).isEqualTo("completed 20 steps");
        assertThat(text(callB.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))).isEqualTo("completed 30 steps");
        await().atMost(TIMEOUT).until(() -> first.size() >= 20 && second.size() >= 30);
        assertThat(first).hasSize(20).extracting(McpSchema.ProgressNotification::progressToken).containsOnly("a");
        assertThat(second).hasSize(30).extracting(McpSchema.ProgressNotification::progressToken).containsOnly(7);

        assertThat(a.closeGracefully()).isTrue();
        assertThat(b.closeGracefully()).isTrue();
        await().atMost(TIMEOUT).until(() -> proxy.sessionCount() == 0);
    }

    private McpSyncClient track(McpSyncClient client) {
        clients.add(client);
        return client;
    }
}
