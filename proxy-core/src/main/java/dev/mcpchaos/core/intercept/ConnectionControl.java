package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;

import java.util.Map;

/**
 * What an interceptor may do to the connection a frame travels on: on stdio the pipes and the
 * child process, on HTTP the client's connection and the upstream connection of the exchange
 * the frame belongs to.
 */
public interface ConnectionControl {

    /** Closes the client's side: on stdio the proxy's stdout, on HTTP the client's connection. */
    void closeClientSide(Frame at);

    /** Closes the server's side: on stdio the child's stdin, on HTTP the upstream connection. */
    void closeServerSide(Frame at);

    /** Stdio: SIGTERM to the server process. HTTP: closes the upstream connection. */
    void terminateServer(Frame at);

    /** Stdio: SIGKILL to the server process. HTTP: closes the upstream connection. */
    void killServer(Frame at);

    /**
     * HTTP only: answers the HTTP request {@code at} came in with this status, headers and body
     * instead of forwarding it (or, for a response, instead of the upstream's answer).
     *
     * @param body ownership passes to the transport
     * @return whether it will answer: false when the response has already begun (an SSE stream),
     *         and then the body is released
     * @throws UnsupportedOperationException on a transport without HTTP
     */
    default boolean respondHttp(Frame at, int status, Map<String, String> headers, ByteBuf body) {
        body.release();
        throw new UnsupportedOperationException("respondHttp: only the http transport answers with a status");
    }

    /**
     * HTTP only: the response to the exchange {@code at} belongs to claims this content type.
     * For a request frame it applies to the response head still to come; for a JSON response
     * frame, to that response. An SSE response's head has already left when its events pass.
     *
     * @return whether the response will claim it: false when its head has already left (an SSE
     *         stream's events) or there is no response to change
     * @throws UnsupportedOperationException on a transport without HTTP
     */
    default boolean overrideContentType(Frame at, String contentType) {
        throw new UnsupportedOperationException("overrideContentType: only the http transport has content types");
    }

    /**
     * HTTP only: expires the session {@code at} belongs to: from now on the proxy answers its
     * requests with 404, as a server does for a session it no longer knows.
     *
     * @return whether there was a session to expire: false when the request carries none
     *
     * @throws UnsupportedOperationException on a transport without HTTP sessions
     */
    default boolean expireSession(Frame at) {
        throw new UnsupportedOperationException("expireSession: only the http transport has sessions");
    }

    /**
     * Keeps the response that {@code at} belongs to from ending: on HTTP, the end of its SSE
     * stream (or of its JSON body, which then never comes) is held back until the client gives
     * up and goes away, as a server that went silent would leave it (the {@code blackhole}
     * fault). On stdio nothing ends per message: the default does nothing.
     */
    default void stallResponse(Frame at) {
    }

    /**
     * Whether the message {@code at} travels in a body that carries exactly one message, so that
     * nothing can be sent beside it (a duplicate): on HTTP, a JSON answer. The default, false,
     * is right for a transport that carries a stream of messages.
     */
    default boolean carriesOneMessage(Frame at) {
        return false;
    }
}
