package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * An interceptor that only observes, on every transport and in both directions: it makes the
 * promise of {@link FrameInterceptor#onlyObserves} once and for all. Its {@link #onFrame} reads
 * what it needs (a count, a log line, a copy of what it records) and forwards every frame at
 * once, unchanged; it emits nothing, drops nothing, acts on no connection and keeps no reference
 * to a frame. Metrics, the event log, the traffic log, the recorder, the journal and the referee
 * are such observers.
 */
public interface ObservingInterceptor extends FrameInterceptor {

    /** Always {@code true}: see the class comment. */
    @Override
    default boolean onlyObserves(TransportKind transport, Direction direction) {
        return true;
    }
}
