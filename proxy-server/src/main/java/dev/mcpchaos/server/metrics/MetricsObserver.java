package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * Counts what the transports report: sessions ({@value ProxyMetrics#SESSIONS_ACTIVE}, and
 * {@value ProxyMetrics#SESSIONS_EXPIRED} for those the proxy forgot), limit
 * breaches ({@value ProxyMetrics#LIMIT_BREACHES}), upstream failures
 * ({@value ProxyMetrics#UPSTREAM_ERRORS}), client deadlines missed ({@value ProxyMetrics#CLIENT_TIMEOUTS}) and messages that could not be delivered
 * ({@value ProxyMetrics#MESSAGES_DISCARDED}). Thread-safe and non-blocking, as the transports require.
 */
final class MetricsObserver implements TransportObserver {

    private final ProxyMetrics metrics;

    MetricsObserver(ProxyMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void sessionStarted(TransportKind transport, String sessionId) {
        metrics.sessionsGauge(transport).incrementAndGet();
    }

    @Override
    public void sessionEnded(TransportKind transport, String sessionId) {
        metrics.sessionsGauge(transport).updateAndGet(n -> Math.max(0, n - 1));
    }

    @Override
    public void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
        metrics.sessionsGauge(transport).updateAndGet(n -> Math.max(0, n - 1));
        metrics.sessionsExpiredCounter(transport, reason).increment();
    }

    @Override
    public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
        // Rare: looking the counter up in the registry each time is fine.
        metrics.limitCounter(transport, limit).increment();
    }

    @Override
    public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
        metrics.upstreamCounter(transport, reason).increment();
    }

    @Override
    public void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
        metrics.clientTimeoutCounter(transport, deadline).increment();
    }

    @Override
    public void messageDiscarded(TransportKind transport, String sessionId, Direction direction, MessageKind kind,
                                 Object id, String method, DiscardReason reason) {
        metrics.discardedCounter(transport, direction, reason).increment();
    }
}
