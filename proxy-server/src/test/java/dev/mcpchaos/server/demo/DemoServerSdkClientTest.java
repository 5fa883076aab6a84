package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The demo server as a real child process, talked to by the official MCP Java SDK client: proof
 * that a third-party implementation accepts its handshake, schemas, results and progress.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DemoServerSdkClientTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);

    @Test
    void officialSdkClientInitializesListsCallsAndPings() throws Exception {
        BlockingQueue<McpSchema.ProgressNotification> progress = new LinkedBlockingQueue<>();
        StringBuffer serverStderr = new StringBuffer();
        StdioClientTransport transport = new StdioClientTransport(ServerParameters.builder(javaBinary())
                .args("-cp", testClassPath(), DemoServer.class.getName())
                .build(), McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(line -> serverStderr.append(line).append('\n'));

        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT)
                .clientInfo(McpSchema.Implementation.builder("demo-server-test", "1.0").build())
                .progressConsumer(progress::add)
                .build();
        try {
            McpSchema.InitializeResult init = client.initialize();
            assertThat(DemoHandler.SUPPORTED_PROTOCOL_VERSIONS).contains(init.protocolVersion());
            assertThat(init.serverInfo().name()).isEqualTo("mcp-chaos-demo");
            assertThat(init.serverInfo().version()).isEqualTo(DemoServer.version());
            assertThat(init.instructions()).contains("mcp-chaos built-in demo server");
            assertThat(init.capabilities().tools()).isNotNull();
            assertThat(init.capabilities().tools().listChanged()).isFalse();
            assertThat(init.capabilities().logging()).isNotNull();

            List<McpSchema.Tool> tools = client.listTools().tools();
            assertThat(tools).extracting(McpSchema.Tool::name).containsExactly("echo", "add", "slow", "large");
            Map<String, McpSchema.Tool> byName = tools.stream()
                    .collect(Collectors.toMap(McpSchema.Tool::name, tool -> tool));
            assertThat(byName.get("add").inputSchema().get("type")).isEqualTo("object");
            assertThat(byName.get("add").inputSchema().get("required")).isEqualTo(List.of("a", "b"));

            assertThat(text(call(client, "echo", Map.of("text", "hello, chaos"))))
                    .isEqualTo("hello, chaos");
            assertThat(text(call(client, "add", Map.of("a", 40, "b", 2))))
                    .isEqualTo("42");

            McpSchema.CallToolResult slow = client.callTool(McpSchema.CallToolRequest.builder("slow")
                    .arguments(Map.of("ms", 250))
                    .progressToken("sdk-progress")
                    .build());
            assertThat(text(slow)).isEqualTo("slept 250 ms");
            // The SDK may hand notifications to the consumer on another thread, so collect with a timeout.
            List<Double> steps = new ArrayList<>();
            for (int i = 0; i < DemoTools.SLOW_PROGRESS_STEPS; i++) {
                McpSchema.ProgressNotification step = progress.poll(10, TimeUnit.SECONDS);
                assertThat(step).as("progress notification %d; server stderr:%n%s", i + 1, serverStderr).isNotNull();
                assertThat(step.progressToken()).isEqualTo("sdk-progress");
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

            assertThat(client.ping()).isNotNull();
        } finally {
            assertThat(client.closeGracefully()).as("graceful close; server stderr:%n%s", serverStderr).isTrue();
        }
    }

    private static McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        return client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build());
    }

    private static String text(McpSchema.CallToolResult result) {
        assertThat(result.content()).hasSize(1);
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /**
     * The classpath for the child JVM. Under Surefire {@code java.class.path} may be only a
     * manifest-only booter jar, while {@code surefire.test.class.path} lists the real entries.
     */
    private static String testClassPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }
}
