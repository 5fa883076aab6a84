package dev.mcpchaos.core.codec.sse;

import dev.mcpchaos.core.codec.FrameDecoder;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Turns a Server-Sent Events stream (an MCP Streamable HTTP response body of type
 * {@code text/event-stream}) into {@link Frame}s, one per event: an {@link SseFramer} followed by
 * an {@link EnvelopeSniffer}. Every frame is original: its {@link Frame#wire()} is the event's
 * exact bytes, terminating blank line included, so the stream leaves the proxy unchanged when no
 * fault touches it.
 *
 * <p><b>Envelopes.</b> The envelope of an event that a client would hand to its {@code message}
 * handler (non-empty data, no {@code event} field or {@code event: message}) is the sniffed
 * JSON-RPC message of its data. Every other event (comments and keep-alives, the priming event
 * with empty data, {@code retry}- or {@code id}-only events, events of another type) is still a
 * frame, in its place in the stream, with a {@link dev.mcpchaos.core.frame.MessageKind#BLANK}
 * envelope, which rules never match.
 *
 * <p><b>Content.</b> A frame's {@link Frame#content()} is the event's data: a slice of its wire
 * bytes for one {@code data} line, a joined copy for several; empty for an event without data.
 *
 * <p><b>Limits.</b> Events bigger than the framer's limit (default
 * {@value SseFramer#DEFAULT_MAX_EVENT_SIZE} bytes, 16 MiB) become no frame: they are counted in
 * {@link #oversizedEvents()} and logged with their size and direction; decoding goes on with the
 * next event. The log says the event was discarded, unless the decoder only watches bytes that
 * are relayed by other means ({@link #watchingRelayedBytes}): then the event reached its client
 * whole, and the log says so.
 *
 * <p><b>End of stream.</b> Bytes after the last complete event (an event cut off before its
 * blank line, which the SSE spec does not dispatch) become one last original frame with a BLANK
 * envelope, counted in {@link #unterminatedTails()}, so the proxy still forwards exactly what the
 * upstream sent.
 *
 * <p>The same steps serve a Netty pipeline (this handler) and code that holds the body itself
 * ({@link #decode}, {@link #finish}). One instance per stream; not thread-safe.
 */
public final class SseFrameDecoder extends FrameDecoder {

    private static final Logger log = LoggerFactory.getLogger(SseFrameDecoder.class);

    private final SseFramer framer;
    private final LongSupplier sequences;
    private final EnvelopeSniffer sniffer = new EnvelopeSniffer();
    private long frames;
    private long oversizedEvents;
    private LongConsumer onOversized = size -> { };
    private boolean watchingRelayedBytes;
    private long unterminatedTails;

    /** A decoder that numbers its frames 0, 1, 2, ... */
    public SseFrameDecoder(Direction direction, SseFramer framer) {
        this(direction, framer, new LongSupplier() {
            private long next;

            @Override
            public long getAsLong() {
                return next++;
            }
        });
    }

    /**
     * A decoder that takes each frame's {@link Frame#sequence()} from {@code sequences}, for
     * example a session's {@link dev.mcpchaos.core.session.Session#nextSequence}, when several
     * streams share one numbering.
     */
    public SseFrameDecoder(Direction direction, SseFramer framer, LongSupplier sequences) {
        super(direction);
        this.framer = Objects.requireNonNull(framer, "framer");
        this.sequences = Objects.requireNonNull(sequences, "sequences");
    }

    /** Decodes a chunk; takes ownership of it. Frames go to {@code out} in stream order. */
    public void decode(ByteBuf chunk, FrameConsumer out) {
        framer.feed(chunk, listener(Objects.requireNonNull(out, "out")));
    }

    /**
     * Decodes a chunk and <em>lends</em> each frame to {@code out} ({@link Frame#isLent()}): its
     * bytes are the chunk's (or the decoder's), valid only while {@code out.accept} runs, and
     * {@code out} neither releases nor keeps the frame ({@link Frame#toOwned()} keeps one). For a
     * transport that relays the chunk's bytes itself and only shows the messages to observers:
     * an event whole in the chunk then costs no reference counting. Frames are numbered, counted,
     * and sniffed exactly as {@link #decode} does; the same decoder may mix both. Takes ownership
     * of {@code chunk}.
     */
    public void decodeLent(ByteBuf chunk, FrameConsumer out) {
        framer.lend(chunk, lendingListener(Objects.requireNonNull(out, "out")));
    }

    /** The input ended: passes on what is left (see the class comment) and releases what is held. */
    public void finish(FrameConsumer out) {
        try {
            framer.finish(listener(Objects.requireNonNull(out, "out")));
        } finally {
            framer.close();
        }
    }

    /** Also tells {@code listener} the size of each event discarded for being over the limit. */
    public SseFrameDecoder onOversized(LongConsumer listener) {
        this.onOversized = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /**
     * Tells this decoder that the bytes it decodes also reach their client by other means (a
     * transport relaying them as they come, this decoder only showing the events to observers),
     * so that an event over the limit is logged as relayed whole, not as discarded: what the
     * client gets does not depend on this decoder.
     */
    public SseFrameDecoder watchingRelayedBytes() {
        this.watchingRelayedBytes = true;
        return this;
    }

    /** How many events were over the limit (and made no frame). */
    public long oversizedEvents() {
        return oversizedEvents;
    }

    /** How many streams ended inside an event (whose bytes were passed on as a BLANK frame). */
    public long unterminatedTails() {
        return unterminatedTails;
    }

    /** How many frames were decoded. */
    public long frames() {
        return frames;
    }

    /** The last event ID the upstream sent, for a client's {@code Last-Event-ID}; null when none. */
    public String lastEventId() {
        return framer.lastEventId();
    }

    /** What both ways of handing out frames do with an event over the limit. */
    private abstract class Listener implements SseFramer.Listener {
        @Override
        public void onOversizedEvent(long size) {
            oversized(size);
        }
    }

    private SseFramer.Listener listener(FrameConsumer out) {
        return new Listener() {
            @Override
            public void onEvent(SseEvent event) {
                Frame frame;
                try {
                    Envelope envelope = envelopeOf(event);
                    long sequence = sequences.getAsLong();
                    // The data's own reference: a slice of the raw bytes, or the joined copy.
                    ByteBuf content = event.hasData() ? event.data().retainedSlice() : Unpooled.EMPTY_BUFFER;
                    frame = Frame.original(event.raw().retain(), content, envelope, direction(), sequence);
                    frame.framing(SseFields.of(event));
                    frames++;
                } finally {
                    event.release();
                }
                out.accept(frame);
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                Frame frame;
                try {
                    frame = Frame.original(tail, 0, Envelope.blank(), direction(), tailSequence(tail));
                } catch (RuntimeException | Error e) {
                    tail.release();
                    throw e;
                }
                out.accept(frame);
            }
        };
    }

    private SseFramer.Listener lendingListener(FrameConsumer out) {
        return new Listener() {
            @Override
            public void onEvent(SseEvent event) {
                Envelope envelope = envelopeOf(event);
                long sequence = sequences.getAsLong();
                ByteBuf joined = event.joinedData();
                Frame frame = joined != null
                        ? Frame.lent(event.raw(), joined, envelope, direction(), sequence)
                        : Frame.lent(event.raw(), Math.max(0, event.dataOffset()), event.dataLength(), envelope,
                                direction(), sequence);
                frames++;
                out.accept(frame);
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                // Only the end of the input has a tail, and finish() hands it over; lend it all the same.
                try {
                    out.accept(Frame.lent(tail, 0, 0, Envelope.blank(), direction(), tailSequence(tail)));
                } finally {
                    tail.release();
                }
            }
        };
    }

    /** Counts and logs a stream's unterminated tail, and numbers its frame. */
    private long tailSequence(ByteBuf tail) {
        unterminatedTails++;
        frames++;
        log.debug("{}: the SSE stream ended inside an event; passing on its {} bytes as they came",
                direction().arrow(), tail.readableBytes());
        return sequences.getAsLong();
    }

    private void oversized(long size) {
        oversizedEvents++;
        onOversized.accept(size);
        if (watchingRelayedBytes) {
            // Nothing held the event, so nothing cut it: only rules and observers did not see it.
            log.warn("{}: relayed an SSE event of {} bytes whole without showing it to observers: it is over the"
                    + " limit of {} bytes for events they see; relaying goes on", direction().arrow(), size,
                    framer.maxEventSize());
        } else {
            log.warn("{}: discarded an SSE event of {} bytes, over the limit of {} bytes; relaying goes on",
                    direction().arrow(), size, framer.maxEventSize());
        }
    }

    /** What a client would hand to its message handler is sniffed; every other event is blank. */
    private Envelope envelopeOf(SseEvent event) {
        return event.isDispatched() && event.isMessageType() ? sniff(event) : Envelope.blank();
    }

    /** The event's data as the framer saw it when it can (no copy out of a direct buffer). */
    private Envelope sniff(SseEvent event) {
        byte[] array = event.dataArray();
        if (array == null) {
            return sniffer.sniff(event.data());
        }
        int from = event.dataArrayOffset();
        return sniffer.sniff(array, from, from + event.dataLength());
    }

    @Override
    protected void closeFramer() {
        framer.close();
    }
}
