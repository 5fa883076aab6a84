package dev.mcpchaos.core.frame;

import io.netty.buffer.ByteBuf;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;

import java.util.Objects;

/**
 * One JSON-RPC message on its way through the proxy: its bytes, its {@link Envelope} and its
 * {@link Direction}.
 *
 * <p>A frame read off the wire is <em>original</em>: {@link #wire()} holds exactly the bytes that
 * arrived, framing included (for a stdio line, the line and its {@code \n} or {@code \r\n}), as a
 * retained slice of the read buffer, not a copy. When no interceptor touches the frame, exactly
 * those bytes leave the proxy. A frame made by a fault ({@link #synthesized}) has only its
 * message; the transport frames it on the way out.
 *
 * <p>Reference counted: whoever holds a frame last releases it (forwarding hands it on, dropping
 * releases it).
 *
 * <p>A <em>lent</em> frame ({@link #lent}) does not own its bytes: they are its maker's, valid only
 * until the call the frame was handed to returns. A transport lends frames to observers
 * ({@link dev.mcpchaos.core.intercept.InterceptorChain#observe(Frame)}), which keep nothing of a
 * frame, so that showing them a message costs no reference counting on its bytes. Releasing a lent
 * frame releases none of them; {@link #toOwned()} makes a frame that outlives the call.
 */
public final class Frame extends AbstractReferenceCounted {

    private final ByteBuf wire;
    private ByteBuf content; // made on first use: most frames are written out without it
    /** Where the content starts in the wire bytes (after their reader index), when made on first use. */
    private final int contentOffset;
    private final int contentLength;
    private final boolean original;
    /** The bytes are the maker's, not the frame's: see {@link #lent}. */
    private final boolean lent;
    private final Envelope envelope;
    private final Direction direction;
    private final long sequence;
    private Envelope answers;
    private long answeredRequestArrivalNanos = -1;
    private Object route;
    /** What the transport that read this frame needs to write a rewritten one the same way; see {@link #framing()}. */
    private Object framing;
    /**
     * Content is a buffer apart from the wire bytes, not a view of them: a reference of its own,
     * released with them, unless the frame is lent.
     */
    private boolean contentApart;

    private Frame(ByteBuf wire, ByteBuf content, int contentOffset, int contentLength, boolean original,
                  boolean lent, Envelope envelope, Direction direction, long sequence) {
        this.wire = wire;
        this.content = content;
        this.contentOffset = contentOffset;
        this.contentLength = contentLength;
        this.original = original;
        this.lent = lent;
        this.envelope = Objects.requireNonNull(envelope, "envelope");
        this.direction = Objects.requireNonNull(direction, "direction");
        this.sequence = sequence;
    }

    /**
     * A frame read off the wire.
     *
     * @param wire the exact bytes read, framing included; ownership passes to the frame
     * @param contentLength how many leading bytes of {@code wire} are the message itself
     * @param sequence the frame's number within its direction, from 0
     */
    public static Frame original(ByteBuf wire, int contentLength, Envelope envelope, Direction direction,
                                 long sequence) {
        Objects.requireNonNull(wire, "wire");
        if (contentLength < 0 || contentLength > wire.readableBytes()) {
            throw new IllegalArgumentException("contentLength: " + contentLength + " (expected: 0.."
                    + wire.readableBytes() + ")");
        }
        return new Frame(wire, contentLength == wire.readableBytes() ? wire : null, 0, contentLength, true, false,
                envelope, direction, sequence);
    }

    /**
     * A frame read off the wire whose message is a part of its wire bytes further in: an SSE event
     * with one {@code data} line. Its {@link #content()} is a view of {@code wire}, made on first use.
     *
     * @param wire the exact bytes read, framing included; ownership passes to the frame
     * @param contentOffset where the message starts, counted from {@code wire}'s reader index
     * @param contentLength the message's length in bytes
     * @param sequence the frame's number within its direction, from 0
     */
    public static Frame original(ByteBuf wire, int contentOffset, int contentLength, Envelope envelope,
                                 Direction direction, long sequence) {
        checkContent(wire, contentOffset, contentLength);
        return new Frame(wire, null, contentOffset, contentLength, true, false, envelope, direction, sequence);
    }

    /**
     * A frame read off the wire, <em>lent</em> for the length of one call: {@code wire} stays its
     * caller's, who keeps it valid only until the call the frame is handed to returns, and may
     * re-point or reuse it afterwards (see the class comment). The frame's content is {@code wire[contentOffset, contentOffset + contentLength)}
     * after its reader index.
     *
     * @param sequence the frame's number within its direction, from 0
     */
    public static Frame lent(ByteBuf wire, int contentOffset, int contentLength, Envelope envelope,
                             Direction direction, long sequence) {
        checkContent(wire, contentOffset, contentLength);
        return new Frame(wire, null, contentOffset, contentLength, true, true, envelope, direction, sequence);
    }

