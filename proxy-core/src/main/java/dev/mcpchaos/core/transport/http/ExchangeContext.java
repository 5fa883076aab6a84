package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;
import dev.mcpchaos.core.intercept.ConnectionControl;
import io.netty.buffer.ByteBuf;

import java.util.Map;

/**
 * The HTTP exchange a frame travels on ({@link Frame#route()}), as the chain's sinks and the
 * faults' {@link ConnectionControl} reach it: the one typed way from a frame to the HTTP-only
 * actions. Every method may be called from any thread (the chain's executor, a fault's timer);
 * the exchange runs what it changes on its client connection's event loop.
 */
interface ExchangeContext extends HeaderSource {

    /** The exchange {@code frame} travels on, or null when it travels on none (stdio, a test's frame). */
    static ExchangeContext of(Frame frame) {
        return frame.route() instanceof ExchangeContext exchange ? exchange : null;
    }

    /** The chain let a client-to-server frame through: it goes upstream. Takes the frame. */
    void sendRequest(Frame frame);

    /** The chain let a server-to-client frame through (or a fault made one): it goes to the client. Takes the frame. */
    void sendResponse(Frame frame);

    /** A fault closes the client's connection, after what was let through before. */
    void closeClient();

    /** A fault closes the upstream connection (see {@link ConnectionControl#closeServerSide}). */
    void closeUpstream();

    /** See {@link ConnectionControl#respondHttp}; takes {@code body}. */
    boolean respondWith(int status, Map<String, String> headers, ByteBuf body);

    /** See {@link ConnectionControl#carriesOneMessage}. */
    boolean carriesOneMessage(Direction direction);

    /** See {@link ConnectionControl#overrideContentType}. */
    boolean overrideContentType(String contentType);

    /** See {@link ConnectionControl#stallResponse}. */
    void stall();

    /**
     * See {@link ConnectionControl#expireSession}: expires this exchange's session, and answers
     * {@code at} 404 when it is the request this exchange carries.
     */
    boolean expireSession(Frame at);
}
