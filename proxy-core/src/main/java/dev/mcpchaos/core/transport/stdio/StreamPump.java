package dev.mcpchaos.core.transport.stdio;

import dev.mcpchaos.core.codec.line.LineFrameDecoder;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorChain;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

/**
 * Reads one direction's pipe on a thread of its own (the JDK offers no non-blocking pipes),
 * frames what it reads into lines on that thread, and hands each chunk's lines to the chain's
 * event loop in one task, which sniffs them into frames and passes them on. Sniffing there, not
 * on the reader, lets reading and framing the next chunk overlap with sniffing this one: with
 * both on the reader it was the busiest thread of a one-way relay, the event loop nearly idle.
 *
 * <p>While no interceptor inspects the direction (no rules, no metrics, no event log), the lines
 * are not made into frames: each chunk's complete lines go to the writer in one run, as read
 * ({@link LineFrameDecoder#frameRuns}), and the line limit still holds. Once an interceptor
 * inspects the direction, framing line by line begins at the next chunk (the framer carries a
 * line in progress over), and the direction stays framed: frames may then be in the chain's
 * hands, and raw runs must not overtake them.
 *
 * <p>Backpressure, the HexDumpProxy way: the next chunk is read only when at most
 * {@link #MAX_CHUNKS_IN_FLIGHT} chunks wait for the event loop and the writer on the other side
 * is below its high-water mark. A slow reader downstream therefore slows the reads upstream
 * instead of filling memory.
 */
final class StreamPump implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(StreamPump.class);

    /**
     * Chunks read but not yet processed by the event loop: at most 1 MiB per direction, as much
     * as the writer's high-water mark. With 4, the reader, the event loop and the writer waited on
     * each other often enough that none of them was busy more than half the time.
     */
    static final int MAX_CHUNKS_IN_FLIGHT = 16;
    /** Bytes asked for per read; a pipe returns what it has, up to this. */
    static final int CHUNK_SIZE = 64 * 1024;

    private final InputStream in;
    private final LineFrameDecoder decoder;
    private final InterceptorChain chain;
    private final StreamWriter target;
    private final ByteBufAllocator alloc;
    private final Runnable onEnd;
    private final Semaphore inFlight = new Semaphore(MAX_CHUNKS_IN_FLIGHT);
    private final Thread thread;
    private volatile boolean stopped;
    private int expectedLines = 16;
    /** No interceptor has inspected this direction yet: lines go to the writer in runs, unframed. */
    private boolean relayingRuns = true;

    /**
     * @param target the writer this direction's frames end up in, for backpressure
     * @param onEnd run on the event loop after the last frame was processed
     */
    StreamPump(String name, InputStream in, LineFrameDecoder decoder, InterceptorChain chain, StreamWriter target,
               ByteBufAllocator alloc, Runnable onEnd) {
        this.in = in;
        this.decoder = decoder;
        this.chain = chain;
        this.target = target;
        this.alloc = alloc;
        this.onEnd = onEnd;
        // A FastThreadLocalThread, so the pooled allocator gives it a thread-local cache.
        this.thread = new DefaultThreadFactory("mcp-chaos-reader-" + name, true).newThread(this);
    }

    void start() {
        thread.start();
    }

    /** Stops after the current read; the stream is not closed here. */
    void stop() {
        stopped = true;
    }

    @Override
    public void run() {
        try {
            while (!stopped) {
                inFlight.acquire();
                target.awaitWritable();
                ByteBuf chunk = alloc.heapBuffer(CHUNK_SIZE);
                int n;
                try {
                    n = chunk.writeBytes(in, CHUNK_SIZE);
                } catch (IOException e) {
                    chunk.release();
                    inFlight.release();
                    if (!stopped) {
                        log.debug("{}: read failed: {}", decoder.direction().arrow(), e.toString());
                    }
                    break;
                }
                if (n < 0) {
                    chunk.release();
                    inFlight.release();
                    break;
                }
                relayingRuns = relayingRuns && !chain.inspects(decoder.direction());
                if (relayingRuns) {
                    if (!relayRuns(chunk)) {
                        break;
                    }
                    continue;
                }
                Lines lines = new Lines(expectedLines);
                decoder.frameLines(chunk, lines);
                expectedLines = Math.max(16, lines.count + (lines.count >> 2));
                try {
                    chain.executor().execute(() -> {
                        try {
                            chain.process(lines.toFrames(decoder));
                        } finally {
                            inFlight.release();
                        }
                    });
                } catch (RejectedExecutionException e) {
                    lines.release();
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.error("{}: reader failed", decoder.direction().arrow(), e);
        } finally {
            Lines last = new Lines(1);
            decoder.finishLines(last);
            try {
                chain.executor().execute(() -> {
                    try {
                        chain.process(last.toFrames(decoder));
                    } finally {
                        onEnd.run();
                    }
                });
            } catch (RejectedExecutionException e) {
                // The proxy already shut down: nobody is left to relay to.
                last.release();
            }
        }
    }

    /**
     * Hands the chunk's complete lines to the writer as they are, on the chain's executor (where
     * frames a fault of the other direction emits into the same writer are written too); false
     * when the executor is gone.
     */
    private boolean relayRuns(ByteBuf chunk) {
        List<ByteBuf> runs = new ArrayList<>(2);
        decoder.frameRuns(chunk, runs::add);
        if (runs.isEmpty()) {
            inFlight.release();
            return true;
        }
        try {
            chain.executor().execute(() -> {
                try {
                    for (ByteBuf run : runs) {
                        // A run of lines is no message: a blank envelope, and no sequence number.
                        target.write(Frame.original(run, run.readableBytes(), Envelope.blank(), decoder.direction(), -1));
                    }
                    target.flush();
                } finally {
                    inFlight.release();
                }
            });
        } catch (RejectedExecutionException e) {
            runs.forEach(ByteBuf::release);
            return false;
        }
        return true;
    }

    /** One chunk's lines, framed on the reader thread, to be sniffed on the event loop. */
    private static final class Lines implements LineFrameDecoder.LineConsumer {
        private ByteBuf[] lines;
        private int[] contentLengths;
        private int count;

        Lines(int expected) {
            lines = new ByteBuf[expected];
            contentLengths = new int[expected];
        }

        @Override
        public void accept(ByteBuf line, int contentLength) {
            if (count == lines.length) {
                lines = Arrays.copyOf(lines, count * 2);
                contentLengths = Arrays.copyOf(contentLengths, count * 2);
            }
            lines[count] = line;
            contentLengths[count++] = contentLength;
        }

        /** The frames, in order; the lines are theirs now (released here if sniffing fails). */
        List<Frame> toFrames(LineFrameDecoder decoder) {
            List<Frame> frames = new ArrayList<>(count);
            int i = 0;
            try {
                for (; i < count; i++) {
                    frames.add(decoder.toFrame(lines[i], contentLengths[i]));
                }
            } catch (RuntimeException e) {
                for (int j = i + 1; j < count; j++) {
                    lines[j].release(); // toFrame released lines[i]
                }
                frames.forEach(Frame::release);
                throw e;
            }
            return frames;
        }

        void release() {
            for (int i = 0; i < count; i++) {
                lines[i].release();
            }
        }
    }
}
