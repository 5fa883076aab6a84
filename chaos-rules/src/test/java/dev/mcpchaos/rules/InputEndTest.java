package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The end of a direction's input waits for the messages faults still hold, so a transport closes
 * the other side only after they left (a stdio client that sends a request and closes its stdin).
 */
class InputEndTest {

    private static String rule(String fault) {
        return "rules:\n  - name: r\n    match: {direction: client_to_server, tool: search}\n    fault: " + fault + "\n";
    }

    @Test
    void theEndWaitsForAMessageInALatency() {
        try (ChainHarness h = ChainHarness.of(rule("{type: latency, latency: 500ms}"), 1)) {
            List<Duration> ended = new ArrayList<>();
            h.fromClient(Msg.call(1, "search"));
            h.endInput(Direction.CLIENT_TO_SERVER, Duration.ofSeconds(5), () -> ended.add(h.now()));
            h.advanceMillis(499);
            assertThat(ended).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            assertThat(ended).containsExactly(Duration.ofMillis(500));
            h.advanceMillis(10_000);
            assertThat(ended).hasSize(1); // the timeout does not run it again
        }
    }

    @Test
    void theEndWaitsForMessagesThatLeftTheLine() {
        // reorder detaches its messages from the line; an unfilled window is released after hold.
        try (ChainHarness h = ChainHarness.of(rule("{type: reorder, window: 3, hold: 300ms}"), 1)) {
            List<Duration> ended = new ArrayList<>();
            h.fromClient(Msg.call(1, "search"));
            h.fromClient(Msg.call(2, "search"));
            h.endInput(Direction.CLIENT_TO_SERVER, Duration.ofSeconds(5), () -> ended.add(h.now()));
            h.advanceMillis(299);
            assertThat(ended).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toServer()).containsExactlyInAnyOrder(Msg.call(1, "search"), Msg.call(2, "search"));
            assertThat(ended).containsExactly(Duration.ofMillis(300));
        }
    }

    @Test
    void nothingHeldEndsAtOnceAndTheOtherDirectionDoesNotWait() {
        try (ChainHarness h = ChainHarness.of(rule("{type: latency, latency: 500ms}"), 1)) {
            List<String> ended = new ArrayList<>();
            h.endInput(Direction.CLIENT_TO_SERVER, Duration.ofSeconds(5), () -> ended.add("idle"));
            h.fromClient(Msg.call(1, "search"));
            h.endInput(Direction.SERVER_TO_CLIENT, Duration.ofSeconds(5), () -> ended.add("other direction"));
            h.advanceMillis(0);
            assertThat(ended).containsExactly("idle", "other direction");
        }
    }

    @Test
    void aMessageHeldLongerThanTheTimeoutDoesNotHoldTheEnd() {
        try (ChainHarness h = ChainHarness.of(rule("{type: latency, latency: 60s}"), 1)) {
            List<Duration> ended = new ArrayList<>();
            h.fromClient(Msg.call(1, "search"));
            h.endInput(Direction.CLIENT_TO_SERVER, Duration.ofSeconds(2), () -> ended.add(h.now()));
            h.advanceMillis(2_000);
            assertThat(ended).containsExactly(Duration.ofSeconds(2));
            assertThat(h.toServer()).isEmpty();
            h.advanceMillis(58_000);
            assertThat(ended).hasSize(1); // the message leaving later does not run it twice
            assertThat(h.toServer()).hasSize(1);
        }
    }
}
