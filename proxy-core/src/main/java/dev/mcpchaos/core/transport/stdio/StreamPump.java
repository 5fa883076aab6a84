package dev.mcpchaos.core.transport.stdio;

import dev.mcpchaos.core.codec.line.LineFrameDecoder;
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
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

/**
 * Reads one direction's pipe on a thread of its own (the JDK offers no non-blocking pipes),
 * frames and sniffs what it reads on that thread, and hands each chunk's frames to the chain's
 * event loop in one task.
 *
 * <p>Backpressure, the HexDumpProxy way: the next chunk is read only when at most
 * {@link #MAX_CHUNKS_IN_FLIGHT} chunks wait for the event loop and the writer on the other side
 * is below its high-water mark. A slow reader downstream therefore slows the reads upstream
 * instead of filling memory.
 */
final class StreamPump implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(StreamPump.class);

    /** Chunks read but not yet processed by the event loop. */
    static final int MAX_CHUNKS_IN_FLIGHT = 4;
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
    private int expectedFrames = 16;

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
                // Sized for the chunk's frames, so the list is not regrown while they are added.
                List<Frame> frames = new ArrayList<>(Math.max(16, expectedFrames));
                decoder.decode(chunk, frames::add);
                expectedFrames = frames.size() + (frames.size() >> 2);
                try {
                    chain.executor().execute(() -> {
                        try {
                            chain.process(frames);
                        } finally {
                            inFlight.release();
                        }
                    });
                } catch (RejectedExecutionException e) {
                    frames.forEach(Frame::release);
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.error("{}: reader failed", decoder.direction().arrow(), e);
        } finally {
            List<Frame> last = new ArrayList<>(1);
            decoder.finish(last::add);
            try {
                chain.executor().execute(() -> {
                    chain.process(last);
                    onEnd.run();
                });
            } catch (RejectedExecutionException e) {
                // The proxy already shut down: nobody is left to relay to.
                last.forEach(Frame::release);
            }
        }
    }
}
