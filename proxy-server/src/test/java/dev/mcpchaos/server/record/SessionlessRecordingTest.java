package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.RunningProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A sessionless (2026-07-28) recording: no initialize, so the cassette's header takes the server's
 * identity from the first answer's {@code _meta} and its capabilities from {@code server/discover}.
 * The server here is a JDK HttpServer answering each POST with JSON, as a 2026 server may.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionlessRecordingTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String META = "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
            + "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"probe\",\"version\":\"1\"},"
            + "\"io.modelcontextprotocol/clientCapabilities\":{}}";
    private static final String SERVER_META = "{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"seventh\","
            + "\"version\":\"7.0.0\"}}";

    @TempDir
    Path dir;

    private HttpServer server;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private URI startServer(boolean identifies) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/mcp", exchange -> {
            try (exchange) {
                JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
                String meta = identifies ? ",\"_meta\":" + SERVER_META : "";
                String result = switch (request.path("method").asText()) {
                    case "server/discover" -> "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}}"
                            + meta + "}";
                    case "tools/list" -> "{\"tools\":[]" + meta + "}";
                    default -> "{" + meta.replaceFirst("^,", "") + "}";
                };
                byte[] body = ("{\"jsonrpc\":\"2.0\",\"id\":" + request.get("id") + ",\"result\":" + result + "}")
                        .getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/mcp");
    }

    private String post(URI mcp, int id, String method) throws IOException, InterruptedException {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":{\"_meta\":"
                + META + "}}";
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    private Cassette record(boolean identifies) throws Exception {
        URI upstream = startServer(identifies);
        Path cassette = dir.resolve("sessionless.ndjson");
        try (RunningProxy proxy = McpChaosProxy.http(upstream).record(cassette).start()) {
            URI mcp = proxy.mcpUrl();
            assertThat(post(mcp, 1, "server/discover")).contains("supportedVersions");
            assertThat(post(mcp, 2, "tools/list")).contains("\"tools\":[]");
            assertThat(post(mcp, 3, "ping")).contains("\"result\"");
        }
        return Cassette.read(cassette);
    }

    @Test
    void theHeaderNamesTheServerFromItsAnswerAndTheCapabilitiesFromDiscover() throws Exception {
        Cassette cassette = record(true);

        assertThat(cassette.header().protocolVersion()).isEqualTo("2026-07-28");
        assertThat(cassette.header().serverInfo()).isNotNull();
        assertThat(cassette.header().serverInfo().path("name").asText()).isEqualTo("seventh");
        assertThat(cassette.header().serverCapabilities().toString()).isEqualTo("{\"tools\":{}}");
        assertThat(cassette.header().clientInfo().path("name").asText()).isEqualTo("probe");
        assertThat(cassette.entries()).as("every message, each request before its answer").hasSize(6);
        List<String> requests = cassette.entries().stream().filter(e -> e.direction() == Direction.CLIENT_TO_SERVER)
                .map(CassetteEntry::method).toList();
        assertThat(requests).containsExactly("server/discover", "tools/list", "ping");
        for (int i = 0; i < 6; i += 2) {
            assertThat(cassette.entries().get(i).direction()).isEqualTo(Direction.CLIENT_TO_SERVER);
            assertThat(cassette.entries().get(i + 1).message().get("id"))
                    .isEqualTo(cassette.entries().get(i).message().get("id"));
        }
    }

    @Test
    void aServerThatDoesNotNameItselfStillGetsEveryLineAndAHeaderWithoutIt() throws Exception {
        Cassette cassette = record(false);

        assertThat(cassette.header().protocolVersion()).isEqualTo("2026-07-28");
        assertThat(cassette.header().serverInfo()).isNull();
        assertThat(cassette.header().serverCapabilities().toString()).isEqualTo("{\"tools\":{}}");
        assertThat(cassette.entries()).hasSize(6);
    }
}
