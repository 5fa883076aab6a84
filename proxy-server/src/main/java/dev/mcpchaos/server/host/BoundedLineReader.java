package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Splits a byte stream into newline-delimited lines (the MCP stdio framing) without ever holding
 * more than a fixed number of bytes for one line.
 *
 * <p>A line ends at {@code \n}; one {@code \r} right before it is dropped, so {@code \r\n} input is
 * accepted. Bytes are handed out undecoded because Jackson parses UTF-8 itself and reports
 * invalid encodings as parse errors, which is what the server wants to answer with.
 *
 * <p>Limit: a line longer than {@code maxLineBytes} (excluding the terminator) is skipped up to its
 * newline and reported as {@link Line#tooLong()}, so a runaway or malicious peer costs a bounded
 * amount of memory instead of an {@link OutOfMemoryError}.
 *
 * <p>Not thread-safe: one reader thread owns an instance.
 */
final class BoundedLineReader {

    /** One framed line: its bytes (without the terminator), or a marker that it was too long. */
    record Line(byte[] bytes, boolean tooLong) {

        /** Whether the line holds only JSON whitespace (space, tab, CR, LF) or nothing. */
        boolean isBlank() {
            for (byte b : bytes) {
                if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                    return false;
                }
            }
            return true;
        }
    }

    private static final int READ_CHUNK = 64 * 1024;
    private static final int RETAINED_BUFFER_BYTES = 1024 * 1024;

    private final InputStream in;
    private final int maxLineBytes;
    private final byte[] chunk = new byte[READ_CHUNK];
    private int chunkPos;
    private int chunkEnd;
    private byte[] line = new byte[1024];
    private int lineLength;
    private boolean overflowed;

    BoundedLineReader(InputStream in, int maxLineBytes) {
        this.in = requireNonNull(in, "in");
        if (maxLineBytes <= 0) {
            throw new IllegalArgumentException("maxLineBytes: " + maxLineBytes + " (expected: > 0)");
        }
        this.maxLineBytes = maxLineBytes;
    }

    /**
     * Returns the next line, or {@code null} once the stream has ended. A final line without a
     * terminating newline is still returned, because a peer that closes its end right after its
     * last message has still sent that message.
     */
    Line next() throws IOException {
        while (true) {
            if (chunkPos == chunkEnd) {
                int read = in.read(chunk, 0, chunk.length);
                if (read < 0) {
                    if (lineLength == 0 && !overflowed) {
                        return null;
                    }
                    return takeLine();
                }
                chunkPos = 0;
                chunkEnd = read;
            }
            int newline = indexOfNewline(chunkPos, chunkEnd);
            int end = newline < 0 ? chunkEnd : newline;
            append(chunkPos, end);
            chunkPos = newline < 0 ? chunkEnd : newline + 1;
            if (newline >= 0) {
                return takeLine();
            }
        }
    }

    private int indexOfNewline(int from, int to) {
        for (int i = from; i < to; i++) {
            if (chunk[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private void append(int from, int to) {
        int count = to - from;
        if (overflowed || count == 0) {
            return;
        }
        // One byte of slack so a line of exactly maxLineBytes plus its '\r' still fits.
        if ((long) lineLength + count > (long) maxLineBytes + 1) {
            overflowed = true;
            line = new byte[1024];
            lineLength = 0;
            return;
        }
        if (lineLength + count > line.length) {
            int grown = (int) Math.min((long) maxLineBytes + 1, Math.max((long) line.length * 2, (long) lineLength + count));
            line = Arrays.copyOf(line, grown);
        }
        System.arraycopy(chunk, from, line, lineLength, count);
        lineLength += count;
    }

    private Line takeLine() {
        if (overflowed) {
            overflowed = false;
            lineLength = 0;
            return new Line(new byte[0], true);
        }
        int length = lineLength;
        if (length > 0 && line[length - 1] == '\r') {
            length--;
        }
        lineLength = 0;
        if (length > maxLineBytes) {
            return new Line(new byte[0], true);
        }
        Line taken = new Line(Arrays.copyOf(line, length), false);
        if (line.length > RETAINED_BUFFER_BYTES) {
            // Do not keep one huge message's buffer alive for the rest of the session.
            line = new byte[1024];
        }
        return taken;
    }
}
