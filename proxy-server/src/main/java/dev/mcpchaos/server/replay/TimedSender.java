package dev.mcpchaos.server.replay;

import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Sends the messages of one reply at their delays after the client message's arrival: what is due
 * goes at once on the caller's thread, the rest from one scheduler thread, one message after the
 * other in list order (so a reply's order is the recorded one). Nothing waits on the caller's
 * thread: a stdin reader or an HTTP handler goes on at once. The scheduler's thread is a daemon
 * and ends after {@value #IDLE_SECONDS} s without work, so a replay needs no closing.
 */
final class TimedSender {

    static final int IDLE_SECONDS = 10;

    private final ScheduledThreadPoolExecutor scheduler;

    TimedSender() {
        scheduler = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "mcp-chaos-replay-timing");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.setKeepAliveTime(IDLE_SECONDS, TimeUnit.SECONDS);
        scheduler.allowCoreThreadTimeOut(true);
    }

    /**
     * Sends {@code outs} to {@code sink} at {@code arrivalNanos} ({@link System#nanoTime()}) plus
     * each one's delay; then {@code done} gets null, or the failure that stopped it (the sink's).
     */
    void send(List<Responder.Out> outs, long arrivalNanos, Consumer<Responder.Out> sink, Consumer<RuntimeException> done) {
        step(outs, 0, arrivalNanos, sink, done);
    }

    private void step(List<Responder.Out> outs, int from, long arrivalNanos, Consumer<Responder.Out> sink,
                      Consumer<RuntimeException> done) {
        int i = from;
        try {
            while (i < outs.size()) {
                long wait = arrivalNanos + outs.get(i).delayNanos() - System.nanoTime();
                if (wait > 0) {
                    int next = i;
                    scheduler.schedule(() -> step(outs, next, arrivalNanos, sink, done), wait, TimeUnit.NANOSECONDS);
                    return;
                }
                sink.accept(outs.get(i++));
            }
        } catch (RuntimeException e) {
            done.accept(e);
            return;
        }
        done.accept(null);
    }
}
