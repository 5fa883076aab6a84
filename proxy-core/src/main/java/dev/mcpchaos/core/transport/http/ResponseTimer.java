package dev.mcpchaos.core.transport.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The response timeout (to the response head) and the response body timeout (between two
 * pieces of a body that is not SSE) of one client connection. It tracks the exchange waiting,
 * and until when (on the event loop's ticker, the clock its scheduled tasks keep). One timer
 * task per connection serves every exchange on it: starting a wait only moves the deadline, and
 * the task, when it fires early, sleeps on until the deadline. A task per request (and its
 * cancellation) was a sixth of the proxy's sampled allocation per request. The task is
 * cancelled when the connection closes ({@link #cancel}): it holds the handler, and with it the
 * connection. On the connection's event loop.
 */
final class ResponseTimer {

    private final ChannelHandlerContext ctx;
    /** Whether the client connection takes nothing written to it now: the upstream is not read meanwhile. */
    private final BooleanSupplier clientUnwritable;
    private Exchange awaiting;
    private long deadline;
    /** The wait {@link #deadline} was set for, in nanoseconds. */
    private long wait;
    private ScheduledFuture<?> task;
    /** When {@link #task} is due, on the loop's ticker. */
    private long taskDue;

    ResponseTimer(ChannelHandlerContext ctx, BooleanSupplier clientUnwritable) {
        this.ctx = ctx;
        this.clientUnwritable = clientUnwritable;
    }

    /** {@code exchange} waits for the upstream: it hears {@link Exchange#onResponseTimeout} unless stopped within the timeout. */
    void start(Exchange exchange, long timeoutMillis) {
        awaiting = exchange;
        wait = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        deadline = ctx.executor().ticker().nanoTime() + wait;
        if (task != null && deadline - taskDue < 0) {
            // A shorter deadline than the one the task sleeps to (the body timeout after the
            // response timeout): the task must wake up sooner.
            task.cancel(false);
            task = null;
        }
        if (task == null && ctx.channel().isActive()) {
            taskDue = deadline;
            task = ctx.executor().schedule(this::check, timeoutMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** The exchange got its response head, or ended. */
    void stop(Exchange exchange) {
        if (awaiting == exchange) {
            awaiting = null;
        }
    }

    /** The connection closed: the task goes with it. */
    void cancel() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
        awaiting = null;
    }

    private void check() {
        task = null;
        Exchange exchange = awaiting;
        if (exchange == null) {
            return;
        }
        long now = ctx.executor().ticker().nanoTime();
        if (clientUnwritable.getAsBoolean()) {
            // The upstream is not read while the client takes nothing (see channelWritabilityChanged):
            // its silence is the client's doing, which the send timeout judges. The wait starts over.
            deadline = now + wait;
        }
        long left = deadline - now;
        if (left > 0) { // a later request moved the deadline since this task was scheduled
            taskDue = deadline;
            task = ctx.executor().schedule(this::check, left, TimeUnit.NANOSECONDS);
            return;
        }
        awaiting = null;
        exchange.onResponseTimeout();
    }
}
