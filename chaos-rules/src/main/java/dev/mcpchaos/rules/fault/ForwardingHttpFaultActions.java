package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;

import java.util.Map;

/**
 * {@link HttpFaultActions} that hand every action to {@link #delegate()}: the base of a wrapper
 * that notes or changes a few actions (a journal noting the statuses a fault answers with). An
 * action added to {@link HttpFaultActions} later gets a forwarding default here, so such a wrapper
 * passes it on rather than bypassing what it wraps.
 */
public interface ForwardingHttpFaultActions extends HttpFaultActions {

    /** The actions this one hands on to. */
    HttpFaultActions delegate();

    @Override
    default boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                            String body) {
        return delegate().respond(ctx, frame, status, headers, body);
    }

    @Override
    default boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
        return delegate().overrideContentType(ctx, frame, contentType);
    }

    @Override
    default boolean expireSession(InterceptorContext ctx, Frame frame) {
        return delegate().expireSession(ctx, frame);
    }
}
