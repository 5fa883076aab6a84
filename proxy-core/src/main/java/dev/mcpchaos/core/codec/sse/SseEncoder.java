package dev.mcpchaos.core.codec.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.ByteProcessor;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Frames a message as one Server-Sent Events event, for a message the proxy made itself (a fault
 * replaced, duplicated or injected it) on an SSE stream; original events leave as their exact
 * {@link SseEvent#raw()} bytes instead.
 *
 * <p>The event is {@code [id: <id>\n]event: <type>\ndata: <line>\n...\n}: the type defaults to
 * {@value SseEvent#DEFAULT_TYPE}, and the content is split at its line breaks over several
 * {@code data:} lines, which a client joins back with {@code \n}. SSE cannot carry a carriage
 * return: a {@code \r\n} or a bare {@code \r} in the content is a line break like {@code \n}, so
 * a client reads each of them back as {@code \n}. (Well-formed JSON holds line breaks only as
 * whitespace between tokens, where the difference does not matter.)
 *
 * <p>Stateless; every method leaves the content's indexes as they are and does not release it.
 */
public final class SseEncoder {

    private static final byte CR = '\r';
    private static final byte LF = '\n';
    private static final byte[] ID_PREFIX = {'i', 'd', ':', ' '};
    private static final byte[] EVENT_PREFIX = {'e', 'v', 'e', 'n', 't', ':', ' '};
    private static final byte[] DATA_PREFIX = {'d', 'a', 't', 'a', ':', ' '};

    private SseEncoder() {
    }

    /** The event {@code event: message\ndata: <content>\n\n}, in a new buffer the caller owns. */
    public static ByteBuf encode(ByteBufAllocator alloc, ByteBuf content) {
        return encode(alloc, content, null, null);
    }

    /**
     * The event for {@code content}, in a new buffer of exactly its size that the caller owns.
     *
     * @param content the message, without any SSE framing
     * @param eventType the {@code event} field; null for {@value SseEvent#DEFAULT_TYPE}
     * @param id the {@code id} field (so that a client's Last-Event-ID stays right when the
     *           message replaces one that had an id); null for none
     * @throws IllegalArgumentException when {@code eventType} or {@code id} holds a line break,
     *                                  or {@code id} a NUL (a client would ignore it)
     */
    public static ByteBuf encode(ByteBufAllocator alloc, ByteBuf content, String eventType, String id) {
        Objects.requireNonNull(alloc, "alloc");
        Objects.requireNonNull(content, "content");
        String type = checkedType(eventType);
        checkId(id);
        ByteBuf out = alloc.buffer(encodedLength(content, type, id));
        try {
            writeChecked(out, content, type, id);
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
        return out;
    }

    /**
     * Writes the event for {@code content} into {@code out}; see
     * {@link #encode(ByteBufAllocator, ByteBuf, String, String)} for the arguments.
     */
    public static void write(ByteBuf out, ByteBuf content, String eventType, String id) {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(content, "content");
        String type = checkedType(eventType);
        checkId(id);
        out.ensureWritable(encodedLength(content, type, id));
        writeChecked(out, content, type, id);
    }

    /** The size in bytes of the event {@link #encode} makes for these arguments. */
    public static int encodedLength(ByteBuf content, String eventType, String id) {
        Objects.requireNonNull(content, "content");
        String type = checkedType(eventType);
        checkId(id);
        long length = (long) EVENT_PREFIX.length + ByteBufUtil.utf8Bytes(type) + 1;
        if (id != null) {
            length += ID_PREFIX.length + ByteBufUtil.utf8Bytes(id) + 1;
        }
        int from = content.readerIndex();
        int end = content.writerIndex();
        int lines = 1;
        int breakBytes = 0;
        while (from < end) {
            int lineEnd = nextLineBreak(content, from, end);
            if (lineEnd < 0) {
                break;
            }
            int next = afterLineBreak(content, lineEnd, end);
            lines++;
            breakBytes += next - lineEnd;
            from = next;
        }
        length += (long) lines * (DATA_PREFIX.length + 1) + (end - content.readerIndex() - breakBytes) + 1;
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("content: " + content.readableBytes()
                    + " bytes make an SSE event of " + length + " bytes (expected: at most " + (Integer.MAX_VALUE - 8) + ")");
        }
        return (int) length;
    }

    private static void writeChecked(ByteBuf out, ByteBuf content, String type, String id) {
        if (id != null) {
            out.writeBytes(ID_PREFIX).writeCharSequence(id, StandardCharsets.UTF_8);
            out.writeByte(LF);
        }
        out.writeBytes(EVENT_PREFIX).writeCharSequence(type, StandardCharsets.UTF_8);
        out.writeByte(LF);
        int from = content.readerIndex();
        int end = content.writerIndex();
        while (true) {
            int lineEnd = from < end ? nextLineBreak(content, from, end) : -1;
            int segmentEnd = lineEnd < 0 ? end : lineEnd;
            out.writeBytes(DATA_PREFIX).writeBytes(content, from, segmentEnd - from).writeByte(LF);
            if (lineEnd < 0) {
                break;
            }
            from = afterLineBreak(content, lineEnd, end);
        }
        out.writeByte(LF);
    }

    /** The index of the first '\r' or '\n' in {@code buf[from, end)}, or -1. */
    private static int nextLineBreak(ByteBuf buf, int from, int end) {
        // One pass for both bytes: searching for '\n' first would rescan content of bare '\r's.
        return buf.forEachByte(from, end - from, ByteProcessor.FIND_CRLF);
    }

    private static int afterLineBreak(ByteBuf buf, int lineBreak, int end) {
        return buf.getByte(lineBreak) == CR && lineBreak + 1 < end && buf.getByte(lineBreak + 1) == LF
                ? lineBreak + 2
                : lineBreak + 1;
    }

    private static String checkedType(String eventType) {
        if (eventType == null) {
            return SseEvent.DEFAULT_TYPE;
        }
        if (hasLineBreak(eventType)) {
            throw new IllegalArgumentException("eventType: \"" + eventType + "\" (expected: no CR or LF)");
        }
        return eventType;
    }

    private static void checkId(String id) {
        if (id != null && (hasLineBreak(id) || id.indexOf('\0') >= 0)) {
            throw new IllegalArgumentException("id: \"" + id + "\" (expected: no CR, LF or NUL)");
        }
    }

    private static boolean hasLineBreak(String value) {
        return value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0;
    }
}
