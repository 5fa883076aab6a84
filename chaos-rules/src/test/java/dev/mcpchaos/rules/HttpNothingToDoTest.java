package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP faults that the exchange can refuse: {@code http_status} once the response began (an
 * SSE stream's events), {@code session_expire} for a request of no session. Refused, the message
 * passes untouched and it is no injection; the twin, where the transport can act, is one.
 */
class HttpNothingToDoTest {

    /** Transport actions that can or cannot act, as the test says, and note what they did. */
    private static final class Actions implements HttpFaultActions {
        boolean canAct;
        final List<String> done = new ArrayList<>();

        @Override
        public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                               String body) {
            if (canAct) {
                done.add("respond " + status + " to " + frame.envelope().id());
            }
            return canAct;
        }

        @Override
        public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
            throw new AssertionError("not an invalid_content_type rule");
        }

        @Override
        public boolean expireSession(InterceptorContext ctx, Frame frame) {
            if (canAct) {
                done.add("expire at " + frame.envelope().id());
            }
            return canAct;
        }
    }

    private static ChainHarness harness(String fault, Actions actions) {
        String yaml = "rules:\n  - {name: r, match: {kind: response}, times: 1, fault: " + fault + "}\n";
        return new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP, b -> b.httpActions(actions));
    }

    @Test
    void httpStatusOnAResponseThatAlreadyBeganLetsItPassAndIsNoInjection() {
        Actions actions = new Actions();
        try (ChainHarness h = harness("{type: http_status, status: 503}", actions)) {
            h.fromServer(Msg.result(1, "{}")); // an SSE event: its head left
            actions.canAct = true;
            h.fromServer(Msg.result(2, "{}")); // a JSON answer still to be written
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"));
            assertThat(actions.done).containsExactly("respond 503 to 2");
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.id()).isEqualTo(2L));
        }
    }

    @Test
    void sessionExpireWithoutASessionLetsTheMessagePassAndIsNoInjection() {
        Actions actions = new Actions();
        try (ChainHarness h = harness("{type: session_expire}", actions)) {
            h.fromServer(Msg.result(1, "{}")); // a sessionless exchange
            actions.canAct = true;
            h.fromServer(Msg.result(2, "{}"));
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"), Msg.result(2, "{}"));
            assertThat(actions.done).containsExactly("expire at 2");
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.id()).isEqualTo(2L);
                assertThat(e.detail()).isEqualTo("session expired");
            });
        }
    }
}
