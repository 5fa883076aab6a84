package dev.mcpchaos.core.codec.line;

import dev.mcpchaos.core.codec.FrameDecoder;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Turns a stream of bytes carrying newline-delimited JSON-RPC into {@link Frame}s: a
 * {@link LineFramer} followed by an {@link EnvelopeSniffer}. Every frame is original: its
 * {@link Frame#wire()} is the line with its delimiter, exactly as read.
 *
 * <p>Lines longer than the limit (default 16 MiB) are discarded, counted in
 * {@link #oversizedLines()} and logged with their size and direction; decoding goes on. At the end
 * of the input an unterminated last line is still passed on.
 *
 * <p>The same steps serve the Netty pipeline (this handler) and the stdio transport's pumps
 * ({@link #decode}). A caller can also take the two steps on two threads, framing on one
 * ({@link #frameLines}) and sniffing on another ({@link #toFrame}), as the stdio pumps do so that
 * reading and framing a pipe overlap with sniffing.
 */
public final class LineFrameDecoder extends FrameDecoder {

    private static final Logger log = LoggerFactory.getLogger(LineFrameDecoder.class);

    private final LineFramer framer;
    private final EnvelopeSniffer sniffer = new EnvelopeSniffer();
    private long sequence;
    private long oversizedLines;
    private LongConsumer onOversized = length -> { };

    public LineFrameDecoder(Direction direction, LineFramer framer) {
        super(direction);
        this.framer = Objects.requireNonNull(framer, "framer");
    }

    /** Receives the lines of {@link #frameLines}. */
    @FunctionalInterface
    public interface LineConsumer {
        /**
         * Takes ownership of {@code line}: the line with its delimiter, whose first
         * {@code contentLength} bytes are the message.
         */
        void accept(ByteBuf line, int contentLength);
    }

    /** Decodes a chunk; takes ownership of it. Frames go to {@code out} in order. */
    public void decode(ByteBuf chunk, FrameConsumer out) {
        frameLines(chunk, (line, contentLength) -> out.accept(toFrame(line, contentLength)));
    }

    /** The input ended: passes on an unterminated last line and releases what is held. */
    public void finish(FrameConsumer out) {
        finishLines((line, contentLength) -> out.accept(toFrame(line, contentLength)));
    }

    /**
     * The first step of {@link #decode}: frames a chunk (takes ownership of it) without sniffing;
     * lines go to {@code out} in order, and lines over the limit are counted and logged here.
     * Each line must then go through {@link #toFrame}, in the same order.
     */
    public void frameLines(ByteBuf chunk, LineConsumer out) {
        framer.feed(chunk, listener(out));
    }

    /**
     * Instead of {@link #frameLines}, for a relay that needs no frames: hands on the chunk's
     * complete lines in runs (see {@link LineFramer#feedRuns}); lines over the limit are
     * discarded, counted and logged as by {@link #frameLines}. No sequence numbers are used. The
     * two can take turns on one stream. Takes ownership of {@code chunk}.
     */
    public void frameRuns(ByteBuf chunk, Consumer<ByteBuf> out) {
        Objects.requireNonNull(out, "out");
        framer.feedRuns(chunk, new LineFramer.RunListener() {
            @Override
            public void onRun(ByteBuf lines) {
                out.accept(lines);
            }

            @Override
            public void onOversizedLine(long length) {
                reportOversized(length);
            }
        });
    }

    /** The first step of {@link #finish}: an unterminated last line, then what is held is released. */
    public void finishLines(LineConsumer out) {
        framer.finish(listener(out));
        framer.close();
    }

    /**
     * The second step of {@link #decode}: the frame of a line from {@link #frameLines}, with its
     * envelope sniffed and the next sequence number; takes ownership of {@code line}. Lines must
     * come in the order they were framed, from one thread at a time.
     */
    public Frame toFrame(ByteBuf line, int contentLength) {
        Envelope envelope;
        try {
            if (line.hasArray()) {
                int start = line.arrayOffset() + line.readerIndex();
                envelope = sniffer.sniff(line.array(), start, start + contentLength);
            } else {
                envelope = sniffer.sniff(line.slice(line.readerIndex(), contentLength));
            }
        } catch (RuntimeException e) {
            line.release();
            throw e;
        }
        return Frame.original(line, contentLength, envelope, direction(), sequence++);
    }

    /** Also tells {@code listener} the length of each line discarded for being over the limit. */
    public LineFrameDecoder onOversized(LongConsumer listener) {
        this.onOversized = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /** How many lines were discarded for being over the limit. */
    public long oversizedLines() {
        return oversizedLines;
    }

    /** How many frames were decoded. */
    public long frames() {
        return sequence;
    }

    private LineFramer.Listener listener(LineConsumer out) {
        return new LineFramer.Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                out.accept(line, contentLength);
            }

            @Override
            public void onOversizedLine(long length) {
                reportOversized(length);
            }
        };
    }

    private void reportOversized(long length) {
        oversizedLines++;
        onOversized.accept(length);
        log.warn("{}: discarded a line of {} bytes, over the limit of {} bytes; relaying goes on",
                direction().arrow(), length, framer.maxLineLength());
    }

    @Override
    protected void closeFramer() {
        framer.close();
    }
}
