package dev.mcpchaos.core.codec.line;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.util.Objects;

/**
 * Splits a byte stream into newline-delimited lines, the framing of MCP's stdio transport.
 *
 * <p>Each line is handed on with its delimiter ({@code \n}, or {@code \r\n}, which is tolerated),
 * so the bytes can leave exactly as they came. A line that lies whole inside one chunk is a
 * retained slice of that chunk, not a copy; only a line split across chunks is gathered into a
 * buffer of its own.
 *
 * <p><b>Limit.</b> A line whose content (delimiter excluded) is longer than
 * {@code maxLineLength} (default {@value #DEFAULT_MAX_LINE_LENGTH} bytes, 16 MiB) is never held
 * in memory whole: its bytes are discarded up to the next newline, then
 * {@link Listener#onOversizedLine} reports its length, and framing goes on with the next line.
 *
 * <p>Not thread-safe: one instance per stream.
 */
public final class LineFramer implements AutoCloseable {

    /** Default maximum length of a line's content, in bytes: 16 MiB. */
    public static final int DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;

    /** Receives what the framer finds. */
    public interface Listener {
        /**
         * A complete line.
         *
         * @param line the line and its delimiter (none for an unterminated last line at end of
         *             stream); ownership passes to the listener
         * @param contentLength the number of leading bytes that are the line without delimiter
         */
        void onLine(ByteBuf line, int contentLength);

        /** A line longer than the limit was discarded; {@code length} excludes its delimiter. */
        void onOversizedLine(long length);
    }

    /** Receives what {@link #feedRuns} finds. */
    public interface RunListener {
        /**
         * One or more complete lines, delimiters included, exactly as read; ownership passes to
         * the listener.
         */
        void onRun(ByteBuf lines);

        /** A line longer than the limit was discarded; {@code length} excludes its delimiter. */
        void onOversizedLine(long length);
    }

    private final int maxLineLength;
    private final ByteBufAllocator alloc;
    private ByteBuf partial;
    /**
     * The unfinished line that ended the last chunk framed by runs, held as a retained slice of
     * that chunk rather than copied: the next chunk usually ends it. Never set with {@link #partial}.
     */
    private ByteBuf tail;
    private boolean discarding;
    private long discardedLength;
    private boolean discardedEndsWithCr; // whether the last byte discarded so far is '\r'

    public LineFramer(ByteBufAllocator alloc) {
        this(DEFAULT_MAX_LINE_LENGTH, alloc);
    }

    /** @param maxLineLength the longest line content kept, in bytes; at least 1 */
    public LineFramer(int maxLineLength, ByteBufAllocator alloc) {
        if (maxLineLength < 1 || maxLineLength > Integer.MAX_VALUE - 2) {
            throw new IllegalArgumentException("maxLineLength: " + maxLineLength + " (expected: 1.."
                    + (Integer.MAX_VALUE - 2) + ")");
        }
        this.maxLineLength = maxLineLength;
        this.alloc = Objects.requireNonNull(alloc, "alloc");
    }

    public int maxLineLength() {
        return maxLineLength;
    }

    /** Frames the next chunk of the stream. Takes ownership of {@code chunk} and releases it. */
    public void feed(ByteBuf chunk, Listener listener) {
        try {
            while (chunk.isReadable()) {
                frameNext(chunk, listener);
            }
        } finally {
            chunk.release();
        }
    }

    /**
     * Frames the next chunk of the stream into runs of whole lines rather than single lines, for
     * a relay that needs no line on its own: each run is a retained slice of the chunk, so a
     * chunk of many lines costs a search for its last newline instead of one per line. The
     * unfinished line a chunk ends with is held as a slice of it, and the next chunk's first line
     * end ends it: that line comes as a run of its own, the two pieces joined without a copy (a
     * line over three or more chunks is gathered into a buffer of its own, as by {@link #feed}). Lines over the limit are discarded and
     * reported as by {@link #feed}, and the two can take turns on one stream. Takes ownership of
     * {@code chunk} and releases it.
     */
    public void feedRuns(ByteBuf chunk, RunListener listener) {
        Listener oneByOne = null;
        try {
            while (chunk.isReadable()) {
                int start = chunk.readerIndex();
                int end = chunk.writerIndex();
                if (tail != null && endTail(chunk, listener)) {
                    continue;
                }
                if (tail != null || partial != null || discarding) {
                    if (oneByOne == null) {
                        oneByOne = asLines(listener);
                    }
                    frameNext(chunk, oneByOne); // the line in progress
                    continue;
                }
                int lastLf = chunk.indexOf(end, start, (byte) '\n'); // searched from the end
                if (lastLf < 0) {
                    if (end - start <= maxLineLength + 1L) {
                        tail = chunk.retainedSlice(start, end - start);
                        chunk.readerIndex(end);
                    } else {
                        keepPartial(chunk, start, end);
                    }
                    return;
                }
                if (lastLf - start > maxLineLength) {
                    // A line in there may be over the limit (a small limit): these, line by line.
                    if (oneByOne == null) {
                        oneByOne = asLines(listener);
                    }
                    while (chunk.readerIndex() <= lastLf) {
                        frameNext(chunk, oneByOne);
                    }
                    continue;
                }
                listener.onRun(chunk.retainedSlice(start, lastLf + 1 - start));
                chunk.readerIndex(lastLf + 1);
            }
        } finally {
            chunk.release();
        }
    }

