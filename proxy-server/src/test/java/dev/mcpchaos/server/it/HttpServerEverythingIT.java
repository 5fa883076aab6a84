package dev.mcpchaos.server.it;

import static dev.mcpchaos.server.it.HttpPeers.TIMEOUT;
import static dev.mcpchaos.server.it.HttpPeers.text;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real third-party {@code @modelcontextprotocol/server-everything} in {@code streamableHttp}
 * mode behind the in-process HTTP proxy:
 * <ul>
 *   <li>the MCP Java SDK's Streamable HTTP client through the proxy: initialize, a server-to-client
 *       request (roots/list) and log notifications on the standalone GET stream, tools/list, tool
 *       calls with progress over SSE, ping, DELETE;</li>
 *   <li>resumption: the proxy's client-side stream of a tool call is cut after the first progress
 *       event, and a GET with {@code Last-Event-ID} through the proxy brings every missed event,
 *       each exactly once;</li>
 *   <li>the bytes a plain HTTP client receives through the proxy are those it receives directly
 *       (status, headers but Date and hop-by-hop ones, bodies), with the values the server makes
 *       up at random (session id, event ids) put in order.</li>
 * </ul>
 * One server-everything process serves the whole class; each test has its own sessions.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpServerEverythingIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROTOCOL = "2025-11-25";
    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"" + PROTOCOL + "\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"raw-it\",\"version\":\"0\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @TempDir
    static Path tempDir;

    private static HttpPeers.ServerEverything everything;
    private RunningHttp proxy;
    private McpSyncClient client;

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

    @BeforeEach
    void startProxy() throws IOException {
        proxy = McpChaosProxy.http(everything.endpoint()).start();
    }

    @AfterEach
    void stopProxy() {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            proxy.close();
        }
    }

    @Test
    void sdkClientTalksToServerEverythingThroughTheProxy() {
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        List<McpSchema.LoggingMessageNotification> logs = new CopyOnWriteArrayList<>();
        client = HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .progressConsumer(progress::add)
                .loggingConsumer(logs::add)
                .roots(new McpSchema.Root("file:///it/everything-root", "it"))
                .build();

        McpSchema.InitializeResult init = client.initialize();

        assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
        assertThat(init.serverInfo().version()).isEqualTo("2.0.0");
        assertThat(init.protocolVersion()).isEqualTo(PROTOCOL);
        assertThat(init.capabilities().tools()).isNotNull();
        assertThat(proxy.sessionCount()).isEqualTo(1);

        // 350 ms after notifications/initialized the server asks for the client's roots: a request
        // on the standalone GET stream, answered by the client's POST; then it logs, on the GET
        // stream too, that it got them.
        await().atMost(TIMEOUT).until(() -> logs.stream()
                .anyMatch(log -> "Roots updated: 1 root(s) received from client".equals(log.data())));

        assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
                .contains("echo", "get-sum", "trigger-long-running-operation", "toggle-simulated-logging");

        McpSchema.CallToolResult echo = client.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("message", "through mcp-chaos \u00e9\u4e2d")).build());
        assertThat(text(echo)).isEqualTo("Echo: through mcp-chaos \u00e9\u4e2d");

        McpSchema.CallToolResult longRun = client.callTool(
                McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                        .arguments(Map.of("duration", 0.5, "steps", 5))
                        .progressToken("proxied-progress-1")
                        .build());
        assertThat(text(longRun)).isEqualTo("Long running operation completed. Duration: 0.5 seconds, Steps: 5.");
        await().atMost(TIMEOUT).until(() -> progress.size() >= 5);
        assertThat(progress).hasSize(5);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken)
                .containsOnly("proxied-progress-1");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
        assertThat(progress).extracting(McpSchema.ProgressNotification::total).containsOnly(5.0);

        // Simulated logging sends its first message at once, on the standalone GET stream.
        int logsBefore = logs.size();
        assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("toggle-simulated-logging")
                .arguments(Map.of()).build()))).startsWith("Started simulated, random-leveled logging for session");
        await().atMost(TIMEOUT).until(() -> logs.size() > logsBefore);
        assertThat(logs.subList(logsBefore, logs.size())).anySatisfy(log ->
                assertThat(log.data()).containsPattern("[Mm]essage - SessionId [0-9a-f-]{36}$"));
        assertThat(text(client.callTool(McpSchema.CallToolRequest.builder("toggle-simulated-logging")
                .arguments(Map.of()).build()))).startsWith("Stopped simulated logging for session");

        assertThat(client.ping()).isInstanceOf(Map.class).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.MAP).isEmpty();

        assertThat(client.closeGracefully()).isTrue();
        client = null;
        await().atMost(TIMEOUT).until(() -> proxy.sessionCount() == 0);
        await().atMost(TIMEOUT).until(() -> everything.log().contains("Received session termination request"));
    }

    @Test
    void lastEventIdResumesAStreamCutAtTheProxyAndEveryMissedEventArrivesOnce() throws Exception {
        int port = proxy.address().getPort();
        String session = rawInitialize(port);
        String call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                + "\"name\":\"trigger-long-running-operation\",\"arguments\":{\"duration\":0.6,\"steps\":3},"
                + "\"_meta\":{\"progressToken\":\"resume-1\"}}}";
        List<Sse> received = new ArrayList<>();
        String lastId = null;

        try (RawHttp conn = RawHttp.connect(port)) {
            conn.post("/mcp", call, "Mcp-Session-Id: " + session, "MCP-Protocol-Version: " + PROTOCOL);
            RawHttp.Response response = conn.readHead();
            assertThat(response.status).isEqualTo(200);
            assertThat(response.header("Content-Type")).startsWith("text/event-stream");
            while (true) {
                String raw = response.nextEvent();
                assertThat(raw).as("the stream ended before the first progress event").isNotNull();
                Sse event = Sse.parse(raw);
                received.add(event);
                lastId = event.id != null ? event.id : lastId;
                if (event.data.contains("notifications/progress")) {
                    break;
                }
            }
            conn.abort(); // the client's side of the proxy is cut mid-stream
        }
        assertThat(lastId).as("server-everything gives every event an id").isNotNull();
        assertThat(messages(received)).noneMatch(data -> data.contains("\"id\":2"));

        // Resume with the last id received. server-everything replays what its event store holds
        // after that id and then ends the replay's link to the live call, so while the call is
        // still running a resume may bring only part of the rest: resume again from the new last
        // id, as a client would, until the result came (each attempt bounded by a 1 s read).
        boolean result = false;
        for (int attempt = 0; attempt < 20 && !result; attempt++) {
            try (RawHttp resume = RawHttp.connect(port)) {
                resume.request("GET", "/mcp", List.of("Accept: text/event-stream", "Mcp-Session-Id: " + session,
                        "MCP-Protocol-Version: " + PROTOCOL, "Last-Event-ID: " + lastId), null);
                RawHttp.Response response = resume.readHead();
                assertThat(response.status).isEqualTo(200);
                assertThat(response.header("Content-Type")).startsWith("text/event-stream");
                resume.readTimeout(Duration.ofSeconds(1));
                try {
                    for (String raw = response.nextEvent(); raw != null; raw = response.nextEvent()) {
                        Sse event = Sse.parse(raw);
                        received.add(event);
                        lastId = event.id != null ? event.id : lastId;
                        if (event.data.contains("\"id\":2")) {
                            result = true;
                            break;
                        }
                    }
                } catch (SocketTimeoutException e) {
                    // nothing more stored yet: the operation is still running
                }
            }
        }

        assertThat(result).as("the tool call's result arrived on a resumed stream").isTrue();
        List<String> messages = messages(received);
        List<Double> progressValues = new ArrayList<>();
        int results = 0;
        for (String data : messages) {
            JsonNode message = JSON.readTree(data);
            if ("notifications/progress".equals(message.path("method").asText())) {
                assertThat(message.path("params").path("progressToken").asText()).isEqualTo("resume-1");
                progressValues.add(message.path("params").path("progress").asDouble());
            } else if (message.path("id").asInt() == 2) {
                results++;
                assertThat(message.path("result").path("content").get(0).path("text").asText())
                        .isEqualTo("Long running operation completed. Duration: 0.6 seconds, Steps: 3.");
            }
        }
        assertThat(progressValues).as("each progress event exactly once, in order").containsExactly(1.0, 2.0, 3.0);
        assertThat(results).as("the result exactly once").isEqualTo(1);
        List<String> ids = received.stream().map(e -> e.id).filter(id -> id != null).collect(Collectors.toList());
        assertThat(new HashSet<>(ids)).as("no event id twice").hasSameSizeAs(ids);
    }

    @Test
    void aPlainClientGetsTheSameBytesThroughTheProxyAsDirectly() throws Exception {
        List<String> direct = transcript(everything.endpoint());
        List<String> proxied = transcript(HttpPeers.endpoint(proxy.address()));

        assertThat(proxied).hasSameSizeAs(direct);
        for (int i = 0; i < direct.size(); i++) {
            assertThat(proxied.get(i)).as("exchange %d", i).isEqualTo(direct.get(i));
        }
        // The transcript has the SSE shapes this is about: a priming event and progress events.
        assertThat(String.join("", direct)).contains("data: \n\n").contains("notifications/progress");
    }

    /**
     * One session's exchanges with a plain HTTP/1.1 client: each as its status, its headers (but
     * Date and hop-by-hop ones, sorted) and its body, with the session id and the event ids
     * (random UUIDs) replaced by their order of appearance.
     */
    private static List<String> transcript(URI endpoint) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        List<String> raw = new ArrayList<>();
        HttpResponse<byte[]> init = http.send(post(endpoint, null, INIT), HttpResponse.BodyHandlers.ofByteArray());
        String session = init.headers().firstValue("mcp-session-id").orElseThrow();
        raw.add(describe(init));
        String[] bodies = {
            INITIALIZED,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    + "\"arguments\":{\"message\":\"b\u00fftes \u4e2d \ud83d\ude00\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"four\",\"method\":\"tools/call\",\"params\":{"
                    + "\"name\":\"trigger-long-running-operation\",\"arguments\":{\"duration\":0.3,\"steps\":3},"
                    + "\"_meta\":{\"progressToken\":\"bytes-1\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}",
        };
        for (String body : bodies) {
            raw.add(describe(http.send(post(endpoint, session, body), HttpResponse.BodyHandlers.ofByteArray())));
        }
        raw.add(describe(http.send(HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .header("Mcp-Session-Id", session).header("MCP-Protocol-Version", PROTOCOL)
                .DELETE().build(), HttpResponse.BodyHandlers.ofByteArray())));
        return HttpPeers.nameRandomValues(raw, session);
    }

    private static HttpRequest post(URI endpoint, String session, String body) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            builder.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", PROTOCOL);
        }
        return builder.build();
    }

    /** Hop-by-hop headers (RFC 9110 7.6.1) and Date, which a proxy may change; everything else must pass. */
    static final Set<String> NOT_COMPARED = Set.of("date", "connection", "keep-alive", "transfer-encoding",
            "proxy-connection", "te", "trailer", "upgrade");

    static String describe(HttpResponse<byte[]> response) {
        Map<String, List<String>> headers = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            if (!NOT_COMPARED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                headers.put(name.toLowerCase(java.util.Locale.ROOT), values);
            }
        });
        return response.statusCode() + "\n" + headers + "\n" + new String(response.body(), UTF_8);
    }

    /** initialize + notifications/initialized through a raw client; returns the session id. */
    private static String rawInitialize(int port) throws IOException {
        String session;
        try (RawHttp conn = RawHttp.connect(port)) {
            RawHttp.Response init = conn.post("/mcp", INIT).readResponse();
            assertThat(init.status).isEqualTo(200);
            session = init.header("Mcp-Session-Id");
            assertThat(session).isNotBlank();
            assertThat(init.bodyText()).contains("\"serverInfo\"");
            RawHttp.Response initialized = conn.post("/mcp", INITIALIZED, "Mcp-Session-Id: " + session,
                    "MCP-Protocol-Version: " + PROTOCOL).readResponse();
            assertThat(initialized.status).isEqualTo(202);
        }
        return session;
    }

    private static List<String> messages(List<Sse> events) {
        return events.stream().map(e -> e.data).filter(d -> !d.isBlank()).collect(Collectors.toList());
    }

    /** One parsed SSE event: its id (or null) and its data lines joined by LF. */
    static final class Sse {
        final String id;
        final String data;

        private Sse(String id, String data) {
            this.id = id;
            this.data = data;
        }

        static Sse parse(String raw) {
            String id = null;
            List<String> data = new ArrayList<>();
            for (String line : raw.split("\r?\n")) {
                if (line.startsWith("id:")) {
                    id = value(line);
                } else if (line.startsWith("data:")) {
                    data.add(value(line));
                }
            }
            return new Sse(id, String.join("\n", data));
        }

        private static String value(String line) {
            String value = line.substring(line.indexOf(':') + 1);
            return value.startsWith(" ") ? value.substring(1) : value;
        }
    }
}
