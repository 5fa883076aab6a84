package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import io.netty.buffer.ByteBufUtil;

import java.util.Map;

/**
 * The HTTP fault actions as the transport offers them through
 * {@link dev.mcpchaos.core.intercept.ConnectionControl}: the engine's default.
 */
public final class ConnectionHttpActions implements HttpFaultActions {

    /** The one instance: it holds no state. */
    public static final ConnectionHttpActions INSTANCE = new ConnectionHttpActions();

    private ConnectionHttpActions() {
    }

    @Override
    public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers, String body) {
        return ctx.connection().respondHttp(frame, status, headers, ByteBufUtil.writeUtf8(ctx.alloc(), body));
    }

    @Override
    public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
        return ctx.connection().overrideContentType(frame, contentType);
    }

    @Override
    public boolean expireSession(InterceptorContext ctx, Frame frame) {
        return ctx.connection().expireSession(frame);
    }
}
