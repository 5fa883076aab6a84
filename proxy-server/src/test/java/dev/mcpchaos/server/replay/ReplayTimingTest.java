package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.server.replay.ReplayFaultsTest.HEADER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --timing} over stdio (#17): with recorded timing an answer goes out its recorded delay
 * after the live request's arrival, its progress and the notifications after it at theirs, in
 * recorded order, and the stdin reader goes on meanwhile; none answers at once, scaled:F
 * multiplies the delays. Every timed answer is also checked to arrive whole.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayTimingTest {

    /** How much earlier than recorded a message may come: rounding only, the replay measures from after the send. */
    static final Duration TOLERANCE = Duration.ofMillis(10);
    /** What "at once" means here: well below the 300 ms recorded, with room for a loaded machine. */
    static final Duration AT_ONCE = Duration.ofMillis(250);

    static String line(int seq, double t, String dir, String message) {
        return "{\"type\":\"message\",\"seq\":" + seq + ",\"t\":" + t + ",\"dir\":\"" + dir
                + "\",\"session\":\"stdio\",\"message\":" + message + "}";
    }

    static final String SLOW_CALL = "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":"
            + "{\"name\":\"slow\",\"arguments\":{}%s}}";

    /**
     * A slow call recorded at t=10 ms: its progress 150 ms later, its answer 300 ms later, a
     * list_changed 320 ms later; then a ping answered within 0.5 ms.
     */
    static final String CASSETTE = String.join("\n", HEADER,
            line(0, 10, "c2s", SLOW_CALL.formatted(1, ",\"_meta\":{\"progressToken\":\"rec\"}")),
            line(1, 160, "s2c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                    + "{\"progressToken\":\"rec\",\"progress\":1,\"total\":1}}"),
            line(2, 310, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    + "\"text\":\"slow done\"}]}}"),
            line(3, 330, "s2c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}"),
            line(4, 400, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"),
            line(5, 400.5, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}")) + "\n";

    private static Duration since(long sent, ReplayClient.Line line) {
        return Duration.ofNanos(line.nanos() - sent);
    }

    @Test
    void recordedTimingSendsTheAnswerItsProgressAndWhatFollowedAtTheirRecordedDelays() throws Exception {
        try (ReplayClient client = new ReplayClient(CASSETTE, Timing.RECORDED, Matching.DEFAULT)) {
            long sent = System.nanoTime();
            client.send(SLOW_CALL.formatted("\"live\"", ",\"_meta\":{\"progressToken\":\"live-token\"}"));
            List<ReplayClient.Line> got = client.next(3);

            JsonNode progress = got.get(0).json();
            assertThat(progress.path("method").asText()).isEqualTo("notifications/progress");
            assertThat(progress.at("/params/progressToken").asText()).isEqualTo("live-token");
            assertThat(since(sent, got.get(0))).isGreaterThanOrEqualTo(Duration.ofMillis(150).minus(TOLERANCE));

            JsonNode answer = got.get(1).json();
            assertThat(answer.get("id").asText()).isEqualTo("live");
            assertThat(answer.at("/result/content/0/text").asText()).isEqualTo("slow done");
            assertThat(since(sent, got.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));

            assertThat(got.get(2).json().path("method").asText()).isEqualTo("notifications/tools/list_changed");
            assertThat(since(sent, got.get(2))).isGreaterThanOrEqualTo(Duration.ofMillis(320).minus(TOLERANCE));
            assertThat(client.replay.served()).isEqualTo(1);
        }
    }

    @Test
    void whileAnAnswerIsDueTheReaderGoesOnAndALaterQuickAnswerOvertakesIt() throws Exception {
        try (ReplayClient client = new ReplayClient(CASSETTE, Timing.RECORDED, Matching.DEFAULT)) {
            long sent = System.nanoTime();
            client.send(SLOW_CALL.formatted(7, "")); // no progress token: no progress
            client.send("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
            List<ReplayClient.Line> got = client.next(3);
            assertThat(got.get(0).json().get("id").asInt()).isEqualTo(8);
            assertThat(since(sent, got.get(0))).isLessThan(AT_ONCE);
            assertThat(got.get(1).json().get("id").asInt()).isEqualTo(7);
            assertThat(got.get(1).json().at("/result/content/0/text").asText()).isEqualTo("slow done");
            assertThat(since(sent, got.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(300).minus(TOLERANCE));
            assertThat(got.get(2).json().path("method").asText()).isEqualTo("notifications/tools/list_changed");
        }
    }

    private static ReplayClient.Line slowAnswer(Timing timing) throws Exception {
        try (ReplayClient client = new ReplayClient(CASSETTE, timing, Matching.DEFAULT)) {
            long sent = System.nanoTime();
            client.send(SLOW_CALL.formatted(3, ""));
            ReplayClient.Line answer = client.next(1).get(0);
            assertThat(answer.json().get("id").asInt()).isEqualTo(3);
            assertThat(answer.json().at("/result/content/0/text").asText()).isEqualTo("slow done");
            return new ReplayClient.Line(answer.text(), answer.nanos() - sent);
        }
    }

    @Test
    void noTimingAnswersAtOnceAndScaledMultipliesTheRecordedDelay() throws Exception {
        assertThat(Duration.ofNanos(slowAnswer(Timing.NONE).nanos())).isLessThan(AT_ONCE);
        Duration tenth = Duration.ofNanos(slowAnswer(Timing.parse("scaled:0.1")).nanos());
        assertThat(tenth).isGreaterThanOrEqualTo(Duration.ofMillis(30).minus(TOLERANCE)).isLessThan(AT_ONCE);
        Duration twice = Duration.ofNanos(slowAnswer(Timing.parse("scaled:2")).nanos());
        assertThat(twice).isGreaterThanOrEqualTo(Duration.ofMillis(600).minus(TOLERANCE));
    }

    @Test
    void theEndOfInputWaitsForTheAnswersStillDue() throws Exception {
        try (ReplayClient client = new ReplayClient(CASSETTE, Timing.RECORDED, Matching.DEFAULT)) {
            client.send(SLOW_CALL.formatted(4, ""));
            client.endInput(); // the replay's stdin ends while the answer is due
            List<ReplayClient.Line> got = client.next(2);
            assertThat(got.get(0).json().get("id").asInt()).isEqualTo(4);
            assertThat(got.get(1).json().path("method").asText()).isEqualTo("notifications/tools/list_changed");
            assertThat(client.next(Duration.ofSeconds(10))).isSameAs(ReplayClient.END);
        }
    }

    @Test
    void timingValuesParseAndABadOneIsRefusedNamingWhatIsExpected() {
        assertThat(Timing.parse("none").isNone()).isTrue();
        assertThat(Timing.parse("recorded").factor()).isEqualTo(1);
        assertThat(Timing.parse("scaled:0.5").factor()).isEqualTo(0.5);
        assertThat(Timing.parse(" Scaled:2 ").factor()).isEqualTo(2);
        for (String bad : List.of("scaled:0", "scaled:-1", "scaled:", "scaled:x", "scaled:NaN", "scaled:Infinity", "fast")) {
            assertThatThrownBy(() -> Timing.parse(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("'" + bad + "' (expected: none, recorded or scaled:F with F a number > 0, such as scaled:0.5)");
        }
        assertThatThrownBy(() -> Timing.scaled(0)).hasMessageContaining("expected: a factor > 0");
    }
}
