package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.mcpchaos.server.check.MisbehavingStdioServersTest.CALL;
import static dev.mcpchaos.server.check.MisbehavingStdioServersTest.INIT;
import static dev.mcpchaos.server.check.MisbehavingStdioServersTest.INITIALIZED;
import static dev.mcpchaos.server.check.MisbehavingStdioServersTest.LIST;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The misbehaving servers of {@link MisbehavingStdioServersTest} over Streamable HTTP: each a tiny
 * HTTP MCP server written here (the JDK's HttpServer) that answers every POST with the fixed lines
 * of its scenario as SSE events, behind the real HTTP proxy with {@code check(referee)} and a
 * recording. Each breaks one check, which fires live with its id; the clean twin fires nothing;
 * the cassette checked offline says the same. The stdio framing scenarios (a banner, an
 * unterminated line) have no HTTP form and are left out.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MisbehavingHttpServersTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<MisbehavingStdioServersTest.Server> servers() {
        return MisbehavingStdioServersTest.servers().filter(s -> !s.fires().contains("stdio.stdout-not-json")
                && !s.fires().contains("stdio.unterminated-line"));
    }

    @TempDir
    Path dir;

    private final McpPosts posts = new McpPosts();

    /** A server that answers each request with its scenario's lines; a notification's lines ride the next answer. */
    private static HttpServer serve(MisbehavingStdioServersTest.Server s) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        List<String> held = new ArrayList<>();
        server.createContext("/mcp", exchange -> {
            try (exchange) {
                if (!"POST".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                JsonNode message = JSON.readTree(exchange.getRequestBody().readAllBytes());
                String method = message.path("method").asText();
                List<String> lines = switch (method) {
                    case "initialize" -> s.onInit();
                    case "notifications/initialized" -> s.onInitialized();
                    case "tools/list" -> s.onList();
                    case "tools/call" -> s.onCall();
                    default -> List.of();
                };
                if (method.equals("initialize")) {
                    exchange.getResponseHeaders().add("Mcp-Session-Id", "misbehaving-1");
                }
                List<String> events = new ArrayList<>();
                synchronized (held) {
                    if (!message.has("id")) {
                        held.addAll(lines); // a notification is answered 202, with no body
                        exchange.sendResponseHeaders(202, -1);
                        return;
                    }
                    events.addAll(held);
                    held.clear();
                }
                events.addAll(lines);
                exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
                exchange.sendResponseHeaders(200, 0);
                OutputStream out = exchange.getResponseBody();
                for (String line : events) {
                    out.write(("data: " + line + "\n\n").getBytes(StandardCharsets.UTF_8));
                }
            }
        });
        server.start();
        return server;
    }

    private Referee.Report converse(MisbehavingStdioServersTest.Server s, Path cassette) throws Exception {
        Referee referee = new Referee();
        HttpServer server = serve(s);
        try {
            URI upstream = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/mcp");
            try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream).check(referee).record(cassette)
                    .start()) {
                URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp");
                HttpResponse<String> init = post(mcp, null, INIT);
                assertThat(init.statusCode()).isEqualTo(200);
                String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
                assertThat(post(mcp, session, INITIALIZED).statusCode()).isEqualTo(202);
                assertThat(post(mcp, session, LIST).statusCode()).isEqualTo(200);
                HttpResponse<String> call = post(mcp, session, CALL.replace("\"echo\"", "\"" + s.callTool() + "\""));
                assertThat(call.statusCode()).isEqualTo(200);
                for (String line : s.onCall()) {
                    assertThat(call.body()).as("the proxy relays what the server said, broken or not").contains(line);
                }
            }
        } finally {
            server.stop(0);
        }
        return referee.report();
    }

    private HttpResponse<String> post(URI mcp, String session, String body) throws IOException, InterruptedException {
        return posts.post(mcp, session, body, Duration.ofSeconds(20));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void eachServerBreaksItsCheckLiveOverHttpAndTheCassetteSaysTheSame(MisbehavingStdioServersTest.Server s)
            throws Exception {
        Path cassette = dir.resolve(s.name() + ".ndjson");
        Referee.Report live = converse(s, cassette);
        assertThat(live.firedIds()).as(s.name() + ": " + live.all()).containsExactlyInAnyOrderElementsOf(s.fires());
        assertThat(live.messages()).isGreaterThanOrEqualTo(6);

        Referee offline = new Referee();
        CassetteCheck.feed(offline, cassette);
        assertThat(MisbehavingStdioServersTest.keys(offline.report())).as("the cassette's violations")
                .isEqualTo(MisbehavingStdioServersTest.keys(live));
    }
}
