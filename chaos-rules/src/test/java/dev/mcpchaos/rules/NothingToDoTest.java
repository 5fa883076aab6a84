package dev.mcpchaos.rules;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.Fault;
import dev.mcpchaos.rules.fault.FaultContext;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import dev.mcpchaos.rules.match.MessageMatch;
import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fault that finds nothing to do to a message (it is already short, already big, the patch's
 * test fails...) lets it pass untouched, and that is not an injection: no event, not counted as
 * injected, and the rule's {@code times} is left for a message it can act on. Each case has its
 * twin, the next message, which the fault does change, and which therefore gets the one
 * injection {@code times: 1} allows.
 */
class NothingToDoTest {

    private final ListAppender<ILoggingEvent> faultLog = new ListAppender<>();
    private final Logger faults = (Logger) LoggerFactory.getLogger("faults");
    private Level level;
    private boolean additive;

    @BeforeEach
    void listenToTheFaultLog() {
        // Tests log warnings only: the fault log's INFO lines are caught here, not printed.
        level = faults.getLevel();
        additive = faults.isAdditive();
        faults.setLevel(Level.INFO);
        faults.setAdditive(false);
        faultLog.start();
        faults.addAppender(faultLog);
    }

    @AfterEach
    void stopListening() {
        faults.detachAppender(faultLog);
        faults.setLevel(level);
        faults.setAdditive(additive);
    }

    private static ChainHarness once(String match, String fault) {
        return ChainHarness.of("rules:\n  - name: r\n    match: " + match + "\n    times: 1\n    fault: " + fault
                + "\n", 3);
    }

    private List<String> faultLines() {
        List<String> lines = new ArrayList<>();
        for (ILoggingEvent event : faultLog.list) {
            lines.add(event.getFormattedMessage());
        }
        return lines;
    }

    private static String bigResult(Object id, int padding) {
        return Msg.result(id, "{\"v\":\"" + "x".repeat(padding) + "\"}");
    }

