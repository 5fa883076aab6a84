package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;

import java.util.LinkedHashMap;
import java.util.Map;
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
 * meters up in caches made at construction or filled once per tag set, so it allocates nothing
 * but a request's pending entry and a response's lookup key.
 *
 * <p>A request is timed from when it reaches this interceptor to when its response (same session,
 * opposite direction, same id) does. Requests still waiting are kept in a map of at most
 * {@value #MAX_PENDING}, the oldest dropped beyond: a request a fault answered or dropped never
 * gets a response from the other side, and is never timed.
 */
final class MetricsInterceptor implements FrameInterceptor {

    /** Most requests waiting for their response at once; the oldest are forgotten beyond. */
    static final int MAX_PENDING = 10_000;

    private static final int TRANSPORTS = TransportKind.values().length;
    private static final int DIRECTIONS = Direction.values().length;
    private static final int KINDS = MessageKind.values().length;

    private final ProxyMetrics metrics;
    private final Clock clock;
    /** [transport][direction][kind]: method tag (or a known raw method) to counter. */
    private final ConcurrentHashMap<String, Counter>[][][] messages;
    /** [transport * DIRECTIONS + direction]. */
    private final AtomicReferenceArray<Counter> bytes = new AtomicReferenceArray<>(TRANSPORTS * DIRECTIONS);
    private final AtomicReferenceArray<Counter> parseErrors = new AtomicReferenceArray<>(TRANSPORTS * DIRECTIONS);
    /** [transport]: method tag to timer. */
    private final ConcurrentHashMap<String, Timer>[] timers;
    private final Map<PendingKey, Pending> pending = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<PendingKey, Pending> eldest) {
            return size() > MAX_PENDING;
        }
    };

    @SuppressWarnings("unchecked")
    MetricsInterceptor(ProxyMetrics metrics, Clock clock) {
        this.metrics = metrics;
        this.clock = clock;
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
    public void onFrame(InterceptorContext ctx, Frame frame) {
        try {
            record(ctx, frame);
        } finally {
            ctx.forward(frame);
        }
    }

    private void record(InterceptorContext ctx, Frame frame) {
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
        } else if (kind == MessageKind.REQUEST) {
            Pending started = new Pending(clock.monotonicTime(), t, ProxyMetrics.methodTag(method));
            PendingKey key = new PendingKey(ctx.session(), frame.direction(), envelope.id());
            synchronized (pending) {
                pending.put(key, started);
            }
        } else if (kind == MessageKind.RESPONSE || kind == MessageKind.ERROR) {
            if (envelope.hasId()) {
                Pending started;
                PendingKey key = new PendingKey(ctx.session(), frame.direction().reverse(), envelope.id());
                synchronized (pending) {
                    started = pending.remove(key);
                }
                if (started != null) {
                    timer(started.transport, started.method)
                            .record(clock.monotonicTime() - started.nanos, TimeUnit.NANOSECONDS);
                }
            }
        }
    }

    private Counter messageCounter(int t, int d, int k, String method) {
        ConcurrentHashMap<String, Counter> byMethod = messages[t][d][k];
        String key = method == null ? ProxyMetrics.NONE : method;
        Counter counter = byMethod.get(key);
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
        return timers[t].computeIfAbsent(method, m -> metrics.requestTimer(t, m));
    }

    /** Requests waiting for a response; for tests. */
    int pendingCount() {
        synchronized (pending) {
            return pending.size();
        }
    }

    @Override
    public String toString() {
        return "MetricsInterceptor";
    }

    /** A request by session (identity), direction and JSON-RPC id. */
    private record PendingKey(Session session, Direction direction, Object id) {
    }

    private record Pending(long nanos, int transport, String method) {
    }
}
