package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleHandle;
import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @McpChaosTest} on HTTP in front of the built-in demo server, one proxy for the class:
 * a rule a test adds acts on the SDK client, and is gone in the next test (the order is fixed).
 */
@McpChaosTest(demo = McpChaosTest.Demo.HTTP)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DemoHttpDeclarativeTest {

    private static ChaosProxy first;
    private static long firstSeed;

    @Test
    @Order(1)
    void aRuleAddedInATestActsOnTheSdkClient(ChaosProxy proxy) {
        first = proxy;
        firstSeed = proxy.seed();
        RuleHandle quota = proxy.chaos().add(Rules.toolError("quota", "quota exceeded").onTool("echo").onResponses());
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            McpSchema.CallToolResult result = Clients.echo(client, "hi");
            assertThat(result.isError()).isTrue();
            assertThat(Clients.text(result)).isEqualTo("quota exceeded");
        }
        assertThat(quota.injected()).isEqualTo(1);
    }

    @Test
    @Order(2)
    void theRuleIsGoneInTheNextTestAndTheAnswerArrives(ChaosProxy proxy, Chaos chaos) {
        assertThat(proxy).as("one proxy for the class").isSameAs(first);
        assertThat(chaos.rules()).as("the rule of the test before was reset away").isEmpty();
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            McpSchema.CallToolResult result = Clients.echo(client, "hi");
            assertThat(result.isError()).isFalse();
            assertThat(Clients.text(result)).isEqualTo("hi");
        }
    }

    @Test
    @Order(3)
    void eachTestHasItsOwnSeedDerivedFromItsId(ChaosProxy proxy) {
        String id = "[engine:junit-jupiter]/[class:" + DemoHttpDeclarativeTest.class.getName()
                + "]/[method:eachTestHasItsOwnSeedDerivedFromItsId(" + ChaosProxy.class.getName() + ")]";
        assertThat(proxy.seed()).isEqualTo(McpChaosExtension.seedFor(id)).isNotEqualTo(firstSeed);
        assertThat(firstSeed).isEqualTo(McpChaosExtension.seedFor("[engine:junit-jupiter]/[class:"
                + DemoHttpDeclarativeTest.class.getName() + "]/[method:aRuleAddedInATestActsOnTheSdkClient("
                + ChaosProxy.class.getName() + ")]"));
    }
}
