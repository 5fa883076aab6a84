package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** An action added to {@link HttpFaultActions} later breaks no implementation and passes every wrapper. */
class HttpFaultActionsTest {

    /** Records the actions it is asked for, and declines them all. */
    private static final class Recording implements HttpFaultActions {
        final List<String> asked = new ArrayList<>();

        @Override
        public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                               String body) {
            asked.add("respond " + status + ' ' + body);
            return false;
        }

        @Override
        public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
            asked.add("overrideContentType " + contentType);
            return false;
        }

        @Override
        public boolean expireSession(InterceptorContext ctx, Frame frame) {
            asked.add("expireSession");
            return true;
        }
    }

    @Test
    void aForwardingWrapperThatOverridesNothingHandsEveryActionToWhatItWraps() {
        Recording recording = new Recording();
        ForwardingHttpFaultActions wrapper = () -> recording;
        assertThat(wrapper.respond(null, null, 503, Map.of(), "busy")).isFalse();
        assertThat(wrapper.overrideContentType(null, null, "text/html")).isFalse();
        assertThat(wrapper.expireSession(null, null)).isTrue();
        assertThat(recording.asked).containsExactly("respond 503 busy", "overrideContentType text/html",
                "expireSession");
    }

    @Test
    void everyActionHasADefaultAndTheForwardingBaseForwardsEach() throws Exception {
        for (Method action : HttpFaultActions.class.getDeclaredMethods()) {
            if (java.lang.reflect.Modifier.isStatic(action.getModifiers())) {
                continue;
            }
            assertThat(action.isDefault()).as(action + " has a default (an implementation need not write it)")
                    .isTrue();
            Method forwarded = ForwardingHttpFaultActions.class.getDeclaredMethod(action.getName(),
                    action.getParameterTypes());
            assertThat(forwarded.isDefault()).as(forwarded + " forwards by default").isTrue();
        }
        assertThat(ConnectionHttpActions.class.getDeclaredMethods()).as("ConnectionHttpActions is the defaults")
                .allMatch(m -> m.isSynthetic());
    }
}
