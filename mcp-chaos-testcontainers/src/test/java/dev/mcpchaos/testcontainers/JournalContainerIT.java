package dev.mcpchaos.testcontainers;

import dev.mcpchaos.rules.journal.Journal;
import dev.mcpchaos.rules.journal.JournalEntry;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

import static dev.mcpchaos.rules.journal.Messages.dropped;
import static dev.mcpchaos.rules.journal.Messages.request;
import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link McpChaosContainer#journal()}: the journal of the proxy in the image, read over its
 * control API (with a token), with the same {@code verify} as the embedded proxy's. The MCP Java
 * SDK client goes through the container (host networking) to server-everything on this machine.
 */
@ExtendWith(DockerEngine.class)
class JournalContainerIT {

    private static final String RULES = """
            rules:
              - name: lose-first-echo-answer
                match: {kind: response, method: tools/call, tool: echo}
                times: 1
                fault: {type: drop}
              - name: busy
                match: {kind: request, method: tools/call, tool: get-sum}
                times: 1
                fault: {type: http_status, status: 503, headers: {Retry-After: "30"}}
            """;

    @RegisterExtension
    static final EverythingOnHost upstream = new EverythingOnHost();

    private static McpSchema.CallToolResult echo(McpSyncClient client, String text) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", text)).build());
    }

    private static McpSchema.CallToolResult sum(McpSyncClient client) {
        return client.callTool(McpSchema.CallToolRequest.builder("get-sum").arguments(Map.of("a", 2, "b", 3)).build());
    }

    @Test
    void theJournalOfTheContainerCountsWhatTheClientSentAndVerifiesItsBehaviour() {
        try (McpChaosContainer chaos = upstream.container()
                .withControlToken("journal-t0ken")
                .withSeed(15)
                .withRules(RULES)) {
            chaos.start();
            Journal journal = chaos.journal();
            McpSyncClient client = HostPeers.sdkClient(chaos.getMcpUrl()).requestTimeout(Duration.ofSeconds(4)).build();
            try {
                client.initialize();
                assertThat(catchThrowable(() -> echo(client, "write row 7"))).as("its answer is dropped").isNotNull();
                assertThat(HostPeers.text(echo(client, "write row 7"))).isEqualTo("Echo: write row 7");
                assertThat(catchThrowable(() -> sum(client))).as("answered 503").isNotNull();
                assertThat(HostPeers.text(sum(client))).contains("5"); // at once: Retry-After not honored
            } finally {
                client.closeGracefully();
            }

            journal.verify().client().sent(toolCall("echo")).times(2);
            journal.verify().client().sent(toolCall("get-sum")).times(2);
            journal.verify().client().sent(request("initialize")).once();
            journal.verify().client().retriedAfter(dropped(toolCall("echo"))).withSameArguments();
            JournalEntry refused = journal.filter(toolCall("get-sum")).get(0);
            assertThat(refused.httpStatus()).isEqualTo(503);
            assertThat(refused.httpHeader("Retry-After")).isEqualTo("30");
            assertThat(refused.delivered()).isFalse();
            assertThatThrownBy(() -> journal.verify().client().honoredRetryAfter())
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("(HTTP 503, Retry-After: 30; expected: >= 30.000s)")
                    .hasMessageContaining("http_status(rule 'busy'): answered HTTP 503; not delivered");
            assertThatThrownBy(() -> journal.verify().client().sent(toolCall("echo")).once())
                    .hasMessageContaining("but the client sent it 2 times.")
                    .hasMessageContaining("c->s request id=").hasMessageContaining(" tools/call echo params=");

            journal.clear();
            assertThat(journal.entries()).isEmpty();
            assertThat(new ControlApiJournal(chaos.getControlUrl(), "wrong").toString()).endsWith("/journal");
            assertThatThrownBy(() -> new ControlApiJournal(chaos.getControlUrl(), "wrong").entries())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("HTTP 401");
        }
    }
}
