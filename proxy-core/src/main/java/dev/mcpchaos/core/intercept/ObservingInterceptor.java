package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * An interceptor that only observes, on every transport and in both directions: it makes the
 * promise of {@link FrameInterceptor#onlyObserves} once and for all. Its {@link #onFrame} reads
 * what it needs (a count, a log line, a copy of what it records) and forwards every frame at
 * once, unchanged; it emits nothing, drops nothing, acts on no connection and keeps no reference
 * to a frame. Metrics, the event log, the traffic log, the recorder, the journal and the referee
 * are such observers.
 *
 * <p>An observer says what it reads in {@link #observe}; {@link #onFrame} then forwards the frame,
 * even when {@code observe} throws (an observer must never cost a message). One whose forwarding
 * is woven into what it records overrides {@link #onFrame} instead.
 */
public interface ObservingInterceptor extends FrameInterceptor {

    /** Always {@code true}: see the class comment. */
    @Override
    default boolean onlyObserves(TransportKind transport, Direction direction) {
        return true;
    }

    /**
     * Reads what this observer needs of {@code frame}, which it must not keep, change or release;
     * {@link #onFrame} forwards it afterwards. The default reads nothing.
     */
    default void observe(InterceptorContext ctx, Frame frame) {
    }

    /** {@link #observe}, then forwards the frame unchanged, whether or not {@code observe} threw. */
    @Override
    default void onFrame(InterceptorContext ctx, Frame frame) {
        try {
            observe(ctx, frame);
        } finally {
            ctx.forward(frame);
        }
    }
}
