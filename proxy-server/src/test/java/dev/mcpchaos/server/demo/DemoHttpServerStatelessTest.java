package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.host.McpHttpHost;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The demo server's 2026-07-28 mode ({@code DemoHttpServer.start(..., true)}, what the drill's
 * {@code --era 2026} serves): sessionless requests answered beside sessions, -32022 for a version
 * it does not speak; without the mode, a sessionless request is refused as before.
 */
@Timeout(30)
class DemoHttpServerStatelessTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();
    private McpHttpHost server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private HttpResponse<String> post(String method, String params, String version) throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method + "\",\"params\":{" + params
                + (params.isEmpty() ? "" : ",") + "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + version
                + "\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        return http.send(HttpRequest.newBuilder(server.endpoint()).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void answersSessionlessRequestsWithResultTypeAndRefusesAnotherVersion() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE, true);

        HttpResponse<String> discover = post("server/discover", "", "2026-07-28");
        assertThat(discover.statusCode()).isEqualTo(200);
        assertThat(discover.headers().firstValue("Mcp-Session-Id")).isEmpty();
        JsonNode result = JSON.readTree(discover.body()).get("result");
        assertThat(result.get("supportedVersions").toString()).isEqualTo("[\"2026-07-28\"]");
        assertThat(result.get("resultType").asText()).isEqualTo("complete");
        assertThat(result.at("/capabilities/tools").isObject()).isTrue();
        assertThat(result.at("/_meta/io.modelcontextprotocol~1serverInfo/name").asText()).isEqualTo(DemoServer.NAME);

        JsonNode list = JSON.readTree(post("tools/list", "", "2026-07-28").body()).get("result");
        assertThat(list.get("tools").size()).isGreaterThanOrEqualTo(4);
        assertThat(list.get("ttlMs").asInt()).isZero();
        assertThat(list.get("cacheScope").asText()).isEqualTo("private");

        JsonNode echo = JSON.readTree(post("tools/call", "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}",
                "2026-07-28").body()).get("result");
        assertThat(echo.at("/content/0/text").asText()).isEqualTo("hi");
        assertThat(echo.get("resultType").asText()).isEqualTo("complete");

        JsonNode refused = JSON.readTree(post("tools/list", "", "2099-01-01").body()).get("error");
        assertThat(refused.get("code").asInt()).isEqualTo(-32022);
        assertThat(refused.get("data").toString())
                .isEqualTo("{\"supported\":[\"2026-07-28\"],\"requested\":\"2099-01-01\"}");
    }

    /**
     * 2026-07-28 removed SSE event ids and resumption (changelog, major change 9): a sessionless
     * answer as an SSE stream has neither ids nor a priming event, even with priming on (the drill's
     * setting, for the 2025-11-25 clients beside).
     */
    @Test
    void aSessionlessStreamCarriesNoEventIds() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE, true);
        server.primingEvents(true);
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                + "\"arguments\":{\"ms\":10},\"_meta\":{\"progressToken\":7,"
                + "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
        HttpResponse<String> slow = http.send(HttpRequest.newBuilder(server.endpoint())
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream").header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call").header("Mcp-Name", "slow")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(slow.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        assertThat(slow.body()).contains("notifications/progress").contains("\"resultType\":\"complete\"")
                .doesNotContain("id: ").doesNotContain("data:\n");
    }

    @Test
    void withoutTheModeASessionlessRequestIsRefusedAsBefore() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE);
        assertThat(post("server/discover", "", "2026-07-28").statusCode()).isEqualTo(400);
    }
}
