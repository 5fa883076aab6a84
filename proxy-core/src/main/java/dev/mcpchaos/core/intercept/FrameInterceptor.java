package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * Sees every frame that passes the proxy, in both directions, and decides what becomes of it.
 * Faults, metrics, the event log and the recorder are interceptors.
 *
 * <h2>Contract</h2>
 * For each frame, do exactly one of, now or later:
 * <ul>
 *   <li>{@link InterceptorContext#forward forward} it (or a replacement) to the next interceptor;</li>
 *   <li>{@link InterceptorContext#drop drop} it, which releases it;</li>
 *   <li>act on the connection through {@link InterceptorContext#connection()} and drop it.</li>
 * </ul>
 * Any number of new frames may also be {@link InterceptorContext#emit emitted}, in either
 * direction (an error back to the sender, a duplicate, a stray line).
 *
 * <p>Called on the context's {@link InterceptorContext#executor() executor}, one frame at a
 * time, in arrival order per direction. Never block: delays are scheduled on that executor,
 * which tests drive with virtual time. An interceptor that throws before handing the frame on
 * is logged and the frame is forwarded unchanged: one broken interceptor never loses traffic.
 */
@FunctionalInterface
public interface FrameInterceptor {

    /** Handles one frame; see the class comment for what must become of it. */
    void onFrame(InterceptorContext ctx, Frame frame);

    /**
     * No more frames will arrive in {@code direction} (a stdio peer closed its output). Run
     * {@code done} once every frame of that direction this interceptor still holds (a delayed
     * one) has been handed on, so the transport closes the other side only after them. Called on
     * the executor; the default runs {@code done} at once.
     */
    default void onInputEnd(InterceptorContext ctx, Direction direction, Runnable done) {
        done.run();
    }

    /**
     * No more frames will arrive in {@code direction} on {@code route} (see {@link Frame#route()}):
     * on HTTP, the upstream's response to one request ended (a JSON body, an SSE answer, the GET
     * stream), or its client went away. Run {@code done} once every frame of that route and
     * direction this interceptor holds (a delayed one, one in a reorder window) has been handed
     * on or dropped: the transport ends the route (the SSE stream's last chunk) only then, so the
     * end of a stream travels behind its messages like one more message. Frames of other routes
     * it holds do not matter. Called on the executor; the default runs {@code done} at once,
     * which is right for an interceptor that holds nothing.
     */
    default void onRouteEnd(InterceptorContext ctx, Direction direction, Object route, Runnable done) {
        done.run();
    }

    /**
     * A frame an interceptor before this one {@linkplain InterceptorContext#emit emitted} (an
     * answer a fault made, a duplicate, a stray line) is on its way straight out: it skips
     * {@link #onFrame}, so an interceptor that watches what leaves the proxy (the referee's view
     * of what each peer received) is told here. Look only: the frame belongs to the sink, and is
     * valid only until this returns; keep no reference and change nothing. Called on the
     * executor, before the frame is written; the default does nothing.
     */
    default void onEmitted(InterceptorContext ctx, Frame frame) {
    }

    /**
     * Whether this interceptor, as it stands now, may do anything with a frame travelling in
     * {@code direction} on {@code transport}: act on it, hold it, emit beside it, or record it.
     * {@code false} is a promise that it would forward every such frame at once, unchanged, and
     * keep nothing of it. When no interceptor of a chain inspects a direction, a transport may
     * skip the work of turning that direction's bytes into frames (the HTTP transport then relays
     * an SSE stream's bytes as they come, without framing or sniffing its events) and the chain
     * skips correlation. The transport asks again for every chunk it reads, so a change (a rule
     * added at run time) takes effect from the next event of a stream.
     *
     * <p>Called often and from any thread: it must be cheap and thread-safe. The default,
     * {@code true}, is always correct.
     */
    default boolean inspects(TransportKind transport, Direction direction) {
        return true;
    }

    /**
     * Whether this interceptor, as it stands now, only <em>observes</em> frames travelling in
     * {@code direction} on {@code transport}. {@code true} is a promise that {@link #onFrame}
     * forwards every such frame before it returns, the same frame, unchanged; that it emits
     * nothing, drops nothing and acts on no connection; and that it keeps no reference to the
     * frame (it may record what it read of it: a count, a log line). Metrics, the event log and
     * the traffic log are observers.
     *
     * <p>When every interceptor of a chain that {@link #inspects inspects} a direction only
     * observes it, a transport may relay that direction's bytes as they come and show the
     * interceptors each message beside them ({@link InterceptorChain#observe}), instead of
     * writing out what the chain hands on: the HTTP transport then relays an SSE stream as it
     * reads it and still frames and sniffs its events for the observers. Such frames may be
     * {@link Frame#isLent lent}: their bytes are valid only until {@code onFrame} returns, so
     * keeping a reference is not only a broken promise but a read of bytes that are gone (take
     * {@link Frame#toOwned()} to keep one). Like {@code inspects}, it is asked again for every
     * chunk, so a change takes effect from the next event.
     *
     * <p>Called often and from any thread: it must be cheap and thread-safe. The default,
     * {@code false}, is always correct.
     */
    default boolean onlyObserves(TransportKind transport, Direction direction) {
        return false;
    }

    /**
     * Whether this interceptor, as it stands now, wants the message-less events with an id that
     * open an SSE stream on {@code transport} (the priming events of 2025-11-25) held back and
     * handed on with the stream's first message, in its
     * {@link dev.mcpchaos.core.codec.sse.SseFields#leading() framing}, instead of passing on their
     * own: an event without a message has no envelope a rule could match, so a fault that removes
     * them ({@code priming_drop}) acts on the message they precede. Holding them delays them to
     * that message, so only an interceptor that may act on them says yes. Asked for every event
     * before a stream's first message; cheap and thread-safe. The default, {@code false}, changes
     * nothing.
     */
    default boolean holdsLeadingEvents(TransportKind transport) {
        return false;
    }
}
