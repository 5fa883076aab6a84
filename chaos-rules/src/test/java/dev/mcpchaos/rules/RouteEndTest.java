package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The end of a route (an HTTP exchange's response) travels through the rules behind its
 * messages: it comes out only once every message of that route a fault holds has left, and
 * never waits for messages of other routes. On virtual time: nothing sleeps.
 */
class RouteEndTest {

    private static final Direction S2C = Direction.SERVER_TO_CLIENT;
    private final Object routeA = "exchange A";
    private final Object routeB = "exchange B";

    private static ChainHarness harness(String rules) {
        return new ChainHarness(RuleSet.parse(rules, "test.yaml"), 3, TransportKind.HTTP, b -> { });
    }

    /** Notes, on the harness's clock, when a route's end came out, next to what was written by then. */
    private static final class Ends {
        final List<String> log = new ArrayList<>();

        Runnable of(ChainHarness h, String name) {
            return () -> log.add(name + " at " + h.now().toMillis() + "ms after " + h.toClient().size() + " written");
        }
    }

    @Test
    void withNothingHeldTheEndComesOutAtOnce() {
        try (ChainHarness h = harness("rules: []\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(0);
            assertThat(ends.log).containsExactly("A at 0ms after 1 written");
        }
    }

    @Test
    void theEndWaitsForTheAnswerALatencyHolds() {
        try (ChainHarness h = harness("rules:\n  - name: slow\n    match: {kind: response}\n"
                + "    fault: {type: latency, latency: 300ms}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.notification("notifications/progress"), routeA);
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(299);
            assertThat(ends.log).as("not while the answer is held").isEmpty();
            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/progress"));
            h.advanceMillis(1);
            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/progress"), Msg.result(1, "{}"));
            assertThat(ends.log).containsExactly("A at 300ms after 2 written");
        }
    }

    @Test
    void theEndOfAnotherRouteDoesNotWaitForThisOnesHeldAnswer() {
        try (ChainHarness h = harness("rules:\n  - name: slow\n    match: {kind: response, id: 1}\n"
                + "    fault: {type: latency, latency: 300ms}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.endRoute(routeB, S2C, ends.of(h, "B")); // B carried nothing held
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(0);
            assertThat(ends.log).containsExactly("B at 0ms after 0 written");
            h.advanceMillis(300);
            assertThat(ends.log).containsExactly("B at 0ms after 0 written", "A at 300ms after 1 written");
        }
    }

    @Test
    void aMessageOfAnotherRouteHeldInFrontHoldsThisRoutesMessagesAndSoItsEnd() {
        // Order is per session and direction: B's answer waits behind A's, and B's end behind both.
        try (ChainHarness h = harness("rules:\n  - name: slow\n    match: {kind: response, id: 1}\n"
                + "    fault: {type: latency, latency: 200ms}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.sendOn(S2C, Msg.result(2, "{}"), routeB);
            h.endRoute(routeB, S2C, ends.of(h, "B"));
            h.advanceMillis(199);
            assertThat(ends.log).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(2, "{}"));
            assertThat(ends.log).containsExactly("B at 200ms after 2 written");
        }
    }

    @Test
    void theEndWaitsForEveryPieceOfAThrottledAnswer() {
        try (ChainHarness h = harness("rules:\n  - name: narrow\n    match: {kind: response}\n"
                + "    fault: {type: throttle, chunk: 10B, interval: 100ms}\n")) {
            Ends ends = new Ends();
            String answer = Msg.result(1, "{}"); // held for as long as its pieces would take
            h.sendOn(S2C, answer, routeA);
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            long pieces = (answer.length() + 9) / 10;
            h.advanceMillis((pieces - 1) * 100 - 1);
            assertThat(ends.log).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toClient()).containsExactly(answer);
            assertThat(ends.log).containsExactly("A at " + (pieces - 1) * 100 + "ms after 1 written");
        }
    }

    @Test
    void theEndWaitsForMessagesInAReorderWindowThatOvertakingLetGo() {
        try (ChainHarness h = harness("rules:\n  - name: shuffle\n    match: {method: notifications/progress}\n"
                + "    fault: {type: reorder, window: 3, hold: 250ms}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.notification("notifications/progress"), routeA);
            h.sendOn(S2C, Msg.notification("notifications/progress"), routeA);
            h.sendOn(S2C, Msg.result(1, "{}"), routeA); // not matched: overtakes the held two
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(0);
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"));
            assertThat(ends.log).isEmpty();
            h.advanceMillis(250); // the window that did not fill is released
            assertThat(h.toClient()).hasSize(3);
            assertThat(ends.log).containsExactly("A at 250ms after 3 written");
        }
    }

    @Test
    void theEndComesAfterEveryCopyOfADuplicatedAnswer() {
        try (ChainHarness h = harness("rules:\n  - name: twice\n    match: {kind: response}\n"
                + "    fault: {type: duplicate}\n  - name: slow\n    match: {kind: response}\n"
                + "    fault: {type: latency, latency: 100ms}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(100);
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(1, "{}"));
            assertThat(ends.log).containsExactly("A at 100ms after 2 written");
        }
    }

    @Test
    void aDroppedAnswerDoesNotHoldTheEnd() {
        try (ChainHarness h = harness("rules:\n  - name: lost\n    match: {kind: response}\n    fault: {type: drop}\n")) {
            Ends ends = new Ends();
            h.sendOn(S2C, Msg.result(1, "{}"), routeA);
            h.endRoute(routeA, S2C, ends.of(h, "A"));
            h.advanceMillis(0);
            assertThat(h.toClient()).isEmpty();
            assertThat(ends.log).containsExactly("A at 0ms after 0 written");
        }
    }
}
