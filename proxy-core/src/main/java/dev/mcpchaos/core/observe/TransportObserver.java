package dev.mcpchaos.core.observe;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * Told about what happens to connections and sessions, as opposed to messages (which
 * interceptors see): the metrics and the event log listen here. Every method has a no-op
 * default; implementations must be thread-safe and must not block (they are called on I/O
 * threads).
 */
public interface TransportObserver {

    /** An observer that ignores everything. */
    TransportObserver NONE = new TransportObserver() {
    };

    /** A session began: the stdio child started, or an HTTP server named a session. */
    default void sessionStarted(TransportKind transport, String sessionId) {
    }

    /**
     * A session ended: the stdio child exited, or an HTTP session was deleted, answered 404 by
     * the upstream, or expired by a fault. (One the proxy forgot is {@link #sessionExpired}.)
     */
    default void sessionEnded(TransportKind transport, String sessionId) {
    }

    /**
     * The proxy stopped keeping an HTTP session of its own accord: it was idle too long, or the
     * session table was full and it was the least recently used. The upstream was not told; a
     * later request with its id passes on as one of a session the proxy never saw. In place of
     * {@link #sessionEnded}, which this calls by default, so an observer that counts starts and
     * ends stays right without knowing about expiry.
     */
    default void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
        sessionEnded(transport, sessionId);
    }

    /** Why the proxy stopped keeping a session (see {@link #sessionExpired}). */
    enum SessionExpiry {
        /** No exchange of it was in flight, and none ended, for the session idle timeout. */
        IDLE,
        /** The table was full: a new session took the place of the least recently used one. */
        EVICTED;

        /** The name used in metrics and events, such as {@code idle}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * A limit was breached and the proxy answered as documented (discarded, 413, 431, 503).
     *
     * @param limit one of the {@link Limit} names
     * @param direction the direction of the offending data, or null when it has none (connections)
     * @param size the size that breached it, in bytes or connections; -1 when unknown
     */
    default void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
    }

    /** The upstream failed in the way {@code reason} says; {@code detail} is for humans. */
    default void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
    }

    /**
     * A message the interceptors let through, or a fault made, could not be delivered: its
     * client went away while a fault held it, or the response it belongs to had already ended
     * (a second answer to one HTTP request whose body carries one message). Every message read is
     * delivered, named by a fault event, or named here.
     *
     * @param sessionId the session, or null when the message had none
     * @param id the JSON-RPC id, or null
     * @param method the method, or for a response the method of the request it answers; null when unknown
     */
    default void messageDiscarded(TransportKind transport, String sessionId, Direction direction, MessageKind kind,
                                  Object id, String method, DiscardReason reason) {
    }

    /**
     * An HTTP client closed its connection while the exchange of its request {@code requestId} was
     * in flight: before the answer was written whole. The 2026-07-28 revision makes that the
     * request's cancellation (Streamable HTTP, "Cancellation").
     *
     * @param sessionId the exchange's session (a sessionless request's own), or null
     * @param requestId the JSON-RPC id of the exchange's request
     */
    default void exchangeAbandoned(TransportKind transport, String sessionId, Object requestId) {
    }

    /**
     * A client connection missed one of its deadlines and was answered 408 or closed, as
     * {@link ClientDeadline} says.
     */
    default void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
    }

    /**
     * A stdio server was still running {@code deadline} after its stdin closed, so the proxy sends
     * it SIGTERM (MCP's stdio shutdown: the server is expected to exit when its input ends).
     */
    default void serverExitOverdue(TransportKind transport, String sessionId, java.time.Duration deadline) {
    }

    /** The deadlines of a client connection (HTTP). */
    enum ClientDeadline {
        /** A request head did not end within the head timeout from its first byte: 408. */
        HEAD,
        /** A request body did not end within the body timeout, or fell under the minimum rate: 408. */
        BODY,
        /** The connection sat between requests for the idle timeout: closed. */
        IDLE,
        /** The client took nothing written to it for the send timeout: closed. */
        SEND;

        /** The name used in metrics and events, such as {@code head}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Why a message let through was not delivered. */
    enum DiscardReason {
        /** The client's connection closed before the message could be written to it. */
        CLIENT_GONE,
        /** The exchange had already been answered or ended: an HTTP JSON body carries one message. */
        RESPONSE_ENDED;

        /** The name used in metrics and events, such as {@code client_gone}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The limits a transport enforces. */
    enum Limit {
        LINE_LENGTH, SSE_EVENT_SIZE, REQUEST_BODY, HEADER_SIZE, CONNECTIONS,
        /** The bytes held for all clients at once (HTTP bodies being gathered) would pass their ceiling. */
        BUFFERED;

        /** The name used in metrics and events, such as {@code line_length}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** How an upstream can fail. */
    enum UpstreamFailure {
        /** Could not connect (refused, unresolvable, TLS handshake failed). */
        UNREACHABLE,
        /** Did not answer in time. */
        TIMEOUT,
        /** Closed the connection before or while answering. */
        CLOSED,
        /**
         * Sent a response that is not valid HTTP (a bad status line, a header block over the
         * limit, a broken chunk): answered 502 before the response began, cut after.
         */
        INVALID_RESPONSE,
        /** The stdio server could not be started. */
        START_FAILED;

        /** The name used in metrics and events, such as {@code unreachable}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
