package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.codec.sse.SseBoundary;
import dev.mcpchaos.core.codec.sse.SseEncoder;
import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.codec.sse.SseFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An SSE stream (the answer to a POST, or the GET stream), in one of three ways that only go
 * forward:
 * <ol>
 *   <li><b>relayed</b>: no interceptor inspects server-to-client frames (no rules, nothing held,
 *       no metrics): the bytes go to the client as they came, without framing or sniffing a
 *       single event; the stream then costs what relaying bytes costs;</li>
 *   <li><b>observed</b>: the interceptors that inspect frames only observe them (metrics, the
 *       event log: {@link InterceptorChain#onlyObserves}): the bytes still go as they came, and
 *       each event is also framed and sniffed for the observers, from the first event that
 *       begins after they started to;</li>
 *   <li><b>framed</b>: once an interceptor may act on events, framing begins where the next
 *       event begins and every event from there on passes the chain, to the stream's end (frames
 *       may be in the chain's hands, and raw bytes must not overtake them).</li>
 * </ol>
 * What goes to the client between two flushes is written as one HTTP chunk.
 *
 * <p>While framed, and only while an interceptor
 * {@link InterceptorChain#holdsLeadingEvents() holds leading events} (a {@code priming_drop}
 * rule), the message-less events with an id before the stream's first message (the priming
 * events of 2025-11-25) are held back and go with that message, in its
 * {@link SseFields#leading() framing}, written just before it unless a fault took them out. Without
 * such an interceptor every event passes the chain as it comes, as before.
 */
final class SseResponseBody implements ResponseBody {

    /** SSE events gathered into one chunk at most (a writev takes up to 1024 buffers). */
    static final int MAX_EVENTS_PER_CHUNK = 256;

    private final ResponseOutput out;
    /** Where events end while the stream is relayed unframed; null once it is framed. */
    private SseBoundary relay = new SseBoundary();
    /** Frames the stream once an interceptor may act on its events; null until then. */
    private SseFrameDecoder framer;
    /** Frames the relayed events for interceptors that only observe them; null while none do. */
    private SseFrameDecoder watcher;
    private final SseFrameDecoder.FrameConsumer observeLent;
    /**
     * The bytes relayed as read, or the events the chain let through, since the last flush:
     * written as one chunk when the flush comes, instead of a chunk (size line, bytes, CRLF, and
     * a write promise) per read or per event.
     */
    private CompositeByteBuf queued;
    /** The stream's first message has passed (or been handed its leading events): nothing more is held. */
    private boolean pastLeading;
    /** The leading message-less events held for the first message; null while none are. */
    private List<Frame> heldLeading;
    /** The held leading events were written (once: a copy of the first message carries them too). */
    private boolean leadingWritten;

    SseResponseBody(ResponseOutput out) {
        this.out = out;
        this.observeLent = out::observeLent;
    }

    /**
     * Whether what went to the client ends where an event begins: always once framed (only whole
     * events are written), as the relayed bytes say before.
     */
    boolean atEventStart() {
        return relay == null || relay.atEventStart();
    }

    @Override
    public boolean keepsComing() {
        return false;
    }

    @Override
    public boolean streamsMessages() {
        return true;
    }

    /** Between events: {@link HttpProxy#DRAIN_SSE_COMMENT} and the end of the chunked body (written by the exchange). */
    @Override
    public HttpContent drainEnd() {
        if (!atEventStart()) {
            return null;
        }
        return new DefaultHttpContent(Unpooled.copiedBuffer(HttpProxy.DRAIN_SSE_COMMENT + "\n\n",
                StandardCharsets.UTF_8));
    }

    @Override
    public String cutWhere() {
        return "mid-event";
    }

    /** Whether the stream is framed: every event from here on passes the chain. */
    boolean framed() {
        return framer != null;
    }

    @Override
    public ResponseBody onContent(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        try {
            onBytes(content.content(), last);
        } finally {
            content.release();
        }
        if (last) {
            // The end travels through the chain behind the stream's events, after any a fault
            // still holds: the client gets every event, then the end.
            out.endAfterHeld();
        }
        return this;
    }

    /** A piece of the stream; does not take ownership. */
    private void onBytes(ByteBuf bytes, boolean last) {
        InterceptorChain chain = out.chain();
        if (relay != null) {
            boolean inspects = chain.inspects(Direction.SERVER_TO_CLIENT);
            if (!inspects || chain.onlyObserves(Direction.SERVER_TO_CLIENT)) {
                relayWatched(bytes, inspects);
                if (last) {
                    finishWatch();
                }
                return;
            }
            int from = bytes.readerIndex();
            int start = relay.eventStart(bytes);
            if (start < 0) {
                watch(bytes); // the event in progress goes on past this piece
                relay(bytes.retain());
                if (last) {
                    finishWatch();
                }
                return;
            }
            if (start > from) {
                ByteBuf before = bytes.retainedSlice(from, start - from);
                watch(before);
                relay(before);
            }
            finishWatch(); // at an event's start: it holds nothing
            relay = null;
            framer = newDecoder();
            bytes = bytes.slice(start, bytes.writerIndex() - start);
        }
        List<Frame> frames = new ArrayList<>();
        framer.decode(bytes.retain(), frames::add);
        if (last) {
            framer.finish(frames::add);
        }
        if (!pastLeading) {
            frames = holdLeading(frames, last);
        }
        if (!frames.isEmpty()) {
            out.process(frames);
        }
    }

    /**
     * Before the stream's first message: takes the message-less events with an id out of
     * {@code frames} while an interceptor holds them, and hands their bytes to the first message
     * (a copy in its framing: they are a few bytes, and a frame's release does not reach its
     * framing). At the stream's end without a message, what was held goes as it came.
     */
    private List<Frame> holdLeading(List<Frame> frames, boolean last) {
        if (heldLeading == null && !out.chain().holdsLeadingEvents()) {
            // Nothing held and nobody asks: the frames pass as they are, no list made per read
            // (a stream that never carries a message would otherwise pay it on every read).
            for (Frame frame : frames) {
                if (frame.envelope().kind() != MessageKind.BLANK) {
                    pastLeading = true;
                    break;
                }
            }
            return frames;
        }
        List<Frame> passing = new ArrayList<>(frames.size());
        for (Frame frame : frames) {
            if (pastLeading) {
                passing.add(frame);
            } else if (frame.envelope().kind() != MessageKind.BLANK) {
                pastLeading = true;
                if (heldLeading != null) {
                    frame.framing(SseFields.withLeading(frame.framing(), takeHeld()));
                }
                passing.add(frame);
            } else if (frame.framing() instanceof SseFields fields && fields.id() != null) {
                if (heldLeading == null) {
                    heldLeading = new ArrayList<>(1);
                }
                heldLeading.add(frame);
            } else {
                passing.add(frame);
            }
        }
        if (last && heldLeading != null) {
            passing.addAll(0, heldLeading);
            heldLeading = null;
        }
        return passing;
    }

    /** The held events' bytes, in order; releases their frames. */
    private byte[] takeHeld() {
        List<Frame> held = heldLeading;
        heldLeading = null;
        int size = 0;
        for (Frame frame : held) {
            size += frame.wire().readableBytes();
        }
        byte[] bytes = new byte[size];
        int at = 0;
        for (Frame frame : held) {
            ByteBuf wire = frame.wire();
            int n = wire.readableBytes();
            wire.getBytes(wire.readerIndex(), bytes, at, n);
            at += n;
            frame.release();
        }
        return bytes;
    }

    private SseFrameDecoder newDecoder() {
        HttpProxyConfig config = out.config();
        return new SseFrameDecoder(Direction.SERVER_TO_CLIENT,
                new SseFramer(config.settings.maxSseEventSize(), out.alloc()),
                () -> out.chain().session().nextSequence(Direction.SERVER_TO_CLIENT))
                .onOversized(size -> config.observer.limitBreached(TransportKind.HTTP,
                        TransportObserver.Limit.SSE_EVENT_SIZE, Direction.SERVER_TO_CLIENT, size));
    }

    /** Relays a piece as it came; while observers want its events, they see them too. */
    private void relayWatched(ByteBuf bytes, boolean inspected) {
        if (inspected && watcher == null) {
            int start = relay.eventStart(bytes);
            if (start >= 0) {
                ByteBuf rest = bytes.slice(start, bytes.writerIndex() - start);
                relay.passed(rest);
                watcher = newDecoder().watchingRelayedBytes();
                watch(rest);
            }
        } else {
            relay.passed(bytes);
            watch(bytes);
        }
        relay(bytes.retain());
    }

    /**
     * Frames and sniffs relayed bytes for the observers, when they are watched; does not take
     * ownership. The frames only show the observers what passed: their bytes are relayed as they
     * came, so an event over the size limit is reported, not dropped (nothing holds it).
     */
    private void watch(ByteBuf bytes) {
        if (watcher == null) {
            return;
        }
        if (out.chain().executor().inEventLoop()) {
            // Observers keep nothing of a frame and run now: each event is lent to them as a view
            // of the chunk, with no reference counting and no list per chunk.
            watcher.decodeLent(bytes.retain(), observeLent);
            return;
        }
        // The session's chain runs on another event loop: the frames must outlive this call.
        List<Frame> frames = new ArrayList<>();
        watcher.decode(bytes.retain(), frames::add);
        if (!frames.isEmpty()) {
            out.observe(frames);
        }
    }

    /** The watched part of the stream ends: the observers see what the watcher still held. */
    private void finishWatch() {
        if (watcher == null) {
            return;
        }
        List<Frame> frames = new ArrayList<>();
        SseFrameDecoder finishing = watcher;
        watcher = null;
        finishing.finish(frames::add);
        if (!frames.isEmpty()) {
            out.observe(frames);
        }
    }

    private void relay(ByteBuf bytes) {
        if (!bytes.isReadable()) {
            bytes.release();
            return;
        }
        queue(bytes);
    }

    /** Queues bytes for the client; takes ownership. What is queued before a flush goes as one chunk. */
    private void queue(ByteBuf bytes) {
        if (queued == null) {
            queued = out.alloc().compositeBuffer(MAX_EVENTS_PER_CHUNK);
        }
        queued.addComponent(true, bytes);
        if (queued.numComponents() >= MAX_EVENTS_PER_CHUNK) {
            writeQueued();
        }
        out.flushSoon();
    }

    @Override
    public void deliver(Frame frame) {
        ByteBuf event = frame.isOriginal() ? frame.wire().retainedSlice() : encode(frame);
        if (frame.framing() instanceof SseFields fields && fields.hasLeading() && !leadingWritten) {
            leadingWritten = true; // the leading events first, as they came before the message
            event = out.alloc().compositeBuffer(2).addComponents(true, Unpooled.wrappedBuffer(fields.leading()), event);
        }
        frame.release();
        queue(event);
    }

    /**
     * The SSE event for a frame a fault made: with the id and event type of the event it
     * replaces (a rewrite, a copy), so a client's {@code Last-Event-ID} still names its place.
     */
    private ByteBuf encode(Frame frame) {
        Object framing = frame.framing();
        if (framing instanceof SseFields) {
            SseFields fields = (SseFields) framing;
            ByteBuf event = SseEncoder.encode(out.alloc(), frame.content(), fields.eventType(), fields.id());
            if (fields.retry() == null) {
                return event;
            }
            // The retry field first: a client that reads it before the message reconnects with it.
            ByteBuf retry = Unpooled.copiedBuffer("retry: " + fields.retry() + "\n", StandardCharsets.US_ASCII);
            return out.alloc().compositeBuffer(2).addComponents(true, retry, event);
        }
        return SseEncoder.encode(out.alloc(), frame.content());
    }

    @Override
    public void onRouteEnd() {
        out.endBody(LastHttpContent.EMPTY_LAST_CONTENT);
    }

    @Override
    public void writeQueued() {
        CompositeByteBuf events = queued;
        if (events != null) {
            queued = null;
            out.writeContent(new DefaultHttpContent(events));
        }
    }

    @Override
    public boolean carriesOneMessage() {
        return false;
    }

    /**
     * Lets go of a partly gathered event (an upstream that broke off mid-event), the watcher's
     * state and what waited for a flush.
     */
    @Override
    public void release() {
        if (framer != null) {
            framer.finish(Frame::release);
        }
        if (watcher != null) {
            watcher.finish(Frame::release);
            watcher = null;
        }
        if (queued != null) {
            queued.release();
            queued = null;
        }
        if (heldLeading != null) {
            heldLeading.forEach(Frame::release);
            heldLeading = null;
        }
    }
}
