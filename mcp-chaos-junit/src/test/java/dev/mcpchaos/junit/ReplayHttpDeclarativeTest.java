package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @McpChaosTest(replay = ...)}: the SDK client against a cassette of the demo server
 * (recorded with {@code mcp-chaos stdio --record}), replayed on HTTP with no real server, with a
 * fault on top in one test.
 */
@McpChaosTest(replay = "/cassettes/demo.ndjson")
class ReplayHttpDeclarativeTest {

    @Test
    void theRecordedAnswersArriveAndAnUnrecordedCallIsAnErrorAndCounted(ChaosProxy proxy) {
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("echo", "add");
            assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
            assertThat(Clients.text(client.callTool(McpSchema.CallToolRequest.builder("add")
                    .arguments(java.util.Map.of("a", 40, "b", 2)).build()))).isEqualTo("42");
            assertThat(proxy.unmatchedRequests()).isZero();

            assertThatThrownBy(() -> Clients.echo(client, "never recorded")).isInstanceOf(McpError.class)
                    .hasMessageContaining("tools/call");
            assertThat(proxy.unmatchedRequests()).isEqualTo(1);
        }
    }

    @Test
    void aLatencyRuleHoldsTheReplayedAnswerAndItStillArrives(ChaosProxy proxy) {
        proxy.chaos().add(Rules.latency("slow", Duration.ofMillis(400)).onTool("echo").onResponses());
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            long start = System.nanoTime();
            assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
        }
        assertThat(proxy.chaos().rule("slow").injected()).isEqualTo(1);
    }
}
