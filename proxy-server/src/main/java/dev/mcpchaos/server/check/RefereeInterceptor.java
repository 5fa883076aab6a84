package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
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
 * sees messages as the peers sent them, before any rule. Its {@link #departures()} go after the
 * rules and tell the referee what reached each peer (a request a fault dropped or answered itself
 * never reached the server, which then owes it nothing), and its {@link #faults()} listener what
 * each rule did, in the same queue, so the referee reads the three in the order they happened.
 *
 * <p>What it costs a message on the loop: one copy of its bytes into a string and a queue offer.
 * The queue holds at most {@value #MAX_QUEUED_CHARS} characters; beyond that messages are not
 * checked, and counted ({@link Referee.Report#dropped()}), so a slow check never grows the heap.
 */
public final class RefereeInterceptor implements ObservingInterceptor, AutoCloseable {

    /** How many characters of messages may wait for the referee. */
    static final long MAX_QUEUED_CHARS = 32L * 1024 * 1024;
    private static final Logger log = LoggerFactory.getLogger(RefereeInterceptor.class);

    private final Referee referee;
    private final ExecutorService worker;
    private final AtomicLong queued = new AtomicLong();
    private final long startNanos = System.nanoTime();
    private volatile boolean closed;
    private volatile boolean warnedDrop;

    private final Departures departures = new Departures();

    /** @param referee what the messages go to; it is told it watches a live proxy */
    public RefereeInterceptor(Referee referee) {
        this.referee = java.util.Objects.requireNonNull(referee, "referee");
        referee.watchesLiveProxy();
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

    /** The interceptor to put after the rules: what left the proxy towards each peer. */
    public FrameInterceptor departures() {
        return departures;
    }

    /** The rule engine's listener: what each rule did, queued behind the messages it acted on. */
    public dev.mcpchaos.rules.FaultListener faults() {
        return event -> {
            if (!closed) {
                enqueue(() -> referee.fault(event), 0);
            }
        };
    }

    /** Runs {@code task} on the referee's thread, in order with the messages; {@code chars} are released after. */
    private void enqueue(Runnable task, int chars) {
        try {
            worker.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.warn("check: the referee failed on a message: {}", e.toString());
                } finally {
                    if (chars > 0) {
                        queued.addAndGet(-chars);
                    }
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            if (chars > 0) {
                queued.addAndGet(-chars);
            }
        }
    }

    @Override
    public void observe(InterceptorContext ctx, Frame frame) {
        if (!closed && frame.envelope().kind() != MessageKind.BLANK) {
            hand(ctx, frame);
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
        // A server's message on a stream the client reopened with Last-Event-ID: the server may replay answers.
        boolean resumed = frame.direction() == Direction.SERVER_TO_CLIENT
                && frame.route() instanceof dev.mcpchaos.core.frame.HeaderSource source
                && source.requestHeader("last-event-id") != null;
        Referee.Message message = new Referee.Message(ctx.session(), ctx.session().id(), frame.direction(),
                -1, System.nanoTime() - startNanos, text, stdio, unterminated, mcpHeaders,
                exchange != null ? exchange::answeredStatus : null, resumed);
        enqueue(() -> referee.observe(message), length);
    }

    /**
     * Tells the referee a frame left towards its receiver. Only its envelope travels, unless the
     * referee must read it: a frame a fault changed or made, a batch or a broken one, a cancel
     * (which request it frees), an answer to initialize (the version the client got).
     */
    private void depart(InterceptorContext ctx, Frame frame) {
        MessageKind kind = frame.envelope().kind();
        if (closed || kind == MessageKind.BLANK) {
            return;
        }
        String method = frame.method();
        boolean read = !frame.isOriginal() || kind == MessageKind.BATCH || kind == MessageKind.MALFORMED
                || kind == MessageKind.OTHER || "notifications/cancelled".equals(method)
                || ("initialize".equals(method) && kind != MessageKind.REQUEST);
        if (kind == MessageKind.NOTIFICATION && !read) {
            return; // nothing the referee keeps depends on a plain notification reaching its peer
        }
        if (!read && kind != MessageKind.REQUEST) {
            return; // an unchanged answer: the referee judged it as the server sent it
        }
        int length = read ? frame.contentLength() : 0;
        if (length > 0 && queued.addAndGet(length) > MAX_QUEUED_CHARS) {
            queued.addAndGet(-length);
            return; // behind: the sent copy is what gets checked, and the drop is counted there
        }
        String text = read ? frame.content().toString(StandardCharsets.UTF_8) : null;
        Object session = ctx.session();
        Direction direction = frame.direction();
        long time = System.nanoTime() - startNanos;
        Object id = frame.envelope().hasId() ? frame.envelope().id() : null;
        String tool = frame.toolName();
        enqueue(() -> referee.delivered(session, direction, time, kind, id, method, tool, text), length);
    }

    /** What left the proxy: forwarded by the rules, or emitted by one of them. */
    private final class Departures implements ObservingInterceptor {
        @Override
        public void observe(InterceptorContext ctx, Frame frame) {
            depart(ctx, frame);
        }

        @Override
        public void onEmitted(InterceptorContext ctx, Frame frame) {
            depart(ctx, frame);
        }

        @Override
        public String toString() {
            return "RefereeInterceptor.departures";
        }
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
