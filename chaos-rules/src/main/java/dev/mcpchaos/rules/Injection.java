package dev.mcpchaos.rules;

import dev.mcpchaos.core.codec.jsonrpc.ArgumentsDigest;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.rules.fault.FaultContext;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One rule's fault applied to one message: the {@link FaultContext} the fault gets. Publishes
 * its {@link FaultEvent} at the fault's first action (or when {@code apply} returns), so that
 * events come out in the order the faults acted, with the detail the fault gave; publishes none
 * when the fault had {@linkplain #nothingToDo nothing to do}.
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

    @Override
    public InterceptorContext interceptor() {
        return flow.ctx();
    }

    @Override
    public SplittableRandom random() {
        return random;
    }

    @Override
    public void detail(String text) {
        if (!published) {
            detail = text == null ? "" : text;
        }
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
        interceptor().emit(reply);
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
            interceptor().executor().schedule(guarded, delay.toNanos(), TimeUnit.NANOSECONDS)
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

    @Override
    public HttpFaultActions http() {
        return engine.http();
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
