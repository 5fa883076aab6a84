package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one MCP client of the offline tools, on both transports, against servers written in the test. */
class McpPeerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private HttpServer server;
    private final List<String> posted = new CopyOnWriteArrayList<>();
    private final List<Map<String, List<String>>> heads = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private static JsonNode json(String text) throws IOException {
        return JSON.readTree(text);
    }

    /** A server answering each POST with {@code answer}'s status, content type and body. */
    private URI serve(java.util.function.Function<String, String[]> answer) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/mcp", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            posted.add(exchange.getRequestMethod() + " " + body);
            heads.add(Map.copyOf(exchange.getRequestHeaders()));
            String[] reply = answer.apply(body);
            byte[] bytes = reply[2].getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", reply[1]);
            exchange.getResponseHeaders().add("Mcp-Session-Id", "s-1");
            exchange.sendResponseHeaders(Integer.parseInt(reply[0]), bytes.length == 0 ? -1 : bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/mcp");
    }

    @Test
    void anSseAnswerIsFoundPastAServerRequestWhichIsAnsweredAndTheSessionHeadersFollow() throws Exception {
        URI url = serve(body -> body.contains("\"method\":\"tools/list\"") ? new String[]{"200", "text/event-stream",
                "data:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}\n\n"
                        + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
                        + "data: {\"jsonrpc\":\"2.0\",\"id\":7,\ndata:  \"result\":{\"tools\":[]}}\n\n"}
                : new String[]{"202", "application/json", ""});
        try (HttpPeer peer = new HttpPeer(url, TIMEOUT, McpPeer.refusing("no roots here"))) {
            peer.protocolVersion("2025-06-18");
            JsonNode answer = peer.request(json("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}"));
            assertThat(answer).isEqualTo(json("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[]}}"));
            assertThat(peer.sessionId()).isEqualTo("s-1");
            peer.notify(json("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
        }
        assertThat(posted).contains("POST {\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":-32601,"
                + "\"message\":\"no roots here\"}}").last().isEqualTo("DELETE ");
        Map<String, List<String>> later = heads.get(heads.size() - 2); // the notification's
        assertThat(later.get("Mcp-session-id")).containsExactly("s-1");
        assertThat(later.get("Mcp-protocol-version")).containsExactly("2025-06-18");
    }

    @Test
    void anErrorStatusCarriesTheAnswerItsBodyHeld() throws Exception {
        URI url = serve(body -> new String[]{"400", "application/json",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32020,\"message\":\"HeaderMismatch\"}}"});
        try (HttpPeer peer = new HttpPeer(url, TIMEOUT, McpPeer.refusing("-"))) {
            assertThatThrownBy(() -> peer.request(json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")))
                    .isInstanceOfSatisfying(McpPeer.HttpStatusException.class, e -> {
                        assertThat(e.status()).isEqualTo(400);
                        assertThat(e.answer().path("error").path("code").asInt()).isEqualTo(-32020);
                        assertThat(e).hasMessageContaining("answered ping with HTTP 400 (expected: 2xx)");
                    });
        }
    }

    @Test
    void aStdioServerIsAnsweredItsRequestAndItsEndIsNoAnswer() throws Exception {
        // asks roots/list, waits for the answer, echoes it as the answer to request 1, then closes
        // its stdout and reads on, so that the next request is written but never answered
        String script = "read req; echo 'not json'; echo '{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"roots/list\"}';"
                + " read answer; echo \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":$answer}\"; exec >&-; cat >/dev/null";
        try (StdioPeer peer = StdioPeer.start(List.of("sh", "-c", script), ProcessBuilder.Redirect.DISCARD, TIMEOUT,
                McpPeer.refusing("no"))) {
            JsonNode answer = peer.request(json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
            assertThat(answer.path("result").path("error").path("code").asInt()).isEqualTo(-32601);
            assertThatThrownBy(() -> peer.request(json("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}")))
                    .isInstanceOf(McpPeer.NoAnswerException.class).hasMessageContaining("before answering ping");
        }
    }
}
