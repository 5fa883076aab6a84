package dev.mcpchaos.junit;

import dev.mcpchaos.rules.RuleStats;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @McpChaosTest} on stdio in front of the demo server, one proxy for the class (so one
 * client for the class), with rules from a classpath resource: a test that switches the starting
 * rule off finds it back on in the next (the order is fixed).
 */
@McpChaosTest(demo = McpChaosTest.Demo.STDIO, rules = "/chaos/echo-fails.yaml", seed = 42)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DemoStdioResourceRulesTest {

    private static McpSyncClient client;

    private static McpSyncClient client(ChaosProxy proxy) {
        if (client == null) {
            client = Clients.stdio(proxy.stdioClientCommand());
        }
        return client;
    }

    @org.junit.jupiter.api.AfterAll
    static void closeClient() {
        if (client != null) {
            client.close();
        }
    }

    @Test
    @Order(1)
    void theResourcesRuleActsAndCanBeSwitchedOff(ChaosProxy proxy) {
        assertThat(proxy.seed()).isEqualTo(42);
        McpSchema.CallToolResult failed = Clients.echo(client(proxy), "hi");
        assertThat(failed.isError()).isTrue();
        assertThat(Clients.text(failed)).isEqualTo("echo is down");

        proxy.chaos().rule("echo-fails").disable();
        assertThat(Clients.text(Clients.echo(client(proxy), "hi"))).isEqualTo("hi");
    }

    @Test
    @Order(2)
    void theNextTestFindsTheStartingRuleOnAgainWithItsCountersAtZero(ChaosProxy proxy) {
        assertThat(proxy.chaos().rules()).extracting(RuleStats::name, RuleStats::enabled, RuleStats::injected)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("echo-fails", true, 0L));
        assertThat(Clients.echo(client(proxy), "hi").isError()).isTrue();
    }
}
