package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Puts a {@link Referee} on a proxy's interceptor chain as an observer: it forwards every frame
 * at once, unchanged, and hands a copy of its text to a thread of its own, where the referee
 * parses and checks it, so the checks never hold an event loop. It goes first in the chain: it
 * sees messages as the peers sent them, before any rule.
 *
 * <p>What it costs a message on the loop: one copy of its bytes into a string and a queue offer.
 * The queue holds at most {@value #MAX_QUEUED_CHARS} characters; beyond that messages are not
 * checked, and counted ({@link Referee.Report#dropped()}), so a slow check never grows the heap.
 */
public final class RefereeInterceptor implements FrameInterceptor, AutoCloseable {

    /** How many characters of messages may wait for the referee. */
    static final long MAX_QUEUED_CHARS = 32L * 1024 * 1024;
    private static final Logger log = LoggerFactory.getLogger(RefereeInterceptor.class);

    private final Referee referee;
    private final ExecutorService worker;
    private final AtomicLong queued = new AtomicLong();
    private final long startNanos = System.nanoTime();
    private volatile boolean closed;
    private volatile boolean warnedDrop;

    /** @param referee what the messages go to */
    public RefereeInterceptor(Referee referee) {
        this.referee = java.util.Objects.requireNonNull(referee, "referee");
        ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "mcp-chaos-referee");
                    t.setDaemon(true);
                    return t;
                });
        this.worker = executor;
    }

    /** The referee it feeds. */
    public Referee referee() {
        return referee;
    }

    @Override
    public void onFrame(InterceptorContext ctx, Frame frame) {
        try {
            if (!closed && frame.envelope().kind() != MessageKind.BLANK) {
                hand(ctx, frame);
            }
        } finally {
            ctx.forward(frame);
        }
    }

    private void hand(InterceptorContext ctx, Frame frame) {
        boolean stdio = ctx.transport() == TransportKind.STDIO;
        int length = frame.contentLength();
        if (queued.addAndGet(length) > MAX_QUEUED_CHARS) {
            queued.addAndGet(-length);
            referee.dropped(1);
            if (!warnedDrop) {
                warnedDrop = true;
                log.warn("check: the referee is behind by {} characters; messages beyond that are not checked",
                        MAX_QUEUED_CHARS);
            }
            return;
        }
        String text = frame.content().toString(StandardCharsets.UTF_8);
        boolean unterminated = stdio && frame.direction() == Direction.SERVER_TO_CLIENT && frame.isOriginal()
                && frame.wire().readableBytes() == length;
        dev.mcpchaos.core.frame.HeaderSource exchange = frame.direction() == Direction.CLIENT_TO_SERVER
                && frame.route() instanceof dev.mcpchaos.core.frame.HeaderSource h ? h : null;
        java.util.Map<String, String> mcpHeaders = exchange != null
                ? Referee.Message.mcpHeaders(exchange.requestHeaders()) : null;
        if (mcpHeaders == null && !stdio && frame.direction() == Direction.CLIENT_TO_SERVER) {
            mcpHeaders = java.util.Map.of(); // an HTTP request without any: the checks say what is missing
        }
        Referee.Message message = new Referee.Message(ctx.session(), ctx.session().id(), frame.direction(),
                -1, System.nanoTime() - startNanos, text, stdio, unterminated, mcpHeaders,
                exchange != null ? exchange::answeredStatus : null);
        worker.execute(() -> {
            try {
                referee.observe(message);
            } catch (RuntimeException e) {
                log.warn("check: the referee failed on a message: {}", e.toString());
            } finally {
                queued.addAndGet(-length);
            }
        });
    }

    @Override
    public boolean onlyObserves(TransportKind transport, Direction direction) {
        return true;
    }

    /** Checks what is queued, then ends every session: what is still unanswered is reported. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        worker.shutdown();
        try {
            if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
                log.warn("check: the referee did not finish the queued messages in 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        referee.finish();
    }

    @Override
    public String toString() {
        return "RefereeInterceptor";
    }
}
