package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;
import dev.mcpchaos.server.record.CassetteLineSchema;
import dev.mcpchaos.server.record.Recording;
import dev.mcpchaos.server.replay.HttpReplay;
import dev.mcpchaos.server.replay.OnExhausted;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recording (#17) with real peers: the MCP Java SDK client talks to server-everything through a
 * recording proxy, over stdio (the command line's {@code --record}) and over HTTP (the builder's
 * {@code record}). The client keeps its own account of every message it sent and received
 * ({@link CountingTransport}); the cassette must hold exactly those, in order, each line valid
 * against docs/cassette-line.schema.json. A second HTTP session carries secrets in a header, an
 * argument, a result and an environment value: the cassette's bytes hold none of them, and the
 * same secret has the same placeholder throughout.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path tempDir;

    /** What the client did: initialize, tools/list, calls with a result, progress, an error result, an unknown tool. */
    /** What the client got, as text: the server's info, the tool names, each call's result or error. */
    private static List<String> converse(McpSyncClient client, CountingTransport counted,
                                         List<McpSchema.ProgressNotification> progress) {
        List<String> got = new ArrayList<>();
        McpSchema.InitializeResult init = client.initialize();
        assertThat(init.serverInfo().name()).isEqualTo("mcp-servers/everything");
        got.add(init.serverInfo().toString() + " " + init.protocolVersion());
        List<McpSchema.Tool> tools = client.listTools().tools();
        assertThat(tools).extracting(McpSchema.Tool::name).contains("echo", "get-sum");
        got.add(tools.stream().map(McpSchema.Tool::name).toList().toString());
        McpSchema.CallToolResult echo = client.callTool(McpSchema.CallToolRequest.builder("echo")
                .arguments(Map.of("message", "recorded \u00e9")).build());
        assertThat(HttpPeers.text(echo)).isEqualTo("Echo: recorded \u00e9");
        got.add(echo.toString());
        McpSchema.CallToolResult sum = client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                .arguments(Map.of("a", 2, "b", 40)).build());
        assertThat(HttpPeers.text(sum)).contains("42");
        got.add(sum.toString());
        got.add(client.callTool(McpSchema.CallToolRequest.builder("trigger-long-running-operation")
                .arguments(Map.of("duration", 0.3, "steps", 3)).progressToken("rec-progress").build()).toString());
        boolean errorResult;
        try {
            McpSchema.CallToolResult bad = client.callTool(McpSchema.CallToolRequest.builder("get-sum")
                    .arguments(Map.of("a", "two", "b", 1)).build());
            errorResult = bad.isError();
            got.add(bad.toString());
        } catch (McpError e) {
            errorResult = true;
            got.add("error " + e.getMessage());
        }
        assertThat(errorResult).as("get-sum with a string is an error").isTrue();
        boolean unknownRefused;
        try {
            McpSchema.CallToolResult unknown = client.callTool(McpSchema.CallToolRequest.builder("no-such-tool").build());
            unknownRefused = unknown.isError();
            got.add(unknown.toString());
        } catch (McpError e) {
            unknownRefused = true;
            got.add("error " + e.getMessage());
        }
        assertThat(unknownRefused).as("an unknown tool is refused").isTrue();
        await().atMost(TIMEOUT).until(() -> progress.size() == 3 && counted.nothingInFlight());
        got.add(progress.stream().map(p -> p.progressToken() + " " + p.progress() + "/" + p.total()).toList().toString());
        return got;
    }

    private static String key(CassetteEntry entry) {
        JsonNode m = entry.message();
        assertThat(m).as("recorded as JSON: " + entry.raw()).isNotNull();
        if (m.has("method")) {
            return m.has("id") ? "request " + m.get("method").asText() + " " + m.get("id").asText()
                    : "notification " + m.get("method").asText();
        }
        return (m.has("error") ? "error " : "response ") + m.get("id").asText();
    }

    private static List<String> keys(Cassette cassette, Direction direction) {
        return cassette.entries().stream().filter(e -> e.direction() == direction).map(RecordIT::key).toList();
    }

    private static List<String> keys(List<McpSchema.JSONRPCMessage> messages) {
        return messages.stream().map(CountingTransport::key).toList();
    }

    private static void assertEveryLineValid(Path file) throws IOException {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            assertThat(CassetteLineSchema.errors(line)).as(line).isEmpty();
        }
    }

    /** The cassette once it holds as many messages as the client counted (the proxy may still be flushing). */
    private static Cassette awaitCassette(Path file, CountingTransport counted) {
        int expected = counted.sent.size() + counted.received.size();
        return await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).until(() -> {
            try {
                return Files.exists(file) ? Cassette.read(file) : null;
            } catch (RuntimeException | IOException e) {
                return null; // a line half written
            }
        }, c -> c != null && c.entries().size() >= expected);
    }

    /** An SDK client over stdio to {@code command}, counted. */
    private static McpSyncClient stdioClient(List<String> command, CountingTransport[] counted,
                                             List<McpSchema.ProgressNotification> progress) {
        StdioClientTransport stdio = new StdioClientTransport(ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size())).build(), McpJsonDefaults.getMapper());
        stdio.setStdErrorHandler(line -> { });
        counted[0] = new CountingTransport(stdio);
        return McpClient.sync(counted[0]).requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT)
                .progressConsumer(progress::add).build();
    }

    /** Records server-everything over stdio through the command line's --record; the client's results. */
    private static List<String> recordOverStdio(Path cassetteFile, CountingTransport[] counted) {
        List<String> command = Tee.mcpChaosStdio("--record", cassetteFile.toString())
                .apply(TestPeers.serverEverythingStdioCommand());
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        McpSyncClient client = stdioClient(command, counted, progress);
        try {
            return converse(client, counted[0], progress);
        } finally {
            client.closeGracefully();
        }
    }

    @Test
    void stdioRecordingHoldsExactlyWhatTheClientSentAndReceived() throws IOException {
        Path cassetteFile = tempDir.resolve("everything-stdio.ndjson");
        CountingTransport[] holder = new CountingTransport[1];
        recordOverStdio(cassetteFile, holder);
        CountingTransport counted = holder[0];
        Cassette cassette = awaitCassette(cassetteFile, counted);

        assertThat(keys(cassette, Direction.CLIENT_TO_SERVER)).as("c2s").isEqualTo(keys(counted.sent));
        assertThat(keys(cassette, Direction.SERVER_TO_CLIENT)).as("s2c").isEqualTo(keys(counted.received));
        assertThat(cassette.entries()).hasSize(counted.sent.size() + counted.received.size());
        System.out.printf("stdio cassette: %d c2s + %d s2c messages, %d bytes%n", counted.sent.size(),
                counted.received.size(), Files.size(cassetteFile));
        assertThat(cassette.header().transport()).isEqualTo("stdio");
        assertThat(cassette.header().protocolVersion()).isNotBlank();
        assertThat(cassette.header().serverInfo().path("name").asText()).isEqualTo("mcp-servers/everything");
        assertThat(cassette.header().serverCapabilities().has("tools")).isTrue();
        assertThat(cassette.entries()).allSatisfy(e -> {
            assertThat(e.session()).isEqualTo("stdio");
            assertThat(e.http()).isNull();
        });
        assertThat(cassette.entries()).extracting(CassetteEntry::seq)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, cassette.entries().size()).boxed().toList());
        assertEveryLineValid(cassetteFile);
    }

    @Test
    void httpRecordingHoldsExactlyWhatTheClientSentAndReceivedWithTheSseFields() throws IOException {
        Path cassetteFile = tempDir.resolve("everything-http.ndjson");
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(tempDir)) {
            CountingTransport counted;
            try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).record(cassetteFile).start()) {
                counted = new CountingTransport(HttpClientStreamableHttpTransport
                        .builder("http://127.0.0.1:" + proxy.address().getPort()).endpoint("/mcp").build());
                List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
                McpSyncClient client = McpClient.sync(counted).requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT)
                        .progressConsumer(progress::add).build();
                try {
                    converse(client, counted, progress);
                } finally {
                    client.closeGracefully();
                }
            } // closing the proxy writes what the recorder holds
            Cassette cassette = Cassette.read(cassetteFile);

            // Exactly the messages, each once. Their order across exchanges is not one order: the
            // SDK's own tools/list (after list_changed) and the test's travel on two connections at
            // once. Within an exchange the order is checked below, and initialize comes first.
            assertThat(keys(cassette, Direction.CLIENT_TO_SERVER)).as("c2s")
                    .containsExactlyInAnyOrderElementsOf(keys(counted.sent))
                    .first().asString().startsWith("request initialize");
            assertThat(keys(cassette, Direction.SERVER_TO_CLIENT)).as("s2c")
                    .containsExactlyInAnyOrderElementsOf(keys(counted.received));
            System.out.printf("http cassette: %d c2s + %d s2c messages, %d bytes%n", counted.sent.size(),
                    counted.received.size(), Files.size(cassetteFile));
            assertThat(cassette.header().transport()).isEqualTo("http");
            assertThat(cassette.header().serverInfo().path("name").asText()).isEqualTo("mcp-servers/everything");
            String session = cassette.entries().get(cassette.entries().size() - 1).session();
            assertThat(cassette.entries()).as("one session, named by its Mcp-Session-Id, initialize included")
                    .allSatisfy(e -> assertThat(e.session()).isEqualTo(session));

            // The long-running call: its request, its three progress notifications and its answer
            // on one exchange, the answer's events marked as SSE with the stream's content type.
            CassetteEntry longRun = cassette.entries().stream().filter(e -> e.message() != null
                    && "trigger-long-running-operation".equals(e.message().path("params").path("name").asText()))
                    .findFirst().orElseThrow();
            assertThat(longRun.http().method()).isEqualTo("POST");
            assertThat(longRun.http().uri()).isEqualTo("/mcp");
            assertThat(longRun.http().requestHeaders()).extracting(Map.Entry::getKey)
                    .anyMatch(name -> name.equalsIgnoreCase("mcp-session-id"));
            List<CassetteEntry> onItsStream = cassette.entries().stream().filter(e -> e.http() != null
                    && e.http().exchange() == longRun.http().exchange() && e.direction() == Direction.SERVER_TO_CLIENT)
                    .toList();
            assertThat(onItsStream).extracting(RecordIT::key).containsExactly("notification notifications/progress",
                    "notification notifications/progress", "notification notifications/progress",
                    "response " + longRun.message().get("id").asText());
            assertThat(onItsStream).allSatisfy(e -> {
                assertThat(e.http().sse()).isTrue();
                assertThat(e.http().status()).isEqualTo(200);
                assertThat(e.http().contentType()).startsWith("text/event-stream");
            });
            assertThat(onItsStream.get(0).http().responseHeaders()).as("on the exchange's first answer line")
                    .isNotNull();
            assertThat(onItsStream.get(1).http().responseHeaders()).as("not repeated").isNull();
            assertEveryLineValid(cassetteFile);
        }
    }

    private static final Pattern PLACEHOLDER = Pattern.compile("<redacted:\\d+>");

    private static List<String> placeholders(String text) {
        List<String> found = new ArrayList<>();
        Matcher m = PLACEHOLDER.matcher(text);
        while (m.find()) {
            found.add(m.group());
        }
        return found;
    }

    @Test
    void secretsInAHeaderAnArgumentAResultAndTheEnvironmentAreNowhereInTheCassette() throws IOException {
        String token = "ghp_" + UUID.randomUUID().toString().replace("-", "") + "Ab12";
        String envValue = "env-value-" + UUID.randomUUID();
        String note = "correct horse battery " + UUID.randomUUID();
        Path cassetteFile = tempDir.resolve("secrets.ndjson");
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(tempDir, "streamableHttp",
                "listening on port ", Map.of("RECORD_IT_SECRET", envValue))) {
            Recording recording = Recording.to(cassetteFile)
                    .redactPath("params.arguments.note")
                    .redactEnv("RECORD_IT_SECRET")
                    .environment(Map.of("RECORD_IT_SECRET", envValue));
            String echoed;
            String environment;
            try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).record(recording).start()) {
                McpSyncClient client = McpClient.sync(HttpClientStreamableHttpTransport
                                .builder("http://127.0.0.1:" + proxy.address().getPort()).endpoint("/mcp")
                                .httpRequestCustomizer((builder, method, uri, body, context) ->
                                        builder.header("Authorization", "Bearer " + token))
                                .build())
                        .requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT).build();
                try {
                    client.initialize();
                    echoed = HttpPeers.text(client.callTool(McpSchema.CallToolRequest.builder("echo")
                            .arguments(Map.of("message", "my token is " + token, "note", note)).build()));
                    environment = HttpPeers.text(client.callTool(McpSchema.CallToolRequest.builder("get-env").build()));
                } finally {
                    client.closeGracefully();
                }
            }
            // The twin: the secrets did travel, unredacted, to and from the peers.
            assertThat(echoed).isEqualTo("Echo: my token is " + token);
            assertThat(environment).contains(envValue);
            assertThat(everything.log()).doesNotContain("Unauthorized");

            byte[] bytes = Files.readAllBytes(cassetteFile);
            String text = new String(bytes, StandardCharsets.UTF_8);
            assertThat(text).doesNotContain(token, envValue, note);
            assertThat(text).doesNotContain(token.substring(4)); // not even without its prefix
            Cassette cassette = Cassette.read(cassetteFile);
            assertEveryLineValid(cassetteFile);

            String headerPlaceholder = cassette.entries().stream()
                    .filter(e -> e.http() != null && e.http().requestHeaders() != null)
                    .flatMap(e -> e.http().requestHeaders().stream())
                    .filter(h -> h.getKey().equalsIgnoreCase("authorization"))
                    .map(Map.Entry::getValue).findFirst().orElseThrow();
            assertThat(headerPlaceholder).matches("Bearer <redacted:\\d+>");
            String tokenPlaceholder = headerPlaceholder.substring("Bearer ".length());

            CassetteEntry echoCall = cassette.entries().stream().filter(e -> e.message() != null
                    && "echo".equals(e.message().path("params").path("name").asText())).findFirst().orElseThrow();
            JsonNode arguments = echoCall.message().path("params").path("arguments");
            assertThat(arguments.path("message").asText()).isEqualTo("my token is " + tokenPlaceholder);
            assertThat(placeholders(arguments.path("note").asText())).hasSize(1);
            String echoId = echoCall.message().get("id").asText();
            CassetteEntry echoAnswer = cassette.entries().stream().filter(e -> e.direction() == Direction.SERVER_TO_CLIENT
                    && e.message() != null && echoId.equals(e.message().path("id").asText())).findFirst().orElseThrow();
            assertThat(echoAnswer.message().toString()).contains("Echo: my token is " + tokenPlaceholder);

            CassetteEntry envAnswer = cassette.entries().stream().filter(e -> e.direction() == Direction.SERVER_TO_CLIENT
                    && e.message() != null && e.message().toString().contains("RECORD_IT_SECRET")).findFirst()
                    .orElseThrow();
            List<String> envPlaceholders = placeholders(envAnswer.message().toString());
            assertThat(envPlaceholders).isNotEmpty();
            assertThat(envPlaceholders).doesNotContain(tokenPlaceholder);
            // Every Authorization header of the session (one per POST) has the one placeholder.
            assertThat(cassette.entries().stream().filter(e -> e.http() != null && e.http().requestHeaders() != null)
                    .flatMap(e -> e.http().requestHeaders().stream())
                    .filter(h -> h.getKey().equalsIgnoreCase("authorization")).map(Map.Entry::getValue).distinct())
                    .containsExactly("Bearer " + tokenPlaceholder);
        }
    }

    @Test
    void aCassetteRecordedOverHttpReplaysOverHttpTheSameResultsWithProgressAsSseEvents() throws Exception {
        Path cassetteFile = tempDir.resolve("replayed-http.ndjson");
        List<String> live;
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(tempDir)) {
            try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).record(cassetteFile).start()) {
                live = httpConversation(proxy);
            }
        }
        Cassette cassette = Cassette.read(cassetteFile);
        String recordedSession = cassette.entries().get(cassette.entries().size() - 1).session();

        // server-everything is gone: only the cassette answers now.
        HttpReplay replay = new HttpReplay(List.of(cassette), OnExhausted.LAST);
        try (RunningHttp proxy = McpChaosProxy.replay(replay).start()) {
            List<String> replayed = httpConversation(proxy);
            int last = live.size() - 1;
            assertThat(replayed).hasSameSizeAs(live);
            assertThat(replayed.subList(0, last)).isEqualTo(live.subList(0, last));
            // The progress notifications, each once. The replay sends its three SSE events in one
            // burst, in order (checked on the wire below); the SDK hands them to its progress
            // consumer on several threads, so their arrival order there is not one order.
            assertThat(progressItems(replayed.get(last))).containsExactlyInAnyOrderElementsOf(progressItems(live.get(last)));
            assertThat(replay.unmatched()).isZero();

            // The progress call by hand: its answer is an SSE stream of four events, the three
            // progress notifications (with this request's token) and the result; a fresh session id.
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> init = http.send(post(proxy, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                    + "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}"), HttpResponse.BodyHandlers.ofString());
            assertThat(init.statusCode()).isEqualTo(200);
            String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
            assertThat(session).isNotEqualTo(recordedSession);
            HttpResponse<String> call = http.send(post(proxy, session, "{\"jsonrpc\":\"2.0\",\"id\":\"raw-7\","
                    + "\"method\":\"tools/call\",\"params\":{\"name\":\"trigger-long-running-operation\","
                    + "\"arguments\":{\"duration\":0.3,\"steps\":3},\"_meta\":{\"progressToken\":\"raw-token\"}}}"),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(call.statusCode()).isEqualTo(200);
            assertThat(call.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
            List<JsonNode> events = call.body().lines().filter(l -> l.startsWith("data:"))
                    .map(l -> RawJsonRpc.parse(l.substring(5).trim())).toList();
            assertThat(events).hasSize(4);
            assertThat(events.subList(0, 3)).allSatisfy(e -> {
                assertThat(e.path("method").asText()).isEqualTo("notifications/progress");
                assertThat(e.at("/params/progressToken").asText()).isEqualTo("raw-token");
            });
            assertThat(events.get(3).get("id").asText()).isEqualTo("raw-7");
            assertThat(events.get(3).has("result")).isTrue();
        }
    }

    /** The progress values the client's transport received, in the order they arrived. */
    private static List<String> progressOnTheWire(CountingTransport counted) {
        return counted.received.stream()
                .filter(m -> m instanceof McpSchema.JSONRPCNotification n && "notifications/progress".equals(n.method()))
                .map(m -> String.valueOf(((Map<?, ?>) ((McpSchema.JSONRPCNotification) m).params()).get("progress")))
                .toList();
    }

    private static List<String> progressItems(String list) {
        return List.of(list.substring(1, list.length() - 1).split(", "));
    }

    private static java.net.http.HttpRequest post(RunningHttp proxy, String session, String body) {
        java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(proxy.mcpUrl())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return request.build();
    }

    /** The SDK client over HTTP through {@code proxy}: {@link #converse}'s results. */
    private static List<String> httpConversation(RunningHttp proxy) {
        CountingTransport counted = new CountingTransport(HttpClientStreamableHttpTransport
                .builder("http://127.0.0.1:" + proxy.address().getPort()).endpoint("/mcp").build());
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        McpSyncClient client = McpClient.sync(counted).requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT)
                .progressConsumer(progress::add).build();
        try {
            return converse(client, counted, progress);
        } finally {
            client.closeGracefully();
        }
    }

    @Test
    void aCassetteRecordedOverStdioReplaysTheSameResultsToTheSameClientCode() throws IOException {
        Path cassetteFile = tempDir.resolve("replayed.ndjson");
        CountingTransport[] recorded = new CountingTransport[1];
        List<String> live = recordOverStdio(cassetteFile, recorded);
        awaitCassette(cassetteFile, recorded[0]);

        List<String> replayCommand = List.of(TestPeers.java().toString(), "-jar", TestPeers.mcpChaosJar().toString(),
                "replay", cassetteFile.toString());
        CountingTransport[] replayed = new CountingTransport[1];
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        McpSyncClient client = stdioClient(replayCommand, replayed, progress);
        try {
            List<String> fromCassette = converse(client, replayed[0], progress);
            int last = live.size() - 1;
            assertThat(fromCassette).hasSameSizeAs(live);
            assertThat(fromCassette.subList(0, last)).isEqualTo(live.subList(0, last));
            // The progress notifications: on the wire in the recorded order; the SDK hands them to
            // its progress consumer on several threads, so the order there is not one order.
            assertThat(progressItems(fromCassette.get(last))).containsExactlyInAnyOrderElementsOf(progressItems(live.get(last)));
            assertThat(progressOnTheWire(replayed[0])).hasSize(3).isEqualTo(progressOnTheWire(recorded[0]));
            // The same messages came back, the SDK's own tools/list (after list_changed) included.
            assertThat(replayed[0].received).hasSameSizeAs(recorded[0].received);

            // A request that was not recorded: -32601 naming its method and the closest recorded one.
            assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(McpError.class, () -> client.callTool(
                    McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", "never said")).build())))
                    .hasMessageContaining("no recording for tools/call {\"arguments\":{\"message\":\"never said\"},"
                            + "\"name\":\"echo\"}")
                    .hasMessageContaining("closest recorded: tools/call {\"arguments\":{\"message\":\"recorded \u00e9\"},"
                            + "\"name\":\"echo\"}");
            // Repeats: served in recorded order, then the last again.
            assertThat(HttpPeers.text(client.callTool(McpSchema.CallToolRequest.builder("echo")
                    .arguments(Map.of("message", "recorded \u00e9")).build()))).isEqualTo("Echo: recorded \u00e9");
        } finally {
            client.closeGracefully();
        }
    }
}
