package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The faults that act over time on the order and pace of messages: {@code reorder} and {@code throttle}. */
class ReorderAndThrottleFaultTest {

    @Test
    void reorderWindowReleasesMatchedMessagesShuffled() {
        String yaml = "rules:\n  - name: shuffle\n    match: {method: notifications/progress}\n"
                + "    fault: {type: reorder, window: 3}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 5)) {
            h.fromServer(progress(1));
            h.fromServer(Msg.result(10, "{}"));  // not matched: not held back by the window
            h.fromServer(progress(2));
            assertThat(h.toClient()).containsExactly(Msg.result(10, "{}"));
            h.fromServer(progress(3));

            List<String> progress = h.toClient().subList(1, 4);
            assertThat(progress).containsExactlyInAnyOrder(progress(1), progress(2), progress(3));
            assertThat(progress).isNotEqualTo(List.of(progress(1), progress(2), progress(3)));
            assertThat(h.events).hasSize(3);
            // Notifications have no id: named by method, with the places they were held in.
            String order = progress.stream().map(p -> ordinal(p.charAt(p.length() - 3) - '0'))
                    .reduce((a, b) -> a + ", " + b).orElseThrow();
            assertThat(h.events.get(2).detail()).isEqualTo("window of 3 full; released notifications/progress, "
                    + "notifications/progress, notifications/progress (held " + order + ")");
        }
    }

    private static String ordinal(int n) {
        return n + (n == 1 ? "st" : n == 2 ? "nd" : "rd");
    }

    @Test
    void aFullWindowNamesTheReleasedMessagesByTheirIds() {
        String yaml = "rules:\n  - name: shuffle\n    match: {kind: request}\n"
                + "    fault: {type: reorder, window: 3}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 5)) {
            h.fromClient(Msg.request(3, "ping"));
            h.fromClient(Msg.request("b", "ping"));
            h.fromClient(Msg.request(5, "ping"));
            List<String> ids = h.toServer().stream().map(line -> line.substring(line.indexOf("\"id\":") + 5,
                    line.indexOf(",\"method\""))).toList();
            assertThat(ids).containsExactlyInAnyOrder("3", "\"b\"", "5");
            assertThat(h.events.get(2).detail()).isEqualTo("window of 3 full; released ids " + String.join(", ", ids));
        }
    }

    @Test
    void anUnfilledWindowIsReleasedAfterTheHold() {
        String yaml = "rules:\n  - name: shuffle\n    match: {method: ping}\n"
                + "    fault: {type: reorder, window: 5, hold: 200ms}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 5)) {
            h.fromClient(Msg.request(1, "ping"));
            h.advanceMillis(50);
            h.fromClient(Msg.request(2, "ping"));
            h.advanceMillis(149);
            assertThat(h.toServer()).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toServer()).containsExactly(Msg.request(2, "ping"), Msg.request(1, "ping"));

            // A new window starts; the old timer does nothing to it.
            h.fromClient(Msg.request(3, "ping"));
            h.advanceMillis(199);
            assertThat(h.toServer()).hasSize(2);
            h.advanceMillis(1);
            assertThat(h.toServer()).hasSize(3);
        }
    }

    @Test
    void reorderHoldLetsLaterMessagesOvertake() {
        String yaml = "rules:\n  - name: late\n    match: {id: 1}\n    fault: {type: reorder, hold: 300ms}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 5)) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(Msg.request(2, "ping"));
            assertThat(h.toServer()).containsExactly(Msg.request(2, "ping"));
            h.advanceMillis(300);
            assertThat(h.toServer()).containsExactly(Msg.request(2, "ping"), Msg.request(1, "ping"));
            assertThat(h.events.get(0).detail()).matches("held \\d+ms; later messages may overtake it");
        }
    }

    private static String progress(int n) {
        return "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\","
                + "\"progress\":" + n + "}}";
    }

    @Test
    void throttleWritesTheLineInPiecesOverTime() {
        String yaml = "rules:\n  - name: slow-pipe\n    match: {method: ping}\n"
                + "    fault: {type: throttle, chunk: 10B, interval: 100ms}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            String line = Msg.request(1, "ping"); // 40 bytes, 41 with the newline
            assertThat(line).hasSize(40);
            h.fromClient(line);
            h.fromClient(Msg.request(2, "other")); // waits for the last piece

            assertThat(h.written).hasSize(1);
            assertThat(h.written.get(0).text()).isEqualTo(line.substring(0, 10));
            h.advanceMillis(300);
            assertThat(h.written).extracting(ChainHarness.Written::text)
                    .containsExactly(line.substring(0, 10), line.substring(10, 20), line.substring(20, 30),
                            line.substring(30, 40));
            h.advanceMillis(100);
            assertThat(h.written).extracting(ChainHarness.Written::at).containsExactly(Duration.ZERO,
                    Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300), Duration.ofMillis(400),
                    Duration.ofMillis(400));
            assertThat(h.stream(Direction.CLIENT_TO_SERVER)).isEqualTo(line + "\n" + Msg.request(2, "other") + "\n");
            assertThat(h.events.get(0).detail()).isEqualTo("written in 5 pieces of up to 10 B, one every 100ms");
        }
    }

    @Test
    void throttleByRateAlsoEndsAReplacedMessageWithItsDelimiter() {
        String yaml = "rules:\n"
                + "  - name: cut\n    match: {method: ping}\n    fault: {type: truncate, at: 25}\n"
                + "  - name: slow\n    match: {method: ping}\n    fault: {type: throttle, rate: 100B/s}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            h.advance(Duration.ofSeconds(1));
            // 25 bytes and a newline, 10 bytes every 100 ms.
            assertThat(h.written).extracting(ChainHarness.Written::at)
                    .containsExactly(Duration.ZERO, Duration.ofMillis(100), Duration.ofMillis(200));
            assertThat(h.stream(Direction.CLIENT_TO_SERVER)).isEqualTo(Msg.request(1, "ping").substring(0, 25) + "\n");
        }
    }

    /** Two 83-byte answers at 40 B/s: 4-byte pieces every 100 ms, the second's after the first's. */
    @Test
    void backToBackThrottledMessagesAreEachWrittenAtTheRate() {
        String yaml = "rules:\n  - name: slow-answers\n    match: {kind: response}\n"
                + "    fault: {type: throttle, rate: 40B/s}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            String first = Msg.result(1, "{\"v\":\"" + "x".repeat(41) + "\"}");
            String second = Msg.result(2, "{\"v\":\"" + "y".repeat(41) + "\"}");
            assertThat(first).hasSize(83); // 84 bytes with the newline: 21 pieces
            h.fromServer(first);
            h.fromServer(second);
            h.advance(Duration.ofSeconds(10));

            List<Duration> expected = new ArrayList<>();
            for (int i = 0; i < 42; i++) {
                expected.add(Duration.ofMillis(100L * i));
            }
            assertThat(h.written).extracting(ChainHarness.Written::at).containsExactlyElementsOf(expected);
            assertThat(h.written).allSatisfy(w -> assertThat(w.bytes()).hasSize(4));
            assertThat(h.written.get(20).text()).endsWith("\"}}\n");
            assertThat(h.written.get(21).text()).isEqualTo("{\"js");
            assertThat(h.stream(Direction.SERVER_TO_CLIENT)).isEqualTo(first + "\n" + second + "\n");
            assertThat(h.events).extracting(FaultEvent::detail).containsOnly(
                    "written in 21 pieces of up to 4 B, one every 100ms");
        }
    }

    @Test
    void aThrottledMessageBehindAHeldOneStartsItsPaceWhenItsTurnComes() {
        String yaml = "rules:\n"
                + "  - {name: slow, match: {id: 1}, fault: {type: latency, latency: 1s}}\n"
                + "  - {name: pipe, match: {id: 2}, fault: {type: throttle, chunk: 10B, interval: 100ms}}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            String line = Msg.request(2, "ping"); // 41 bytes with the newline: 5 pieces
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(line);
            h.advanceMillis(999);
            assertThat(h.written).isEmpty();
            h.advance(Duration.ofSeconds(2));
            assertThat(h.written).extracting(ChainHarness.Written::at).containsExactly(Duration.ofMillis(1000),
                    Duration.ofMillis(1000), Duration.ofMillis(1100), Duration.ofMillis(1200), Duration.ofMillis(1300),
                    Duration.ofMillis(1400));
            assertThat(h.stream(Direction.CLIENT_TO_SERVER)).isEqualTo(Msg.request(1, "ping") + "\n" + line + "\n");
        }
    }

    @Test
    void onHttpAThrottledMessageIsHeldFromItsTurnForTheTimeTheRateTakes() {
        String yaml = "rules:\n  - {name: slow, match: {kind: response}, fault: {type: throttle, chunk: 10B, interval: 100ms}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP, b -> { })) {
            String first = Msg.result(1, "{\"v\":\"" + "x".repeat(12) + "\"}"); // 54 bytes: 6 pieces, 500 ms
            String second = Msg.result(2, "{\"v\":\"" + "y".repeat(12) + "\"}");
            h.fromServer(first);
            h.fromServer(second);
            h.advance(Duration.ofSeconds(5));
            // The second starts an interval after the first's last piece, then takes as long.
            assertThat(h.written).extracting(ChainHarness.Written::text, ChainHarness.Written::at).containsExactly(
                    tuple(first + "\n", Duration.ofMillis(500)), tuple(second + "\n", Duration.ofMillis(1100)));
            assertThat(h.events).extracting(FaultEvent::detail).containsOnly("held 500ms (54 B at the throttled rate)");
        }
    }
}
