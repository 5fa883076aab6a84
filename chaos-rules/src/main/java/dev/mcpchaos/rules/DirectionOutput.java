package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

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
    /**
     * Per route (an HTTP exchange), how many of its messages have not left yet, and what waits
     * for them all to have left (the end of the route, see {@link #whenRouteClear}). Only routes
     * with messages in the engine's hands are here.
     */
    private Map<Object, RouteState> routes;
    /** Route ends that became due while draining: run once the drain is over. */
    private List<Runnable> routeEndsDue;

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
        Object route = flow.route();
        if (route != null) {
            if (routes == null) {
                routes = new IdentityHashMap<>();
            }
            routes.computeIfAbsent(route, r -> new RouteState()).open++;
        }
        return flow;
    }

    /**
     * Runs {@code action} once every message of {@code route} this output holds has left (been
     * forwarded or dropped): now, or when the last of them leaves.
     */
    void whenRouteClear(Object route, Runnable action) {
        RouteState state = routes == null ? null : routes.get(route);
        if (state == null) {
            action.run();
            return;
        }
        if (state.whenClear == null) {
            state.whenClear = new ArrayList<>(1);
        }
        state.whenClear.add(action);
    }

    /** A message has left for good: all its frames were forwarded, or it was dropped. */
    private void left(MessageFlow flow) {
        Object route = flow.route();
        if (route == null || routes == null) {
            return;
        }
        RouteState state = routes.get(route);
        if (state == null || --state.open > 0) {
            return;
        }
        routes.remove(route);
        if (state.whenClear == null) {
            return;
        }
        if (draining) {
            if (routeEndsDue == null) {
                routeEndsDue = new ArrayList<>(1);
            }
            routeEndsDue.addAll(state.whenClear);
        } else {
            state.whenClear.forEach(Runnable::run);
        }
    }

    /** What the output knows of one route. */
    private static final class RouteState {
        int open;
        List<Runnable> whenClear;
    }

    /** Takes a message out of the line (it will leave on its own); the ones behind may go. */
    void remove(MessageFlow flow) {
        if (flows.remove(flow)) {
            engine.heldMessages().decrementAndGet();
            if (!flow.isComplete()) {
                detachedOpen++; // counted until it ends: its frames may still be on their way
            } else {
                left(flow);
            }
        }
        drain();
    }

    /** A message that had left the line ended: everything of it has been forwarded. */
    void detachedEnded(MessageFlow flow) {
        detachedOpen--;
        left(flow);
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
                    left(head);
                }
            } while (drainAgain);
        } finally {
            draining = false;
        }
        List<Runnable> due = routeEndsDue;
        if (due != null) {
            routeEndsDue = null;
            due.forEach(Runnable::run);
        }
        runIfIdle();
    }
}
