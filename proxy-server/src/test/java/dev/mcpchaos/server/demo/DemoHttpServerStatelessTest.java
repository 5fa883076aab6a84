package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.host.McpHttpHost;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    private HttpRequest listenRequest(String id, String filter) {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"subscriptions/listen\",\"params\":{"
                + "\"notifications\":" + filter + ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
        return HttpRequest.newBuilder(server.endpoint())
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "subscriptions/listen")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    /** The data lines of an SSE body, read until {@code count} of them came or the stream ended. */
    private static List<JsonNode> messages(BufferedReader sse, int count) throws Exception {
        List<JsonNode> messages = new ArrayList<>();
        String line;
        while (messages.size() < count && (line = sse.readLine()) != null) {
            if (line.startsWith("data:") && !line.substring(5).isBlank()) {
                messages.add(JSON.readTree(line.substring(5)));
            }
        }
        return messages;
    }

    @Test
    void subscriptionsListenIsAcknowledgedHeldOpenAndClosedGracefullyWhenTheServerStops() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE, true);
        JsonNode discovered = JSON.readTree(post("server/discover", "", "2026-07-28").body()).get("result");
        assertThat(discovered.at("/capabilities/tools/listChanged").asBoolean()).isTrue();

        HttpResponse<java.io.InputStream> listen = http.send(listenRequest("listen:0",
                "{\"toolsListChanged\":true,\"promptsListChanged\":true}"), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(listen.statusCode()).isEqualTo(200);
        assertThat(listen.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        try (BufferedReader sse = new BufferedReader(new InputStreamReader(listen.body(), StandardCharsets.UTF_8))) {
            JsonNode ack = messages(sse, 1).get(0);
            assertThat(ack.get("method").asText()).isEqualTo("notifications/subscriptions/acknowledged");
            assertThat(ack.at("/params/_meta/io.modelcontextprotocol~1subscriptionId").asText()).isEqualTo("listen:0");
            assertThat(ack.at("/params/notifications").toString()).as("only what the demo can send")
                    .isEqualTo("{\"toolsListChanged\":true}");
            // Still open: other requests are answered meanwhile.
            assertThat(post("ping", "", "2026-07-28").statusCode()).isEqualTo(200);

            server.close();
            List<JsonNode> rest = messages(sse, 2);
            assertThat(rest).as("the graceful closure, then the end of the stream").hasSize(1);
            assertThat(rest.get(0).get("id").asText()).isEqualTo("listen:0");
            assertThat(rest.get(0).at("/result/resultType").asText()).isEqualTo("complete");
            assertThat(rest.get(0).at("/result/_meta/io.modelcontextprotocol~1subscriptionId").asText())
                    .isEqualTo("listen:0");
        }
    }

    @Test
    void aListenForNothingTheDemoSendsIsAcknowledgedEmptyAndClosedAtOnce() throws Exception {
        server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE, true);
        HttpResponse<String> listen = http.send(listenRequest("l", "{\"resourcesListChanged\":true}"),
                HttpResponse.BodyHandlers.ofString());
        List<JsonNode> messages = messages(new BufferedReader(new java.io.StringReader(listen.body())), 3);
        assertThat(messages).hasSize(2);
        assertThat(messages.get(0).at("/params/notifications").toString()).isEqualTo("{}");
        assertThat(messages.get(1).at("/result/resultType").asText()).isEqualTo("complete");

        String refusedBody = http.send(listenRequest("m", "null"), HttpResponse.BodyHandlers.ofString()).body();
        JsonNode refused = messages(new BufferedReader(new java.io.StringReader(refusedBody)), 1).get(0).get("error");
        assertThat(refused.get("code").asInt()).isEqualTo(-32602);
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
