package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpTransportException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The programmatic extension on HTTP in front of server-everything, one proxy for the class: a
 * 503 with Retry-After in one test, reset away before the next (the order is fixed).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServerEverythingHttpTest {

    private static final int UPSTREAM_PORT = Peers.freePort();
    private static Peers.EverythingHttp everything;

    /** The proxy only connects upstream when a request comes: the server can start after it. */
    @RegisterExtension
    static McpChaosExtension proxy = McpChaosExtension.http(URI.create("http://127.0.0.1:" + UPSTREAM_PORT + "/mcp"))
            .withControl();

    @BeforeAll
    static void startServer() {
        everything = new Peers.EverythingHttp(UPSTREAM_PORT);
    }

    @AfterAll
    static void stopServer() {
        everything.close();
    }

    @Test
    @Order(1)
    void a503FailsTheCallAndTheSessionGoesOn() {
        proxy.chaos().add(Rules.httpStatus("busy", 503).header("Retry-After", "1").body("busy").onTool("echo")
                .onRequests().times(1));
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            assertThatThrownBy(() -> Clients.everythingEcho(client, "hi")).isInstanceOf(McpTransportException.class)
                    .hasMessage("Received unexpected status code: 503, response body: busy");
            assertThat(Clients.text(Clients.everythingEcho(client, "again"))).isEqualTo("Echo: again");
        }
        assertThat(proxy.chaos().rule("busy").injected()).isEqualTo(1);
    }

    @Test
    @Order(2)
    void theRuleIsResetAwayAndTheFirstCallArrives() {
        assertThat(proxy.chaos().rules()).isEmpty();
        assertThat(proxy.proxy().controlUrl().getPort()).isPositive();
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            assertThat(Clients.text(Clients.everythingEcho(client, "hi"))).isEqualTo("Echo: hi");
        }
    }
}
