package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.server.replay.ReplayFaultsTest.HEADER;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.call;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.cassette;
import static dev.mcpchaos.server.replay.ReplayFaultsTest.line;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Matching during a stdio replay behind the proxy (#17): concurrent calls each get their own
 * recording by key, repeats come in recorded order then the last again or an error, and a request
 * with no recording gets -32601 naming the closest recorded one and is counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayMatchingTest {

    @Test
    void eightConcurrentCallsWithDifferentArgumentsEachGetTheirOwnRecording() throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(8), OnExhausted.LAST, null, 1)) {
            List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 6, 7));
            Collections.shuffle(order, new Random(5)); // not the recorded order
            ExecutorService callers = Executors.newFixedThreadPool(8);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> sent = new ArrayList<>();
            for (int i : order) {
                sent.add(callers.submit(() -> {
                    start.await();
                    synchronized (client) { // one line at a time on the one pipe, in any order
                        client.send(call(1000 + i, i));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
            callers.shutdown();
            Map<Integer, String> answers = new HashMap<>();
            for (ReplayClient.Line line : client.next(8)) {
                JsonNode answer = line.json();
                answers.put(answer.get("id").asInt(), answer.at("/result/content/0/text").asText());
            }
            Map<Integer, String> expected = new HashMap<>();
            for (int i = 0; i < 8; i++) {
                expected.put(1000 + i, "echo " + i);
            }
            assertThat(answers).isEqualTo(expected);
            assertThat(client.replay.served()).isEqualTo(8);
            assertThat(client.replay.unmatched()).isZero();
        }
    }

    /** A call whose token the recorder redacted: the live client sends the real one. */
    private static final String REDACTED = String.join("\n", HEADER,
            line(0, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"fetch\","
                    + "\"arguments\":{\"auth\":\"Bearer <redacted:1>\",\"url\":\"https://example.test/a\"}}}"),
            line(1, "s2c", answer(1, "page a"))) + "\n";

    private static String fetch(int id, String auth, String url) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"fetch\","
                + "\"arguments\":{\"auth\":\"" + auth + "\",\"url\":\"" + url + "\"}}}";
    }

    @Test
    void aLiveRequestCarryingTheSecretARecordingRedactedMatchesItAndOneThatDiffersElsewhereDoesNot() throws Exception {
        try (ReplayClient client = new ReplayClient(REDACTED, OnExhausted.LAST, null, 1)) {
            client.send(fetch(7, "Bearer ghp_realTokenValue0123456789", "https://example.test/a"));
            JsonNode answer = client.next(1).get(0).json();
            assertThat(answer.get("id").asInt()).isEqualTo(7);
            assertThat(answer.at("/result/content/0/text").asText()).isEqualTo("page a");

            // The placeholder stands for the secret only: another url, or no "Bearer " before it, is unmatched.
            client.send(fetch(8, "Bearer ghp_realTokenValue0123456789", "https://example.test/b"));
            client.send(fetch(9, "ghp_realTokenValue0123456789", "https://example.test/a"));
            for (ReplayClient.Line line : client.next(2)) {
                assertThat(line.json().at("/error/code").asInt()).as(line.text()).isEqualTo(-32601);
            }
            assertThat(client.replay.served()).isEqualTo(1);
            assertThat(client.replay.unmatched()).isEqualTo(2);
        }
    }

    /** Three recordings of one request, each with a different answer. */
    private static final String REPEATS = String.join("\n", HEADER,
            line(0, "c2s", call(1, 0)), line(1, "s2c", answer(1, "first")),
            line(2, "c2s", call(2, 0)), line(3, "s2c", answer(2, "second")),
            line(4, "c2s", call(3, 0)), line(5, "s2c", answer(3, "third"))) + "\n";

    private static String answer(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + text
                + "\"}]}}";
    }

    private static List<String> fiveRepeats(ReplayClient client) throws Exception {
        List<String> got = new ArrayList<>();
        for (int n = 0; n < 5; n++) {
            client.send(call(50 + n, 0));
            JsonNode answer = client.next(1).get(0).json();
            assertThat(answer.get("id").asInt()).isEqualTo(50 + n);
            got.add(answer.has("error") ? answer.at("/error/code").asInt() + " " + answer.at("/error/message").asText()
                    : answer.at("/result/content/0/text").asText());
        }
        return got;
    }

    @Test
    void repeatsComeInRecordedOrderThenTheLastAgain() throws Exception {
        try (ReplayClient client = new ReplayClient(REPEATS, OnExhausted.LAST, null, 1)) {
            assertThat(fiveRepeats(client)).containsExactly("first", "second", "third", "third", "third");
            assertThat(client.replay.unmatched()).isZero();
        }
    }

    @Test
    void repeatsBeyondTheRecordingsGetAnErrorWhenAskedAndAreCounted() throws Exception {
        try (ReplayClient client = new ReplayClient(REPEATS, OnExhausted.ERROR, null, 1)) {
            List<String> got = fiveRepeats(client);
            assertThat(got.subList(0, 3)).containsExactly("first", "second", "third");
            assertThat(got.get(3)).isEqualTo("-32601 no recording left for tools/call {\"arguments\":{\"i\":0},"
                    + "\"name\":\"echo\"}: it was recorded 3 time(s) and every one was served (on-exhausted: error)");
            assertThat(got.get(4)).isEqualTo(got.get(3));
            assertThat(client.replay.served()).isEqualTo(3);
            assertThat(client.replay.unmatched()).isEqualTo(2);
        }
    }

    @Test
    void anUnmatchedRequestGetsMinus32601NamingTheClosestRecordedAndIsCounted() throws Exception {
        try (ReplayClient client = new ReplayClient(cassette(3), OnExhausted.LAST, null, 1)) {
            client.send(call(7, 12)); // i=12 was never recorded; i=1 is nearest
            client.send("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/list\"}");
            client.send(call(9, 2)); // the twin: a recorded one still answers
            List<ReplayClient.Line> got = client.next(3);
            JsonNode unmatched = got.get(0).json();
            assertThat(unmatched.get("id").asInt()).isEqualTo(7);
            assertThat(unmatched.at("/error/code").asInt()).isEqualTo(-32601);
            assertThat(unmatched.at("/error/message").asText()).isEqualTo("no recording for tools/call "
                    + "{\"arguments\":{\"i\":12},\"name\":\"echo\"} (closest recorded: tools/call "
                    + "{\"arguments\":{\"i\":1},\"name\":\"echo\"}; --match method would serve it)");
            JsonNode otherMethod = got.get(1).json();
            assertThat(otherMethod.at("/error/code").asInt()).isEqualTo(-32601);
            assertThat(otherMethod.at("/error/message").asText()).startsWith("no recording for resources/list {}");
            assertThat(got.get(2).json().at("/result/content/0/text").asText()).isEqualTo("echo 2");
            assertThat(client.replay.unmatched()).isEqualTo(2);
            assertThat(client.replay.served()).isEqualTo(1);
        }
    }
}
