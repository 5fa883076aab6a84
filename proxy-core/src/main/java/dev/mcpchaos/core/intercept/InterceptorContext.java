package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;

/**
 * What a {@link FrameInterceptor} can see and do. One context per interceptor and chain, reused
 * for every frame: it holds no per-frame state.
 */
public interface InterceptorContext {

    /** The session the frames belong to. */
    Session session();

    /** The transport the frames travel on. */
    TransportKind transport();

    /**
     * The executor the chain runs on; schedule delays here. Tests drive it with virtual time. Its
     * {@link EventExecutor#ticker() ticker} is the chain's clock, the one
     * {@link Frame#answeredRequestArrivalNanos()} is read on.
     */
    EventExecutor executor();

    /** The allocator to make new frames' buffers with. */
    ByteBufAllocator alloc();

    /** Hands a frame on to the next interceptor, or out of the proxy after the last one. */
    void forward(Frame frame);

    /**
     * Sends a frame straight out in its own direction, skipping the interceptors after this one
     * (they are only told, through {@link FrameInterceptor#onEmitted}).
     */
    void emit(Frame frame);

    /** Drops a frame: it goes nowhere and is released. */
    void drop(Frame frame);

    /** The connection the frames belong to, for faults that close or kill. */
    ConnectionControl connection();
}
