package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import io.netty.buffer.ByteBufUtil;

import java.util.Map;

/**
 * What the HTTP transport lets faults do to the HTTP exchange around a message, beyond the
 * message itself: the faults {@code http_status}, {@code invalid_content_type} and
 * {@code session_expire} need it. By default ({@link ConnectionHttpActions}) they go through the
 * transport's {@link dev.mcpchaos.core.intercept.ConnectionControl}; tests may give another to
 * {@link dev.mcpchaos.rules.RuleEngine.Builder#httpActions}. On stdio rules with those faults
 * are refused when loaded.
 *
 * <h2>Reservations</h2>
 * Each action may decline (its {@code false}), and a declined action is no injection: the fault
 * then says it had {@linkplain FaultContext#nothingToDo nothing to do}, and no event is
 * published. So the engine cannot publish a fault's event before calling one; it publishes the
 * moment one returns {@code true}, before the fault goes on. An implementation therefore decides
 * at once and acts later: what it reserves (an answer, a new content type, the 404s of an expired
 * session) must not reach a client before the current task of the chain's executor is over, so
 * that a client which has what the fault did finds the fault's event in the journal. The HTTP
 * transport writes a fault's answer on the chain's next turn.
 */
public interface HttpFaultActions {

    /**
     * Answers the HTTP request that carried {@code frame} with this status, headers and body
     * instead of forwarding it. The fault drops the frame afterwards.
     *
     * @return whether it will: false when the response has already begun (an SSE stream's
     *         events pass after its head), so nothing was answered
     */
    default boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                            String body) {
        return ctx.connection().respondHttp(frame, status, headers, ByteBufUtil.writeUtf8(ctx.alloc(), body));
    }

    /**
     * Makes the HTTP response that carries {@code frame} claim {@code contentType}.
     *
     * @return whether it will: false when that response's head has already left (the events of
     *         an SSE stream pass after it), so nothing changed
     */
    default boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
        return ctx.connection().overrideContentType(frame, contentType);
    }

    /**
     * Expires the session {@code frame} belongs to: from now on its requests are answered 404,
     * as for an unknown session.
     *
     * @return whether there was a session to expire: false for a request without one
     */
    default boolean expireSession(InterceptorContext ctx, Frame frame) {
        return ctx.connection().expireSession(frame);
    }
}
