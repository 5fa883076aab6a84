package dev.mcpchaos.core.codec.sse;

import io.netty.buffer.ByteBuf;
import io.netty.util.AbstractReferenceCounted;

import java.util.Objects;

/**
 * One Server-Sent Events event as {@link SseFramer} found it: its exact bytes and the fields the
 * proxy needs (WHATWG HTML, "event stream interpretation").
 *
 * <p>An "event" here is everything from the end of the previous event up to and including the
 * blank line that ends this one, so that the events of a stream, put back together, are the
 * stream byte for byte. That includes what a browser would never dispatch: a comment such as
 * {@code : keep-alive}, an event with no {@code data} field ({@code retry: 3000} alone, or an
 * {@code id} alone), the MCP priming event with empty data, even a stray extra blank line.
 *
 * <p><b>Ownership.</b> Reference counted, starting at 1; whoever holds the event last releases
 * it. {@link #raw()} and {@link #data()} are views owned by the event: they are valid until the
 * event is released, must not be released by the caller, and are retained with
 * {@code retain()}/{@code retainedSlice()} when they must outlive the event. The data of an event
 * with a single {@code data} line is a slice of the raw bytes; with several lines it is a buffer
 * of its own (the lines joined with {@code \n}), released with the event.
 *
 * <p><b>Lent events.</b> An event the framer <em>lends</em> (see {@link SseFramer}'s package-private
 * {@code lend}) is valid only while the listener's {@code onEvent} runs; the listener neither
 * releases nor keeps it, and takes a {@code retainedSlice()} of {@link #raw()} or {@link #data()}
 * to keep them (a lent event's raw bytes may be a view the framer re-points at the next event).
 *
 * <p>Field values are those of this event only: {@link #id()} is the {@code id} field in this
 * event, not the stream's last event ID (see {@link SseFramer#lastEventId()}).
 */
public final class SseEvent extends AbstractReferenceCounted {

    /** The event type a client assumes when an event has no (or an empty) {@code event} field. */
    public static final String DEFAULT_TYPE = "message";

    /** The request header a client resumes a stream with, naming the last event id it got (WHATWG HTML). */
    public static final String LAST_EVENT_ID_HEADER = "Last-Event-ID";

    // Not final: the framer lends one event object per stream, re-pointed at each event in turn
    // (see isLent()), so that lending an event allocates nothing.
    private ByteBuf raw;
    /** The joined data of several {@code data} lines, a buffer of the event's own; else null. */
    private ByteBuf joined;
    /** Where the value of a single {@code data} line starts in {@link #raw}, after its reader index; else -1. */
    private int dataOffset;
    private int dataLength;
    /** The view of a single data line, made on first use; or {@link #joined}. */
    private ByteBuf data;
    /** Lent by the framer (see {@link SseFramer#lend}): what it holds is released by the framer, not by the event. */
    private final boolean lent;
    private String eventType;
    private String id;
    private Long retry;
    private boolean commentOnly;
    /** The data's bytes in an array, while the framer's listener runs; see {@link #dataArray()}. */
    private byte[] dataArray;
    private int dataArrayOffset;

    /**
     * An event handed over to the listener (see {@link #forLending} for one lent).
     *
     * @param raw the event's bytes, terminating blank line included; ownership passes to the event
     * @param joined the data of several {@code data} lines joined, a buffer of its own (ownership
     *               passes to the event); null for none or one data line
     * @param dataOffset where a single data line's value starts in {@code raw}, after its reader
     *                   index; -1 when there is no data field or {@code joined} holds the data
     * @param dataLength that value's length
     */
    SseEvent(ByteBuf raw, ByteBuf joined, int dataOffset, int dataLength, String eventType, String id,
             Long retry, boolean commentOnly) {
        this.lent = false;
        set(raw, joined, dataOffset, dataLength, eventType, id, retry, commentOnly);
    }

    /** A lent event to be {@link #set} before each loan: the framer's one per stream. */
    static SseEvent forLending() {
        return new SseEvent();
    }

    private SseEvent() {
        this.lent = true;
    }

    /**
     * Points the event at the next one, as the constructor takes it; for a lent event only, whose
     * previous loan is over (the listener kept nothing of it).
     */
    SseEvent set(ByteBuf raw, ByteBuf joined, int dataOffset, int dataLength, String eventType, String id,
                 Long retry, boolean commentOnly) {
        this.raw = Objects.requireNonNull(raw, "raw");
        this.joined = joined;
        this.dataOffset = joined != null ? -1 : dataOffset;
        this.dataLength = joined != null ? joined.readableBytes() : dataLength;
        this.data = joined;
        this.eventType = eventType;
        this.id = id;
        this.retry = retry;
        this.commentOnly = commentOnly;
        this.dataArray = null;
        this.dataArrayOffset = 0;
        return this;
    }

