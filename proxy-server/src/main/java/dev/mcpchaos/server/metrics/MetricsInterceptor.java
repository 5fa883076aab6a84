package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Counts every message that passes ({@value ProxyMetrics#MESSAGES}, {@value ProxyMetrics#BYTES},
 * {@value ProxyMetrics#PARSE_ERRORS}) and times each request to its response
 * ({@value ProxyMetrics#REQUEST_DURATION}), then forwards the frame untouched. Blank lines are
 * not counted.
 *
 * <p>Thread-safe (on HTTP, sessions run on different event loops). The per-message path looks
 * meters up in caches made at construction or filled once per tag set, so it allocates nothing.
 *
 * <p>A request is timed from when the proxy read it to when its response (same session, opposite
 * direction, same id) reaches this interceptor, on the chain's clock
 * ({@code ctx.executor().ticker()}). The session's {@link dev.mcpchaos.core.session.Correlator} did the matching: it gives a response
 * the time its request was read ({@link Frame#answeredRequestArrivalNanos()}), so this interceptor
 * keeps no state of its own per request. What the correlator forgets is not timed: a request whose
 * response never comes from the other side (a fault answered or dropped it), or one evicted because
 * too many waited. A fault's copies of a response carry its correlation, so this interceptor goes
 * first in the chain, before any fault, to time each request once.
 */
final class MetricsInterceptor implements ObservingInterceptor {

    private static final int TRANSPORTS = TransportKind.values().length;
    private static final int DIRECTIONS = Direction.values().length;
    private static final int KINDS = MessageKind.values().length;

    private final ProxyMetrics metrics;
    /** [transport][direction][kind]: method tag (or a known raw method) to counter. */
    private final ConcurrentHashMap<String, Counter>[][][] messages;
    /** [transport * DIRECTIONS + direction]. */
    private final AtomicReferenceArray<Counter> bytes = new AtomicReferenceArray<>(TRANSPORTS * DIRECTIONS);
    private final AtomicReferenceArray<Counter> parseErrors = new AtomicReferenceArray<>(TRANSPORTS * DIRECTIONS);
    /** [transport]: method tag to timer. */
    private final ConcurrentHashMap<String, Timer>[] timers;

    @SuppressWarnings("unchecked")
    MetricsInterceptor(ProxyMetrics metrics) {
        this.metrics = metrics;
        messages = new ConcurrentHashMap[TRANSPORTS][DIRECTIONS][KINDS];
        for (int t = 0; t < TRANSPORTS; t++) {
            for (int d = 0; d < DIRECTIONS; d++) {
                for (int k = 0; k < KINDS; k++) {
                    messages[t][d][k] = new ConcurrentHashMap<>();
                }
            }
        }
        timers = new ConcurrentHashMap[TRANSPORTS];
        for (int t = 0; t < TRANSPORTS; t++) {
            timers[t] = new ConcurrentHashMap<>();
        }
    }

    @Override
    public void observe(InterceptorContext ctx, Frame frame) {
        Envelope envelope = frame.envelope();
        MessageKind kind = envelope.kind();
        if (kind == MessageKind.BLANK) {
            return;
        }
        int t = ctx.transport().ordinal();
        int d = frame.direction().ordinal();
        String method = frame.method();
        messageCounter(t, d, kind.ordinal(), method).increment();
        slot(bytes, t, d, false).increment(frame.contentLength());
        if (kind == MessageKind.MALFORMED) {
            slot(parseErrors, t, d, true).increment();
        }
        long requestRead = frame.answeredRequestArrivalNanos(); // -1 unless a response matched to its request
        if (requestRead >= 0) {
            // The method is the answered request's (a response has none of its own).
            timer(t, method)
                    .record(ctx.executor().ticker().nanoTime() - requestRead, TimeUnit.NANOSECONDS);
        }
    }

    private Counter messageCounter(int t, int d, int k, String method) {
        ConcurrentHashMap<String, Counter> byMethod = messages[t][d][k];
        Counter counter = byMethod.get(lookupKey(method));
        if (counter == null) {
            // Only bounded keys go in: the known methods, "other" and "none".
            String tag = ProxyMetrics.methodTag(method);
            counter = byMethod.computeIfAbsent(tag, m -> metrics.messageCounter(t, d, k, m));
        }
        return counter;
    }

    private Counter slot(AtomicReferenceArray<Counter> counters, int t, int d, boolean parseError) {
        int i = t * DIRECTIONS + d;
        Counter counter = counters.get(i);
        if (counter == null) {
            // Registering twice returns the same meter: a race here is harmless.
            counter = parseError ? metrics.parseErrorCounter(t, d) : metrics.bytesCounter(t, d);
            counters.set(i, counter);
        }
        return counter;
    }

    private Timer timer(int t, String method) {
        Timer timer = timers[t].get(lookupKey(method));
        if (timer == null) { // once per tag set: computeIfAbsent's capturing lambda would allocate every time
            timer = timers[t].computeIfAbsent(ProxyMetrics.methodTag(method), m -> metrics.requestTimer(t, m));
        }
        return timer;
    }

    /**
     * The key a message's meter is looked up by: the method itself, which is its own tag when it
     * is a known one (the common case, found without {@link ProxyMetrics#methodTag}'s set lookup,
     * 2 % of a request's CPU), and misses otherwise. The maps hold tags only, so the one method
     * that would find another tag's meter, {@code "none"}, is looked up as {@code "other"}.
     */
    private static String lookupKey(String method) {
        if (method == null) {
            return ProxyMetrics.NONE;
        }
        return method.equals(ProxyMetrics.NONE) ? ProxyMetrics.OTHER : method;
    }

    @Override
    public String toString() {
        return "MetricsInterceptor";
    }
}