    /**
     * A frame read off the wire, <em>lent</em> for the length of one call, whose message is a buffer
     * apart from its wire bytes (the joined data of an SSE event with several {@code data} lines).
     * Both buffers stay the caller's (see {@link #lent(ByteBuf, int, int, Envelope, Direction, long)}).
     */
    public static Frame lent(ByteBuf wire, ByteBuf content, Envelope envelope, Direction direction, long sequence) {
        Objects.requireNonNull(wire, "wire");
        Objects.requireNonNull(content, "content");
        Frame frame = new Frame(wire, content, 0, content.readableBytes(), true, true, envelope, direction, sequence);
        frame.contentApart = true;
        return frame;
    }

    private static void checkContent(ByteBuf wire, int contentOffset, int contentLength) {
        Objects.requireNonNull(wire, "wire");
        if (contentOffset < 0 || contentLength < 0 || contentOffset > wire.readableBytes() - contentLength) {
            throw new IllegalArgumentException("content: " + contentOffset + "+" + contentLength + " (expected: within "
                    + wire.readableBytes() + " wire bytes)");
        }
    }

    /**
     * A frame read off the wire whose message is not the leading bytes of its wire bytes: an SSE
     * event, whose message is its data (after {@code data: }, possibly over several lines).
     *
     * @param wire the exact bytes read, framing included; ownership passes to the frame
     * @param content the message alone, typically a retained slice of {@code wire} (or a buffer of
     *                its own when it had to be joined); ownership passes to the frame, which
     *                releases it with {@code wire}
     * @param sequence the frame's number within its direction, from 0
     */
    public static Frame original(ByteBuf wire, ByteBuf content, Envelope envelope, Direction direction,
                                 long sequence) {
        Objects.requireNonNull(wire, "wire");
        Objects.requireNonNull(content, "content");
        Frame frame = new Frame(wire, content, 0, content.readableBytes(), true, false, envelope, direction, sequence);
        frame.contentApart = true;
        return frame;
    }

    /**
     * A frame made inside the proxy (a replacement, an injected error, a duplicate's copy).
     *
     * @param content the message bytes without framing; ownership passes to the frame
     */
    public static Frame synthesized(ByteBuf content, Envelope envelope, Direction direction, long sequence) {
        Objects.requireNonNull(content, "content");
        return new Frame(content, content, 0, content.readableBytes(), false, false, envelope, direction, sequence);
    }

    /** The exact bytes read off the wire, framing included; for a synthesized frame, the content. */
    public ByteBuf wire() {
        return wire;
    }

    /** The JSON-RPC message alone (no delimiter, no SSE field prefixes). A view: do not release it. */
    public ByteBuf content() {
        if (content == null) {
            content = wire.slice(wire.readerIndex() + contentOffset, contentLength);
        }
        return content;
    }

    /** The size of {@link #content()} in bytes. */
    public int contentLength() {
        return contentLength;
    }

    /**
     * True when the frame's bytes are its maker's, valid only until the call it was handed to
     * returns (see {@link #lent}); {@link #toOwned()} keeps them longer.
     */
    public boolean isLent() {
        return lent;
    }

    /**
     * This frame made safe to keep: for a {@link #isLent lent} frame, a new frame with the same
     * bytes, envelope, direction, sequence, correlation and route that holds references of its own
     * to the bytes (retained views of them, not copies); for any other frame, this frame, retained.
     * The caller releases what it gets.
     */
    public Frame toOwned() {
        if (!lent) {
            retain();
            return this;
        }
        ByteBuf ownWire = wire.retainedSlice();
        Frame copy;
        if (contentApart) {
            ByteBuf ownContent;
            try {
                ownContent = content.retainedSlice();
            } catch (RuntimeException | Error e) {
                ownWire.release();
                throw e;
            }
            copy = new Frame(ownWire, ownContent, 0, contentLength, true, false, envelope, direction, sequence);
            copy.contentApart = true;
        } else {
            copy = new Frame(ownWire, null, contentOffset, contentLength, true, false, envelope, direction, sequence);
        }
        return correlated(copy);
    }

    /** True when the frame is exactly as it was read, so {@link #wire()} can be written unchanged. */
    public boolean isOriginal() {
        return original;
    }

    public Envelope envelope() {
        return envelope;
    }

    public Direction direction() {
        return direction;
    }

    /** The frame's number within its direction on its session: 0 for the first frame read. */
    public long sequence() {
        return sequence;
    }

    /**
     * For a response or error: the envelope of the request it answers, when the proxy saw that
     * request; otherwise null. Set by the session's {@link dev.mcpchaos.core.session.Correlator}.
     */
    public Envelope answers() {
        return answers;
    }

