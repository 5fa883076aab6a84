package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The programmatic extension on stdio in front of server-everything, a new proxy (and server) per test. */
class ServerEverythingStdioTest {

    @RegisterExtension
    static McpChaosExtension proxy = McpChaosExtension.stdio(Peers.serverEverythingStdio()).perTest();

    @Test
    void anInjectedErrorReachesTheSdkClientWithItsCode() {
        proxy.chaos().add(Rules.error("overloaded", -32000, "Server overloaded").onTool("echo").onRequests());
        try (McpSyncClient client = Clients.stdio(proxy.stdioClientCommand())) {
            assertThatThrownBy(() -> Clients.everythingEcho(client, "hi"))
                    .isInstanceOfSatisfying(McpError.class,
                            e -> assertThat(e.getJsonRpcError().code()).isEqualTo(-32000))
                    .hasMessageContaining("Server overloaded");
            // The rule picks echo only: the session goes on.
            assertThat(client.listTools().tools()).extracting(t -> t.name()).contains("echo");
        }
    }

    @Test
    void withoutTheRuleTheEchoArrives() {
        assertThat(proxy.chaos().rules()).isEmpty();
        try (McpSyncClient client = Clients.stdio(proxy.stdioClientCommand())) {
            assertThat(Clients.text(Clients.everythingEcho(client, "hi"))).isEqualTo("Echo: hi");
        }
    }
}
