package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import io.netty.handler.codec.http.HttpContent;

/**
 * How one response body reaches the client once its head has come: gathered whole and passed
 * through the chain as one message ({@link JsonResponseBody}), split into events that are
 * relayed, observed or framed ({@link SseResponseBody}), or relayed as it comes
 * ({@link RawResponseBody}). The {@link Exchange} owns the phases of the response and every
 * decision about the upstream connection and the client's; a body owns its buffers and decoders
 * and lets go of them in {@link #release}. It talks to the exchange only through
 * {@link ResponseOutput}, so each strategy can be driven on an {@code EmbeddedChannel} alone.
 *
 * <p>All methods run on the client connection's event loop.
 */
interface ResponseBody {

    /**
     * A piece of the upstream's body; takes ownership. Returns the body that reads the rest:
     * this one, or another when the body changes strategy (a JSON body over its limit goes on raw).
     */
    ResponseBody onContent(HttpContent content);

    /** The chain let a server-to-client frame of this response through (or a fault made one); takes ownership. */
    void deliver(Frame frame);

    /**
     * Every frame the chain held for this response has left, and the upstream's body has ended
     * or broken off: what must still happen before the exchange ends (see {@link Exchange}).
     * Default: nothing.
     */
    default void onRouteEnd() {
    }

    /** Writes what is queued for the client, unflushed (SSE events gathered for one chunk). Default: nothing. */
    default void writeQueued() {
    }

    /**
     * Whether each piece must follow the last within the response body timeout. Default true:
     * a JSON answer or a download that stops coming is answered 504 or cut. An SSE stream may
     * idle as long as its server likes.
     */
    default boolean keepsComing() {
        return true;
    }

    /**
     * Whether the body is a stream of messages, each passing the chain as it came whole (SSE).
     * Such a stream, when the upstream breaks off, reaches the client up to its last whole
     * message before the cut; when a fault closes the upstream at one of its messages, it is cut
     * there. Default false: a body that is one message (or none) is cut as it stands.
     */
    default boolean streamsMessages() {
        return false;
    }

    /**
     * The piece that ends this body cleanly when a drain's deadline passes, or null when it
     * cannot end cleanly now and is cut instead. Default null: only an SSE stream standing
     * between events can end early and still be whole.
     */
    default HttpContent drainEnd() {
        return null;
    }

    /** Where a body the drain cut stood, for the log line: {@code mid-body} by default. */
    default String cutWhere() {
        return "mid-body";
    }

    /** Whether a message to the client here is the only one the body carries (nothing can go beside it). */
    boolean carriesOneMessage();

    /** Lets go of every buffer and decoder held; harmless twice. */
    void release();
}
