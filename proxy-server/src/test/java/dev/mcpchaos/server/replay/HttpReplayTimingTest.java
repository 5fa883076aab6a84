package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.record.Cassette;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.StringReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.mcpchaos.server.replay.ReplayTimingTest.AT_ONCE;
import static dev.mcpchaos.server.replay.ReplayTimingTest.TOLERANCE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --timing} over Streamable HTTP (#17), through the proxy: a JSON answer comes its
 * recorded delay after the POST, an SSE answer's progress event and result each at theirs (the
 * stream open meanwhile); none answers at once. Each timed answer is checked to arrive whole.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpReplayTimingTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static String line(int seq, double t, String dir, int exchange, String contentType, String message) {
        String http = "{\"exchange\":" + exchange + ",\"method\":\"POST\",\"uri\":\"/mcp\""
                + (contentType == null ? "" : ",\"status\":200,\"contentType\":\"" + contentType + "\"")
                + ("text/event-stream".equals(contentType) ? ",\"sse\":{}" : "") + "}";
        return "{\"type\":\"message\",\"seq\":" + seq + ",\"t\":" + t + ",\"dir\":\"" + dir
                + "\",\"session\":\"recorded\",\"http\":" + http + ",\"message\":" + message + "}";
    }

    static final String ECHO = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            + "\"arguments\":{}}}";
    static final String LONG = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"long\","
            + "\"arguments\":{},\"_meta\":{\"progressToken\":\"t\"}}}";

    /**
     * initialize answered in 1 ms; notifications/initialized followed 300 ms later by a
     * list_changed on the GET stream; echo answered as JSON 300 ms after it; long as SSE, progress at +150 ms, result at +300 ms.
     */
    static Cassette cassette() throws IOException {
        String text = String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"http\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                line(0, 0, "c2s", 0, null, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                        + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"rec\",\"version\":\"1\"}}}"),
                line(1, 1, "s2c", 0, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":"
                        + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                        + "\"serverInfo\":{\"name\":\"recorded\",\"version\":\"1\"}}}"),
                line(2, 3, "c2s", 9, null, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                line(3, 303, "s2c", 10, "text/event-stream", "{\"jsonrpc\":\"2.0\",\"method\":"
                        + "\"notifications/tools/list_changed\"}"),
                line(4, 310, "c2s", 1, null, ECHO.formatted(5)),
                line(5, 610, "s2c", 1, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":"
                        + "{\"content\":[{\"type\":\"text\",\"text\":\"echo done\"}]}}"),
                line(6, 700, "c2s", 2, null, LONG.formatted(6)),
                line(7, 850, "s2c", 2, "text/event-stream", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                        + "\"params\":{\"progressToken\":\"t\",\"progress\":1,\"total\":1}}"),
                line(8, 1000, "s2c", 2, "text/event-stream", "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":"
                        + "{\"content\":[{\"type\":\"text\",\"text\":\"long done\"}]}}")) + "\n";
        return Cassette.read(new StringReader(text), "http-timing.ndjson");
    }

    private static HttpRequest post(RunningHttp proxy, String session, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(proxy.mcpUrl()).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return request.build();
    }

    private static String initialize(RunningHttp proxy) throws Exception {
        HttpResponse<String> init = HTTP.send(post(proxy, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                + "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                + "\"version\":\"1\"}}}"), HttpResponse.BodyHandlers.ofString());
        assertThat(init.statusCode()).isEqualTo(200);
        return init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    }

    /** The echo call's answer and how long after the POST it came. */
    private static Duration echo(Timing timing) throws Exception {
        try (RunningHttp proxy = McpChaosProxy.replay(new HttpReplay(List.of(cassette()), OnExhausted.LAST, timing,
                Matching.DEFAULT)).start()) {
            String session = initialize(proxy);
            long sent = System.nanoTime();
            HttpResponse<String> answer = HTTP.send(post(proxy, session, ECHO.formatted(42)),
                    HttpResponse.BodyHandlers.ofString());
            Duration took = Duration.ofNanos(System.nanoTime() - sent);
            assertThat(answer.statusCode()).isEqualTo(200);
            JsonNode body = JSON.readTree(answer.body());
            assertThat(body.get("id").asInt()).isEqualTo(42);
            assertThat(body.at("/result/content/0/text").asText()).isEqualTo("echo done");
            return took;
        }
    }

    @Test
    void recordedTimingHoldsAJsonAnswerItsRecordedDelayAndNoneAnswersAtOnce() throws Exception {
        assertThat(echo(Timing.RECORDED)).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));
        assertThat(echo(Timing.NONE)).isLessThan(AT_ONCE);
    }

    @Test
    void recordedTimingSendsAnSseAnswersProgressAndResultEachAtItsRecordedDelay() throws Exception {
        try (RunningHttp proxy = McpChaosProxy.replay(new HttpReplay(List.of(cassette()), OnExhausted.LAST,
                Timing.RECORDED, Matching.DEFAULT)).start()) {
            String session = initialize(proxy);
            long sent = System.nanoTime();
            HttpResponse<Stream<String>> answer = HTTP.send(post(proxy, session, LONG.formatted(43)),
                    HttpResponse.BodyHandlers.ofLines());
            assertThat(answer.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
            List<JsonNode> events = new ArrayList<>();
            List<Duration> at = new ArrayList<>();
            Iterator<String> lines = answer.body().iterator();
            while (events.size() < 2 && lines.hasNext()) { // bounded: the stream ends after the result
                String l = lines.next();
                if (l.startsWith("data:")) {
                    events.add(JSON.readTree(l.substring(5).trim()));
                    at.add(Duration.ofNanos(System.nanoTime() - sent));
                }
            }
            answer.body().close();
            assertThat(events).hasSize(2);
            assertThat(events.get(0).path("method").asText()).isEqualTo("notifications/progress");
            assertThat(events.get(0).at("/params/progressToken").asText()).isEqualTo("t");
            assertThat(at.get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(150).minus(TOLERANCE));
            assertThat(events.get(1).get("id").asInt()).isEqualTo(43);
            assertThat(events.get(1).at("/result/content/0/text").asText()).isEqualTo("long done");
            assertThat(at.get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));
        }
    }

    @Test
    void aBatchIsAnsweredWhenItsLastAnswerIsDueEachAnswerWhole() throws Exception {
        try (RunningHttp proxy = McpChaosProxy.replay(new HttpReplay(List.of(cassette()), OnExhausted.LAST,
                Timing.RECORDED, Matching.DEFAULT)).start()) {
            String session = initialize(proxy);
            long sent = System.nanoTime();
            HttpResponse<String> answer = HTTP.send(post(proxy, session, "[" + ECHO.formatted(50) + ","
                    + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}},"
                    + ECHO.formatted(51) + "]"), HttpResponse.BodyHandlers.ofString());
            Duration took = Duration.ofNanos(System.nanoTime() - sent);
            assertThat(answer.statusCode()).isEqualTo(200);
            JsonNode replies = JSON.readTree(answer.body());
            assertThat(replies.isArray()).isTrue();
            assertThat(replies).hasSize(2); // the notification has no answer
            assertThat(replies.get(0).get("id").asInt()).isEqualTo(50);
            assertThat(replies.get(1).get("id").asInt()).isEqualTo(51);
            assertThat(replies).allSatisfy(r -> assertThat(r.at("/result/content/0/text").asText()).isEqualTo("echo done"));
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));
        }
    }

    @Test
    void aNotificationIsAcceptedAtOnceAndWhatTheServerSentAfterItComesOnTheGetStreamAtItsDelay() throws Exception {
        try (RunningHttp proxy = McpChaosProxy.replay(new HttpReplay(List.of(cassette()), OnExhausted.LAST,
                Timing.RECORDED, Matching.DEFAULT)).start()) {
            String session = initialize(proxy);
            HttpResponse<Stream<String>> get = HTTP.send(HttpRequest.newBuilder(proxy.mcpUrl()).GET()
                    .header("Accept", "text/event-stream").header("Mcp-Session-Id", session).build(),
                    HttpResponse.BodyHandlers.ofLines());
            assertThat(get.statusCode()).isEqualTo(200);
            long sent = System.nanoTime();
            HttpResponse<String> accepted = HTTP.send(post(proxy, session,
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"), HttpResponse.BodyHandlers.ofString());
            assertThat(accepted.statusCode()).isEqualTo(202);
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).isLessThan(AT_ONCE);
            Iterator<String> lines = get.body().iterator();
            JsonNode own = null;
            for (int n = 0; own == null && n < 100 && lines.hasNext(); n++) { // bounded; keep-alives aside
                String l = lines.next();
                if (l.startsWith("data:")) {
                    own = JSON.readTree(l.substring(5).trim());
                }
            }
            Duration at = Duration.ofNanos(System.nanoTime() - sent);
            get.body().close();
            assertThat(own).isNotNull();
            assertThat(own.path("method").asText()).isEqualTo("notifications/tools/list_changed");
            assertThat(at).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));
        }
    }
}
