package dev.mcpchaos.server.host;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Both hosts with a handler that is not the demo's: what they ask of the {@link McpSessionHandler}
 * SPI (a session opened per {@code initialize} over HTTP, one over stdio; the factory closed once
 * when the host is done) and what they do with the answers.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class McpHostHandlersTest {

    /** Answers every request with its method as the result; counts what the host asked of it. */
    private static final class EchoMethods implements McpSessionHandler.Factory {
        final List<String> opened = new CopyOnWriteArrayList<>();
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited) {
            opened.add(sessionId);
            return new McpSessionHandler() {
                @Override
                public CompletableFuture<JsonNode> handle(JsonNode message, Consumer<JsonNode> related) {
                    if (JsonRpc.validIdOrNull(message.get("id")) == null) {
                        return CompletableFuture.completedFuture(null);
                    }
                    ObjectNode reply = JsonRpc.NODES.objectNode().put("jsonrpc", "2.0");
                    reply.set("id", message.get("id"));
                    reply.putObject("result").put("method", message.path("method").asText());
                    return CompletableFuture.completedFuture(reply);
                }

                @Override
                public boolean answersAsStream(JsonNode request) {
                    return false;
                }

                @Override
                public boolean speaks(String protocolVersion) {
                    return true;
                }
            };
        }

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }

    @Test
    void stdioOpensOneSessionAnswersLineByLineAndClosesTheHandlersAtEndOfInput() throws Exception {
        EchoMethods handlers = new EchoMethods();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        String in = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                + "not json\n";

        int exit = McpStdioHost.serve(new ByteArrayInputStream(in.getBytes(UTF_8)), out,
                new PrintStream(log, true, UTF_8), "test-host", handlers);

        assertThat(exit).isZero();
        String[] lines = out.toString(UTF_8).split("\n");
        assertThat(lines).hasSize(2);
        assertThat(lines[0]).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"method\":\"ping\"}}");
        assertThat(lines[1]).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                + "\"message\":\"Parse error: Unrecognized token 'not'");
        assertThat(handlers.opened).containsExactly("stdio");
        assertThat(handlers.closed).hasValue(1);
    }

    @Test
    void httpOpensASessionPerInitializeAndClosesTheHandlersOnceWhenItCloses() throws Exception {
        EchoMethods handlers = new EchoMethods();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        McpHttpHost host = McpHttpHost.start(new InetSocketAddress("127.0.0.1", 0), McpHttpHost.DEFAULT_KEEP_ALIVE,
                "test-host", handlers);
        try {
            URI endpoint = host.endpoint();
            assertThat(endpoint.getPath()).isEqualTo(McpHttpHost.PATH);
            HttpResponse<String> initialize = client.send(HttpRequest.newBuilder(endpoint)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            String session = initialize.headers().firstValue("Mcp-Session-Id").orElseThrow();
            HttpResponse<String> ping = client.send(HttpRequest.newBuilder(endpoint)
                    .header("Content-Type", "application/json")
                    .header("Mcp-Session-Id", session)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"))
                    .build(), HttpResponse.BodyHandlers.ofString());

            assertThat(initialize.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"method\":\"initialize\"}}");
            assertThat(ping.statusCode()).isEqualTo(200);
            assertThat(ping.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"method\":\"ping\"}}");
            assertThat(handlers.opened).containsExactly(session);
            assertThat(host.sessionCount()).isEqualTo(1);
            assertThat(handlers.closed).hasValue(0);
        } finally {
            host.close();
            host.close();
        }
        assertThat(handlers.closed).as("closed once, however often the host is").hasValue(1);
    }
}
