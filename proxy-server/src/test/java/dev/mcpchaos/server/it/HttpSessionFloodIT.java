package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attack the adversarial run found, against the real third-party server-everything: POSTs
 * with unique made-up {@code Mcp-Session-Id}s, which it refuses, used to leave a chain, a session
 * and a correlator each in the proxy for ever while {@code /status} counted none of them. Now
 * they take no place, {@code /status} and the table agree, and a real session beside them is
 * kept and counted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpSessionFloodIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NOTIFICATION = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @TempDir
    static Path tempDir;

    private static HttpPeers.ServerEverything everything;

    @BeforeAll
    static void startServer() {
        everything = HttpPeers.ServerEverything.start(tempDir);
    }

    @AfterAll
    static void stopServer() {
        if (everything != null) {
            everything.close();
        }
    }

    @Test
    void madeUpSessionIdsTakeNoPlaceAndStatusCountsWhatTheTableHolds() throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).maxSessions(100)
                .control(new InetSocketAddress("127.0.0.1", 0)).start()) {
            URI mcp = HttpPeers.endpoint(proxy.address());
            int flood = 5_000; // or as many as 45 s allow on a loaded machine, at least 1,000
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
            Map<Integer, Integer> statuses = new TreeMap<>();
            int sent = 0;
            for (; sent < flood && System.nanoTime() < deadline; sent++) {
                HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(20))
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json, text/event-stream")
                        .header("Mcp-Session-Id", "made-up-" + sent)
                        .POST(HttpRequest.BodyPublishers.ofString(NOTIFICATION)).build(),
                        HttpResponse.BodyHandlers.discarding());
                statuses.merge(answer.statusCode(), 1, Integer::sum);
            }
            assertThat(sent).isGreaterThanOrEqualTo(1_000);
            assertThat(statuses.keySet()).as("what server-everything answered, as the client got it: " + statuses)
                    .allMatch(status -> status >= 400 && status < 500);
            assertThat(statuses.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(sent);
            assertThat(proxy.sessionCount()).isZero();
            assertThat(sessionsActive(proxy)).isZero();

            // The twin: a real session beside the flood is kept, counted and works.
            McpSyncClient client = HttpPeers.sdkClient(mcp).build();
            try {
                client.initialize();
                McpSchema.CallToolResult echo = client.callTool(McpSchema.CallToolRequest.builder("echo")
                        .arguments(Map.of("message", "after the flood")).build());
                assertThat(((McpSchema.TextContent) echo.content().get(0)).text()).isEqualTo("Echo: after the flood");
                assertThat(proxy.sessionCount()).isEqualTo(1);
                assertThat(sessionsActive(proxy)).isEqualTo(1);
            } finally {
                client.close();
            }
        }
    }

    private static long sessionsActive(RunningHttp proxy) throws Exception {
        HttpResponse<String> status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + proxy.controlAddress().getPort() + "/status"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(status.statusCode()).isEqualTo(200);
        return JSON.readTree(status.body()).path("sessions_active").asLong();
    }
}
