package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.Fault;
import dev.mcpchaos.rules.fault.FaultContext;
import dev.mcpchaos.rules.fault.FaultRegistry;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fault's event reaches the listeners (the journal, the event log) before anything the fault
 * did can reach a peer: a test that reads the journal as soon as its client has an injected
 * answer, a cut connection or a 503 must find the fault's note there. Each write to a peer and
 * each action on the connection is noted with the number of events the listeners had then; for
 * every fault type, message after message, the message's own event must already be among them.
 */
class EventBeforeActionTest {

    /** Each run sends this many bursts of {@link #BURST} messages, letting time pass after each burst. */
    private static final int BURSTS = 7;
    /** Messages sent back to back: enough to fill reorder's window of 3. */
    private static final int BURST = 3;
    /** The runs of each fault, each with another seed (latency, reorder and corrupt draw). */
    private static final long[] SEEDS = {1, 2, 3, 42, 1234567};

    /**
     * HTTP actions as the transport's contract has them ({@link HttpFaultActions}): decided at
     * once, seen by the client after the chain's current turn (the transport writes the answer,
     * or the 404 of an expired session, then).
     */
    private static final class ReservingActions implements HttpFaultActions {
        ChainHarness harness;

        @Override
        public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                               String body) {
            Object id = frame.envelope().id();
            ctx.executor().execute(() -> harness.seen("HTTP " + status + " for " + id));
            return true;
        }

