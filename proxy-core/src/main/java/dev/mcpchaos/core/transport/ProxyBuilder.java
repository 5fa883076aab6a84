package dev.mcpchaos.core.transport;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the builders of both transports' proxies take alike: the interceptors, the executor they
 * run on, the buffer allocator and the observer. Each transport's builder adds its own settings
 * and says what its executor's default is.
 *
 * @param <B> the transport's builder, returned by each setter for chaining
 */
public abstract class ProxyBuilder<B extends ProxyBuilder<B>> {
    private final List<FrameInterceptor> interceptors = new ArrayList<>();
    private EventExecutor executor;
    /** Null until set: the pooled allocator is read only when the proxy starts (see {@link #alloc()}). */
    private ByteBufAllocator alloc;
    private TransportObserver observer = TransportObserver.NONE;

    /** Only the transports' builders extend it. */
    protected ProxyBuilder() {
    }

    /** This builder as its own type. */
    protected abstract B self();

    /** Adds an interceptor; they run in the order added. */
    public B interceptor(FrameInterceptor interceptor) {
        interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
        return self();
    }

    /**
     * The executor the interceptors run on (tests give one for virtual time); the default is the
     * transport's, as its builder says.
     */
    public B executor(EventExecutor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
        return self();
    }

    /** The buffer allocator; default: the pooled one. */
    public B alloc(ByteBufAllocator alloc) {
        this.alloc = Objects.requireNonNull(alloc, "alloc");
        return self();
    }

    /** Told about sessions, limit breaches and upstream failures (metrics, event log); default: nobody. */
    public B observer(TransportObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
        return self();
    }

    /** The interceptors added, in order (for the proxy being started). */
    public final List<FrameInterceptor> interceptors() {
        return List.copyOf(interceptors);
    }

    /** The executor given, or null for the transport's default. */
    public final EventExecutor executor() {
        return executor;
    }

    /**
     * The allocator given, else Netty's pooled one. Read when the proxy starts, not when the
     * builder is made: the pooled allocator's class initialization (Netty's platform checks and
     * arenas, tens of ms cold) then overlaps the stdio server's own start-up instead of delaying it.
     */
    public final ByteBufAllocator alloc() {
        return alloc != null ? alloc : PooledByteBufAllocator.DEFAULT;
    }

    /** The observer; {@link TransportObserver#NONE} unless one was given. */
    public final TransportObserver observer() {
        return observer;
    }
}
