package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
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
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Faults during an HTTP replay (#17): {@code McpChaosProxy.replay(HttpReplay)} puts the replayed
 * server behind the proxy's HTTP exchange, so latency, drop, corrupt and disconnect do to its
 * answers what docs/rules.md's Streamable HTTP table says they do to a live server's, on JSON
 * answers and on SSE answers. Each fault has its twin where the next answer arrives whole, and the
 * seed gives the same decisions twice.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpReplayFaultsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * A recorded HTTP session: initialize, {@code calls} echo calls (argument i) answered as JSON,
     * and one {@code long} call answered as an SSE stream of a progress event and its result.
     */
    static Cassette cassette(int calls) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"http\","
                + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}");
        int[] seq = {0};
        int exchange = 0;
        lines.add(line(seq, "c2s", exchange, null, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"rec\",\"version\":\"1\"}}}"));
        lines.add(line(seq, "s2c", exchange++, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":"
                + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                + "\"serverInfo\":{\"name\":\"recorded\",\"version\":\"1\"}}}"));
        for (int i = 0; i < calls; i++) {
            lines.add(line(seq, "c2s", exchange, null, call(100 + i, i)));
            lines.add(line(seq, "s2c", exchange++, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":" + (100 + i)
                    + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"echo " + i + "\"}]}}"));
        }
        lines.add(line(seq, "c2s", exchange, null, LONG.formatted(900)));
        lines.add(line(seq, "s2c", exchange, "text/event-stream", "{\"jsonrpc\":\"2.0\",\"method\":"
                + "\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1,\"total\":1}}"));
        lines.add(line(seq, "s2c", exchange, "text/event-stream", "{\"jsonrpc\":\"2.0\",\"id\":900,\"result\":"
                + "{\"content\":[{\"type\":\"text\",\"text\":\"long done\"}]}}"));
        return Cassette.read(new StringReader(String.join("\n", lines) + "\n"), "http-faults.ndjson");
    }

    private static String line(int[] seq, String dir, int exchange, String contentType, String message) {
        String http = "{\"exchange\":" + exchange + ",\"method\":\"POST\",\"uri\":\"/mcp\""
                + (contentType == null ? "" : ",\"status\":200,\"contentType\":\"" + contentType + "\"")
                + ("text/event-stream".equals(contentType) ? ",\"sse\":{}" : "") + "}";
        int n = seq[0]++;
        return "{\"type\":\"message\",\"seq\":" + n + ",\"t\":" + n + ",\"dir\":\"" + dir
                + "\",\"session\":\"recorded-session\",\"http\":" + http + ",\"message\":" + message + "}";
    }

    static String call(int id, int i) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"i\":" + i + "}}}";
    }

    static final String LONG = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"long\","
            + "\"arguments\":{},\"_meta\":{\"progressToken\":\"t\"}}}";

    /** A replayed server behind a proxy with {@code rules} and {@code seed}, and an initialized session on it. */
    private static final class Replayed implements AutoCloseable {
        final HttpReplay replay;
        final RunningHttp proxy;
        final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
        final String session;

        Replayed(int calls, String rules, long seed) throws Exception {
            replay = new HttpReplay(List.of(cassette(calls)), OnExhausted.LAST);
            proxy = McpChaosProxy.replay(replay).rules(RuleSet.parse(rules, "test.yaml")).seed(seed)
                    .faultListener(faults::add).start();
            HttpResponse<String> init = post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                    + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                    Duration.ofSeconds(10));
            assertThat(init.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(init.body()).at("/result/serverInfo/name").asText()).isEqualTo("recorded");
            session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        }

        HttpResponse<String> post(String body, Duration timeout) throws IOException, InterruptedException {
            return post(session, body, timeout);
        }

        private HttpResponse<String> post(String session, String body, Duration timeout)
                throws IOException, InterruptedException {
            HttpRequest.Builder request = HttpRequest.newBuilder(proxy.mcpUrl()).timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (session != null) {
                request.header("Mcp-Session-Id", session);
            }
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }

        @Override
        public void close() {
            proxy.close();
        }
    }

    /** The data of each event of an SSE body, in order. */
    private static List<String> sseData(String body) {
        return body.lines().filter(l -> l.startsWith("data:")).map(l -> l.substring(5).trim()).toList();
    }

    private static String text(String json) throws IOException {
        return JSON.readTree(json).at("/result/content/0/text").asText();
    }

    @Test
    void latencyHoldsTheJsonAnswerAndTheNextArrivesOnTime() throws Exception {
        try (Replayed replayed = new Replayed(2, "rules:\n  - name: slow\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: latency, latency: 700ms}\n", 1)) {
            long sent = System.nanoTime();
            HttpResponse<String> held = replayed.post(call(1, 0), Duration.ofSeconds(10));
            Duration took = Duration.ofNanos(System.nanoTime() - sent);
            assertThat(held.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(held.body()).get("id").asInt()).isEqualTo(1);
            assertThat(text(held.body())).isEqualTo("echo 0");
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(700));
            // The twin: the rule has had its one time; the next answer comes as recorded, without the wait.
            long again = System.nanoTime();
            HttpResponse<String> twin = replayed.post(call(2, 1), Duration.ofSeconds(10));
            assertThat(text(twin.body())).isEqualTo("echo 1");
            assertThat(Duration.ofNanos(System.nanoTime() - again)).isLessThan(Duration.ofMillis(700));
            assertThat(replayed.faults).extracting(FaultEvent::fault).containsExactly("latency");
        }
    }

    @Test
    void latencyOnTheSseResultKeepsTheProgressEventFirstAndDeliversTheResult() throws Exception {
        try (Replayed replayed = new Replayed(0, "rules:\n  - name: slow\n    match: {kind: response, tool: long}\n"
                + "    times: 1\n    fault: {type: latency, latency: 600ms}\n", 1)) {
            long sent = System.nanoTime();
            HttpResponse<String> stream = replayed.post(LONG.formatted(5), Duration.ofSeconds(10));
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
            assertThat(stream.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
            List<String> events = sseData(stream.body());
            assertThat(events).hasSize(2);
            assertThat(JSON.readTree(events.get(0)).get("method").asText()).isEqualTo("notifications/progress");
            assertThat(JSON.readTree(events.get(1)).get("id").asInt()).isEqualTo(5);
            assertThat(text(events.get(1))).isEqualTo("long done");
        }
    }

    @Test
    void dropLosesTheSseResultOnlyAndTheNextCallIsAnswered() throws Exception {
        try (Replayed replayed = new Replayed(1, "rules:\n  - name: lose\n    match: {kind: response, tool: long}\n"
                + "    times: 1\n    fault: {type: drop}\n", 1)) {
            HttpResponse<String> stream = replayed.post(LONG.formatted(5), Duration.ofSeconds(10));
            // The stream ends without the result: the progress event came, the answer did not.
            List<String> events = sseData(stream.body());
            assertThat(events).hasSize(1);
            assertThat(JSON.readTree(events.get(0)).get("method").asText()).isEqualTo("notifications/progress");
            // The twin: the same call again (the recording repeats its last answer) arrives whole.
            List<String> twin = sseData(replayed.post(LONG.formatted(6), Duration.ofSeconds(10)).body());
            assertThat(twin).hasSize(2);
            assertThat(JSON.readTree(twin.get(1)).get("id").asInt()).isEqualTo(6);
            assertThat(text(twin.get(1))).isEqualTo("long done");
            assertThat(replayed.faults).singleElement().satisfies(e -> {
                assertThat(e.fault()).isEqualTo("drop");
                assertThat(e.id()).isEqualTo(5L);
            });
        }
    }

    @Test
    void dropOfAJsonAnswerLeavesTheExchangeUnansweredAndTheNextPostIsAnswered() throws Exception {
        try (Replayed replayed = new Replayed(2, "rules:\n  - name: lose\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: drop}\n", 1)) {
            assertThatThrownBy(() -> replayed.post(call(1, 0), Duration.ofMillis(800)))
                    .isInstanceOf(HttpTimeoutException.class);
            HttpResponse<String> twin = replayed.post(call(2, 1), Duration.ofSeconds(10));
            assertThat(twin.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(twin.body()).get("id").asInt()).isEqualTo(2);
            assertThat(text(twin.body())).isEqualTo("echo 1");
            // Both were served from the cassette; the first answer was lost on the way, not unmatched.
            assertThat(replayed.replay.served()).isEqualTo(3);
            assertThat(replayed.replay.unmatched()).isZero();
        }
    }

    @Test
    void corruptBreaksTheJsonAnswerAndTheTwinArrivesWhole() throws Exception {
        try (Replayed replayed = new Replayed(2, "rules:\n  - name: break\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: corrupt, mode: truncated_json}\n", 1)) {
            HttpResponse<String> broken = replayed.post(call(1, 0), Duration.ofSeconds(10));
            assertThat(broken.statusCode()).isEqualTo(200);
            assertThat(broken.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":1");
            assertThatThrownBy(() -> JSON.readTree(broken.body())).isInstanceOf(IOException.class);
            HttpResponse<String> whole = replayed.post(call(2, 1), Duration.ofSeconds(10));
            assertThat(text(whole.body())).isEqualTo("echo 1");
            assertThat(replayed.faults).extracting(FaultEvent::fault).containsExactly("corrupt");
        }
    }

    @Test
    void disconnectOfTheServerSideAnswers502WithAJsonRpcErrorAndTheSessionGoesOn() throws Exception {
        try (Replayed replayed = new Replayed(2, "rules:\n  - name: cut\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: disconnect, side: server}\n", 1)) {
            HttpResponse<String> cut = replayed.post(call(1, 0), Duration.ofSeconds(10));
            assertThat(cut.statusCode()).isEqualTo(502);
            JsonNode error = JSON.readTree(cut.body());
            assertThat(error.get("id").asInt()).isEqualTo(1);
            assertThat(error.has("error")).isTrue();
            HttpResponse<String> twin = replayed.post(call(2, 1), Duration.ofSeconds(10));
            assertThat(twin.statusCode()).isEqualTo(200);
            assertThat(text(twin.body())).isEqualTo("echo 1");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(replayed.faults).extracting(FaultEvent::fault).containsExactly("disconnect"));
        }
    }

    @Test
    void theSameSeedGivesTheSameDecisionsTwiceAndAnotherSeedOthers() throws Exception {
        String rules = "rules:\n  - name: coin\n    match: {kind: response, tool: echo}\n"
                + "    probability: 0.5\n    fault: {type: tool_error}\n";
        List<Integer> first = failedCalls(rules, 42);
        List<Integer> second = failedCalls(rules, 42);
        List<Integer> other = failedCalls(rules, 7);
        assertThat(first).isNotEmpty().hasSizeLessThan(20).isEqualTo(second);
        assertThat(other).isNotEqualTo(first);
    }

    /** Twenty calls, one after the other: those answered with the rule's isError result. */
    private static List<Integer> failedCalls(String rules, long seed) throws Exception {
        try (Replayed replayed = new Replayed(20, rules, seed)) {
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                JsonNode answer = JSON.readTree(replayed.post(call(i, i), Duration.ofSeconds(10)).body());
                assertThat(answer.get("id").asInt()).isEqualTo(i);
                if (answer.at("/result/isError").asBoolean()) {
                    failed.add(i);
                } else {
                    assertThat(answer.at("/result/content/0/text").asText()).isEqualTo("echo " + i);
                }
            }
            assertThat(replayed.faults).extracting(e -> (int) (long) e.id()).containsExactlyElementsOf(failed);
            return failed;
        }
    }
}
