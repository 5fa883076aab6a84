package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.server.replay.ReplayFaultsTest.HEADER;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.PING;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.call;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.cassette;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.line;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --match sequential|strict} and {@code --match-ignore} (#17), over stdio behind the proxy
 * (and sequential over HTTP, per session): each refusal is -32601 naming what was expected and is
 * counted, and each has its twin where a request that matches is answered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayMatchModesTest {

    private static JsonNode ask(ReplayClient client, String request) throws Exception {
        client.send(request);
        return client.next(1).get(0).json();
    }

    private static String text(JsonNode answer) {
        return answer.has("error") ? answer.at("/error/code").asInt() + " " + answer.at("/error/message").asText()
                : answer.at("/result/content/0/text").asText();
    }

    @Test
    void sequentialRefusesARequestOutOfOrderNamingTheOneExpectedNextThenServesTheRecordedOrder() throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(3), Timing.NONE, Matching.of(MatchMode.SEQUENTIAL, List.of()))) {
            JsonNode early = ask(client, call(1, 1));
            assertThat(early.get("id").asInt()).isEqualTo(1);
            assertThat(text(early)).isEqualTo("-32601 not the next recorded request: tools/call "
                    + "{\"arguments\":{\"i\":1},\"name\":\"echo\"} (expected next, recorded request 1: tools/call "
                    + "{\"arguments\":{\"i\":0},\"name\":\"echo\"}; match: sequential)");
            // The twin: the recorded order is answered, the refusal did not move the sequence on.
            assertThat(text(ask(client, call(2, 0)))).isEqualTo("echo 0");
            assertThat(text(ask(client, call(3, 1)))).isEqualTo("echo 1");
            assertThat(text(ask(client, call(4, 2)))).isEqualTo("echo 2");
            assertThat(ask(client, PING).get("result")).isNotNull();
            assertThat(text(ask(client, PING))).isEqualTo("-32601 no recording left for ping {}: every one of the 4 "
                    + "recorded request(s) was served in order (match: sequential)");
            assertThat(client.replay.served()).isEqualTo(4);
            assertThat(client.replay.unmatched()).isEqualTo(2);
        }
    }

    @Test
    void theDefaultModeAnswersTheSameOutOfOrderRequest() throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(3), Timing.NONE, Matching.DEFAULT)) {
            assertThat(text(ask(client, call(1, 1)))).isEqualTo("echo 1");
            assertThat(client.replay.unmatched()).isZero();
        }
    }

    /** A call recorded with a progress token and a time argument. */
    private static final String TIMED_CALL = "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":"
            + "{\"name\":\"search\",\"arguments\":{\"q\":\"mcp\",\"at\":\"%s\"},\"_meta\":{\"progressToken\":\"%s\"}}}";

    private static final String META_CASSETTE = String.join("\n", HEADER,
            line(0, "c2s", TIMED_CALL.formatted(1, "2026-12-02T06:00:00Z", "rec")),
            line(1, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"found\"}]}}"))
            + "\n";

    @Test
    void strictRefusesAnotherProgressTokenAndAnswersTheSameMessageUnderAnotherId() throws Exception {
        try (ReplayClient client = new ReplayClient(META_CASSETTE, Timing.NONE, Matching.of(MatchMode.STRICT, List.of()))) {
            JsonNode other = ask(client, TIMED_CALL.formatted(7, "2026-12-02T06:00:00Z", "live"));
            assertThat(text(other)).startsWith("-32601 no recording for tools/call {\"jsonrpc\":\"2.0\",\"params\":"
                    + "{\"_meta\":{\"progressToken\":\"live\"},")
                    .contains("(closest recorded: tools/call {\"jsonrpc\":\"2.0\",\"params\":{\"_meta\":{\"progressToken\":\"rec\"},");
            // The twin: the whole message equal but its id.
            JsonNode same = ask(client, TIMED_CALL.formatted("\"other-id\"", "2026-12-02T06:00:00Z", "rec"));
            assertThat(same.get("id").asText()).isEqualTo("other-id");
            assertThat(text(same)).isEqualTo("found");
            assertThat(client.replay.unmatched()).isEqualTo(1);
        }
        try (ReplayClient client = new ReplayClient(META_CASSETTE, Timing.NONE, Matching.DEFAULT)) {
            assertThat(text(ask(client, TIMED_CALL.formatted(7, "2026-12-02T06:00:00Z", "live"))))
                    .as("the default mode leaves _meta out").isEqualTo("found");
        }
    }

    @Test
    void matchIgnoreLeavesAPathOutOfTheKeyInDefaultAndStrict() throws Exception {
        String later = TIMED_CALL.formatted(8, "2026-12-03T09:30:00Z", "rec");
        try (ReplayClient client = new ReplayClient(META_CASSETTE, Timing.NONE, Matching.DEFAULT)) {
            assertThat(text(ask(client, later))).as("without --match-ignore the time counts")
                    .startsWith("-32601 no recording for tools/call");
        }
        for (String path : List.of("/params/arguments/at", "params.arguments.at", "params.**.at")) {
            try (ReplayClient client = new ReplayClient(META_CASSETTE, Timing.NONE,
                    Matching.of(MatchMode.DEFAULT, List.of(path)))) {
                assertThat(text(ask(client, later))).as(path).isEqualTo("found");
                assertThat(text(ask(client, TIMED_CALL.formatted(9, "any", "rec").replace("mcp", "other"))))
                        .as("what is not ignored still counts").startsWith("-32601 no recording for tools/call");
            }
        }
        try (ReplayClient client = new ReplayClient(META_CASSETTE, Timing.NONE,
                Matching.of(MatchMode.STRICT, List.of("/params/arguments/at", "params._meta.progressToken")))) {
            assertThat(text(ask(client, TIMED_CALL.formatted(10, "2026-12-03T09:30:00Z", "live")))).isEqualTo("found");
        }
    }

    @Test
    void methodServesEachToolsRecordingsInOrderWhateverTheArgumentsAndTheLastAgainOnceUsedUp() throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(2), Timing.NONE, Matching.of(MatchMode.METHOD, List.of()))) {
            JsonNode first = ask(client, call(41, 7));
            assertThat(first.get("id").asInt()).as("the live id").isEqualTo(41);
            assertThat(text(first)).isEqualTo("echo 0");
            assertThat(text(ask(client, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":"
                    + "{\"name\":\"echo\"}}"))).as("no arguments at all").isEqualTo("echo 1");
            assertThat(text(ask(client, call(43, 0)))).as("used up: the last again").isEqualTo("echo 1");
            assertThat(text(ask(client, "{\"jsonrpc\":\"2.0\",\"id\":44,\"method\":\"tools/call\",\"params\":"
                    + "{\"name\":\"add\",\"arguments\":{\"i\":0}}}")))
                    .as("another tool is not served echo's answers")
                    .isEqualTo("-32601 no recording for tools/call {\"name\":\"add\"} (closest recorded: tools/call "
                            + "{\"name\":\"echo\"}; match: method)");
            JsonNode ping = ask(client, "{\"jsonrpc\":\"2.0\",\"id\":45,\"method\":\"ping\",\"params\":{\"x\":1}}");
            assertThat(ping.get("id").asInt()).isEqualTo(45);
            assertThat(ping.get("result")).isNotNull();
            assertThat(client.replay.served()).isEqualTo(4);
            assertThat(client.replay.unmatched()).isEqualTo(1);
        }
    }

    @Test
    void overHttpMethodQueuesStartAgainInEachSession() throws Exception {
        ObjectMapper json = new ObjectMapper();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpReplay replay = new HttpReplay(List.of(HttpReplayFaultsTest.cassette(2)), OnExhausted.LAST, Timing.NONE,
                Matching.of(MatchMode.METHOD, List.of()));
        try (RunningHttp proxy = McpChaosProxy.replay(replay).start()) {
            for (int session = 0; session < 2; session++) {
                HttpResponse<String> init = http.send(post(proxy, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                        + "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"), HttpResponse.BodyHandlers.ofString());
                assertThat(init.statusCode()).isEqualTo(200);
                String id = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
                for (int i = 0; i < 3; i++) {
                    JsonNode answer = json.readTree(http.send(post(proxy, id, HttpReplayFaultsTest.call(60 + i, 9)),
                            HttpResponse.BodyHandlers.ofString()).body());
                    assertThat(answer.get("id").asInt()).isEqualTo(60 + i);
                    assertThat(answer.at("/result/content/0/text").asText()).as("session %d, call %d", session, i)
                            .isEqualTo(i == 0 ? "echo 0" : "echo 1");
                }
            }
            assertThat(replay.unmatched()).isZero();
        }
    }

    @Test
    void aBadIgnorePathIsRefusedNamingWhatIsExpected() {
        for (String bad : List.of("/", "", "params..x")) {
            assertThatThrownBy(() -> Matching.of(MatchMode.DEFAULT, List.of(bad)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("'" + bad + "' (expected: a JSON pointer such as /params/arguments/time, or a dotted "
                            + "glob such as params.arguments.* or params.**.time)");
        }
    }

    @Test
    void overHttpEachSessionFollowsTheRecordedOrderFromItsStart() throws Exception {
        ObjectMapper json = new ObjectMapper();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpReplay replay = new HttpReplay(List.of(HttpReplayFaultsTest.cassette(2)), OnExhausted.LAST, Timing.NONE,
                Matching.of(MatchMode.SEQUENTIAL, List.of()));
        try (RunningHttp proxy = McpChaosProxy.replay(replay).start()) {
            for (int session = 0; session < 2; session++) {
                HttpResponse<String> init = http.send(post(proxy, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                        + "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"), HttpResponse.BodyHandlers.ofString());
                assertThat(init.statusCode()).isEqualTo(200);
                String id = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
                JsonNode early = json.readTree(http.send(post(proxy, id, HttpReplayFaultsTest.call(5, 1)),
                        HttpResponse.BodyHandlers.ofString()).body());
                assertThat(early.at("/error/message").asText()).contains("not the next recorded request",
                        "expected next, recorded request 2: tools/call {\"arguments\":{\"i\":0},\"name\":\"echo\"}");
                JsonNode first = json.readTree(http.send(post(proxy, id, HttpReplayFaultsTest.call(6, 0)),
                        HttpResponse.BodyHandlers.ofString()).body());
                assertThat(first.at("/result/content/0/text").asText()).isEqualTo("echo 0");
                JsonNode second = json.readTree(http.send(post(proxy, id, HttpReplayFaultsTest.call(7, 1)),
                        HttpResponse.BodyHandlers.ofString()).body());
                assertThat(second.at("/result/content/0/text").asText()).isEqualTo("echo 1");
            }
            assertThat(replay.unmatched()).isEqualTo(2);
        }
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
}