    /**
     * When the request this frame answers was read: a {@link io.netty.util.concurrent.Ticker#nanoTime()}
     * of the ticker of the executor its interceptor chain runs on ({@code ctx.executor().ticker()}),
     * so {@code ctx.executor().ticker().nanoTime() - answeredRequestArrivalNanos()} is how long the
     * request has waited for this frame. Set with {@link #answers()} by the session's
     * {@link dev.mcpchaos.core.session.Correlator}, and kept by {@link #duplicate()} and
     * {@link #withContent}.
     *
     * @return the time, or -1 when this frame is not a response matched to a request the proxy
     *         read (Netty's tickers count up from 0, so -1 is never a time)
     */
    public long answeredRequestArrivalNanos() {
        return answeredRequestArrivalNanos;
    }

    /**
     * Records the request this frame answers, with no time for it: {@link #answeredRequestArrivalNanos()}
     * becomes -1. For a frame made inside the proxy.
     */
    public void answers(Envelope request) {
        answers(request, -1);
    }

    /**
     * Records the request this frame answers and when that request was read (see
     * {@link #answeredRequestArrivalNanos()}).
     */
    public void answers(Envelope request, long requestArrivalNanos) {
        this.answers = request;
        this.answeredRequestArrivalNanos = requestArrivalNanos;
    }

    /** The method this frame is about: its own, or that of the request it answers. May be null. */
    public String method() {
        if (envelope.method() != null) {
            return envelope.method();
        }
        return answers != null ? answers.method() : null;
    }

    /** The tool this frame is about: its own tools/call name, or that of the request it answers. */
    public String toolName() {
        if (envelope.toolName() != null) {
            return envelope.toolName();
        }
        return answers != null ? answers.toolName() : null;
    }

    /**
     * A new synthesized frame with other content, the same direction, sequence, correlation (the
     * request it answers, and when that was read) and route. This frame is left as it is: the
     * caller releases it when done.
     */
    public Frame withContent(ByteBuf newContent, Envelope newEnvelope) {
        Frame copy = synthesized(newContent, newEnvelope, direction, sequence);
        return correlated(copy);
    }

    /**
     * {@code copy}, given this frame's correlation (the request it answers, and when that was
     * read), route and framing: what every copy of a frame keeps.
     */
    private Frame correlated(Frame copy) {
        copy.answers = answers;
        copy.answeredRequestArrivalNanos = answeredRequestArrivalNanos;
        copy.route = route;
        copy.framing = framing;
        return copy;
    }

    /**
     * A new synthesized frame going back to this frame's sender (an error answering a request),
     * on the same route: on HTTP, the response to the request this frame came in.
     * This frame is left as it is.
     */
    public Frame reply(ByteBuf content, Envelope envelope) {
        Frame reply = synthesized(content, envelope, direction.reverse(), sequence);
        reply.route = route;
        return reply;
    }

    /**
     * Another frame with the same bytes, envelope, direction, correlation (the request it answers,
     * and when that was read) and route (a duplicate's copy). It shares this frame's buffer and
     * holds its own reference to it.
     */
    public Frame duplicate() {
        if (lent) {
            return toOwned();
        }
        Frame copy = new Frame(wire.retainedDuplicate(), null, contentOffset, contentLength, original, false, envelope,
                direction, sequence);
        if (!original) {
            copy.content = copy.wire;
        } else if (contentApart) {
            copy.content = content.retainedDuplicate();
            copy.contentApart = true;
        }
        return correlated(copy);
    }

    /**
     * Where the transport sends this frame and replies to it: opaque to interceptors. On HTTP it
     * names the exchange (request and response stream) the frame belongs to; on stdio it is null.
     */
    public Object route() {
        return route;
    }

    /**
     * The first value of a header of the HTTP request this frame travels with (any case), or null:
     * always null on stdio.
     */
    public String requestHeader(String name) {
        return route instanceof HeaderSource ? ((HeaderSource) route).requestHeader(name) : null;
    }

    /** Sets the route; for transports. */
    public void route(Object route) {
        this.route = route;
    }

    /**
     * What the transport that read this frame keeps to write a frame that replaces it (a fault's
     * rewrite, a copy) in the same framing: on an SSE stream, the event's {@code id} and
     * {@code event} fields, so that a rewritten event keeps its place for {@code Last-Event-ID}.
     * Opaque to interceptors; carried over by {@link #withContent}, {@link #duplicate} and
     * {@link #toOwned}, not by {@link #reply} (a reply is another message). Null when there is
     * nothing to keep.
     */
    public Object framing() {
        return framing;
    }

    /** Sets {@link #framing()}; for transports. */
    public void framing(Object framing) {
        this.framing = framing;
    }

    @Override
    protected void deallocate() {
        if (lent) {
            return; // the bytes are the maker's
        }
        wire.release();
        if (contentApart) {
            content.release();
        }
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        wire.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        return "Frame(" + direction.arrow() + " #" + sequence + ' ' + envelope
                + (answers != null ? " answers " + answers.method() : "")
                + ", " + contentLength + " B" + (original ? "" : ", synthesized") + ')';
    }
}
