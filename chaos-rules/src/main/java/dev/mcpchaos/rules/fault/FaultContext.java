package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * What a {@link Fault} can see and do for the one message it was given. A new context for each
 * message a rule injects into; usable later (from a scheduled task) until the message is ended.
 *
 * <p>All methods are called on the chain's executor ({@link #executor()}), never concurrently.
 */
public interface FaultContext {

    /**
     * The interceptor context of the chain the message travels through, as this fault may use it:
     * what reaches a peer through it ({@code emit}, {@code forward}, the {@link #connection()}'s
     * actions) publishes this injection's event first.
     */
    InterceptorContext interceptor();

    /** The transport the message travels on. */
    default TransportKind transport() {
        return interceptor().transport();
    }

    /** The executor of the chain; prefer {@link #schedule}, which also handles shutdown. */
    default EventExecutor executor() {
        return interceptor().executor();
    }

    /** The allocator for new buffers. */
    default ByteBufAllocator alloc() {
        return interceptor().alloc();
    }

    /**
     * The connection, for faults that close or kill. Each action that always acts (close a side,
     * kill the server, stall a response) publishes this injection's event before it acts; one that
     * may decline (the HTTP ones that return whether they will) publishes it as soon as it is
     * accepted. So say what is done ({@link #detail}) before acting.
     */
    default ConnectionControl connection() {
        return interceptor().connection();
    }

    /**
     * The random source of this injection, derived from the run's seed, the rule and how many
     * times the rule injected before: the same seed and traffic give the same draws.
     */
    SplittableRandom random();

    /**
     * Says what was done, for the fault event and the log, such as {@code held 512ms}: before the
     * fault's first action, which publishes the event.
     *
     * @throws IllegalStateException when the event was already published
     */
    void detail(String text);

    /**
     * Hands the frame (or its replacement) on: the next rules that match apply, then it leaves in
     * its place in the direction's order. Ends this fault's part.
     */
    void proceed(Frame frame);

    /**
     * Writes an extra frame in this message's place in the direction's order, before whatever
     * proceeds later (a stray line before the message, a duplicate, a piece of a throttled message).
     */
    void output(Frame frame);

    /** Sends a frame back to the sender at once (an error answering a request). */
    void answer(Frame reply);

    /** Drops the frame (releases it) and ends the message: nothing more leaves in its place. */
    void drop(Frame frame);

    /**
     * Hands the frame on untouched because this fault has nothing to do to it (a message already
     * shorter than the cut, a patch whose {@code test} fails): the injection did not happen. It
     * does not count as injected and does not use up the rule's {@code times}, no
     * {@link dev.mcpchaos.rules.FaultEvent} is published, and a line on the {@code faults} logger
     * says why. The next rules that match then apply, as after {@link #proceed}.
     *
     * <p>Only instead of acting: a fault that has {@link #output output} or {@link #answer
     * answered} has done something, and calling this then throws (the frame still goes on).
     *
     * @param reason what there was nothing to do about, such as
     *               {@code message of 36 B is not longer than 1024 B}
     */
    void nothingToDo(Frame frame, String reason);

    /** Ends the message without a frame: what was {@link #output} so far is all that leaves. */
    void end();

    /**
     * Publishes this injection's {@link dev.mcpchaos.rules.FaultEvent} now. Every action through
     * this context ({@link #proceed}, {@link #output}, {@link #answer}, the {@link #connection()}'s
     * and {@link #http()}'s actions) already publishes it before anything reaches a peer, so a
     * fault needs this only for an effect outside this context: {@code reorder}, whose full window
     * releases the messages held before this one through their own contexts. After this,
     * {@link #detail} may not be called and {@link #nothingToDo} may not be called; the call that
     * ends the message ({@link #drop}, {@link #proceed}...) publishes nothing more.
     */
    void announce();

    /**
     * Takes this message out of the direction's order, so later messages no longer wait for it
     * (for faults whose job is to reorder). Call before {@link #output} or {@link #proceed}.
     */
    void detach();

    /**
     * Runs {@code task} when this message's turn to leave has come: once every message before it
     * in its direction has left (at once when none waits, or when this one has
     * {@link #detach detached}). For faults that pace what they write ({@code throttle}), so the
     * pace starts when the message can leave, not while it waits behind another.
     */
    void onTurn(Runnable task);

    /**
     * Runs {@code task} on the chain's executor after {@code delay}. If the executor no longer
     * takes tasks (the proxy is shutting down), the task runs at once so frames are not lost.
     */
    void schedule(Duration delay, Runnable task);

    /**
     * State this rule keeps for the current session (a reorder window): made by {@code initial}
     * on first use, then the same object for every message of the session.
     */
    <T> T sessionState(Supplier<T> initial);

    /**
     * The HTTP actions of the transport, or null when it provides none (on stdio always null). An
     * action that is accepted publishes this injection's event before it returns.
     */
    HttpFaultActions http();
}
