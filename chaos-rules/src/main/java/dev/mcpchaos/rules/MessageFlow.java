package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;

import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * One message on its way through the rules: which rule it is at, and the frames it has produced
 * that wait for their turn to leave (see {@link DirectionOutput}).
 */
final class MessageFlow {

    private final RuleEngine engine;
    /** The rules this message met first; it keeps them even when the rules change meanwhile. */
    private final RuleEngine.RuleTable rules;
    private final InterceptorContext ctx;
    private final DirectionOutput out;
    private final RuleEngine.SessionState session;
    // The message as it arrived: rules match on this even after a fault rewrote the frame.
    private final Envelope envelope;
    private final String method;
    private final String tool;
    /** The route the message arrived on (an HTTP exchange), or null; its end waits for this message. */
    private final Object route;
    private ArrayDeque<Frame> ready;
    /** What a fault runs when this message's turn comes ({@link #onTurn}); null when nothing waits for it. */
    private Runnable onTurn;
    private boolean complete;
    private boolean detached;

    MessageFlow(RuleEngine engine, RuleEngine.RuleTable rules, InterceptorContext ctx, DirectionOutput out,
                RuleEngine.SessionState session, Frame arrived) {
        this.engine = engine;
        this.rules = rules;
        this.ctx = ctx;
        this.out = out;
        this.session = session;
        this.envelope = arrived.envelope();
        this.method = arrived.method();
        this.tool = arrived.toolName();
        this.route = arrived.route();
    }

    /** Applies the rules from index {@code from} on; when none is left, the frame leaves. */
    void run(int from, Frame frame) {
        int i = rules.firstMatch(from, ctx.transport(), frame, envelope, method, tool, engine.ticker());
        while (i >= 0) {
            ActiveRule rule = rules.rule(i);
            SplittableRandom random = rule.decide();
            if (random != null) {
                new Injection(engine, this, rule, i + 1, random, frame).start(frame);
                return;
            }
            i = rules.firstMatch(i + 1, ctx.transport(), frame, envelope, method, tool, engine.ticker());
        }
        output(frame);
        end();
    }

    /** A frame that leaves in this message's place, when its turn comes. */
    void output(Frame frame) {
        if (detached) {
            ctx.forward(frame);
            return;
        }
        if (ready == null) {
            ready = new ArrayDeque<>(2);
        }
        ready.addLast(frame);
        out.drain();
    }

    /** Nothing more will leave in this message's place. */
    void end() {
        if (detached) {
            if (!complete) {
                complete = true;
                out.detachedEnded(this);
            }
            return;
        }
        complete = true;
        out.drain();
    }

    /** Leaves the line: later messages stop waiting for this one, and its frames go out as they come. */
    void detach() {
        if (detached) {
            return;
        }
        detached = true;
        forwardReady();
        out.remove(this);
    }

    /** Runs {@code task} when every message before this one has left: now, or from the drain that gets here. */
    void onTurn(Runnable task) {
        if (onTurn != null) {
            throw new IllegalStateException("a task already waits for this message's turn");
        }
        onTurn = task;
        if (detached) {
            forwardReady();
        } else {
            out.drain(); // forwards this message's frames, and runs the task, if it is at the front
        }
    }

    /** Called only when nothing before this message is left (at the front, or detached). */
    void forwardReady() {
        if (onTurn != null) {
            Runnable task = onTurn;
            onTurn = null;
            task.run();
        }
        if (ready != null) {
            for (Frame frame = ready.pollFirst(); frame != null; frame = ready.pollFirst()) {
                ctx.forward(frame);
            }
        }
    }

    boolean isComplete() {
        return complete;
    }

    InterceptorContext ctx() {
        return ctx;
    }

    Envelope envelope() {
        return envelope;
    }

    String method() {
        return method;
    }

    String tool() {
        return tool;
    }

    Object route() {
        return route;
    }

    RuleEngine.SessionState session() {
        return session;
    }
}
