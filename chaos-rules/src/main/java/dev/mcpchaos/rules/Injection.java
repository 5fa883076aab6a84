package dev.mcpchaos.rules;

import dev.mcpchaos.core.codec.jsonrpc.ArgumentsDigest;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.FaultContext;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One rule's fault applied to one message: the {@link FaultContext} the fault gets. Publishes
 * its {@link FaultEvent} at the fault's first action (or when {@code apply} returns), so that
 * events come out in the order the faults acted, with the detail the fault gave; publishes none
 * when the fault had {@linkplain #nothingToDo nothing to do}.
 *
 * <h2>The event before the action</h2>
 * A test reads the journal (a fault listener) as soon as its client has what a fault did, so the
 * event must reach the listeners before anything the fault does can reach a peer. Faults act
 * through this context only, and every way out goes through {@link #publish} first: the calls
 * that hand frames on ({@link #proceed}, {@link #output}, {@link #answer}), and the
 * {@link #interceptor() interceptor context}, {@link #connection() connection} and
 * {@link #http() HTTP actions} it hands out, which are wrappers that publish before they close a
 * side, kill the server, stall a response or emit a frame. A fault does not have to remember to
 * {@link #announce}.
 *
 * <p>The HTTP actions that may decline ({@code respondHttp}, {@code overrideContentType},
 * {@code expireSession}) cannot publish first: a declined action is no injection and must have no
 * event. They are reservations instead (see {@link HttpFaultActions}): the transport writes what
 * they reserved after the chain's current turn, and the wrapper publishes the moment one is
 * accepted, before the fault goes on. So a fault sets its {@link #detail} before it acts; after
 * the event is out, a detail would be lost, and {@link #detail} refuses it.
 */
final class Injection implements FaultContext {

    private static final Logger log = LoggerFactory.getLogger(Injection.class);
    /** The engine's fault log, where a fault that had nothing to do says so. */
    private static final Logger faultLog = LoggerFactory.getLogger("faults");

    private final RuleEngine engine;
    private final MessageFlow flow;
    private final ActiveRule rule;
    /** Where the message's walk through the rules goes on once this fault hands it on. */
    private final int nextRule;
    private final SplittableRandom random;
    // What the event says about the message, taken before the fault changes it.
    private final Direction direction;
    private final MessageKind kind;
    private final Object id;
    private final String method;
    private final String tool;
    private final String argumentsSha256;
    private String detail = "";
    private boolean published;
    private boolean ended;
    /** What the fault gets as {@link #interceptor()}; made on first use (most faults never ask). */
    private AnnouncingContext announcing;

    Injection(RuleEngine engine, MessageFlow flow, ActiveRule rule, int nextRule, SplittableRandom random,
              Frame frame) {
        this.engine = engine;
        this.flow = flow;
        this.rule = rule;
        this.nextRule = nextRule;
        this.random = random;
        // The event describes the message as it arrived, like the match does.
        this.direction = frame.direction();
        this.kind = flow.envelope().kind();
        this.id = flow.envelope().hasId() ? flow.envelope().id() : null;
        this.method = flow.method();
        this.tool = flow.tool();
        // Only requests and notifications carry params.arguments. Digested here, before the fault
        // can change or release the frame, and only for a message a fault is injected into: a
        // second pass over its bytes that the messages left alone never pay for.
        this.argumentsSha256 = kind == MessageKind.REQUEST || kind == MessageKind.NOTIFICATION
                ? ArgumentsDigest.sha256Hex(frame.content()) : null;
    }

    /** Runs the fault; one that throws before handing the message on is logged and skipped. */
    void start(Frame frame) {
        try {
            rule.fault().apply(this, frame);
        } catch (RuntimeException | Error e) {
            if (ended) {
                log.error("fault {} of rule '{}' failed after handling {}", rule.fault(), rule.rule().name(), frame, e);
                return;
            }
            log.error("fault {} of rule '{}' failed on {}; the message goes on unchanged", rule.fault(),
                    rule.rule().name(), frame, e);
            detail = "failed (" + e + "); unchanged";
            ended = true;
            publish();
            if (frame.refCnt() > 0) {
                flow.run(nextRule, frame);
            } else {
                flow.end();
            }
        } finally {
            publish();
        }
    }

    /**
     * The chain's context, wrapped so that what reaches a peer through it ({@code emit},
     * {@code forward}, the connection's actions) publishes this injection's event first.
     */
    @Override
    public InterceptorContext interceptor() {
        if (announcing == null) {
            announcing = new AnnouncingContext(flow.ctx());
        }
        return announcing;
    }

    @Override
    public ConnectionControl connection() {
        return interceptor().connection();
    }

    @Override
    public EventExecutor executor() {
        return flow.ctx().executor();
    }

    @Override
    public ByteBufAllocator alloc() {
        return flow.ctx().alloc();
    }

    @Override
    public TransportKind transport() {
        return flow.ctx().transport();
    }

    @Override
    public SplittableRandom random() {
        return random;
    }

    /**
     * @throws IllegalStateException once the event is out (the fault acted): the detail would be
     *         lost without a word, so a fault that says what it did after doing it fails in its tests
     */
    @Override
    public void detail(String text) {
        if (published) {
            throw new IllegalStateException("detail after the fault's event was published (rule '"
                    + rule.rule().name() + "', fault " + rule.fault().type() + "): '" + text
                    + "' (expected: detail before the fault's first action)");
        }
        detail = text == null ? "" : text;
    }

    @Override
    public void proceed(Frame frame) {
        endOnce("proceed", frame);
        publish();
        flow.run(nextRule, frame);
    }

    @Override
    public void output(Frame frame) {
        if (ended) {
            frame.release();
            throw new IllegalStateException("output after the message ended (rule '" + rule.rule().name() + "')");
        }
        publish();
        flow.output(frame);
    }

    @Override
    public void answer(Frame reply) {
        publish();
        flow.ctx().emit(reply);
    }

    @Override
    public void drop(Frame frame) {
        endOnce("drop", frame);
        publish();
        frame.release();
        flow.end();
    }

    @Override
    public void nothingToDo(Frame frame, String reason) {
        endOnce("nothingToDo", frame);
        if (published) {
            flow.run(nextRule, frame);
            throw new IllegalStateException("nothingToDo after the fault acted (rule '" + rule.rule().name()
                    + "', fault " + rule.fault().type() + "): " + reason);
        }
        published = true; // no event: nothing was injected
        rule.giveBack();
        if (faultLog.isInfoEnabled()) {
            FaultEvent unpublished = new FaultEvent(0, engine.uptime(), flow.ctx().session().id(), direction,
                    rule.rule().name(), rule.fault().type(), kind, id, method, tool, "nothing to do: " + reason,
                    argumentsSha256);
            faultLog.info("+{} {} {} (not injected)", String.format(Locale.ROOT, "%.3fs",
                    unpublished.time().toNanos() / 1e9), unpublished.session(), unpublished.decision());
        }
        flow.run(nextRule, frame);
    }

    @Override
    public void end() {
        endOnce("end", null);
        publish();
        flow.end();
    }

    @Override
    public void announce() {
        publish();
    }

    @Override
    public void detach() {
        flow.detach();
    }

    @Override
    public void onTurn(Runnable task) {
        flow.onTurn(guarded(task));
    }

    @Override
    public void schedule(Duration delay, Runnable task) {
        Runnable guarded = guarded(task);
        try {
            flow.ctx().executor().schedule(guarded, delay.toNanos(), TimeUnit.NANOSECONDS)
                    .addListener(future -> {
                        if (future.isCancelled()) {
                            // The executor shut down with the task pending: run it now so the
                            // frames it holds go on (to writers that release them) instead of leaking.
                            guarded.run();
                        }
                    });
        } catch (RejectedExecutionException e) {
            // Shutting down: do it now rather than lose (and leak) the frames the task holds.
            guarded.run();
        }
    }

    @Override
    public <T> T sessionState(Supplier<T> initial) {
        return flow.session().ruleState(rule, initial);
    }

    /** The engine's HTTP actions, wrapped so that an accepted one publishes the event at once; null on none. */
    @Override
    public HttpFaultActions http() {
        HttpFaultActions actions = engine.http();
        return actions == null ? null : new AnnouncingHttpActions(actions);
    }

    /** {@code task}, logging what it throws: it runs later, where nobody could handle that. */
    private Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                log.error("a delayed step of fault {} (rule '{}') failed", rule.fault(), rule.rule().name(), e);
            }
        };
    }

    private void endOnce(String action, Frame frame) {
        if (ended) {
            if (frame != null) {
                frame.release();
            }
            throw new IllegalStateException(action + " after the message was already handed on or ended (rule '"
                    + rule.rule().name() + "', fault " + rule.fault().type() + ')');
        }
        ended = true;
    }

    private void publish() {
        if (!published) {
            published = true;
            engine.publish(flow.ctx(), this);
        }
    }

    /**
     * The chain's context as a fault sees it: whatever reaches a peer through it publishes the
     * event first. Every method of {@link InterceptorContext} is written out here, so that one
     * added to it later does not slip past as a default (a test checks).
     */
    private final class AnnouncingContext implements InterceptorContext {
        private final InterceptorContext chain;
        private AnnouncingConnection connection;

        AnnouncingContext(InterceptorContext chain) {
            this.chain = chain;
        }

        @Override
        public Session session() {
            return chain.session();
        }

        @Override
        public TransportKind transport() {
            return chain.transport();
        }

        @Override
        public EventExecutor executor() {
            return chain.executor();
        }

        @Override
        public ByteBufAllocator alloc() {
            return chain.alloc();
        }

        @Override
        public void forward(Frame frame) {
            publish();
            chain.forward(frame);
        }

        @Override
        public void emit(Frame frame) {
            publish();
            chain.emit(frame);
        }

        @Override
        public void drop(Frame frame) {
            chain.drop(frame); // nothing reaches a peer
        }

        @Override
        public ConnectionControl connection() {
            if (connection == null) {
                connection = new AnnouncingConnection(chain.connection());
            }
            return connection;
        }
    }

    /**
     * The connection as a fault sees it. The actions that always act publish first; the HTTP
     * ones that may decline publish as soon as they are accepted (they are reservations: see
     * {@link HttpFaultActions}). Every method of {@link ConnectionControl} is written out here,
     * so that one added to it later does not slip past as a default (a test checks).
     */
    private final class AnnouncingConnection implements ConnectionControl {
        private final ConnectionControl connection;

        AnnouncingConnection(ConnectionControl connection) {
            this.connection = connection;
        }

        @Override
        public void closeClientSide(Frame at) {
            publish();
            connection.closeClientSide(at);
        }

        @Override
        public void closeServerSide(Frame at) {
            publish();
            connection.closeServerSide(at);
        }

        @Override
        public void terminateServer(Frame at) {
            publish();
            connection.terminateServer(at);
        }

        @Override
        public void killServer(Frame at) {
            publish();
            connection.killServer(at);
        }

        @Override
        public boolean respondHttp(Frame at, int status, Map<String, String> headers, ByteBuf body) {
            return accepted(connection.respondHttp(at, status, headers, body));
        }

        @Override
        public boolean overrideContentType(Frame at, String contentType) {
            return accepted(connection.overrideContentType(at, contentType));
        }

        @Override
        public boolean expireSession(Frame at) {
            return accepted(connection.expireSession(at));
        }

        @Override
        public void stallResponse(Frame at) {
            publish();
            connection.stallResponse(at);
        }

        @Override
        public boolean carriesOneMessage(Frame at) {
            return connection.carriesOneMessage(at); // a question: nothing happens
        }
    }

    /** The engine's HTTP actions as a fault sees them: an accepted one publishes the event before the fault goes on. */
    private final class AnnouncingHttpActions implements HttpFaultActions {
        private final HttpFaultActions actions;

        AnnouncingHttpActions(HttpFaultActions actions) {
            this.actions = actions;
        }

        @Override
        public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                               String body) {
            return accepted(actions.respond(ctx, frame, status, headers, body));
        }

        @Override
        public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
            return accepted(actions.overrideContentType(ctx, frame, contentType));
        }

        @Override
        public boolean expireSession(InterceptorContext ctx, Frame frame) {
            return accepted(actions.expireSession(ctx, frame));
        }
    }

    /** Publishes when a reservation was {@code accepted}; returns it. */
    private boolean accepted(boolean accepted) {
        if (accepted) {
            publish();
        }
        return accepted;
    }

    ActiveRule rule() {
        return rule;
    }

    Direction direction() {
        return direction;
    }

    MessageKind kind() {
        return kind;
    }

    Object id() {
        return id;
    }

    String method() {
        return method;
    }

    String tool() {
        return tool;
    }

    String argumentsSha256() {
        return argumentsSha256;
    }

    String detailText() {
        return detail;
    }
}
