package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The stdio demo server's 2026-07-28 mode ({@code DemoServer.serve(in, out, true)}, {@code
 * demo-server --dual-era}, what the drill's {@code --era 2026 --transport stdio} spawns): a
 * request that names its version in {@code _meta} (or a {@code server/discover}) is answered as
 * the HTTP server's 2026 mode answers it, by the same handler; {@code initialize} still starts the
 * 2025 session on the same stream; without the mode nothing changes.
 */
@Timeout(30)
class DemoServerStatelessTest {

    private static String request(int id, String method, String params, String version) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":{" + params
                + (params.isEmpty() ? "" : ",") + "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + version
                + "\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
    }

    @Test
    void answersSessionlessRequestsAsOverHttpAndRefusesAnotherVersion() throws Exception {
        try (DemoServerHarness server = new DemoServerHarness(true)) {
            server.send(request(1, "server/discover", "", "2026-07-28"));
            JsonNode discovered = server.resultOf(1);
            assertThat(discovered.get("supportedVersions").toString()).isEqualTo("[\"2026-07-28\"]");
            assertThat(discovered.get("resultType").asText()).isEqualTo("complete");
            assertThat(discovered.at("/_meta/io.modelcontextprotocol~1serverInfo/name").asText())
                    .isEqualTo(DemoServer.NAME);

            server.send(request(2, "tools/list", "", "2026-07-28"));
            JsonNode list = server.resultOf(2);
            assertThat(list.get("tools").size()).isGreaterThanOrEqualTo(4);
            assertThat(list.get("ttlMs").asInt()).isZero();
            assertThat(list.get("cacheScope").asText()).isEqualTo("private");

            server.send(request(3, "tools/call", "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}", "2026-07-28"));
            JsonNode echo = server.resultOf(3);
            assertThat(echo.at("/content/0/text").asText()).isEqualTo("hi");
            assertThat(echo.get("resultType").asText()).isEqualTo("complete");

            server.send(request(4, "tools/list", "", "2099-01-01"));
            JsonNode refused = server.next().get("error");
            assertThat(refused.get("code").asInt()).isEqualTo(-32022);
            assertThat(refused.get("data").toString())
                    .isEqualTo("{\"supported\":[\"2026-07-28\"],\"requested\":\"2099-01-01\"}");
        }
    }

    @Test
    void initializeStillStartsThe2025SessionOnTheSameStream() throws Exception {
        try (DemoServerHarness server = new DemoServerHarness(true)) {
            server.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                    + "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
            assertThat(server.resultOf(1).get("protocolVersion").asText()).isEqualTo("2025-11-25");
            server.request(2, "tools/list");
            JsonNode list = server.resultOf(2);
            assertThat(list.get("tools").size()).isGreaterThanOrEqualTo(4);
            assertThat(list.has("resultType")).as("a 2025 answer has no resultType").isFalse();
            server.request(3, "logging/setLevel");
            assertThat(server.next().has("result")).as("a 2025 method, answered by the session").isTrue();
        }
    }

    @Test
    void withoutTheModeServerDiscoverIsAnUnknownMethodAsBefore() throws Exception {
        try (DemoServerHarness server = new DemoServerHarness()) {
            server.send(request(1, "server/discover", "", "2026-07-28"));
            assertThat(server.next().at("/error/code").asInt()).isEqualTo(-32601);
        }
    }
}
