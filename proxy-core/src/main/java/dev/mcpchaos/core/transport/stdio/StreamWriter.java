package dev.mcpchaos.core.transport.stdio;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameSink;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Writes frames to a blocking stream (a pipe) on a thread of its own, so the event loop never
 * blocks on a slow reader. Frames are written in the order given; an original frame is written
 * as its exact wire bytes, a synthesized one as its content and {@code \n}. The stream is flushed
 * whenever the queue runs empty, so each line leaves as soon as nothing else is waiting behind it.
 *
 * <p>Backpressure: {@link #awaitWritable()} blocks the caller (a reader thread, never the event
 * loop) while more than {@code highWaterMark} bytes wait to be written.
 */
final class StreamWriter implements FrameSink {

    private static final Logger log = LoggerFactory.getLogger(StreamWriter.class);
    private static final byte[] LF = {'\n'};
    /** Bytes written between two reports to a reader waiting for room. */
    private static final long PROGRESS_BYTES = 64 * 1024;

    private final String name;
    private final OutputStream out;
    private final long highWaterMark;
    private final Consumer<IOException> onFailure;
    private final ArrayDeque<Frame> queue = new ArrayDeque<>();
    private final ArrayList<Frame> unflushed = new ArrayList<>();
    private long unflushedBytes;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Thread thread;
    private long queuedBytes;
    private boolean closeRequested;
    private boolean stopped;
    private long written;

    /**
     * @param name a label for the thread and logs
     * @param onFailure told once when writing fails (the reader went away)
     */
    StreamWriter(String name, OutputStream out, long highWaterMark, Consumer<IOException> onFailure) {
        this.name = name;
        this.out = new BufferedOutputStream(out, 64 * 1024);
        this.highWaterMark = highWaterMark;
        this.onFailure = onFailure;
        this.thread = new DefaultThreadFactory("mcp-chaos-writer-" + name, true).newThread(this::run);
    }

    void start() {
        thread.start();
    }

    /** Collects frames until {@link #flush()}; only the chain's executor calls it, so no lock. */
    @Override
    public void write(Frame frame) {
        unflushed.add(frame);
        unflushedBytes += sizeOf(frame);
    }

    /** Hands the collected frames to the writer thread at once. */
    @Override
    public void flush() {
        if (unflushed.isEmpty()) {
            return;
        }
        synchronized (this) {
            if (!stopped && !closeRequested) {
                queue.addAll(unflushed);
                queuedBytes += unflushedBytes;
                unflushed.clear();
                unflushedBytes = 0;
                notifyAll();
                return;
            }
        }
        unflushed.forEach(Frame::release);
        unflushed.clear();
        unflushedBytes = 0;
    }

    /** Blocks while too many bytes wait to be written; returns at once after the writer stopped. */
    void awaitWritable() throws InterruptedException {
        synchronized (this) {
            while (queuedBytes > highWaterMark && !stopped) {
                wait();
            }
        }
    }

    /** Writes what is queued, then closes the stream. */
    CompletableFuture<Void> closeWhenDrained() {
        synchronized (this) {
            closeRequested = true;
            notifyAll();
        }
        return closed;
    }

    /** Closes the stream now; queued frames are released unwritten. */
    void closeNow() {
        synchronized (this) {
            stopped = true;
            notifyAll();
        }
    }

    /** Completes when the stream is closed, after draining or not. */
    CompletableFuture<Void> closed() {
        return closed;
    }

    /** Bytes written so far. */
    synchronized long bytesWritten() {
        return written;
    }

    private void run() {
        ArrayDeque<Frame> batch = new ArrayDeque<>();
        try {
            while (true) {
                synchronized (this) {
                    while (queue.isEmpty() && !stopped && !closeRequested) {
                        wait();
                    }
                    if (stopped || queue.isEmpty()) {
                        break; // closeNow(), or closeWhenDrained() with nothing left
                    }
                    batch.addAll(queue);
                    queue.clear();
                }
                long bytes = 0;
                try {
                    for (Frame frame = batch.poll(); frame != null; frame = batch.poll()) {
                        try {
                            bytes += writeFrame(frame);
                        } finally {
                            frame.release();
                        }
                        if (bytes >= PROGRESS_BYTES) {
                            // Let a waiting reader go on while the rest of a big batch is written,
                            // so reading and writing overlap instead of taking turns.
                            progress(bytes);
                            bytes = 0;
                        }
                    }
                    boolean idle;
                    synchronized (this) {
                        idle = queue.isEmpty();
                    }
                    if (idle) {
                        out.flush();
                    }
                } catch (IOException e) {
                    fail(e);
                    break;
                } finally {
                    progress(bytes);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            releaseAll(batch);
            synchronized (this) {
                stopped = true;
                releaseAll(queue);
                queuedBytes = 0;
                notifyAll();
            }
            try {
                out.close();
            } catch (IOException e) {
                log.debug("{}: close failed: {}", name, e.toString());
            }
            closed.complete(null);
        }
    }

    private void progress(long bytes) {
        synchronized (this) {
            queuedBytes -= bytes;
            written += bytes;
            notifyAll();
        }
    }

    private long writeFrame(Frame frame) throws IOException {
        if (frame.isOriginal()) {
            ByteBuf wire = frame.wire();
            wire.getBytes(wire.readerIndex(), out, wire.readableBytes());
            return wire.readableBytes();
        }
        ByteBuf content = frame.content();
        content.getBytes(content.readerIndex(), out, content.readableBytes());
        out.write(LF);
        return frame.contentLength() + 1L;
    }

    private void fail(IOException e) {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        log.debug("{}: write failed: {}", name, e.toString());
        onFailure.accept(e);
    }

    private static long sizeOf(Frame frame) {
        return frame.isOriginal() ? frame.wire().readableBytes() : frame.contentLength() + 1L;
    }

    private static void releaseAll(ArrayDeque<Frame> frames) {
        for (Frame frame = frames.poll(); frame != null; frame = frames.poll()) {
            frame.release();
        }
    }
}
