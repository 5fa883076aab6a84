package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The messages of one session and direction that the engine is working on, in arrival order.
 * Each leaves (its frames are forwarded) only when every message before it has left, so a held
 * message holds back those behind it. Used on the chain's executor only.
 */
final class DirectionOutput {

    private final RuleEngine engine;
    private final RuleEngine.SessionState session;
    private final ArrayDeque<MessageFlow> flows = new ArrayDeque<>();
    private boolean draining;
    private boolean drainAgain;
    /** Messages that left the line ({@link MessageFlow#detach}) but have not ended yet. */
    private int detachedOpen;
    private List<Runnable> whenIdle;

    DirectionOutput(RuleEngine engine, RuleEngine.SessionState session) {
        this.engine = engine;
        this.session = session;
    }

    boolean isEmpty() {
        return flows.isEmpty();
    }

    /** Takes a new message at the back of the line. */
    MessageFlow open(InterceptorContext ctx, Frame arrived, RuleEngine.RuleTable rules) {
        MessageFlow flow = new MessageFlow(engine, rules, ctx, this, session, arrived);
        flows.addLast(flow);
        engine.heldMessages().incrementAndGet();
        return flow;
    }

    /** Takes a message out of the line (it will leave on its own); the ones behind may go. */
    void remove(MessageFlow flow) {
        if (flows.remove(flow)) {
            engine.heldMessages().decrementAndGet();
            if (!flow.isComplete()) {
                detachedOpen++; // counted until it ends: its frames may still be on their way
            }
        }
        drain();
    }

    /** A message that had left the line ended: everything of it has been forwarded. */
    void detachedEnded() {
        detachedOpen--;
        runIfIdle();
    }

    /** Runs {@code action} as soon as no message of this direction is held: now, or later. */
    void whenIdle(Runnable action) {
        if (whenIdle == null) {
            whenIdle = new ArrayList<>(1);
        }
        whenIdle.add(action);
        runIfIdle();
    }

    private void runIfIdle() {
        if (whenIdle != null && flows.isEmpty() && detachedOpen == 0) {
            List<Runnable> actions = whenIdle;
            whenIdle = null;
            actions.forEach(Runnable::run);
        }
    }

    /** Forwards what can leave: the frames of the messages at the front, up to the first unfinished one. */
    void drain() {
        if (draining) {
            drainAgain = true; // a forward led back here: the loop below looks again
            return;
        }
        draining = true;
        try {
            do {
                drainAgain = false;
                MessageFlow head;
                while ((head = flows.peekFirst()) != null) {
                    head.forwardReady();
                    if (!head.isComplete()) {
                        break;
                    }
                    flows.pollFirst();
                    engine.heldMessages().decrementAndGet();
                }
            } while (drainAgain);
        } finally {
            draining = false;
        }
        runIfIdle();
    }
}
