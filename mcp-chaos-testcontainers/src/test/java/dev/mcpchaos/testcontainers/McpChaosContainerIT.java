package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The MCP Java SDK client through {@link McpChaosContainer} (the image of deploy/docker, host
 * networking) to server-everything on this machine: every packet stays on 127.0.0.1.
 */
@ExtendWith(DockerEngine.class)
class McpChaosContainerIT {

    /** The rule of rules/slow-echo.yaml. */
    private static final Duration DELAY = Duration.ofMillis(1500);

    @RegisterExtension
    static final EverythingOnHost upstream = new EverythingOnHost();

    private static McpSchema.CallToolResult echo(McpSyncClient client, String text) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", text)).build());
    }

    @Test
    void aWholeSessionPassesThroughTheContainer() throws Exception {
        try (McpChaosContainer chaos = upstream.container().withSeed(7)) {
            chaos.start();
            assertThat(chaos.getMcpUrl().toString()).startsWith("http://127.0.0.1:").endsWith("/mcp");

            McpSyncClient client = HostPeers.sdkClient(chaos.getMcpUrl()).build();
            try {
                McpSchema.InitializeResult init = client.initialize();
                assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
                assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("echo", "get-sum");
                long start = System.nanoTime();
                assertThat(HostPeers.text(echo(client, "through a container"))).isEqualTo("Echo: through a container");
                // The twin of the latency test: the same call without the rule is not held back.
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(DELAY);
                McpSchema.CallToolResult sum = client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                        .arguments(Map.of("a", 2, "b", 3)).build());
                assertThat(HostPeers.text(sum)).contains("5");
                client.ping();
            } finally {
                client.closeGracefully();
            }

            String status = get(chaos.getControlUrl().resolve("/status"));
            assertThat(number(status, "seed")).isEqualTo(7);
            // initialize, initialized, tools/list, two tools/call, ping (and the client's DELETE does not count).
            assertThat(number(status, "client_to_server")).isGreaterThanOrEqualTo(6);
            assertThat(number(status, "faults_injected")).isZero();
            assertThat(upstream.server().log()).doesNotContain("Error");
        }
    }

    @Test
    void aLatencyRuleHoldsTheAnswerTheClientWaitsFor() {
        try (McpChaosContainer chaos = upstream.container().withRulesFromClasspath("rules/slow-echo.yaml")) {
            chaos.start();
            McpSyncClient client = HostPeers.sdkClient(chaos.getMcpUrl()).build();
            try {
                client.initialize();
                long start = System.nanoTime();
                McpSchema.CallToolResult delayed = echo(client, "late");
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(HostPeers.text(delayed)).isEqualTo("Echo: late");
                assertThat(took).isGreaterThanOrEqualTo(DELAY);

                // The rule names echo only: another tool's answer in the same session is not held.
                start = System.nanoTime();
                McpSchema.CallToolResult sum = client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                        .arguments(Map.of("a", 1, "b", 1)).build());
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(DELAY);
                assertThat(HostPeers.text(sum)).contains("2");
            } finally {
                client.closeGracefully();
            }
            String status = get(chaos.getControlUrl().resolve("/status"));
            assertThat(number(status, "faults_injected")).isEqualTo(1);
        }
    }

    @Test
    void rulesFromAStringAndFromAFileReachTheProxy() throws IOException {
        String rule = "rules:\n  - name: %s\n    match: {tool: nothing-calls-this}\n    fault: {type: drop}\n";
        try (McpChaosContainer chaos = upstream.container().withRules(rule.formatted("from-a-string"))) {
            chaos.start();
            assertThat(get(chaos.getControlUrl().resolve("/rules"))).contains("from-a-string");
        }
        Path file = Files.writeString(upstream.dir().resolve("from-a-file.yaml"), rule.formatted("from-a-file"));
        try (McpChaosContainer chaos = upstream.container().withRulesFromFile(file)) {
            chaos.start();
            assertThat(get(chaos.getControlUrl().resolve("/rules"))).contains("from-a-file").doesNotContain("from-a-string");
        }
    }

    private static String get(URI uri) {
        try {
            HttpResponse<String> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(uri).timeout(HostPeers.TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as("GET %s: %s", uri, response.body()).isEqualTo(200);
            return response.body();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The number of the first {@code "key": N} in {@code json}. */
    private static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertThat(m.find()).as("%s in %s", key, json).isTrue();
        return Long.parseLong(m.group(1));
    }
}