    /** Set by the framer: the data (one line of it) is also {@code array[offset, offset + data length)}. */
    void dataArray(byte[] array, int offset) {
        this.dataArray = array;
        this.dataArrayOffset = offset;
    }

    /** A lent event between loans: refers to no buffer or array. */
    void forget() {
        raw = null;
        joined = null;
        data = null;
        dataArray = null;
    }

    /**
     * The data's bytes as the framer scanned them, in an array of the framer's, so that they can
     * be read without copying them out of a direct buffer; null when there is none (the data was
     * gathered or joined). Valid only while {@link SseFramer.Listener#onEvent} runs: the array is
     * reused for the next chunk.
     */
    byte[] dataArray() {
        return dataArray;
    }

    /** Where the data starts in {@link #dataArray()}. */
    int dataArrayOffset() {
        return dataArrayOffset;
    }

    /**
     * Where the data of a single {@code data} line starts in {@link #raw()}, counted from its
     * reader index; -1 when the event has no data field or its data was joined from several lines.
     */
    int dataOffset() {
        return dataOffset;
    }

    /** The length of {@link #data()} in bytes; 0 when there is none. */
    int dataLength() {
        return dataLength;
    }

    /** The joined data of several {@code data} lines; null for none or one. */
    ByteBuf joinedData() {
        return joined;
    }

    /** Whether the framer lends this event for the length of its listener's call (see {@link SseFramer#lend}). */
    boolean isLent() {
        return lent;
    }

    /**
     * The event's exact bytes, from the first byte after the previous event up to and including
     * the terminating blank line's line end (and, on the stream's first event, a leading BOM).
     * A view owned by the event.
     */
    public ByteBuf raw() {
        return raw;
    }

    /**
     * The event's data: the values of its {@code data} fields joined with {@code \n}, or null when
     * it has no {@code data} field. May be empty (the MCP priming event {@code data: }). A view
     * owned by the event.
     */
    public ByteBuf data() {
        if (data == null && dataOffset >= 0) {
            data = raw.slice(raw.readerIndex() + dataOffset, dataLength);
        }
        return data;
    }

    /** Whether the event has at least one {@code data} field (its data may still be empty). */
    public boolean hasData() {
        return joined != null || dataOffset >= 0;
    }

    /**
     * Whether an EventSource would dispatch this event: its data is not empty. Events that are not
     * dispatched (comments, priming events, {@code retry}- or {@code id}-only events) still carry
     * bytes a client reads, so a proxy relays them all the same.
     */
    public boolean isDispatched() {
        return dataLength > 0;
    }

    /** The value of the last {@code event} field, as sent; null when there was none. */
    public String eventType() {
        return eventType;
    }

    /** The type a client sees: {@link #eventType()}, or {@value #DEFAULT_TYPE} when that is null or empty. */
    public String type() {
        return eventType == null || eventType.isEmpty() ? DEFAULT_TYPE : eventType;
    }

    /** Whether a client hands this event to its {@code message} handler, as MCP clients require. */
    public boolean isMessageType() {
        return DEFAULT_TYPE.equals(type());
    }

    /**
     * The value of the last {@code id} field of this event that contains no NUL (the spec ignores
     * those), possibly empty (which resets the last event ID); null when there was none.
     */
    public String id() {
        return id;
    }

    /** The value of the last valid {@code retry} field (ASCII digits only), in milliseconds; else null. */
    public Long retry() {
        return retry;
    }

    /** Whether the event is made of comment lines only ({@code : keep-alive}), at least one. */
    public boolean isCommentOnly() {
        return commentOnly;
    }

    @Override
    protected void deallocate() {
        if (lent) {
            return; // the framer releases what it lent
        }
        raw.release();
        if (joined != null) {
            joined.release();
        }
    }

    @Override
    public SseEvent touch(Object hint) {
        raw.touch(hint);
        if (joined != null) {
            joined.touch(hint);
        }
        return this;
    }

    @Override
    public SseEvent touch() {
        return touch(null);
    }

    @Override
    public SseEvent retain() {
        super.retain();
        return this;
    }

    @Override
    public SseEvent retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("SseEvent(").append(raw.readableBytes()).append(" B");
        if (eventType != null) {
            sb.append(", event=").append(eventType);
        }
        if (id != null) {
            sb.append(", id=").append(id);
        }
        if (retry != null) {
            sb.append(", retry=").append(retry);
        }
        if (hasData()) {
            sb.append(", data ").append(dataLength).append(" B");
        }
        if (commentOnly) {
            sb.append(", comment");
        }
        return sb.append(')').toString();
    }
}
