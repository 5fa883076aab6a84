package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorChain;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;

import java.util.List;

/**
 * What a {@link ResponseBody} may do to its exchange and the client: the narrow interface
 * between them. {@link Exchange} implements it; a test drives a body through one of its own
 * over an {@code EmbeddedChannel}. All methods run on the client connection's event loop.
 */
interface ResponseOutput {

    /** The client connection's allocator. */
    ByteBufAllocator alloc();

    /** The session's chain, for what a body frames to pass through or only to show. */
    InterceptorChain chain();

    /** The limits a body keeps to, the observer it reports breaches to. */
    HttpProxyConfig config();

    /** What log lines call the exchange ({@code POST /mcp}); made when a line is written. */
    String label();

    /** The upstream's response head made ready for the client, in place (read once). */
    HttpResponse clientHead();

    /** Writes the response head to the client; the response is streaming from now on. */
    void writeHead(HttpResponse head);

    /** Writes a piece of the body to the client, unflushed; takes ownership. */
    void writeContent(HttpContent content);

    /** Flushes the client connection at the end of this turn of the loop (see {@link Exchange}). */
    void flushSoon();

    /** Writes the whole answer (a JSON body and its head) and completes the exchange; takes ownership. */
    void writeWhole(FullHttpResponse response);

    /**
     * The body ended as it should: writes what is queued and {@code last}, and completes the
     * exchange; takes ownership. Unless a fault stalls the response: then the end is held back.
     */
    void endBody(LastHttpContent last);

    /** The body is still coming ({@code false}: its deadline moves) or has all come. */
    void bodyProgress(boolean allCame);

    /** Passes frames of this response into the chain; takes ownership (released if the chain is gone). */
    void process(List<Frame> frames);

    /** Shows frames of this response to the chain's observers only; takes ownership. */
    void observe(List<Frame> frames);

    /** Shows one lent frame to the observers, now (the chain runs on this loop); does not take ownership. */
    void observeLent(Frame frame);

    /**
     * Runs {@link ResponseBody#onRouteEnd} once the chain holds no frame of this response:
     * the end of a body travels behind its messages.
     */
    void endAfterHeld();

    /**
     * Reserves {@code bytes} of the proxy's ceiling on bytes held for clients, until the exchange
     * ends; false (counted as the limit {@code buffered}) when they do not fit.
     */
    boolean reserve(long bytes);

    /** The exchange was ended by a fault that closed the upstream after the whole answer came. */
    boolean upstreamCutByFault();

    /** Answers the client 502 with a JSON-RPC error: the upstream went away before answering (injected). */
    void answerUpstreamCut();
}
