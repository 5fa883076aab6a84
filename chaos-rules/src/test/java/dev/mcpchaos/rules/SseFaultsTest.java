package dev.mcpchaos.rules;

import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.HeaderSource;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.InvalidParameterException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The SSE stream faults ({@code sse_retry}, {@code resume_gap}, {@code resume_repeat},
 * {@code get_stream_drop}, {@code priming_drop}) on frozen time: what reaches the client, on the streams they act on
 * and on those they leave alone (no injection, the rule's {@code times} not used up).
 */
class SseFaultsTest {

    /** The HTTP request a message travels with: its method and headers, as the transport's route answers them. */
    record Route(String method, Map<String, String> headers) implements HeaderSource {
        @Override
        public String requestHeader(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name)).map(Map.Entry::getValue)
                    .findFirst().orElse(null);
        }

        @Override
        public String requestMethod() {
            return method;
        }
    }

    static final Route POST = new Route("POST", Map.of());
    static final Route GET = new Route("GET", Map.of());
    static final Route RESUMED = new Route("GET", Map.of("Last-Event-ID", "3-2"));

    private static ChainHarness harness(String fault, int times) {
        String yaml = "rules:\n  - {name: r, match: {direction: server_to_client}, times: " + times + ", fault: "
                + fault + "}\n";
        return new ChainHarness(RuleSet.parse(yaml, "sse.yaml"), 1, TransportKind.HTTP, b -> { });
    }

    @Test
    void sseRetryGivesTheEventARetryFieldAndKeepsItsMessage() {
        try (ChainHarness h = harness("{type: sse_retry, retry: 3s}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/progress"), POST);
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/progress"), Msg.result(1, "{}"));
            assertThat(h.framings.get(0)).isEqualTo(new SseFields(null, null, 3000L));
            assertThat(h.framings.get(1)).as("times: 1, the next event as it came").isNull();
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.detail()).isEqualTo("retry: 3000"));
        }
    }

    @Test
    void sseRetryKeepsTheEventsIdAndType() {
        assertThat(SseFields.withRetry(new SseFields("message", "3-2"), 500))
                .isEqualTo(new SseFields("message", "3-2", 500L));
    }

    @Test
    void sseRetryLeavesTheClientsMessagesAlone() {
        String yaml = "rules:\n  - {name: r, times: 1, fault: {type: sse_retry, retry: 100ms}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "sse.yaml"), 1, TransportKind.HTTP, b -> { })) {
            h.sendOn(Direction.CLIENT_TO_SERVER, Msg.request(1, "ping"), POST);
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping"));
            assertThat(h.events).isEmpty();
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            assertThat(h.events).as("times was not used up by the request").hasSize(1);
        }
    }

    @Test
    void sseRetryRefusesARetryThatIsNotWholeMillisecondsOrIsNegative() {
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - {name: r, fault: {type: sse_retry}}\n", "sse.yaml"))
                .hasMessageContaining("retry");
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - {name: r, fault: {type: sse_retry, retry: -1s}}\n",
                "sse.yaml")).hasMessageContaining("fault.retry: '-1s'");
        assertThatThrownBy(() -> new dev.mcpchaos.rules.fault.SseRetryFault.Config(java.time.Duration.ofNanos(1500)))
                .isInstanceOf(InvalidParameterException.class).hasMessageContaining("whole milliseconds");
        assertThatThrownBy(() -> RuleSet.parse(
                "rules:\n  - {name: r, match: {transport: stdio}, fault: {type: sse_retry, retry: 1s}}\n", "sse.yaml"))
                .hasMessageContaining("only applies to the http transport");
    }

    @Test
    void resumeGapSkipsEventsOnlyOnAResumedStream() {
        try (ChainHarness h = harness("{type: resume_gap}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/message"), GET);
            assertThat(h.events).as("not resumed: nothing to do, no injection").isEmpty();
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/progress"), RESUMED);
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(2, "{}"), RESUMED);
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.notification("notifications/message"),
                    Msg.result(2, "{}"));
            assertThat(h.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("skipped on the stream resumed after event 3-2"));
        }
    }

    @Test
    void resumeRepeatSendsAnEventOfAResumedStreamTwice() {
        try (ChainHarness h = harness("{type: resume_repeat}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(2, "{}"), RESUMED);
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(3, "{}"), RESUMED);
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(2, "{}"), Msg.result(2, "{}"),
                    Msg.result(3, "{}"));
            assertThat(h.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("repeated on the stream resumed after event 3-2"));
        }
    }

    @Test
    void getStreamDropClosesTheClientsConnectionOnlyOnAGetStream() {
        try (ChainHarness h = harness("{type: get_stream_drop}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            assertThat(h.connectionActions).isEmpty();
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/message"), GET);
            assertThat(h.connectionActions).containsExactly("closeClientSide");
            assertThat(h.toClient()).as("the message the stream was dropped at goes nowhere")
                    .containsExactly(Msg.result(1, "{}"));
            assertThat(h.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("dropped the GET stream"));
            assertThat(h.seen).extracting(ChainHarness.Seen::what).contains("closeClientSide");
        }
    }

    /** The fields of a stream's first message the transport handed the priming event {@code id} it held. */
    static SseFields primed(String id) {
        return SseFields.withLeading(new SseFields(null, id.replace("-0", "-1")),
                ("id: " + id + "\ndata: \n\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void primingDropRemovesTheEventsHeldBeforeTheFirstMessageAndKeepsTheMessage() {
        try (ChainHarness h = harness("{type: priming_drop}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/progress"), POST, primed("4-0"));
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST, new SseFields(null, "4-2"));
            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/progress"), Msg.result(1, "{}"));
            assertThat(h.framings.get(0)).as("the message keeps its own id; the priming event is gone")
                    .isEqualTo(new SseFields(null, "4-1"));
            assertThat(h.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("removed the priming event before it (id 4-0)"));
        }
    }

    @Test
    void primingDropHasNothingToDoWhereNoPrimingEventCameFirst() {
        try (ChainHarness h = harness("{type: priming_drop}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.notification("notifications/progress"), POST,
                    new SseFields(null, "4-1"));
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST);
            assertThat(h.events).as("not a stream's first message with a priming event: no injection").isEmpty();
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(2, "{}"), POST, primed("5-0"));
            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/progress"), Msg.result(1, "{}"),
                    Msg.result(2, "{}"));
            assertThat(h.events).as("times was not used up before").singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("removed the priming event before it (id 5-0)"));
        }
    }

    @Test
    void primingDropNamesEveryPrimingEventItRemoved() {
        byte[] two = "id: 1-0\ndata: \n\nid:1-9\r\ndata:\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (ChainHarness h = harness("{type: priming_drop}", 1)) {
            h.sendOn(Direction.SERVER_TO_CLIENT, Msg.result(1, "{}"), POST, SseFields.withLeading(null, two));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.detail())
                    .isEqualTo("removed 2 priming events before it (id 1-0, 1-9)"));
            assertThat(h.framings.get(0)).isEqualTo(new SseFields(null, null));
        }
    }

    @Test
    void theSseFaultsAreRefusedOnStdio() {
        for (String type : new String[] {"resume_gap", "resume_repeat", "get_stream_drop", "priming_drop"}) {
            assertThatThrownBy(() -> RuleSet.parse("rules:\n  - {name: r, match: {transport: stdio}, fault: {type: "
                    + type + "}}\n", "sse.yaml")).hasMessageContaining(type + ": only applies to the http transport");
        }
    }
}