    @Test
    void truncateOfAnAnswerShorterThanTheCutIsNoInjection() {
        try (ChainHarness h = once("{kind: response}", "{type: truncate, at: 1KiB}")) {
            String small = Msg.result(1, "{}");
            assertThat(small).hasSize(36);
            String big = bigResult(2, 2000);
            String after = bigResult(3, 2000);
            h.fromServer(small);
            h.fromServer(big);
            h.fromServer(after);

            assertThat(h.toClient()).containsExactly(small, big.substring(0, 1024), after);
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.id()).isEqualTo(2L);
                assertThat(e.detail()).isEqualTo("cut at 1024 of " + big.length() + " B");
            });
            assertThat(h.engine.stats()).singleElement().satisfies(s -> {
                assertThat(s.matched()).isEqualTo(3);
                assertThat(s.injected()).isEqualTo(1);
            });
            assertThat(faultLines()).anySatisfy(line -> assertThat(line)
                    .contains("rule 'r' truncate: response id=1; nothing to do: message of 36 B is not longer than"
                            + " 1024 B (not injected)"));
        }
    }

    @Test
    void oversizeOfAMessageAlreadyThatBigIsNoInjection() {
        try (ChainHarness h = once("{kind: response}", "{type: oversize, size: 100B}")) {
            String big = bigResult(1, 120);
            h.fromServer(big);
            h.fromServer(Msg.result(2, "{}"));

            assertThat(h.toClient().get(0)).isEqualTo(big);
            assertThat(h.written.get(1).line()).hasSize(100).startsWith("{\"jsonrpc\":\"2.0\",\"id\":2,");
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.id()).isEqualTo(2L));
            assertThat(h.engine.stats().get(0).injected()).isEqualTo(1);
        }
    }

    @Test
    void mutateWhoseTestFailsIsNoInjection() {
        String patch = "{type: mutate, patch: [{op: test, path: /result/tools/0/name, value: add},"
                + " {op: remove, path: /result/tools/0}]}";
        try (ChainHarness h = once("{kind: response}", patch)) {
            String echo = Msg.result(1, "{\"tools\":[{\"name\":\"echo\"}]}");
            h.fromServer(echo);
            h.fromServer(Msg.result(2, "{\"tools\":[{\"name\":\"add\"}]}"));

            assertThat(h.toClient()).containsExactly(echo, Msg.result(2, "{\"tools\":[]}"));
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.id()).isEqualTo(2L);
                assertThat(e.detail()).isEqualTo("patched (2 operations)");
            });
            assertThat(faultLines()).anySatisfy(line -> assertThat(line).contains("response id=1; nothing to do:"
                    + " patch not applied: operation 0 (test /result/tools/0/name): test failed: the value is"
                    + " \"echo\""));
        }
    }

    @Test
    void mutateWhosePatchChangesNothingIsNoInjection() {
        // A replace with the value already there: the message would be written again, the same.
        String patch = "{type: mutate, patch: [{op: replace, path: /result/isError, value: false}]}";
        try (ChainHarness h = once("{kind: response}", patch)) {
            String unchanged = Msg.result(1, "{\"isError\" : false}");
            h.fromServer(unchanged);
            h.fromServer(Msg.result(2, "{\"isError\":true}"));

            assertThat(h.toClient()).containsExactly(unchanged, Msg.result(2, "{\"isError\":false}"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.id()).isEqualTo(2L));
        }
    }

    @Test
    void idMismatchToTheIdTheResponseHasIsNoInjection() {
        try (ChainHarness h = once("{kind: response}", "{type: id_mismatch, id: 7}")) {
            h.fromServer(Msg.result(7.0, "{}"));
            h.fromServer(Msg.result(8, "{}"));

            assertThat(h.toClient()).containsExactly(Msg.result(7.0, "{}"), Msg.result(7, "{}"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.detail()).isEqualTo("id 8 -> 7"));
        }
    }

    @Test
    void throttleOfAMessageThatFitsInOnePieceIsNoInjection() {
        try (ChainHarness h = once("{kind: request}", "{type: throttle, chunk: 41B, interval: 100ms}")) {
            String fits = Msg.request(1, "ping"); // 40 bytes and the newline: one piece
            String longer = Msg.request(2, "ping/long");
            h.fromClient(fits);
            h.fromClient(longer);
            assertThat(h.written).extracting(ChainHarness.Written::text).containsExactly(fits + "\n",
                    longer.substring(0, 41));
            h.advanceMillis(100);
            assertThat(h.stream(dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER))
                    .isEqualTo(fits + "\n" + longer + "\n");
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.id()).isEqualTo(2L));
        }
    }

    @Test
    void invalidContentTypeOnAResponseWhoseHeadLeftIsNoInjection() {
        boolean[] headLeft = {true};
        List<String> claimed = new ArrayList<>();
        HttpFaultActions http = new HttpFaultActions() {
            @Override
            public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                                   String body) {
                throw new AssertionError("not an http_status rule");
            }

            @Override
            public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
                if (headLeft[0]) {
                    return false; // an SSE stream's head left before its events
                }
                claimed.add(contentType + " for " + frame.envelope().id());
                return true;
            }

            @Override
            public boolean expireSession(InterceptorContext ctx, Frame frame) {
                throw new AssertionError("not a session_expire rule");
            }
        };
        String yaml = "rules:\n  - {name: html, match: {kind: response}, times: 1, fault: {type: invalid_content_type}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP,
                b -> b.httpActions(http))) {
            h.fromServer(Msg.result(1, "{}"));
            headLeft[0] = false;
            h.fromServer(Msg.result(2, "{}"));

            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(2, "{}"));
            assertThat(claimed).containsExactly("text/html for 2");
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.id()).isEqualTo(2L);
                assertThat(e.detail()).isEqualTo("content type claimed: text/html");
            });
            assertThat(faultLines()).anySatisfy(line -> assertThat(line).contains("response id=1; nothing to do:"
                    + " the response's head has already left"));
        }
    }

    @Test
    void theNextRuleStillSeesAMessageAFaultHadNothingToDoTo() {
        String yaml = "rules:\n"
                + "  - {name: cut, match: {kind: response}, fault: {type: truncate, at: 1KiB}}\n"
                + "  - {name: twice, match: {kind: response}, fault: {type: duplicate}}\n";
        try (ChainHarness h = ChainHarness.of(yaml, 3)) {
            h.fromServer(Msg.result(1, "{}"));
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(1, "{}"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("twice");
            assertThat(h.events.get(0).sequence()).isEqualTo(1);
        }
    }

    @Test
    void nothingToDoAfterActingIsRefusedAndTheMessageStillGoesOn() {
        Fault confused = new Fault() {
            @Override
            public String type() {
                return "confused";
            }

            @Override
            public void apply(FaultContext ctx, Frame frame) {
                ctx.output(Frame.synthesized(ByteBufUtil.writeUtf8(ctx.alloc(), "stray"), frame.envelope(),
                        frame.direction(), frame.sequence()));
                ctx.nothingToDo(frame, "changed its mind");
            }
        };
        Rule rule = Rule.builder("confused", confused).match(MessageMatch.ANY).build();
        try (ChainHarness h = new ChainHarness(RuleSet.of("test", List.of(rule)), 1, TransportKind.STDIO,
                b -> { })) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly("stray", Msg.request(1, "ping"));
            // It acted (the stray line), so the injection stands.
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.rule()).isEqualTo("confused"));
            assertThat(h.engine.stats().get(0).injected()).isEqualTo(1);
        }
    }
}
