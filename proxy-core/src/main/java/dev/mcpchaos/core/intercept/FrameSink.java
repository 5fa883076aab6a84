package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Frame;

/**
 * Where frames leave the proxy: a transport's writer for one direction. Takes ownership.
 *
 * <p>Frames written in one go (a chunk's worth) are followed by one {@link #flush()}, so a sink
 * can write them with one system call instead of one each.
 */
@FunctionalInterface
public interface FrameSink {

    /** Queues the frame to be written; released once written. Called on the chain's executor. */
    void write(Frame frame);

    /** Sends on what was written since the last flush. */
    default void flush() {
    }
}
