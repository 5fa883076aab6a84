package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleHandle;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link McpChaosContainer#chaos()} over the control API of the real image (host networking):
 * rules added in one line of Java that the MCP Java SDK client meets, removed, switched, the
 * panic switch and reset, as with the embedded proxy.
 */
@ExtendWith(DockerEngine.class)
class ContainerChaosIT {

    private static final String STARTING_RULES = "rules:\n  - name: never\n    match: {tool: nothing-calls-this}\n"
            + "    fault: {type: drop}\n";

    @RegisterExtension
    static final EverythingOnHost upstream = new EverythingOnHost();

    private static McpChaosContainer container() {
        return upstream.container()
                .withRules(STARTING_RULES)
                .withSeed(3);
    }

    private static McpSchema.CallToolResult echo(McpSyncClient client, String text) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", text)).build());
    }

    @Test
    void aRuleAddedFromJavaReachesTheClientAndAfterRemoveTheMessageArrives() throws Exception {
        try (McpChaosContainer chaos = container()) {
            assertThatThrownBy(chaos::chaos).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not running");
            chaos.start();
            McpSyncClient client = HostPeers.sdkClient(chaos.getMcpUrl()).build();
            try {
                client.initialize();
                RuleHandle down = chaos.chaos().add(Rules.toolError("echo-down", "echo is down").onTool("echo")
                        .onResponses());
                McpSchema.CallToolResult failed = echo(client, "first");
                assertThat(failed.isError()).isTrue();
                assertThat(HostPeers.text(failed)).isEqualTo("echo is down");
                assertThat(down.injected()).isEqualTo(1);
                // GET /rules shows the rule as written in Java, not "(built in code)".
                assertThat(get(chaos, "/rules")).contains("{\"name\":\"echo-down\",\"match\":{\"tool\":\"echo\","
                        + "\"kind\":\"response\"},\"fault\":{\"type\":\"tool_error\",\"text\":\"echo is down\"}}")
                        .doesNotContain("built_in_code");

                down.remove();
                assertThat(HostPeers.text(echo(client, "second"))).isEqualTo("Echo: second");
                assertThatThrownBy(down::remove).isInstanceOf(NoSuchElementException.class)
                        .hasMessageContaining("echo-down");
            } finally {
                client.closeGracefully();
            }
        }
    }

    @Test
    void switchesThePanicSwitchResetAndRefusalsAreTheEmbeddedOnes() throws Exception {
        try (McpChaosContainer chaos = container()) {
            chaos.start();
            Chaos rules = chaos.chaos();
            McpSyncClient client = HostPeers.sdkClient(chaos.getMcpUrl()).build();
            try {
                client.initialize();
                RuleHandle down = rules.add("{name: down, match: {tool: echo, kind: response}, "
                        + "fault: {type: tool_error, text: down}}");
                down.disable();
                assertThat(HostPeers.text(echo(client, "a"))).isEqualTo("Echo: a");
                down.enable();
                assertThat(echo(client, "b").isError()).isTrue();
                rules.faultsOff();
                assertThat(rules.faultsEnabled()).isFalse();
                assertThat(HostPeers.text(echo(client, "c"))).isEqualTo("Echo: c");

                rules.reset();
                assertThat(rules.faultsEnabled()).isTrue();
                assertThat(rules.rules()).extracting(RuleStats::name, RuleStats::matched)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple("never", 0L));
                assertThat(HostPeers.text(echo(client, "d"))).isEqualTo("Echo: d");

                rules.load("rules: [{name: loaded, match: {tool: echo, kind: response}, fault: {type: tool_error}}]");
                assertThat(echo(client, "e").isError()).isTrue();
                assertThat(rules.rule("loaded").injected()).isEqualTo(1);
            } finally {
                client.closeGracefully();
            }

            assertThatThrownBy(() -> rules.add(Rules.latency("bad", java.time.Duration.ofMillis(-5))))
                    .isInstanceOf(RuleFileException.class)
                    .hasMessage("rule built in Java: rule 'bad': fault.latency: '-5ms' (expected: a duration >= 0, "
                            + "such as 250ms)");
            assertThatThrownBy(() -> rules.add(Rules.crash("boom")))
                    .isInstanceOf(RuleFileException.class)
                    .hasMessageContaining("rule 'boom': crash: only applies to the stdio transport");
            assertThatThrownBy(() -> rules.add(Rules.drop("loaded")))
                    .isInstanceOf(RuleFileException.class).hasMessageContaining("'loaded'");
            assertThatThrownBy(() -> rules.rule("no-such-rule")).isInstanceOf(NoSuchElementException.class)
                    .hasMessageContaining("no-such-rule");
        }
    }

    private static String get(McpChaosContainer chaos, String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                chaos.getControlUrl().resolve(path)).timeout(HostPeers.TIMEOUT).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }
}
