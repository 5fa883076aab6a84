package dev.mcpchaos.junit.readme;

// The README's extension snippet, as written there (keep the two the same): it must compile and pass.
import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.junit.ChaosProxy;
import dev.mcpchaos.junit.McpChaosTest;
import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

@McpChaosTest(demo = McpChaosTest.Demo.HTTP)
class SlowEchoTest {
    @Test
    void aSlowAnswerStillArrives(ChaosProxy proxy) {
        proxy.chaos().add(Rules.latency("slow", Duration.ofMillis(300)).onTool("echo").onResponses());
        try (var client = McpClient.sync(HttpClientStreamableHttpTransport.builder(proxy.uri("/").toString()).build()).build()) {
            client.initialize();
            assertThat(client.callTool(CallToolRequest.builder("echo").arguments(Map.of("text", "hi")).build()).isError()).isFalse();
        }
        assertThat(proxy.chaos().rule("slow").injected()).isEqualTo(1);
    }
}
