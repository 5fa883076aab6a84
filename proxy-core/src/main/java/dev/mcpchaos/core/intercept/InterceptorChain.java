package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs frames of one session through its interceptors, in order, and then out through the sink
 * of each frame's direction. The session's {@link dev.mcpchaos.core.session.Correlator} sees each
 * frame before the first interceptor, so rules can match responses by the request they answer and
 * interceptors can time a request to its response, on the executor's {@link EventExecutor#ticker()}.
 *
 * <p>Everything happens on one {@link EventExecutor}: calls from other threads hop onto it.
 * With no interceptors, or none that {@link FrameInterceptor#inspects inspects} the frame's
 * direction now, a frame goes from {@link #process} straight to its sink, untouched and not
 * correlated.
 */
public final class InterceptorChain {

    private static final Logger log = LoggerFactory.getLogger(InterceptorChain.class);

    private final Session session;
    private final TransportKind transport;
    private final EventExecutor executor;
    private final ByteBufAllocator alloc;
    private final ConnectionControl connection;
    private final FrameSink toServer;
    private final FrameSink toClient;
    private final Position[] positions;
    private boolean inBatch;
    /** Frames are being {@link #observe observed}: forwarding or dropping one ends its visit to an interceptor. */
    private boolean observing;

    /**
     * @param interceptors run in this order for both directions
     * @param toServer where client-to-server frames leave
     * @param toClient where server-to-client frames leave
     */
    public InterceptorChain(List<? extends FrameInterceptor> interceptors, Session session, TransportKind transport,
                            EventExecutor executor, ByteBufAllocator alloc, ConnectionControl connection,
                            FrameSink toServer, FrameSink toClient) {
        this.session = Objects.requireNonNull(session, "session");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.executor = Objects.requireNonNull(executor, "executor");
        this.alloc = Objects.requireNonNull(alloc, "alloc");
        this.connection = Objects.requireNonNull(connection, "connection");
        this.toServer = Objects.requireNonNull(toServer, "toServer");
        this.toClient = Objects.requireNonNull(toClient, "toClient");
        positions = new Position[interceptors.size()];
        for (int i = 0; i < positions.length; i++) {
            FrameInterceptor interceptor = interceptors.get(i);
            if (interceptor == null) { // a chain is made per HTTP request: no message built unless needed
                throw new NullPointerException("interceptors[" + i + "]");
            }
            positions[i] = new Position(i, interceptor);
        }
    }

    public Session session() {
        return session;
    }

    public EventExecutor executor() {
        return executor;
    }

    /**
     * Whether any interceptor of this chain {@link FrameInterceptor#inspects inspects} frames of
     * {@code direction} now. When none does, a transport may relay that direction's bytes without
     * making frames of them. Thread-safe.
     */
    public boolean inspects(Direction direction) {
        for (Position position : positions) {
            if (position.interceptor.inspects(transport, direction)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether every interceptor of this chain that {@link #inspects inspects} frames of
     * {@code direction} now only {@link FrameInterceptor#onlyObserves observes} them (true when
     * none inspects them). A transport may then relay that direction's bytes as they come and
     * hand the frames it makes of them to {@link #observe} instead of {@link #process}.
     * Thread-safe.
     */
    public boolean onlyObserves(Direction direction) {
        for (Position position : positions) {
            FrameInterceptor interceptor = position.interceptor;
            if (interceptor.inspects(transport, direction) && !interceptor.onlyObserves(transport, direction)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether any interceptor of this chain {@link FrameInterceptor#holdsLeadingEvents holds} an
     * SSE stream's leading message-less events for its first message now. Thread-safe.
     */
    public boolean holdsLeadingEvents() {
        for (Position position : positions) {
            if (position.interceptor.holdsLeadingEvents(transport)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Shows frames whose bytes the transport relays itself (see {@link #onlyObserves}) to the
     * interceptors that inspect and only observe their direction, in order: each frame is
     * correlated, shown to them, then released; none reaches a sink. An interceptor that inspects
     * but no longer only observes (a rule added since the transport asked) does not see these
     * frames: their bytes are already on their way, so the change applies from the next event.
     * Takes ownership of the frames.
     */
    public void observe(List<Frame> frames) {
        if (!executor.inEventLoop()) {
            List<Frame> owned = frames;
            for (int i = 0; i < frames.size(); i++) {
                if (frames.get(i).isLent()) {
                    owned = ownedCopies(frames); // lent bytes do not outlive this call
                    break;
                }
            }
            List<Frame> hopping = owned;
            try {
                executor.execute(() -> observe(hopping));
            } catch (RejectedExecutionException e) {
                if (hopping != frames) {
                    for (int i = 0; i < hopping.size(); i++) {
                        if (frames.get(i).isLent()) {
                            hopping.get(i).release(); // ours; the caller releases the rest
                        }
                    }
                }
                throw e;
            }
            return;
        }
        observing = true;
        try {
            for (Frame frame : frames) {
                try {
                    look(frame);
                } finally {
                    frame.release();
                }
            }
        } finally {
            observing = false;
        }
    }

    /**
     * Shows one frame to the observers as {@link #observe(List)} does. A {@link Frame#isLent lent}
     * frame is the caller's: on the executor it is shown before this call returns and not released;
     * called from another thread, it is made {@link Frame#toOwned owned} first (its bytes retained,
     * not copied) and shown there later. Any other frame is taken over, as by {@link #observe(List)}.
     * A transport that lends frames should call this on the executor: a hop per frame costs far
     * more than the reference counting lending saves.
     */
    public void observe(Frame frame) {
        if (!executor.inEventLoop()) {
            Frame owned = frame.isLent() ? frame.toOwned() : frame;
            try {
                executor.execute(() -> observe(owned));
            } catch (RejectedExecutionException e) {
                if (owned != frame) {
                    owned.release(); // ours; a frame taken over is the caller's to release
                }
                throw e;
            }
            return;
        }
        observing = true;
        try {
            look(frame);
        } finally {
            observing = false;
            if (!frame.isLent()) {
                frame.release();
            }
        }
    }

    private static List<Frame> ownedCopies(List<Frame> frames) {
        List<Frame> owned = new ArrayList<>(frames.size());
        for (Frame frame : frames) {
            owned.add(frame.isLent() ? frame.toOwned() : frame);
        }
        return owned;
    }

    private void look(Frame frame) {
        Direction direction = frame.direction();
        if (!inspects(direction)) {
            return;
        }
        session.correlator().observe(frame, executor.ticker());
        for (Position position : positions) {
            FrameInterceptor interceptor = position.interceptor;
            if (interceptor.inspects(transport, direction) && interceptor.onlyObserves(transport, direction)) {
                try {
                    interceptor.onFrame(position, frame);
                } catch (Throwable t) {
                    log.error("interceptor {} failed on {}", interceptor, frame, t);
                }
            }
        }
    }

    /** Takes a frame just read off the wire: correlates it, then runs it through the chain. */
    public void process(Frame frame) {
        if (!executor.inEventLoop()) {
            executor.execute(() -> process(frame));
            return;
        }
        inBatch = true;
        try {
            enter(frame);
        } finally {
            inBatch = false;
            flushSinks();
        }
    }

    /**
     * Takes the frames read in one chunk, in order, and flushes the sinks once after the last:
     * the writers then send the chunk's frames together.
     */
    public void process(List<Frame> frames) {
        if (!executor.inEventLoop()) {
            executor.execute(() -> process(frames));
            return;
        }
        inBatch = true;
        try {
            for (Frame frame : frames) {
                try {
                    enter(frame);
                } catch (RuntimeException e) {
                    // A failing sink: this frame is lost, the rest of the batch still goes out.
                    log.error("could not pass on {}", frame, e);
                }
            }
        } finally {
            inBatch = false;
            flushSinks();
        }
    }

    /**
     * No more frames will be read in {@code direction}: runs {@code then} on the executor once
     * every interceptor has handed on the frames of that direction it holds (a message in a
     * latency, say), first to last, or when {@code timeout} has passed, whichever comes first.
     * A transport calls it before closing the other side, so held messages are not cut off.
     */
    public void endInput(Direction direction, Duration timeout, Runnable then) {
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(then, "then");
        if (!executor.inEventLoop()) {
            try {
                executor.execute(() -> endInput(direction, timeout, then));
            } catch (RejectedExecutionException e) {
                then.run(); // shutting down: nothing is left to wait for
            }
            return;
        }
        InputEnd once = new InputEnd(then);
        try {
            once.timer = executor.schedule(() -> {
                if (!once.ran) {
                    log.debug("{}: frames still held {} after the input ended; going on without them",
                            direction.arrow(), timeout);
                    once.run();
                }
            }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            once.run(); // shutting down: nothing will leave any more
            return;
        }
        endInputFrom(0, direction, once);
    }

    /** Runs its action once: when the interceptors are done, or at the timeout. */
    private static final class InputEnd implements Runnable {
        private final Runnable then;
        private ScheduledFuture<?> timer;
        private boolean ran;

        InputEnd(Runnable then) {
            this.then = then;
        }

        @Override
        public void run() {
            if (ran) {
                return;
            }
            ran = true;
            if (timer != null) {
                timer.cancel(false);
            }
            then.run();
        }
    }

    private void endInputFrom(int index, Direction direction, Runnable then) {
        if (index >= positions.length) {
            then.run();
            return;
        }
        Position position = positions[index];
        Runnable next = () -> {
            if (executor.inEventLoop()) {
                endInputFrom(index + 1, direction, then);
            } else {
                executor.execute(() -> endInputFrom(index + 1, direction, then));
            }
        };
        try {
            position.interceptor.onInputEnd(position, direction, next);
        } catch (RuntimeException e) {
            log.error("interceptor {} failed on the end of the input; going on", position.interceptor, e);
            next.run();
        }
    }

    /**
     * The transport will read no more frames of {@code route} in {@code direction}: runs
     * {@code then} on the executor once every interceptor, first to last, has handed on the frames
     * of that route it holds (see {@link FrameInterceptor#onRouteEnd}). Frames of the route given
     * to {@link #process} before this call are in the chain's hands by then, so the end follows
     * them the way a message follows the one before it. There is no timeout: a fault may hold a
     * message as long as its rule says, and a transport that gives up on a route (its client went
     * away) still calls this, so what interceptors keep for the route is let go.
     */
    public void endRoute(Object route, Direction direction, Runnable then) {
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(then, "then");
        if (!executor.inEventLoop()) {
            try {
                executor.execute(() -> endRoute(route, direction, then));
            } catch (RejectedExecutionException e) {
                then.run(); // shutting down: nothing will leave any more
            }
            return;
        }
        endRouteFrom(0, route, direction, then);
    }

    private void endRouteFrom(int index, Object route, Direction direction, Runnable then) {
        if (index >= positions.length) {
            then.run();
            return;
        }
        Position position = positions[index];
        boolean[] once = new boolean[1];
        Runnable next = () -> {
            if (once[0]) {
                return; // an interceptor that says it is done twice must not end the route twice
            }
            once[0] = true;
            if (executor.inEventLoop()) {
                endRouteFrom(index + 1, route, direction, then);
            } else {
                executor.execute(() -> endRouteFrom(index + 1, route, direction, then));
            }
        };
        try {
            position.interceptor.onRouteEnd(position, direction, route, next);
        } catch (RuntimeException e) {
            log.error("interceptor {} failed on the end of {}; going on", position.interceptor, route, e);
            next.run();
        }
    }

    /** A frame read off the wire enters the chain, or skips it when nothing would look at it. */
    private void enter(Frame frame) {
        if (!inspects(frame.direction())) {
            write(frame);
            return;
        }
        session.correlator().observe(frame, executor.ticker());
        dispatch(0, frame);
    }

    private void flushSinks() {
        toServer.flush();
        toClient.flush();
    }

    private void dispatch(int index, Frame frame) {
        if (index >= positions.length) {
            write(frame);
            return;
        }
        Position position = positions[index];
        position.handled = false;
        try {
            position.interceptor.onFrame(position, frame);
        } catch (Throwable t) {
            if (!position.handled && frame.refCnt() > 0) {
                log.error("interceptor {} failed on {}; forwarding the frame unchanged", position.interceptor, frame, t);
                dispatch(index + 1, frame);
            } else {
                log.error("interceptor {} failed on {}", position.interceptor, frame, t);
            }
        }
    }

    /** A frame the interceptor at {@code from} emitted: those after it are told, then it is written. */
    private void emitted(int from, Frame frame) {
        for (int i = from + 1; i < positions.length; i++) {
            Position position = positions[i];
            try {
                position.interceptor.onEmitted(position, frame);
            } catch (RuntimeException e) {
                log.error("interceptor {} failed on an emitted {}; writing it all the same", position.interceptor,
                        frame, e);
            }
        }
        write(frame);
    }

    /** Writes out; a frame leaving outside a batch (a delayed one) is flushed at once. */
    private void write(Frame frame) {
        FrameSink sink = sinkFor(frame.direction());
        sink.write(frame);
        if (!inBatch) {
            sink.flush();
        }
    }

    private FrameSink sinkFor(Direction direction) {
        return direction == Direction.CLIENT_TO_SERVER ? toServer : toClient;
    }

    /** The context of one interceptor in this chain. */
    private final class Position implements InterceptorContext {
        private final int index;
        private final FrameInterceptor interceptor;
        private boolean handled;

        Position(int index, FrameInterceptor interceptor) {
            this.index = index;
            this.interceptor = interceptor;
        }

        @Override
        public Session session() {
            return session;
        }

        @Override
        public TransportKind transport() {
            return transport;
        }

        @Override
        public EventExecutor executor() {
            return executor;
        }

        @Override
        public ByteBufAllocator alloc() {
            return alloc;
        }

        @Override
        public void forward(Frame frame) {
            handled = true;
            if (observing && executor.inEventLoop()) {
                return; // an observer's forward: the transport relays the bytes, observe() releases the frame
            }
            if (executor.inEventLoop()) {
                dispatch(index + 1, frame);
            } else {
                executor.execute(() -> dispatch(index + 1, frame));
            }
        }

        @Override
        public void emit(Frame frame) {
            if (executor.inEventLoop()) {
                emitted(index, frame);
            } else {
                executor.execute(() -> emitted(index, frame));
            }
        }

        @Override
        public void drop(Frame frame) {
            handled = true;
            if (observing && executor.inEventLoop()) {
                return; // an observer broke its promise; its bytes are relayed all the same
            }
            frame.release();
        }

        @Override
        public ConnectionControl connection() {
            return connection;
        }

        @Override
        public String toString() {
            return "InterceptorContext(" + index + ", " + interceptor + ')';
        }
    }
}
