package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.host.McpHttpHost;
import dev.mcpchaos.server.host.McpRevisions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link DemoHttpServer} over raw HTTP on 127.0.0.1: status codes, headers, JSON bodies and SSE
 * events byte by byte, so the tests double as a description of the wire behaviour.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoHttpServerTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
    private static final String ACCEPT_BOTH = "application/json, text/event-stream";

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final List<McpHttpHost> servers = new ArrayList<>();
    private McpHttpHost server;

    @BeforeEach
    void startServer() throws IOException {
        server = start(McpHttpHost.DEFAULT_KEEP_ALIVE);
    }

    @AfterEach
    void stopServers() {
        servers.forEach(McpHttpHost::close);
    }

    private McpHttpHost start(Duration keepAlive) throws IOException {
        McpHttpHost started = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0), keepAlive);
        servers.add(started);
        return started;
    }

    // --- endpoint and initialize -------------------------------------------------------------

    @Test
    void endpointIsTheLoopbackUrlOfTheBoundPort() {
        int port = server.address().getPort();

        assertThat(port).isPositive();
        assertThat(server.address().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(server.endpoint()).isEqualTo(URI.create("http://127.0.0.1:" + port + "/mcp"));
    }

    @Test
    void initializeStartsASessionAndAnswersWithJson() throws Exception {
        HttpResponse<String> response = post(null, initialize(1, "2025-11-25"));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        String sessionId = response.headers().firstValue("Mcp-Session-Id").orElseThrow();
        // The spec: visible ASCII only.
        assertThat(sessionId).matches("[\\x21-\\x7E]{16,}");
        JsonNode body = json(response);
        assertThat(body.get("id").intValue()).isEqualTo(1);
        assertThat(body.at("/result/protocolVersion").asText()).isEqualTo("2025-11-25");
        assertThat(body.at("/result/serverInfo/name").asText()).isEqualTo("mcp-chaos-demo");
        assertThat(body.at("/result/capabilities/logging").isObject()).isTrue();
        assertThat(server.sessionCount()).isEqualTo(1);

        String second = post(null, initialize(1, "2025-03-26")).headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(second).isNotEqualTo(sessionId);
        assertThat(server.sessionCount()).isEqualTo(2);
    }

    @Test
    void initializeInABatchIsRefused() throws Exception {
        HttpResponse<String> response = post(null, "[" + initialize(1, "2025-03-26") + "]");

        assertThat(response.statusCode()).isEqualTo(400);
        assertJsonRpcError(json(response), -32600, "Invalid Request: initialize must not be part of a batch");
        assertThat(server.sessionCount()).isZero();
    }

    // --- notifications, requests and JSON responses ------------------------------------------

    @Test
    void notificationsAndResponsesAreAcceptedWithNoBody() throws Exception {
        String session = initializeSession();

        HttpResponse<String> initialized = post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        HttpResponse<String> clientResponse = post(session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");

        for (HttpResponse<String> response : List.of(initialized, clientResponse)) {
            assertThat(response.statusCode()).isEqualTo(202);
            assertThat(response.body()).isEmpty();
            assertThat(response.headers().firstValue("Content-Type")).isEmpty();
        }
    }

    @Test
    void toolsListAndToolCallsAnswerWithJson() throws Exception {
        String session = initializeSession();

        HttpResponse<String> list = post(session, "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/list\"}");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.headers().firstValue("Content-Type")).hasValue("application/json");
        List<String> names = new ArrayList<>();
        json(list).at("/result/tools").forEach(tool -> names.add(tool.get("name").asText()));
        assertThat(names).containsExactly("echo", "add", "slow", "large");

        assertThat(toolText(post(session, toolCall(2, "echo", "{\"text\":\"über \\n chaos\"}", null))))
                .isEqualTo("über \n chaos");
        assertThat(toolText(post(session, toolCall(3, "add", "{\"a\":40,\"b\":2}", null)))).isEqualTo("42");
        // slow without a progress token has nothing to stream: plain JSON.
        HttpResponse<String> slow = post(session, toolCall(4, "slow", "{\"ms\":50}", null));
        assertThat(slow.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(toolText(slow)).isEqualTo("slept 50 ms");
        assertThat(toolText(post(session, toolCall(5, "large", "{\"bytes\":100000}", null)))).hasSize(100_000);
    }

    @Test
    void slowWithAProgressTokenIsAnsweredWithJsonWhenTheClientTakesOnlyJson() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = send(request(session)
                .setHeader("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(toolCall(7, "slow", "{\"ms\":10}", "\"p\""))));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(toolText(response)).isEqualTo("slept 10 ms");
    }

    @Test
    void pingAnswersWithAnEmptyResult() throws Exception {
        String session = initializeSession();

        JsonNode body = json(post(session, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"));

        assertThat(body.toString()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
    }

    // --- SSE responses -------------------------------------------------------------------------

    @Test
    void slowWithAProgressTokenStreamsProgressThenTheReplyOverSse() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, toolCall(3, "slow", "{\"ms\":250}", "\"tok\""));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-cache");
        // The whole body, parsed exactly: six events, each "id", "event", "data", blank line.
        String body = response.body();
        assertThat(body).endsWith("\n\n");
        String[] events = body.substring(0, body.length() - 2).split("\n\n", -1);
        assertThat(events).hasSize(6);
        for (int i = 0; i < 6; i++) {
            String[] lines = events[i].split("\n", -1);
            assertThat(lines).as("event %d: %s", i + 1, events[i]).hasSize(3);
            assertThat(lines[0]).isEqualTo("id: 1-" + (i + 1));
            assertThat(lines[1]).isEqualTo("event: message");
            assertThat(lines[2]).startsWith("data: {");
            JsonNode data = MAPPER.readTree(lines[2].substring("data: ".length()));
            if (i < 5) {
                assertThat(data.get("method").asText()).isEqualTo("notifications/progress");
                assertThat(data.at("/params/progressToken").asText()).isEqualTo("tok");
                assertThat(data.at("/params/progress").intValue()).isEqualTo(i + 1);
                assertThat(data.at("/params/total").intValue()).isEqualTo(5);
                assertThat(data.has("id")).isFalse();
            } else {
                assertThat(data.get("id").intValue()).isEqualTo(3);
                assertThat(data.at("/result/content/0/text").asText()).isEqualTo("slept 250 ms");
            }
        }
    }

    @Test
    void eachSseResponseIsItsOwnStreamWithItsOwnIds() throws Exception {
        String session = initializeSession();

        String first = post(session, toolCall(1, "slow", "{\"ms\":5}", "1")).body();
        String second = post(session, toolCall(2, "slow", "{\"ms\":5}", "2")).body();

        assertThat(first).startsWith("id: 1-1\n").contains("id: 1-6\n").doesNotContain("id: 2-");
        assertThat(second).startsWith("id: 2-1\n").contains("id: 2-6\n").doesNotContain("id: 1-");
    }

    // --- batches -------------------------------------------------------------------------------

    @Test
    void aBatchWithRequestsIsAnsweredWithAnArray() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, "["
                + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                + toolCall(2, "add", "{\"a\":1,\"b\":2}", null) + ","
                + "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}]");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode replies = json(response);
        assertThat(replies.isArray()).isTrue();
        assertThat(replies).hasSize(3);
        assertThat(replies.get(0).toString()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        assertThat(replies.get(1).at("/result/content/0/text").asText()).isEqualTo("3");
        assertThat(replies.get(2).at("/error/code").intValue()).isEqualTo(-32601);
    }

    @Test
    void aBatchWithSlowProgressStreamsAndEndsWithTheArrayOfReplies() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, "["
                + toolCall(1, "echo", "{\"text\":\"hi\"}", null) + ","
                + toolCall(2, "slow", "{\"ms\":20}", "\"b\"") + "]");

        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        List<String> data = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (line.startsWith("data: ")) {
                data.add(line.substring("data: ".length()));
            }
        }
        assertThat(data).hasSize(6);
        JsonNode replies = MAPPER.readTree(data.get(5));
        assertThat(replies).hasSize(2);
        assertThat(replies.get(0).at("/result/content/0/text").asText()).isEqualTo("hi");
        assertThat(replies.get(1).at("/result/content/0/text").asText()).isEqualTo("slept 20 ms");
    }

    @Test
    void aBatchOfNotificationsIsAccepted() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}]");

        assertThat(response.statusCode()).isEqualTo(202);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void anEmptyBatchIsABadRequest() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, "[]");

        assertThat(response.statusCode()).isEqualTo(400);
        assertJsonRpcError(json(response), -32600, "Invalid Request: empty batch");
    }

    // --- malformed input -----------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"{not json", "", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing"})
    void aBodyThatIsNotOneJsonValueIsAParseError(String body) throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, body);

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode error = json(response);
        assertThat(error.get("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(error.get("id").isNull()).isTrue();
        assertThat(error.at("/error/code").intValue()).isEqualTo(-32700);
        assertThat(error.at("/error/message").asText()).startsWith("Parse error: ");
    }

    @Test
    void aMessageThatIsNeitherRequestNorNotificationIsABadRequest() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = post(session, "{\"jsonrpc\":\"2.0\"}");

        assertThat(response.statusCode()).isEqualTo(400);
        assertJsonRpcError(json(response), -32600, "Invalid Request: no method");
    }

    // --- sessions ------------------------------------------------------------------------------

    @Test
    void aRequestWithoutASessionIsABadRequest() throws Exception {
        initializeSession();

        HttpResponse<String> response = post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");

        assertThat(response.statusCode()).isEqualTo(400);
        assertJsonRpcError(json(response), -32000, "Bad Request: Mcp-Session-Id header is required");
        assertThat(send(request(null).setHeader("Accept", "text/event-stream").GET()).statusCode()).isEqualTo(400);
        assertThat(send(request(null).DELETE()).statusCode()).isEqualTo(400);
    }

    @Test
    void anUnknownSessionIsNotFound() throws Exception {
        HttpResponse<String> response = post("no-such-session", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");

        assertThat(response.statusCode()).isEqualTo(404);
        assertJsonRpcError(json(response), -32001, "Session not found");
        assertThat(send(request("no-such-session").setHeader("Accept", "text/event-stream").GET()).statusCode())
                .isEqualTo(404);
    }

    @Test
    void deleteEndsTheSession() throws Exception {
        String session = initializeSession();

        HttpResponse<String> deleted = send(request(session).DELETE());

        assertThat(deleted.statusCode()).isEqualTo(204);
        assertThat(deleted.body()).isEmpty();
        assertThat(server.sessionCount()).isZero();
        assertThat(post(session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}").statusCode()).isEqualTo(404);
        assertThat(send(request(session).DELETE()).statusCode()).isEqualTo(404);
    }

    @Test
    void deleteEndsTheSessionsOpenStreams() throws Exception {
        String session = initializeSession();
        SseRecorder stream = openGet(session, null);

        assertThat(send(request(session).DELETE()).statusCode()).isEqualTo(204);

        stream.awaitEnd();
    }

    @Test
    void anUnsupportedProtocolVersionHeaderIsABadRequest() throws Exception {
        String session = initializeSession();
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

        HttpResponse<String> bad = send(request(session).header("MCP-Protocol-Version", "1999-01-01")
                .POST(HttpRequest.BodyPublishers.ofString(ping)));
        HttpResponse<String> good = send(request(session).header("MCP-Protocol-Version", "2025-06-18")
                .POST(HttpRequest.BodyPublishers.ofString(ping)));

        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad).at("/error/message").asText()).startsWith("Bad Request: unsupported MCP-Protocol-Version: 1999-01-01");
        assertThat(good.statusCode()).isEqualTo(200);
    }

    // --- the standalone GET stream -------------------------------------------------------------

    @Test
    void theGetStreamCarriesTheLogNotificationAfterSetLevel() throws Exception {
        String session = initializeSession();
        SseRecorder stream = openGet(session, null);

        HttpResponse<String> setLevel = post(session,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");

        assertThat(setLevel.statusCode()).isEqualTo(200);
        assertThat(json(setLevel).toString()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
        SseRecorder.Event event = stream.nextEvent();
        assertThat(event.id()).isEqualTo("0-1");
        assertThat(event.event()).isEqualTo("message");
        assertThat(event.data()).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
                + "{\"level\":\"warning\",\"logger\":\"mcp-chaos-demo\",\"data\":\"log level set to warning\"}}");
        stream.cancel();
    }

    @Test
    void aMessageSentBeforeAnyGetWaitsForTheFirstOne() throws Exception {
        String session = initializeSession();
        post(session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"error\"}}");

        SseRecorder stream = openGet(session, null);

        SseRecorder.Event event = stream.nextEvent();
        assertThat(event.id()).isEqualTo("0-1");
        assertThat(MAPPER.readTree(event.data()).at("/params/level").asText()).isEqualTo("error");
        stream.cancel();
    }

    @Test
    void anIdleGetStreamGetsKeepAliveComments() throws Exception {
        McpHttpHost fast = start(Duration.ofMillis(100));
        String session = initializeSession(fast.endpoint());
        SseRecorder stream = new SseRecorder();
        client.sendAsync(request(fast.endpoint(), session).setHeader("Accept", "text/event-stream").GET().build(),
                stream.handler());

        assertThat(stream.headers().statusCode()).isEqualTo(200);
        // Each keep-alive is a comment line followed by the blank line that ends an SSE block.
        for (int i = 0; i < 2; i++) {
            assertThat(stream.nextLine()).isEqualTo(": keep-alive");
            assertThat(stream.nextLine()).isEmpty();
        }
        stream.cancel();
    }

    @Test
    void getNeedsAnAcceptThatAdmitsEventStreams() throws Exception {
        String session = initializeSession();

        HttpResponse<String> response = send(request(session).setHeader("Accept", "application/json").GET());

        assertThat(response.statusCode()).isEqualTo(406);
        assertThat(json(response).at("/error/code").intValue()).isEqualTo(-32000);
    }

    // --- resumption ----------------------------------------------------------------------------

    @Test
    void aCutPostStreamResumesWithLastEventIdAndDeliversTheRest() throws Exception {
        String session = initializeSession();
        SseRecorder original = new SseRecorder();
        client.sendAsync(request(server.endpoint(), session)
                .POST(HttpRequest.BodyPublishers.ofString(toolCall(4, "slow", "{\"ms\":1000}", "\"r\"")))
                .build(), original.handler());
        assertThat(original.headers().statusCode()).isEqualTo(200);
        SseRecorder.Event first = original.nextEvent();
        assertThat(first.id()).isEqualTo("1-1");
        original.cancel();

        SseRecorder resumed = openGet(session, first.id());

        List<SseRecorder.Event> rest = resumed.nextEvents(5);
        assertThat(rest).extracting(SseRecorder.Event::id).containsExactly("1-2", "1-3", "1-4", "1-5", "1-6");
        for (int i = 0; i < 4; i++) {
            assertThat(MAPPER.readTree(rest.get(i).data()).at("/params/progress").intValue()).isEqualTo(i + 2);
        }
        JsonNode reply = MAPPER.readTree(rest.get(4).data());
        assertThat(reply.get("id").intValue()).isEqualTo(4);
        assertThat(reply.at("/result/content/0/text").asText()).isEqualTo("slept 1000 ms");
        // The POST's stream is complete, so the resumed response ends after the reply.
        resumed.awaitEnd();
    }

    @Test
    void withPrimingEventsAPostStreamStartsWithAnIdAndEmptyDataAndResumesFromIt() throws Exception {
        server.primingEvents(true);
        String session = initializeSession();
        SseRecorder original = new SseRecorder();
        client.sendAsync(request(server.endpoint(), session)
                .header("MCP-Protocol-Version", "2025-11-25")
                .POST(HttpRequest.BodyPublishers.ofString(toolCall(4, "slow", "{\"ms\":1000}", "\"r\"")))
                .build(), original.handler());
        assertThat(original.headers().statusCode()).isEqualTo(200);
        SseRecorder.Event priming = original.nextEvent();
        assertThat(priming.id()).isEqualTo("1-1");
        assertThat(priming.data()).isEmpty();
        original.cancel();

        // A client that has nothing but the priming event resumes from it and misses nothing.
        SseRecorder resumed = openGet(session, priming.id(), "2025-11-25");

        List<SseRecorder.Event> rest = resumed.nextEvents(6);
        assertThat(rest).extracting(SseRecorder.Event::id).containsExactly("1-2", "1-3", "1-4", "1-5", "1-6", "1-7");
        assertThat(MAPPER.readTree(rest.get(0).data()).at("/params/progress").intValue()).isEqualTo(1);
        assertThat(MAPPER.readTree(rest.get(5).data()).get("id").intValue()).isEqualTo(4);
        resumed.awaitEnd();
    }

    @Test
    void withPrimingEventsAGetStreamStartsWithOneAndAResumedOneDoesNot() throws Exception {
        server.primingEvents(true);
        String session = initializeSession();
        SseRecorder first = openGet(session, null, "2025-11-25");
        SseRecorder.Event priming = first.nextEvent();
        assertThat(priming.id()).isEqualTo("0-1");
        assertThat(priming.data()).isEmpty();
        first.cancel();
        setLevel(session, "info");

        SseRecorder resumed = openGet(session, priming.id(), "2025-11-25");

        SseRecorder.Event info = resumed.nextEvent();
        assertThat(info.id()).as("the message after the priming event, and no new priming event").isEqualTo("0-2");
        assertThat(MAPPER.readTree(info.data()).at("/params/level").asText()).isEqualTo("info");
        resumed.cancel();
    }

    @Test
    void withPrimingEventsAClientOfAnOlderRevisionGetsNone() throws Exception {
        server.primingEvents(true);
        String session = initializeSession();
        SseRecorder stream = openGet(session, null, "2025-06-18");
        setLevel(session, "notice");
        SseRecorder.Event first = stream.nextEvent();
        assertThat(first.id()).isEqualTo("0-1");
        assertThat(first.data()).isNotEmpty();
        stream.cancel();
    }

    @Test
    void primingEventsAreForClientsOf2025_11_25AndLater() {
        assertThat(McpRevisions.primes("2025-11-25")).isTrue();
        assertThat(McpRevisions.primes("2026-07-28")).isTrue();
        assertThat(McpRevisions.primes("2025-06-18")).isFalse();
        assertThat(McpRevisions.primes(null)).isFalse();
        assertThat(McpRevisions.primes("latest")).isFalse();
    }

    @Test
    void theGetStreamResumesAfterLastEventId() throws Exception {
        String session = initializeSession();
        SseRecorder first = openGet(session, null);
        setLevel(session, "info");
        SseRecorder.Event info = first.nextEvent();
        assertThat(info.id()).isEqualTo("0-1");
        first.cancel();
        setLevel(session, "debug");

        SseRecorder resumed = openGet(session, info.id());

        SseRecorder.Event debug = resumed.nextEvent();
        assertThat(debug.id()).isEqualTo("0-2");
        assertThat(MAPPER.readTree(debug.data()).at("/params/level").asText()).isEqualTo("debug");
        resumed.cancel();
    }

    @Test
    void anUnknownLastEventIdOpensTheStandaloneStream() throws Exception {
        String session = initializeSession();

        SseRecorder stream = openGet(session, "99-3");
        setLevel(session, "notice");

        assertThat(stream.nextEvent().id()).isEqualTo("0-1");
        stream.cancel();
    }

    @Test
    void aNewGetTakesOverFromTheOldOne() throws Exception {
        String session = initializeSession();
        SseRecorder old = openGet(session, null);

        SseRecorder current = openGet(session, null);
        setLevel(session, "alert");

        assertThat(current.nextEvent().id()).isEqualTo("0-1");
        old.awaitEnd();
        assertThat(old.unreadLines()).isEmpty();
        current.cancel();
    }

    // --- HTTP-level refusals -------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"http://evil.example", "http://localhost.evil.example:3000", "null", "file://"})
    void aForeignOriginIsForbidden(String origin) throws Exception {
        HttpResponse<String> response = send(request(null).header("Origin", origin)
                .POST(HttpRequest.BodyPublishers.ofString(initialize(1, "2025-11-25"))));

        assertThat(response.statusCode()).isEqualTo(403);
        assertThat(json(response).at("/error/message").asText()).startsWith("Forbidden: Origin");
        assertThat(server.sessionCount()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost:6274", "http://127.0.0.1", "https://[::1]:8443", "http://LOCALHOST"})
    void aLocalOriginIsServed(String origin) throws Exception {
        HttpResponse<String> response = send(request(null).header("Origin", origin)
                .POST(HttpRequest.BodyPublishers.ofString(initialize(1, "2025-11-25"))));

        assertThat(response.statusCode()).isEqualTo(200);
    }

    @Test
    void otherMethodsAndPathsAreRefused() throws Exception {
        HttpResponse<String> put = send(request(null).PUT(HttpRequest.BodyPublishers.ofString("{}")));
        assertThat(put.statusCode()).isEqualTo(405);
        assertThat(put.headers().firstValue("Allow")).hasValue("GET, POST, DELETE");

        HttpResponse<String> elsewhere = client.send(HttpRequest.newBuilder(server.endpoint().resolve("/other"))
                .timeout(REQUEST_TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(elsewhere.statusCode()).isEqualTo(404);
    }

    @Test
    void unacceptableAcceptAndContentTypeAreRefused() throws Exception {
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

        HttpResponse<String> html = send(HttpRequest.newBuilder(server.endpoint()).timeout(REQUEST_TIMEOUT)
                .setHeader("Accept", "text/html").setHeader("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(ping)));
        HttpResponse<String> text = send(HttpRequest.newBuilder(server.endpoint()).timeout(REQUEST_TIMEOUT)
                .header("Accept", ACCEPT_BOTH).header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(ping)));

        assertThat(html.statusCode()).isEqualTo(406);
        assertThat(text.statusCode()).isEqualTo(415);
    }

    @Test
    void closeEndsOpenStreamsAndRefusesConnections() throws Exception {
        McpHttpHost closing = start(McpHttpHost.DEFAULT_KEEP_ALIVE);
        String session = initializeSession(closing.endpoint());
        SseRecorder stream = new SseRecorder();
        client.sendAsync(request(closing.endpoint(), session).setHeader("Accept", "text/event-stream").GET().build(),
                stream.handler());
        assertThat(stream.headers().statusCode()).isEqualTo(200);

        closing.close();

        stream.awaitEnd();
        assertThat(closing.sessionCount()).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            try {
                client.send(HttpRequest.newBuilder(closing.endpoint()).timeout(Duration.ofSeconds(2))
                        .POST(HttpRequest.BodyPublishers.ofString(initialize(1, "2025-11-25"))).build(),
                        HttpResponse.BodyHandlers.discarding());
                return false;
            } catch (IOException refused) {
                return true;
            }
        });
    }

    // --- helpers -------------------------------------------------------------------------------

    private String initializeSession() throws Exception {
        return initializeSession(server.endpoint());
    }

    private String initializeSession(URI endpoint) throws Exception {
        HttpResponse<String> response = client.send(request(endpoint, null)
                .POST(HttpRequest.BodyPublishers.ofString(initialize(1, "2025-11-25"))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("initialize: %s", response.body()).isEqualTo(200);
        String session = response.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HttpResponse<String> initialized = client.send(request(endpoint, session)
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(initialized.statusCode()).isEqualTo(202);
        return session;
    }

    private SseRecorder openGet(String session, String lastEventId) throws Exception {
        return openGet(session, lastEventId, null);
    }

    /** A GET of the session's stream; with {@code protocolVersion}, its {@code MCP-Protocol-Version}. */
    private SseRecorder openGet(String session, String lastEventId, String protocolVersion) throws Exception {
        SseRecorder stream = new SseRecorder();
        HttpRequest.Builder get = request(server.endpoint(), session).setHeader("Accept", "text/event-stream").GET();
        if (protocolVersion != null) {
            get.header("MCP-Protocol-Version", protocolVersion);
        }
        if (lastEventId != null) {
            get.header("Last-Event-ID", lastEventId);
        }
        client.sendAsync(get.build(), stream.handler());
        HttpResponse.ResponseInfo headers = stream.headers();
        assertThat(headers.statusCode()).isEqualTo(200);
        assertThat(headers.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        return stream;
    }

    private void setLevel(String session, String level) throws Exception {
        HttpResponse<String> response = post(session, "{\"jsonrpc\":\"2.0\",\"id\":\"lvl\",\"method\":\"logging/setLevel\","
                + "\"params\":{\"level\":\"" + level + "\"}}");
        assertThat(response.statusCode()).isEqualTo(200);
    }

    private HttpResponse<String> post(String session, String body) throws Exception {
        return send(request(session).POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private HttpRequest.Builder request(String session) {
        return request(server.endpoint(), session);
    }

    /**
     * A request as a spec-following client sends it: both Accept types, JSON content, the session
     * if any. Tests that need other values replace them with {@code setHeader}.
     */
    private static HttpRequest.Builder request(URI endpoint, String session) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(endpoint)
                .timeout(REQUEST_TIMEOUT)
                .header("Accept", ACCEPT_BOTH)
                .header("Content-Type", "application/json");
        if (session != null) {
            builder.header("Mcp-Session-Id", session);
        }
        return builder;
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String initialize(int id, String version) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\""
                + version + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw-http-test\",\"version\":\"1\"}}}";
    }

    private static String toolCall(int id, String tool, String arguments, String progressTokenJson) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("name", "\"" + tool + "\"");
        params.put("arguments", arguments);
        if (progressTokenJson != null) {
            params.put("_meta", "{\"progressToken\":" + progressTokenJson + "}");
        }
        StringBuilder json = new StringBuilder("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{");
        params.forEach((key, value) -> json.append('"').append(key).append("\":").append(value).append(','));
        json.setLength(json.length() - 1);
        return json.append("}}").toString();
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return MAPPER.readTree(response.body());
    }

    private static String toolText(HttpResponse<String> response) throws IOException {
        assertThat(response.statusCode()).as("status of %s", response.body()).isEqualTo(200);
        JsonNode body = json(response);
        assertThat(body.at("/result/isError").booleanValue()).as("isError in %s", body).isFalse();
        return body.at("/result/content/0/text").asText();
    }

    private static void assertJsonRpcError(JsonNode body, int code, String message) {
        assertThat(body.get("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(body.get("id").isNull()).isTrue();
        assertThat(body.at("/error/code").intValue()).isEqualTo(code);
        assertThat(body.at("/error/message").asText()).isEqualTo(message);
    }
}
