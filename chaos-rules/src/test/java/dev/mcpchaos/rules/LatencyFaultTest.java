package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code latency} on virtual time: holding, per-direction order, distributions, reproducibility. */
class LatencyFaultTest {

    private static final String SLOW_SEARCH = "rules:\n  - name: slow-search\n    match: {tool: search}\n"
            + "    fault: {type: latency, latency: 500ms}\n";

    @Test
    void holdsTheMessageForTheLatency() {
        try (ChainHarness h = ChainHarness.of(SLOW_SEARCH, 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.advanceMillis(499);
            assertThat(h.toServer()).isEmpty();
            h.advanceMillis(1);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            assertThat(h.written.get(0).at()).isEqualTo(Duration.ofMillis(500));
        }
    }

    @Test
    void laterMessagesInTheSameDirectionWaitBehindIt() {
        try (ChainHarness h = ChainHarness.of(SLOW_SEARCH, 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.advanceMillis(100);
            h.fromClient(Msg.request(2, "ping"));          // not matched, but behind the held one
            h.fromServer(Msg.notification("notifications/message")); // the other direction is not held
            assertThat(h.toServer()).isEmpty();
            assertThat(h.toClient()).hasSize(1);
            assertThat(h.written.get(0).at()).isEqualTo(Duration.ofMillis(100));

            h.advanceMillis(400);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"), Msg.request(2, "ping"));
            assertThat(h.written).filteredOn(w -> w.direction() == Direction.CLIENT_TO_SERVER)
                    .extracting(ChainHarness.Written::at).containsOnly(Duration.ofMillis(500));

            // Nothing is held any more: the next message goes straight through.
            h.fromClient(Msg.request(3, "ping"));
            assertThat(h.toServer()).hasSize(3);
        }
    }

    @Test
    void delaysDoNotAddUpButKeepOrder() {
        try (ChainHarness h = ChainHarness.of(SLOW_SEARCH, 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.advanceMillis(100);
            h.fromClient(Msg.call(2, "search"));
            h.advanceMillis(400);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            h.advanceMillis(100);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"), Msg.call(2, "search"));
            assertThat(h.written.get(1).at()).isEqualTo(Duration.ofMillis(600));
        }
    }

    @Test
    void aLaterRuleSeesTheMessageAfterTheDelay() {
        String yaml = SLOW_SEARCH + "  - name: then-noise\n    match: {tool: search}\n    fault: {type: noise, text: late}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.call(1, "search"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("slow-search");
            h.advanceMillis(500);
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("slow-search", "then-noise");
            assertThat(h.events.get(1).time()).isEqualTo(Duration.ofMillis(500));
            assertThat(h.toServer()).containsExactly("late", Msg.call(1, "search"));
        }
    }

    @Test
    void jitterIsDrawnFromTheSeedAndStaysInRange() {
        String yaml = "rules:\n  - name: jittery\n    match: {method: ping}\n"
                + "    fault: {type: latency, latency: 100ms, jitter: 50ms}\n";
        List<String> first = delays(yaml, 7);
        assertThat(delays(yaml, 7)).isEqualTo(first);
        assertThat(delays(yaml, 8)).isNotEqualTo(first);
        assertThat(first).allSatisfy(detail -> {
            long ms = Long.parseLong(detail.replace("held ", "").replace("ms", ""));
            assertThat(ms).isBetween(50L, 150L);
        });
        assertThat(first).doesNotHaveDuplicates().hasSizeGreaterThan(10);
    }

    private static List<String> delays(String yaml, long seed) {
        try (ChainHarness h = ChainHarness.of(yaml, seed)) {
            for (int id = 0; id < 20; id++) {
                h.fromClient(Msg.request(id, "ping"));
                h.advanceMillis(1000);
            }
            assertThat(h.toServer()).hasSize(20);
            return h.events.stream().map(FaultEvent::detail).distinct().toList();
        }
    }
}
