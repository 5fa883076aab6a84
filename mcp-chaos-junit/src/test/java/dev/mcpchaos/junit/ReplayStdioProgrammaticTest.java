package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** {@link McpChaosExtension#replayStdio(String...)}: a cassette as the stdio server, a fault on top, and bad cassettes refused. */
class ReplayStdioProgrammaticTest {

    @RegisterExtension
    McpChaosExtension proxy = McpChaosExtension.replayStdio("/cassettes/demo.ndjson");

    @Test
    void aToolErrorRuleActsOnTheReplayedAnswerAndTheOtherToolIsServedAsRecorded() {
        proxy.chaos().add(Rules.toolError("broken", "echo broke").onTool("echo").onResponses());
        try (McpSyncClient client = Clients.stdio(proxy.proxy().stdioClientCommand())) {
            McpSchema.CallToolResult broken = Clients.echo(client, "hi");
            assertThat(broken.isError()).isTrue();
            assertThat(Clients.text(broken)).isEqualTo("echo broke");
            assertThat(Clients.text(client.callTool(McpSchema.CallToolRequest.builder("add")
                    .arguments(java.util.Map.of("a", 40, "b", 2)).build()))).isEqualTo("42");
        }
        assertThat(proxy.proxy().unmatchedRequests()).isZero();
    }

    @Test
    void aMissingOrBrokenCassetteIsAClearError() {
        assertThatThrownBy(() -> McpChaosExtension.replayHttp("/cassettes/no-such.ndjson"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cassette /cassettes/no-such.ndjson: no such resource on the class path (expected: a "
                        + "cassette recorded with mcp-chaos --record, such as src/test/resources/cassettes/no-such.ndjson)");
        assertThatThrownBy(() -> McpChaosExtension.replayHttp("/chaos/echo-fails.yaml"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("/chaos/echo-fails.yaml");

        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(MissingCassette.class)).execute();
        assertThat(results.containerEvents().failed().list()).singleElement().satisfies(event ->
                assertThat(event.getPayload(org.junit.platform.engine.TestExecutionResult.class).orElseThrow()
                        .getThrowable().orElseThrow())
                        .hasMessageContaining("@McpChaosTest(replay = ...) on " + MissingCassette.class.getName())
                        .hasMessageContaining("no such resource on the class path"));
    }

    /** Only run by the test above (a nested class without @Nested is not discovered). */
    @McpChaosTest(replay = "/cassettes/missing.ndjson")
    static class MissingCassette {
        @Test
        void neverRuns() {
            throw new AssertionError("the class should not have started");
        }
    }
}
