package dev.mcpchaos.core.codec.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Splits a Server-Sent Events stream (the {@code text/event-stream} responses of MCP's Streamable
 * HTTP transport) into {@link SseEvent}s, following the WHATWG HTML "event stream
 * interpretation": lines end with {@code \r\n}, {@code \n} or {@code \r}; a blank line ends an
 * event; a line starting with {@code :} is a comment; {@code field: value} has one optional space
 * after the colon stripped; {@code data} lines are joined with {@code \n}; an {@code id} containing
 * NUL is ignored; {@code retry} counts only when it is all ASCII digits; unknown fields are
 * ignored; one leading UTF-8 BOM is skipped (but kept in the first event's raw bytes).
 *
 * <p><b>Byte-exact.</b> Every byte of the stream ends up in exactly one event's
 * {@link SseEvent#raw()} (or in the unterminated tail), so a proxy that writes the raw bytes of
 * every event writes the stream unchanged, including comments, blank lines, {@code retry}-only
 * and priming events, which a browser would never dispatch. An event that lies whole inside one
 * chunk is a retained slice of that chunk, not a copy, and the data of a single {@code data} line
 * is a slice of that; only an event split across chunks is gathered into a buffer of its own, and
 * only the data of several {@code data} lines is copied.
 *
 * <p><b>Limit.</b> An event whose raw size, terminating blank line included, is more than
 * {@code maxEventSize} (default {@value #DEFAULT_MAX_EVENT_SIZE} bytes, 16 MiB) is never held in
 * memory whole: its bytes are discarded up to its terminating blank line, then
 * {@link Listener#onOversizedEvent} reports its size and framing goes on with the next event. An
 * event with several data lines holds its raw bytes and its joined data, so the framer holds at
 * most about twice the limit.
 *
 * <p><b>End of stream.</b> {@link #finish} hands bytes after the last complete event (an event
 * without its terminating blank line, which the spec does not dispatch) to
 * {@link Listener#onUnterminatedTail}, so that a proxy can still forward exactly what the upstream
 * sent.
 *
 * <p><b>Bare CR.</b> When a chunk ends with the {@code \r} of the blank line that ends an event,
 * the event is held until the next byte arrives (or {@link #finish}), because a {@code \n} that
 * follows belongs to it. Streams ending lines with {@code \n} or {@code \r\n} are not delayed;
 * a stream that ends lines with a bare {@code \r} has each event held until the next one starts.
 *
 * <p><b>Scanning.</b> A chunk is scanned as a byte array: its own when it is a heap buffer, else a
 * copy made once per chunk into an array kept per thread (a copy of 64 KiB costs less than the
 * bounds checks of reading a direct buffer byte by byte). Line ends are found eight bytes at a
 * time, {@code \r} and {@code \n} in one pass. The events still are slices of the chunk itself.
 *
 * <p>Not thread-safe: one instance per stream. Reusable after {@link #finish} for a new stream.
 */
public final class SseFramer implements AutoCloseable {

    /** Default maximum raw size of an event, in bytes: 16 MiB. */
    public static final int DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024;

    /** The largest accepted {@code maxEventSize}: an event must fit in one array. */
    public static final int MAX_EVENT_SIZE_LIMIT = Integer.MAX_VALUE - 8;

    /** Receives what the framer finds. */
    public interface Listener {
        /** A complete event; ownership passes to the listener, which releases it. */
        void onEvent(SseEvent event);

        /**
         * An event bigger than the limit was discarded.
         *
         * @param size its raw size in bytes, terminating blank line included (at the end of the
         *             stream, the size of what had arrived)
         */
        void onOversizedEvent(long size);

        /**
         * The stream ended inside an event: these are its bytes, exactly as they came. The spec
         * does not dispatch such an event; a proxy forwards the bytes or drops them.
         *
         * @param tail the bytes after the last complete event; ownership passes to the listener
         */
        void onUnterminatedTail(ByteBuf tail);
    }

    private static final byte CR = '\r';
    private static final byte LF = '\n';
    private static final byte COLON = ':';
    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
    private static final byte[] DATA = {'d', 'a', 't', 'a'};
    private static final byte[] EVENT = {'e', 'v', 'e', 'n', 't'};
    private static final byte[] ID = {'i', 'd'};
    private static final byte[] RETRY = {'r', 'e', 't', 'r', 'y'};
    private static final byte[] MESSAGE = {'m', 'e', 's', 's', 'a', 'g', 'e'};

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long CRS = ONES * CR;
    private static final long LFS = ONES * LF;
    /** Bytes below this one ({@code \r}, 0x0D, is the larger line end) make a word worth searching. */
    private static final long BELOW_LINE_END = ONES * (CR + 1);

    /** Chunks up to this size are copied into the per-thread array; larger ones into one of their own. */
    private static final int MAX_KEPT_COPY = 1024 * 1024;

    /** The per-thread copy of a direct chunk: one per event loop, not per stream (thousands of streams). */
    private static final FastThreadLocal<byte[]> COPY = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[64 * 1024];
        }
    };

    private final int maxEventSize;
    private final ByteBufAllocator alloc;

    // Stream state.
    private int bomMatched;      // leading BOM bytes matched so far; -1 once decided
    private boolean skipLf;      // the last chunk ended with a '\r' ending a non-blank line
    private boolean dispatchOnLf; // the last chunk ended with the '\r' of an event's blank line
    private String lastEventId;

    // State of the current event. Offsets are relative to the event's first byte.
    private ByteBuf gathered;    // the event's bytes from earlier chunks, when it spans chunks
    private long carried;        // how many of the event's bytes lie before eventStart (kept or discarded)
    private int eventStart;      // while feeding: the chunk index where the event's uncarried bytes start
    private long lineStart;      // offset of the current line's first byte (after a BOM)
    private boolean discarding;
    private int dataLines;
    private int dataOffset;      // the first data value, when there is one data line
    private int dataLength;
    private ByteBuf dataCopy;    // the joined data, from the second data line on
    private int typeOffset = -1;
    private int typeLength;
    private boolean typeIsMessage;
    private int idOffset = -1;
    private int idLength;
    private long retry = -1;
    private boolean sawComment;
    private boolean sawField;

    // While feeding: the chunk's bytes as an array; chunk index i is bytes[i + offset].
    private byte[] bytes;
    private int offset;
    /** While {@link #lend} runs: events are lent to the listener, not handed over. */
    private boolean lending;
    /**
     * While lending: one view of the chunk, re-pointed at each event in turn, so that lending an
     * event makes no object of its own (made on first use per chunk).
     */
    private ByteBuf lentView;
    /** While lending: the one event object lent, re-pointed at each event (made on first use). */
    private SseEvent lentEvent;

    public SseFramer(ByteBufAllocator alloc) {
        this(DEFAULT_MAX_EVENT_SIZE, alloc);
    }

    /**
     * @param maxEventSize the largest raw event kept, in bytes, blank line included;
     *                     1..{@value #MAX_EVENT_SIZE_LIMIT}
     */
    public SseFramer(int maxEventSize, ByteBufAllocator alloc) {
        if (maxEventSize < 1 || maxEventSize > MAX_EVENT_SIZE_LIMIT) {
            throw new IllegalArgumentException("maxEventSize: " + maxEventSize + " (expected: 1.."
                    + MAX_EVENT_SIZE_LIMIT + ")");
        }
        this.maxEventSize = maxEventSize;
        this.alloc = Objects.requireNonNull(alloc, "alloc");
    }

    /** The largest raw event kept, in bytes. */
    public int maxEventSize() {
        return maxEventSize;
    }

    /**
     * The last {@code id} seen in a complete event (possibly empty, which per spec resets it), or
     * null when none was. Kept across {@link #finish}, as an EventSource keeps it across
     * reconnections; ids in discarded oversized events are not seen.
     */
    public String lastEventId() {
        return lastEventId;
    }

    /** Frames the next chunk of the stream. Takes ownership of {@code chunk} and releases it. */
    public void feed(ByteBuf chunk, Listener listener) {
        Objects.requireNonNull(chunk, "chunk");
        try {
            Objects.requireNonNull(listener, "listener");
            int pos = chunk.readerIndex();
            int end = chunk.writerIndex();
            if (pos == end) {
                return;
            }
            eventStart = pos;
            viewAsArray(chunk, pos, end);
            byte[] a = bytes;
            int off = offset;
            if (dispatchOnLf) {
                // The blank line's '\r' ended the last chunk: a '\n' here is the rest of its line end.
                dispatchOnLf = false;
                if (a[pos + off] == LF) {
                    pos++;
                }
                completeEvent(chunk, pos, listener);
            } else if (skipLf) {
                skipLf = false;
                if (a[pos + off] == LF) {
                    pos++;
                    lineStart++;
                }
            }
            if (bomMatched >= 0) {
                matchBom(chunk, pos, end);
            }
            while (pos < end) {
                int found = indexOfLineEnd(a, pos + off, end + off);
                if (found < 0) {
                    break; // none: the line goes on in the next chunk
                }
                int lineEnd = found - off;
                int next;
                boolean crAtEnd = false;
                if (a[lineEnd + off] == CR) {
                    if (lineEnd + 1 < end) {
                        next = a[lineEnd + 1 + off] == LF ? lineEnd + 2 : lineEnd + 1;
                    } else {
                        next = end;
                        crAtEnd = true;
                    }
                } else {
                    next = lineEnd + 1;
                }
                onLineEnd(chunk, lineEnd, next, crAtEnd, listener);
                pos = next;
            }
            carryRest(chunk, end);
        } finally {
            bytes = null; // a heap chunk's array must not outlive the chunk here
            chunk.release();
        }
    }

    /**
     * Frames the next chunk as {@link #feed} does, but <em>lends</em> each complete event to the
     * listener instead of handing it over: the event, its raw bytes and its data are valid only
     * while {@link Listener#onEvent} runs, and the listener neither releases nor keeps the event
     * (it takes a {@code retainedSlice()} of {@link SseEvent#raw()} or {@link SseEvent#data()} to
     * keep them: the raw bytes of an event whole in the chunk are a view of it that the framer
     * re-points at the next event). Lending an event whole in the chunk thus costs no reference
     * counting and no buffer object. Takes ownership of {@code chunk} and releases it.
     */
    void lend(ByteBuf chunk, Listener listener) {
        lending = true;
        try {
            feed(chunk, listener);
        } finally {
            lending = false;
            lentView = null;
            if (lentEvent != null) {
                lentEvent.forget(); // keeps no chunk reachable between loans
            }
        }
    }

    /** Makes {@link #bytes} and {@link #offset} show {@code chunk[pos, end)}. */
    private void viewAsArray(ByteBuf chunk, int pos, int end) {
        if (chunk.hasArray()) {
            bytes = chunk.array();
            offset = chunk.arrayOffset();
            return;
        }
        int length = end - pos;
        byte[] copy = COPY.get();
        if (copy.length < length) {
            copy = new byte[length];
            if (length <= MAX_KEPT_COPY) {
                COPY.set(copy);
            }
        }
        chunk.getBytes(pos, copy, 0, length);
        bytes = copy;
        offset = -pos;
    }

    /**
     * The index of the first {@code \r} or {@code \n} in {@code a[from, to)}, or -1: eight bytes
     * at a time. A word is first asked only whether it holds a byte below 0x0E (the classic
     * "has a byte less than n" test, which misses none: text has almost no such bytes but its line
     * ends); only a word that does is searched for the two (a byte equal to the one sought becomes
     * a zero byte, which the "has a zero byte" test finds; its lowest hit is exact). Half the work
     * per word of a long line: a 64 KiB data line was scanned at 0.15-0.2 ns a byte, now 0.08-0.1.
     */
    static int indexOfLineEnd(byte[] a, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long word = (long) LONGS.get(a, i);
            if (((word - BELOW_LINE_END) & ~word & HIGHS) == 0) {
                continue;
            }
            long cr = word ^ CRS;
            long lf = word ^ LFS;
            long hits = ((cr - ONES) & ~cr | (lf - ONES) & ~lf) & HIGHS;
            if (hits != 0) {
                return i + (Long.numberOfTrailingZeros(hits) >>> 3);
            }
        }
        for (; i < to; i++) {
            byte b = a[i];
            if (b == LF || b == CR) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The stream ended: dispatches an event whose blank line was the last byte, hands on an
     * unterminated tail, or reports an oversized event that was being discarded. The framer can
     * be reused for a new stream afterwards.
     */
    public void finish(Listener listener) {
        Objects.requireNonNull(listener, "listener");
        try {
            if (dispatchOnLf) {
                dispatchOnLf = false;
                eventStart = 0;
                completeEvent(null, 0, listener);
            } else if (discarding) {
                long size = carried;
                resetEvent();
                listener.onOversizedEvent(size);
            } else if (gathered != null) {
                ByteBuf tail = gathered;
                gathered = null;
                resetEvent();
                listener.onUnterminatedTail(tail);
            }
        } finally {
            close();
        }
    }

    /** Releases a partially gathered event and forgets the stream's state (not its last event ID). */
    @Override
    public void close() {
        resetEvent();
        bomMatched = 0;
        skipLf = false;
        dispatchOnLf = false;
    }

    /** Looks for the stream's leading BOM; its bytes hold no line end, so lines need not wait. */
    private void matchBom(ByteBuf chunk, int pos, int end) {
        while (pos < end && bomMatched < BOM.length) {
            if (chunk.getByte(pos) != BOM[bomMatched]) {
                bomMatched = -1;
                return;
            }
            bomMatched++;
            pos++;
        }
        if (bomMatched == BOM.length) {
            lineStart = BOM.length;
            bomMatched = -1;
        }
    }

    /**
     * A line of the current event ends at {@code lineEnd}; its line end runs up to {@code next}.
     * {@code crAtEnd}: the line end is a '\r' that is the chunk's last byte.
     */
    private void onLineEnd(ByteBuf chunk, int lineEnd, int next, boolean crAtEnd, Listener listener) {
        long lineEndOffset = carried + (lineEnd - eventStart);
        long nextOffset = carried + (next - eventStart);
        if (!discarding && nextOffset > maxEventSize) {
            startDiscard();
        }
        if (lineEndOffset == lineStart) {
            if (crAtEnd) {
                dispatchOnLf = true; // carryRest keeps the bytes until the next chunk tells
            } else {
                completeEvent(chunk, next, listener);
            }
            return;
        }
        if (!discarding) {
            if (gathered != null) {
                // The line may have begun in an earlier chunk: gather up to its end to see it whole.
                appendToGathered(chunk, next);
                int base = gathered.readerIndex();
                byte[] a;
                int off;
                if (gathered.hasArray()) {
                    a = gathered.array();
                    off = gathered.arrayOffset();
                } else { // an allocator whose heap buffers have no array: rare, so a copy will do
                    a = new byte[gathered.writerIndex()];
                    gathered.getBytes(0, a);
                    off = 0;
                }
                parseLine(gathered, a, off, base, base + (int) lineStart, base + (int) lineEndOffset);
            } else {
                parseLine(chunk, bytes, offset, eventStart, eventStart + (int) lineStart,
                        eventStart + (int) lineEndOffset);
            }
        }
        lineStart = nextOffset;
        skipLf = crAtEnd;
    }

    /**
     * Interprets one non-blank line, {@code buf[from, to)}, read from {@code a}, where index
     * {@code i} of {@code buf} is {@code a[i + off]}; {@code base} is the event's first byte.
     */
    private void parseLine(ByteBuf buf, byte[] a, int off, int base, int from, int to) {
        if (a[from + off] == COLON) {
            sawComment = true;
            return;
        }
        sawField = true;
        int found = indexOf(a, from + off, to + off, COLON);
        int nameEnd = found < 0 ? to : found - off;
        int valueFrom = found < 0 ? to : nameEnd + 1;
        if (valueFrom < to && a[valueFrom + off] == ' ') {
            valueFrom++;
        }
        int nameLength = nameEnd - from;
        if (nameLength == DATA.length && equalsAscii(a, from + off, DATA)) {
            onData(buf, base, valueFrom, to);
        } else if (nameLength == EVENT.length && equalsAscii(a, from + off, EVENT)) {
            typeOffset = valueFrom - base;
            typeLength = to - valueFrom;
            // MCP servers name every event "message": no need for a new string each time.
            typeIsMessage = typeLength == MESSAGE.length && equalsAscii(a, valueFrom + off, MESSAGE);
        } else if (nameLength == ID.length && equalsAscii(a, from + off, ID)) {
            if (valueFrom == to || indexOf(a, valueFrom + off, to + off, (byte) 0) < 0) {
                idOffset = valueFrom - base;
                idLength = to - valueFrom;
            }
        } else if (nameLength == RETRY.length && equalsAscii(a, from + off, RETRY)) {
            long value = parseDigits(a, valueFrom + off, to + off);
            if (value >= 0) {
                retry = value;
            }
        }
        // Any other field is ignored, as the spec says; its bytes still travel in the raw event.
    }

    private void onData(ByteBuf buf, int base, int valueFrom, int to) {
        dataLines++;
        int length = to - valueFrom;
        if (dataLines == 1) {
            dataOffset = valueFrom - base;
            dataLength = length;
            return;
        }
        if (dataCopy == null) {
            // Joined data is never longer than the event, so the limit bounds the copy too.
            int initialCapacity = (int) Math.min(Math.max(256L, 2L * (dataLength + 1L + length)), maxEventSize);
            dataCopy = alloc.heapBuffer(initialCapacity, maxEventSize);
            dataCopy.writeBytes(buf, base + dataOffset, dataLength);
        }
        dataCopy.writeByte(LF).writeBytes(buf, valueFrom, length);
    }

    /** A blank line ended at {@code next}: hands on the event, or reports it as oversized. */
    private void completeEvent(ByteBuf chunk, int next, Listener listener) {
        long size = carried + (next - eventStart);
        if (discarding || size > maxEventSize) {
            resetEvent();
            eventStart = next;
            listener.onOversizedEvent(size);
            return;
        }
        ByteBuf raw;
        boolean gatheredRaw = gathered != null;
        byte[] dataArray = null; // where the sniffer can read a single data line without a copy
        if (gatheredRaw) {
            appendToGathered(chunk, next);
            raw = gathered;
            gathered = null;
        } else {
            if (lending) {
                // A view of the chunk, which outlives the listener's call: the same view for every
                // event, as a lent event is done with when the next one comes.
                if (lentView == null) {
                    // In the chunk's own indexes: the duplicate of a slice (an HTTP chunk's piece
                    // of a read, say) would be in its parent's.
                    lentView = chunk.slice(0, chunk.capacity());
                }
                raw = lentView.setIndex(eventStart, next);
            } else {
                raw = chunk.retainedSlice(eventStart, next - eventStart);
            }
            dataArray = bytes;
        }
        SseEvent event;
        try {
            event = toEvent(raw);
            if (dataArray != null && dataLines == 1) {
                event.dataArray(dataArray, eventStart + dataOffset + offset);
            }
        } catch (RuntimeException | Error e) {
            if (gatheredRaw || !lending) {
                raw.release();
            }
            throw e;
        }
        resetEvent();
        eventStart = next;
        if (!lending) {
            listener.onEvent(event);
            return;
        }
        try {
            listener.onEvent(event);
        } finally {
            // Done lending: what the framer gathered or joined for the event is let go.
            if (gatheredRaw) {
                raw.release();
            }
            ByteBuf joined = event.joinedData();
            if (joined != null) {
                joined.release();
            }
        }
    }

    private SseEvent toEvent(ByteBuf raw) {
        int base = raw.readerIndex();
        String type = null;
        if (typeOffset >= 0) {
            type = typeIsMessage ? SseEvent.DEFAULT_TYPE
                    : raw.toString(base + typeOffset, typeLength, StandardCharsets.UTF_8);
        }
        String id = null;
        if (idOffset >= 0) {
            id = raw.toString(base + idOffset, idLength, StandardCharsets.UTF_8);
            lastEventId = id;
        }
        // The data of one line stays where it is in raw; the joined data of several goes to the event.
        ByteBuf joined = null;
        if (dataLines > 1) {
            joined = dataCopy;
            dataCopy = null;
        }
        int offset = dataLines == 1 ? dataOffset : -1;
        Long retryValue = retry >= 0 ? retry : null;
        boolean commentOnly = sawComment && !sawField;
        if (lending) {
            // One event object per framer, re-pointed at each event lent: the listener keeps none.
            if (lentEvent == null) {
                lentEvent = SseEvent.forLending();
            }
            return lentEvent.set(raw, joined, offset, dataLength, type, id, retryValue, commentOnly);
        }
        return new SseEvent(raw, joined, offset, dataLength, type, id, retryValue, commentOnly);
    }

    /** The chunk is used up: keeps (or, over the limit, counts) the current event's bytes in it. */
    private void carryRest(ByteBuf chunk, int end) {
        int length = end - eventStart;
        if (length <= 0) {
            return;
        }
        long total = carried + length;
        if (!discarding && total > maxEventSize) {
            startDiscard();
        }
        if (!discarding) {
            if (gathered == null) {
                // Never above the maximum capacity, which is below 256 for a small limit.
                int initialCapacity = (int) Math.min(Math.max(256L, 2L * length), maxEventSize);
                gathered = alloc.heapBuffer(initialCapacity, maxEventSize);
            }
            gathered.writeBytes(chunk, eventStart, length);
        }
        carried = total;
        eventStart = end;
    }

    private void appendToGathered(ByteBuf chunk, int upTo) {
        int length = upTo - eventStart;
        if (length > 0) {
            gathered.writeBytes(chunk, eventStart, length);
            carried += length;
            eventStart = upTo;
        }
    }

    /** The event is over the limit: drops what is kept of it and only looks for its end from now on. */
    private void startDiscard() {
        discarding = true;
        releaseBuffers();
        dataLines = 0;
        typeOffset = -1;
        idOffset = -1;
        retry = -1;
    }

    private void resetEvent() {
        releaseBuffers();
        carried = 0;
        lineStart = 0;
        discarding = false;
        dataLines = 0;
        dataOffset = 0;
        dataLength = 0;
        typeOffset = -1;
        typeLength = 0;
        typeIsMessage = false;
        idOffset = -1;
        idLength = 0;
        retry = -1;
        sawComment = false;
        sawField = false;
    }

    private void releaseBuffers() {
        if (gathered != null) {
            gathered.release();
            gathered = null;
        }
        if (dataCopy != null) {
            dataCopy.release();
            dataCopy = null;
        }
    }

    private static boolean equalsAscii(byte[] a, int from, byte[] expected) {
        for (int i = 0; i < expected.length; i++) {
            if (a[from + i] != expected[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] a, int from, int to, byte value) {
        for (int i = from; i < to; i++) {
            if (a[i] == value) {
                return i;
            }
        }
        return -1;
    }

    /** The value of {@code a[from, to)} when it is one or more ASCII digits fitting a long; else -1. */
    private static long parseDigits(byte[] a, int from, int to) {
        if (from == to) {
            return -1;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int digit = a[i] - '0';
            if (digit < 0 || digit > 9 || value > (Long.MAX_VALUE - digit) / 10) {
                return -1;
            }
            value = value * 10 + digit;
        }
        return value;
    }
}
