package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults during a stdio replay (#17): the replayed server sits behind the proxy's own interceptor
 * chain, so latency, drop, corrupt and disconnect do to its answers what they do to a live
 * server's. Each test has the twin where the message must arrive, and the seed reproduces the
 * same decisions.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayFaultsTest {

    static final String HEADER = "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
            + "\"transport\":\"stdio\",\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}";

    /** A cassette of {@code calls} echo calls (argument i = 0..calls-1) and one ping. */
    static String cassette(int calls) {
        List<String> lines = new ArrayList<>();
        lines.add(HEADER);
        int seq = 0;
        for (int i = 0; i < calls; i++) {
            lines.add(line(seq++, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":" + (100 + i) + ",\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"echo\",\"arguments\":{\"i\":" + i + "}}}"));
            lines.add(line(seq++, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":" + (100 + i) + ",\"result\":{\"content\":"
                    + "[{\"type\":\"text\",\"text\":\"echo " + i + "\"}]}}"));
        }
        lines.add(line(seq++, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":999,\"method\":\"ping\"}"));
        lines.add(line(seq, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}"));
        return String.join("\n", lines) + "\n";
    }

    static String line(int seq, String dir, String message) {
        return "{\"type\":\"message\",\"seq\":" + seq + ",\"t\":" + seq + ",\"dir\":\"" + dir
                + "\",\"session\":\"stdio\",\"message\":" + message + "}";
    }

    static String call(int id, int i) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"i\":" + i + "}}}";
    }

    static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}";

    private static RuleSet rules(String yaml) {
        return RuleSet.parse(yaml, "test.yaml");
    }

    @Test
    void latencyHoldsTheRecordedAnswerAndWhatFollowsItKeepsItsOrder() throws Exception {
        RuleSet slow = rules("rules:\n  - name: slow-echo\n    match: {kind: response, method: tools/call}\n"
                + "    times: 1\n    fault: {type: latency, latency: 700ms}\n");
        try (ReplayClient client = new ReplayClient(cassette(2), OnExhausted.LAST, slow, 1)) {
            long sent = System.nanoTime();
            client.send(call(1, 0));
            client.send(PING);
            List<ReplayClient.Line> got = client.next(2);
            JsonNode delayed = got.get(0).json();
            assertThat(delayed.get("id").asInt()).isEqualTo(1);
            assertThat(delayed.at("/result/content/0/text").asText()).isEqualTo("echo 0");
            assertThat(Duration.ofNanos(got.get(0).nanos() - sent)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
            // Per-direction order is kept: the ping's answer comes after the held one, not lost.
            assertThat(got.get(1).json().get("id").asText()).isEqualTo("p");
            // The twin: the rule has done its one time, the next answer comes as recorded, in order.
            client.send(call(2, 1));
            client.send(PING);
            List<ReplayClient.Line> twin = client.next(2);
            assertThat(twin.get(0).json().get("id").asInt()).isEqualTo(2);
            assertThat(twin.get(0).json().at("/result/content/0/text").asText()).isEqualTo("echo 1");
            assertThat(twin.get(1).json().get("id").asText()).isEqualTo("p");
            assertThat(client.faults).extracting(FaultEvent::fault).containsExactly("latency");
        }
    }

    @Test
    void dropLosesExactlyTheAnswerItMatchesAndTheNextOneArrives() throws Exception {
        RuleSet drop = rules("rules:\n  - name: lose-first\n    match: {kind: response, method: tools/call}\n"
                + "    times: 1\n    fault: {type: drop}\n");
        try (ReplayClient client = new ReplayClient(cassette(2), OnExhausted.LAST, drop, 1)) {
            client.send(call(1, 0));
            client.send(call(2, 1));
            client.send(PING);
            List<ReplayClient.Line> got = client.next(2);
            assertThat(got).extracting(l -> l.json().get("id").asText()).containsExactly("2", "p");
            assertThat(got.get(0).json().at("/result/content/0/text").asText()).isEqualTo("echo 1");
            // Nothing else comes: the answer to 1 was replayed and lost on the way, not late.
            assertThat(client.next(Duration.ofMillis(500))).isNull();
            assertThat(client.replay.served()).isEqualTo(3);
            assertThat(client.faults).singleElement().satisfies(e -> {
                assertThat(e.fault()).isEqualTo("drop");
                assertThat(e.id()).isEqualTo(1L);
            });
        }
    }

    @Test
    void corruptBreaksTheAnswerOnTheWireAndTheTwinArrivesWhole() throws Exception {
        RuleSet corrupt = rules("rules:\n  - name: break-first\n    match: {kind: response, method: tools/call}\n"
                + "    times: 1\n    fault: {type: corrupt, mode: truncated_json}\n");
        try (ReplayClient client = new ReplayClient(cassette(2), OnExhausted.LAST, corrupt, 1)) {
            client.send(call(1, 0));
            ReplayClient.Line broken = client.next(1).get(0);
            assertThat(broken.text()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":1");
            boolean parses;
            try {
                ReplayClient.JSON.readTree(broken.text());
                parses = true;
            } catch (IOException e) {
                parses = false;
            }
            assertThat(parses).as("the corrupted answer is not JSON: %s", broken.text()).isFalse();
            client.send(call(2, 1));
            JsonNode whole = client.next(1).get(0).json();
            assertThat(whole.get("id").asInt()).isEqualTo(2);
            assertThat(whole.at("/result/content/0/text").asText()).isEqualTo("echo 1");
        }
    }

    @Test
    void disconnectOfTheClientSideEndsItsOutputAfterTheAnswersBefore() throws Exception {
        RuleSet cut = rules("rules:\n  - name: cut\n    match: {kind: request, method: tools/call}\n"
                + "    after: 1\n    times: 1\n    fault: {type: disconnect, side: client}\n");
        try (ReplayClient client = new ReplayClient(cassette(2), OnExhausted.LAST, cut, 1)) {
            client.send(call(1, 0));
            // The twin: the first call is answered whole.
            JsonNode first = client.next(1).get(0).json();
            assertThat(first.at("/result/content/0/text").asText()).isEqualTo("echo 0");
            client.send(call(2, 1));
            // The second closes the client's side: end of file, and never its answer.
            assertThat(client.next(Duration.ofSeconds(30))).isSameAs(ReplayClient.END);
            // The listener is told on the session's executor, maybe after the close is seen.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(client.faults).extracting(FaultEvent::fault).containsExactly("disconnect"));
        }
    }

    @Test
    void disconnectOfTheServerSideEndsTheReplayAndTheProxyExitsCleanly() throws Exception {
        RuleSet cut = rules("rules:\n  - name: cut\n    match: {kind: request, method: tools/call}\n"
                + "    after: 1\n    times: 1\n    fault: {type: disconnect}\n");
        try (ReplayClient client = new ReplayClient(cassette(2), OnExhausted.LAST, cut, 1)) {
            client.send(call(1, 0));
            assertThat(client.next(1).get(0).json().at("/result/content/0/text").asText()).isEqualTo("echo 0");
            client.send(call(2, 1));
            // The replay's stdin closes, it ends as a server does, and the proxy ends with it.
            assertThat(client.next(Duration.ofSeconds(30))).isSameAs(ReplayClient.END);
            assertThat(client.proxy.exitCode().get(30, TimeUnit.SECONDS)).isZero();
            assertThat(client.replay.served()).isEqualTo(1);
        }
    }

    @Test
    void theSameSeedGivesTheSameDecisionsTwiceAndAnotherSeedOthers() throws Exception {
        String yaml = "rules:\n  - name: coin\n    match: {kind: response, method: tools/call}\n"
                + "    probability: 0.5\n    fault: {type: drop}\n";
        List<String> first = droppedIds(yaml, 42);
        List<String> second = droppedIds(yaml, 42);
        List<String> other = droppedIds(yaml, 7);
        assertThat(first).isNotEmpty().hasSizeLessThan(20).isEqualTo(second);
        assertThat(other).isNotEqualTo(first);
    }

    /** Sends 20 calls, one at a time after the previous answer or loss; the ids of the answers lost. */
    private static List<String> droppedIds(String yaml, long seed) throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(20), OnExhausted.LAST, rules(yaml), seed)) {
            List<String> lost = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                client.send(call(i, i));
                client.send(PING); // a ping's answer always comes, so a loss is told from a delay
                List<String> ids = new ArrayList<>();
                for (ReplayClient.Line line : client.next(1)) {
                    ids.add(line.json().get("id").asText());
                }
                if (ids.get(0).equals("p")) {
                    lost.add(Integer.toString(i));
                } else {
                    assertThat(ids.get(0)).isEqualTo(Integer.toString(i));
                    assertThat(client.next(1).get(0).json().get("id").asText()).isEqualTo("p");
                }
            }
            assertThat(client.faults).extracting(e -> String.valueOf(e.id())).containsExactlyElementsOf(lost);
            return lost;
        }
    }
}
