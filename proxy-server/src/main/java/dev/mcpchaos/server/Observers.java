package dev.mcpchaos.server;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;

/** Tells two transport observers (the metrics, the event log, the referee) the same things. */
final class Observers {

    private Observers() {
    }

    static TransportObserver both(TransportObserver first, TransportObserver second) {
        return new TransportObserver() {
            @Override
            public void sessionStarted(TransportKind transport, String sessionId) {
                first.sessionStarted(transport, sessionId);
                second.sessionStarted(transport, sessionId);
            }

            @Override
            public void sessionEnded(TransportKind transport, String sessionId) {
                first.sessionEnded(transport, sessionId);
                second.sessionEnded(transport, sessionId);
            }

            @Override
            public void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
                first.sessionExpired(transport, sessionId, reason);
                second.sessionExpired(transport, sessionId, reason);
            }

            @Override
            public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
                first.limitBreached(transport, limit, direction, size);
                second.limitBreached(transport, limit, direction, size);
            }

            @Override
            public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
                first.upstreamFailed(transport, reason, detail);
                second.upstreamFailed(transport, reason, detail);
            }

            @Override
            public void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
                first.clientTimedOut(transport, deadline);
                second.clientTimedOut(transport, deadline);
            }

            @Override
            public void serverExitOverdue(TransportKind transport, String sessionId, java.time.Duration deadline) {
                first.serverExitOverdue(transport, sessionId, deadline);
                second.serverExitOverdue(transport, sessionId, deadline);
            }

            @Override
            public void exchangeAbandoned(TransportKind transport, String sessionId, Object requestId) {
                first.exchangeAbandoned(transport, sessionId, requestId);
                second.exchangeAbandoned(transport, sessionId, requestId);
            }

            @Override
            public void messageDiscarded(TransportKind transport, String sessionId, Direction direction,
                                         MessageKind kind, Object id, String method, DiscardReason reason) {
                first.messageDiscarded(transport, sessionId, direction, kind, id, method, reason);
                second.messageDiscarded(transport, sessionId, direction, kind, id, method, reason);
            }
        };
    }
}