        @Override
        public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
            // Seen with the response's head, which goes with the frame when it is written.
            return true;
        }

        @Override
        public boolean expireSession(InterceptorContext ctx, Frame frame) {
            Object id = frame.envelope().id();
            ctx.executor().execute(() -> harness.seen("HTTP 404 for " + id));
            return true;
        }
    }

    /**
     * A fault and how to make it act: its rule (YAML flow mapping), the transport, and which way
     * the message goes (request from the client, response from the server).
     */
    record Scenario(String type, String fault, TransportKind transport, boolean response, String method,
                    Object route) {
        Scenario(String type, String fault, TransportKind transport, boolean response, String method) {
            this(type, fault, transport, response, method, null);
        }

        @Override
        public String toString() {
            return type + " on " + transport.name().toLowerCase();
        }

        String message(int id) {
            if (response) {
                return Msg.result(id, "{\"v\":\"" + "x".repeat(40) + "\"}");
            }
            return method.equals("tools/call") ? Msg.call(id, "search") : Msg.request(id, method);
        }
    }

    private static final Map<String, Scenario> SCENARIOS = new LinkedHashMap<>();

    private static void scenario(String type, String fault, TransportKind transport, boolean response) {
        SCENARIOS.put(type, new Scenario(type, fault, transport, response, "ping"));
    }

    static {
        scenario("latency", "{type: latency, latency: 50ms, jitter: 40ms}", TransportKind.STDIO, false);
        scenario("drop", "{type: drop}", TransportKind.STDIO, false);
        scenario("duplicate", "{type: duplicate, copies: 2}", TransportKind.STDIO, false);
        scenario("reorder", "{type: reorder, window: 3}", TransportKind.STDIO, false);
        scenario("truncate", "{type: truncate, at: 10}", TransportKind.STDIO, false);
        scenario("corrupt", "{type: corrupt}", TransportKind.STDIO, false);
        scenario("oversize", "{type: oversize, size: 2KiB}", TransportKind.STDIO, true);
        scenario("error", "{type: error}", TransportKind.STDIO, false);
        SCENARIOS.put("tool_error", new Scenario("tool_error", "{type: tool_error}", TransportKind.STDIO, false,
                "tools/call"));
        scenario("http_status", "{type: http_status, status: 503}", TransportKind.HTTP, false);
        scenario("invalid_content_type", "{type: invalid_content_type}", TransportKind.HTTP, true);
        scenario("disconnect", "{type: disconnect, side: client}", TransportKind.STDIO, false);
        scenario("blackhole", "{type: blackhole}", TransportKind.HTTP, true);
        scenario("throttle", "{type: throttle, chunk: 10B, interval: 100ms}", TransportKind.STDIO, true);
        scenario("noise", "{type: noise}", TransportKind.STDIO, false);
        scenario("mutate", "{type: mutate, patch: [{op: replace, path: /result/v, value: 2}]}",
                TransportKind.STDIO, true);
        scenario("id_mismatch", "{type: id_mismatch}", TransportKind.STDIO, true);
        scenario("session_expire", "{type: session_expire}", TransportKind.HTTP, false);
        scenario("crash", "{type: crash}", TransportKind.STDIO, false);
        SCENARIOS.put("input_required", new Scenario("input_required", "{type: input_required}", TransportKind.STDIO,
                false, "tools/call"));
        scenario("header_mismatch", "{type: header_mismatch}", TransportKind.HTTP, false);
        // The SSE faults act on a server's event of a stream opened with GET (resumed, for two).
        sseScenario("sse_retry", "{type: sse_retry, retry: 3s}", SseFaultsTest.POST);
        sseScenario("resume_gap", "{type: resume_gap}", SseFaultsTest.RESUMED);
        sseScenario("resume_repeat", "{type: resume_repeat}", SseFaultsTest.RESUMED);
        sseScenario("get_stream_drop", "{type: get_stream_drop}", SseFaultsTest.GET);
        // priming_drop acts on a stream's first message, handed the priming event the transport held.
        sseScenario("priming_drop", "{type: priming_drop}", SseFaultsTest.POST);
    }

    private static void sseScenario(String type, String fault, Object route) {
        SCENARIOS.put(type, new Scenario(type, fault, TransportKind.HTTP, true, "ping", route));
    }

    static Stream<Scenario> scenarios() {
        return SCENARIOS.values().stream();
    }

    @Test
    void everyFaultTypeHasAScenario() {
        assertThat(SCENARIOS.keySet()).as("a fault type without a scenario here could act before its event")
                .containsExactlyInAnyOrderElementsOf(FaultRegistry.types());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void theFaultsEventIsOutBeforeAnythingItDidReachesAPeer(Scenario s) {
        for (long seed : SEEDS) {
            ReservingActions actions = new ReservingActions();
            String yaml = "rules:\n  - {name: r, match: {" + (s.response() ? "kind: response" : "method: " + s.method())
                    + "}, fault: " + s.fault() + "}\n";
            try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "test.yaml"), seed, s.transport(),
                    b -> b.httpActions(actions))) {
                actions.harness = h;
                int id = 0;
                for (int burst = 0; burst < BURSTS; burst++) {
                    // A burst, so that reorder's window fills; what each message's fault does at once
                    // must come after that message's event.
                    for (int i = 0; i < BURST; i++) {
                        id++;
                        int seenBefore = h.seen.size();
                        if (s.route() != null) {
                            h.sendOn(dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT, s.message(id), s.route(),
                                    s.type().equals("priming_drop") ? SseFaultsTest.primed("1-0") : null);
                        } else if (s.response()) {
                            h.fromServer(s.message(id));
                        } else {
                            h.fromClient(s.message(id));
                        }
                        assertThat(h.events).as("seed %d, message %d: one event each", seed, id).hasSize(id);
                        FaultEvent event = h.events.get(id - 1);
                        assertThat(event.id()).isEqualTo((long) id);
                        assertThat(event.detail()).as("what the fault said it did").isNotEmpty()
                                .doesNotStartWith("failed");
                        assertSeenAfter(h, seenBefore, id, seed);
                    }
                    // Then whatever a fault holds or paces leaves, after every event of the burst.
                    int seenBefore = h.seen.size();
                    h.advance(Duration.ofSeconds(3));
                    assertSeenAfter(h, seenBefore, id, seed);
                }
                if (!s.type().equals("drop") && !s.type().equals("resume_gap")) {
                    assertThat(h.seen).as("the fault did something a peer could see").isNotEmpty();
                }
            }
        }
    }

    /** Every peer-visible step since index {@code from} came after exactly {@code events} events. */
    private static void assertSeenAfter(ChainHarness h, int from, int events, long seed) {
        for (ChainHarness.Seen seen : List.copyOf(h.seen.subList(from, h.seen.size()))) {
            assertThat(seen.eventsBefore()).as("seed %d, message %d: events delivered when a peer could see '%s'", seed,
                    events, seen.what()).isEqualTo(events);
        }
    }

    /**
     * A fault that acts through the interceptor context and the connection it was handed, without
     * announcing itself: the context publishes its event before each action reaches a peer.
     */
    @Test
    void whateverAFaultDoesThroughItsContextPublishesFirst() {
        List<BiConsumer<FaultContext, Frame>> actions = List.of(
                (ctx, frame) -> {
                    ctx.detail("emitted an answer");
                    Frame reply = frame.reply(ByteBufUtil.writeUtf8(ctx.alloc(),
                                    Msg.result(frame.envelope().id(), "{}")),
                            Envelope.ofObject("2.0", true, frame.envelope().id(), null, null, true, false));
                    ctx.interceptor().emit(reply);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("closed the client's side");
                    ctx.interceptor().connection().closeClientSide(frame);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("closed the server's side");
                    ctx.connection().closeServerSide(frame);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("terminated the server");
                    ctx.connection().terminateServer(frame);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("killed the server");
                    ctx.interceptor().connection().killServer(frame);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("stalled the response");
                    ctx.connection().stallResponse(frame);
                    ctx.drop(frame);
                },
                (ctx, frame) -> {
                    ctx.detail("forwarded it out of turn");
                    ctx.interceptor().forward(frame);
                    ctx.end();
                });
        Fault direct = new Fault() {
            @Override
            public String type() {
                return "direct";
            }

            @Override
            public void apply(FaultContext ctx, Frame frame) {
                int id = ((Long) frame.envelope().id()).intValue();
                actions.get((id - 1) % actions.size()).accept(ctx, frame);
            }
        };
        RuleSet rules = RuleSet.of("test", List.of(Rule.builder("direct", direct).build()));
        try (ChainHarness h = new ChainHarness(rules, 1, TransportKind.STDIO, b -> { })) {
            int seenBefore = 0;
            for (int id = 1; id <= 3 * actions.size(); id++) {
                h.fromClient(Msg.request(id, "ping"));
                h.advance(Duration.ofMillis(10));
                assertThat(h.events).hasSize(id);
                List<ChainHarness.Seen> now = List.copyOf(h.seen.subList(seenBefore, h.seen.size()));
                assertThat(now).as("message %d: something a peer could see", id).isNotEmpty();
                for (ChainHarness.Seen seen : now) {
                    assertThat(seen.eventsBefore()).as("message %d: events delivered when the peer could see '%s'", id,
                            seen.what()).isEqualTo(id);
                }
                seenBefore = h.seen.size();
            }
            assertThat(h.events).extracting(FaultEvent::detail).startsWith("emitted an answer", "closed the client's side",
                    "closed the server's side", "terminated the server", "killed the server", "stalled the response",
                    "forwarded it out of turn");
        }
    }

    /** A declined HTTP action is no injection: no event, though the fault asked. */
    @Test
    void aDeclinedHttpActionPublishesNothing() {
        HttpFaultActions declining = new HttpFaultActions() {
            @Override
            public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                                   String body) {
                return false;
            }

            @Override
            public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
                return false;
            }

            @Override
            public boolean expireSession(InterceptorContext ctx, Frame frame) {
                return false;
            }
        };
        String yaml = "rules:\n"
                + "  - {name: busy, match: {method: ping}, fault: {type: http_status, status: 503}}\n"
                + "  - {name: html, match: {kind: response}, fault: {type: invalid_content_type}}\n"
                + "  - {name: gone, match: {method: tools/list}, fault: {type: session_expire}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP,
                b -> b.httpActions(declining))) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromServer(Msg.result(1, "{}"));
            h.fromClient(Msg.request(2, "tools/list"));
            assertThat(h.events).isEmpty();
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping"), Msg.request(2, "tools/list"));
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"));
        }
    }

    /** A fault that says what it did after doing it would lose the words without a trace: it fails instead. */
    @Test
    void aDetailAfterTheEventIsOutIsRefused() {
        List<Throwable> refused = new ArrayList<>();
        Fault late = new Fault() {
            @Override
            public String type() {
                return "late";
            }

            @Override
            public void apply(FaultContext ctx, Frame frame) {
                ctx.connection().closeServerSide(frame);
                try {
                    ctx.detail("closed the server's side");
                } catch (IllegalStateException e) {
                    refused.add(e);
                }
                ctx.drop(frame);
            }
        };
        RuleSet rules = RuleSet.of("test", List.of(Rule.builder("late", late).build()));
        try (ChainHarness h = new ChainHarness(rules, 1, TransportKind.STDIO, b -> { })) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(refused).singleElement().extracting(Throwable::getMessage).isEqualTo("detail after the fault's "
                    + "event was published (rule 'late', fault late): 'closed the server's side' (expected: detail "
                    + "before the fault's first action)");
            assertThat(h.connectionActions).containsExactly("closeServerSide");
        }
    }

    /**
     * The wrappers spell out every method of the interfaces they wrap: a method added to
     * {@link ConnectionControl} or {@link InterceptorContext} later (with a default) would
     * otherwise act without publishing first.
     */
    @Test
    void theWrappersTheFaultGetsOverrideEveryMethod() throws Exception {
        for (Map.Entry<String, Class<?>> wrapped : Map.<String, Class<?>>of(
                "AnnouncingContext", InterceptorContext.class,
                "AnnouncingConnection", ConnectionControl.class,
                "AnnouncingHttpActions", HttpFaultActions.class).entrySet()) {
            Class<?> wrapper = Class.forName(Injection.class.getName() + "$" + wrapped.getKey());
            for (Method method : wrapped.getValue().getMethods()) {
                if (!method.isDefault() && !java.lang.reflect.Modifier.isAbstract(method.getModifiers())) {
                    continue; // a static method
                }
                try {
                    wrapper.getDeclaredMethod(method.getName(), method.getParameterTypes());
                } catch (NoSuchMethodException e) {
                    throw new AssertionError(wrapped.getKey() + " does not override " + method
                            + " (expected: every method, publishing first if it acts)");
                }
            }
        }
    }
}