    /**
     * Ends the held tail with the first line end of {@code chunk} as one run of the two pieces,
     * without copying either, when the line is within the limit; false (nothing done) otherwise.
     */
    private boolean endTail(ByteBuf chunk, RunListener listener) {
        int start = chunk.readerIndex();
        int lf = chunk.indexOf(start, chunk.writerIndex(), (byte) '\n');
        if (lf < 0) {
            return false;
        }
        boolean cr = lf > start ? chunk.getByte(lf - 1) == '\r' : tail.getByte(tail.writerIndex() - 1) == '\r';
        if (tail.readableBytes() + (long) (lf - start) - (cr ? 1 : 0) > maxLineLength) {
            return false;
        }
        ByteBuf held = tail;
        tail = null;
        ByteBuf rest = chunk.retainedSlice(start, lf + 1 - start);
        chunk.readerIndex(lf + 1);
        listener.onRun(Unpooled.wrappedBuffer(held, rest));
        return true;
    }

    private static Listener asLines(RunListener runs) {
        return new Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                runs.onRun(line);
            }

            @Override
            public void onOversizedLine(long length) {
                runs.onOversizedLine(length);
            }
        };
    }

    /** Frames the next line of {@code chunk}, or keeps or discards the rest of it. */
    private void frameNext(ByteBuf chunk, Listener listener) {
        ownTail();
        int start = chunk.readerIndex();
        int end = chunk.writerIndex();
        int lf = chunk.indexOf(start, end, (byte) '\n');
        if (discarding) {
            if (lf < 0) {
                discardedLength += end - start;
                discardedEndsWithCr = chunk.getByte(end - 1) == '\r';
                chunk.readerIndex(end);
                return;
            }
            // The reported length excludes the delimiter, '\r' included, wherever the cut fell.
            boolean cr = lf > start ? chunk.getByte(lf - 1) == '\r' : discardedEndsWithCr;
            discardedLength += lf - start - (cr ? 1 : 0);
            chunk.readerIndex(lf + 1);
            endDiscard(listener);
            return;
        }
        if (lf < 0) {
            keepPartial(chunk, start, end);
            return;
        }
        ByteBuf line;
        if (partial == null) {
            line = chunk.retainedSlice(start, lf + 1 - start);
        } else {
            if (partial.readableBytes() + (long) (lf - start) > maxLineLength + 1L) {
                // The line overflows only with its last piece: report it whole.
                boolean cr = lf > start ? chunk.getByte(lf - 1) == '\r'
                        : partial.getByte(partial.writerIndex() - 1) == '\r';
                discardedLength = partial.readableBytes() + (long) (lf - start) - (cr ? 1 : 0);
                releasePartial();
                chunk.readerIndex(lf + 1);
                endDiscard(listener);
                return;
            }
            line = partial.writeBytes(chunk, start, lf + 1 - start);
            partial = null;
        }
        chunk.readerIndex(lf + 1);
        emit(line, listener);
    }

    /**
     * The stream ended: hands on an unterminated last line, if any, and reports a line that was
     * being discarded. The framer can be reused afterwards.
     */
    public void finish(Listener listener) {
        ownTail();
        if (discarding) {
            endDiscard(listener);
        } else if (partial != null) {
            ByteBuf line = partial;
            partial = null;
            int length = line.readableBytes();
            if (length > maxLineLength) {
                // Kept with one byte of slack for a '\r' that, without a newline, is content.
                line.release();
                listener.onOversizedLine(length);
                return;
            }
            listener.onLine(line, length);
        }
    }

    /** Releases a partially gathered line. */
    @Override
    public void close() {
        if (tail != null) {
            tail.release();
            tail = null;
        }
        releasePartial();
        discarding = false;
        discardedLength = 0;
        discardedEndsWithCr = false;
    }

    private void emit(ByteBuf line, Listener listener) {
        int length = line.readableBytes();
        int contentLength = length - 1;
        if (contentLength > 0 && line.getByte(line.readerIndex() + contentLength - 1) == '\r') {
            contentLength--;
        }
        if (contentLength > maxLineLength) {
            line.release();
            listener.onOversizedLine(contentLength);
            return;
        }
        listener.onLine(line, contentLength);
    }

    /** Copies a held tail into a buffer of its own, as if it had been framed line by line. */
    private void ownTail() {
        if (tail == null) {
            return;
        }
        ByteBuf held = tail;
        tail = null;
        try {
            keepPartial(held, held.readerIndex(), held.writerIndex());
        } finally {
            held.release();
        }
    }

    private void keepPartial(ByteBuf chunk, int start, int end) {
        int have = partial == null ? 0 : partial.readableBytes();
        // One byte of slack for a '\r' that may belong to the delimiter.
        if (have + (long) (end - start) > maxLineLength + 1L) {
            discarding = true;
            discardedLength = have + (long) (end - start);
            discardedEndsWithCr = chunk.getByte(end - 1) == '\r';
            releasePartial();
        } else {
            if (partial == null) {
                // Never above the maximum capacity, which is below 256 for a small limit.
                int initialCapacity = (int) Math.min(Math.max(256L, 2L * (end - start)), maxLineLength + 2L);
                partial = alloc.heapBuffer(initialCapacity, maxLineLength + 2);
            }
            partial.writeBytes(chunk, start, end - start);
        }
        chunk.readerIndex(end);
    }

    private void endDiscard(Listener listener) {
        long length = discardedLength;
        discarding = false;
        discardedLength = 0;
        discardedEndsWithCr = false;
        listener.onOversizedLine(length);
    }

    private void releasePartial() {
        if (partial != null) {
            partial.release();
            partial = null;
        }
    }
}
