package dev.mcpchaos.core.codec.sse;

import io.netty.buffer.ByteBuf;

import java.util.Objects;

/**
 * Follows where events end in a Server-Sent Events stream that is relayed as it comes, without
 * an {@link SseFramer}, so that framing can begin mid-stream exactly where an event begins.
 *
 * <p>Relaying costs next to nothing: {@link #passed} looks only at the line ends that close a
 * chunk (usually one or two bytes), because what came before them cannot change where the stream
 * stands. Only when framing is to begin does {@link #eventStart} scan forward, once, to the end
 * of the event in progress. Line ends are those of {@link SseFramer}: {@code \r\n}, {@code \n} or
 * {@code \r}; a blank line ends an event, and a {@code \n} right after the {@code \r} that ended
 * it still belongs to it.
 *
 * <p>A stream starts at an event's start. Not thread-safe: one instance per stream.
 */
public final class SseBoundary {

    private static final byte CR = '\r';
    private static final byte LF = '\n';

    private static final int MID_LINE = 0;
    private static final int LINE_START = 1;
    private static final int EVENT_START = 2;

    private int state = EVENT_START;
    /** The last line end was a '\r': a '\n' next is part of it. */
    private boolean crPending;

    /**
     * The stream went on with the readable bytes of {@code chunk}, relayed as they are. Reads
     * only the chunk's trailing line ends; does not change the chunk or its indexes.
     */
    public void passed(ByteBuf chunk) {
        Objects.requireNonNull(chunk, "chunk");
        int from = chunk.readerIndex();
        int end = chunk.writerIndex();
        int runStart = end;
        while (runStart > from && isLineEnd(chunk.getByte(runStart - 1))) {
            runStart--;
        }
        if (runStart > from) {
            // The byte before the trailing line ends is part of a line, whatever came before it.
            state = MID_LINE;
            crPending = false;
        }
        for (int i = runStart; i < end; i++) {
            step(chunk.getByte(i));
        }
    }

    /**
     * Where the next event begins in {@code chunk}: its reader index when the stream already
     * stands at an event's start, the index just past the end of the event in progress when
     * that end lies in the chunk, else -1. The bytes before the returned index (all of them,
     * for -1) count as {@link #passed}; the caller relays them as they are and frames from the
     * returned index on. Does not change the chunk or its indexes.
     */
    public int eventStart(ByteBuf chunk) {
        Objects.requireNonNull(chunk, "chunk");
        int end = chunk.writerIndex();
        for (int i = chunk.readerIndex(); ; i++) {
            if (state == EVENT_START) {
                if (!crPending) {
                    return i;
                }
                if (i < end && chunk.getByte(i) != LF) {
                    crPending = false;
                    return i;
                }
            }
            if (i >= end) {
                return -1;
            }
            step(chunk.getByte(i));
        }
    }

    /** Whether the bytes passed so far end exactly where an event begins. */
    public boolean atEventStart() {
        return state == EVENT_START && !crPending;
    }

    private void step(byte b) {
        if (b == LF) {
            if (crPending) {
                crPending = false; // the rest of a "\r\n" line end
            } else {
                state = state == MID_LINE ? LINE_START : EVENT_START;
            }
        } else if (b == CR) {
            state = state == MID_LINE ? LINE_START : EVENT_START;
            crPending = true;
        } else {
            state = MID_LINE;
            crPending = false;
        }
    }

    private static boolean isLineEnd(byte b) {
        return b == LF || b == CR;
    }
}
