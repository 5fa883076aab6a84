package dev.mcpchaos.testcontainers.readme;

// The README's container snippet, as written there (keep the two the same): it must compile and pass.
// The lines marked "not in the README" are this build's own: DockerEngine skips the test with the
// reason where no Docker engine (or no image) is (fails it with CI=true), as every IT here.
import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.rules.Rules;
import dev.mcpchaos.testcontainers.DockerEngine; // not in the README
import dev.mcpchaos.testcontainers.McpChaosContainer;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith; // not in the README
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

@ExtendWith(DockerEngine.class) // not in the README
class ContainerQuickStartIT {
    @Test
    void aToolFailureReachesTheClientOnce() {
        try (var server = new GenericContainer<>("mcp-chaos:latest").withNetworkMode("host")
                     .withCommand("demo-server", "--http", "127.0.0.1:3001").waitingFor(Wait.forLogMessage(".*/mcp\\n", 1));
             var proxy = new McpChaosContainer("mcp-chaos:latest").withNetworkMode("host").withUpstream("http://127.0.0.1:3001/mcp")) {
            server.start();
            proxy.start();
            proxy.chaos().add(Rules.toolError("echo-down", "echo is down").onTool("echo").onResponses());
            try (var client = McpClient.sync(HttpClientStreamableHttpTransport.builder(proxy.getMcpUrl().toString()).build()).build()) {
                client.initialize();
                assertThat(client.callTool(CallToolRequest.builder("echo").arguments(Map.of("text", "hi")).build()).isError()).isTrue();
            }
            proxy.journal().verify().client().sent(toolCall("echo")).once();
        }
    }
}
