package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.codec.sse.SseEvent;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One message that passed through the proxy, as it arrived, and what became of it. Holds no
 * content unless the journal was asked to keep it ({@link #message()}); a request's params are
 * known by their {@link #paramsFingerprint() fingerprint}.
 *
 * @param sequence the journal's number for this message, from 1, in arrival order
 * @param elapsed when it arrived, counted from the proxy's start
 * @param wallTime when it arrived, on the wall clock
 * @param session the session's id when the message arrived: {@code stdio}, the HTTP
 *                {@code Mcp-Session-Id}, or a provisional {@code http-N} before the server named
 *                the session (an {@code initialize})
 * @param transport {@code stdio} or {@code http}
 * @param direction which way it travelled
 * @param kind what it was: request, response, notification, error (or batch, other, malformed)
 * @param id its JSON-RPC id: Long, BigDecimal, String, or null when it has none
 * @param method its method, or for a response that of the request it answers; may be null
 * @param tool the tool of a {@code tools/call}, or of the request a response answers; may be null
 * @param requestId for {@code notifications/cancelled}: the {@code params.requestId} it cancels; else null
 * @param httpStatus on HTTP, the status a fault answered the exchange with (such as 503), else null
 * @param httpHeaders on HTTP, the headers that matter of that answer (such as {@code Retry-After}); for a
 *                    server's message on an SSE stream the client resumed, the {@code Last-Event-ID} of
 *                    the GET that resumed it ({@link #resumedAfter()}); may be empty
 * @param faults what each rule did to it, in the order they acted; empty when none touched it
 * @param delivered whether it (or its replacement) left the proxy towards its destination
 * @param paramsFingerprint for a request: a stable hash of its {@code params} (see
 *                          {@link ParamsFingerprint}); null otherwise or without params
 * @param writeFingerprint for a request: the same hash with the idempotency-key members of its
 *                         arguments left out ({@link ParamsFingerprint#isIdempotencyKeyField}),
 *                         so that a write sent again under a fresh key has the same one; when
 *                         given as null, {@code paramsFingerprint} (nothing to see through, or a
 *                         recorder that did not tell)
 * @param message the message's JSON text, only when the journal keeps content; else null
 * @param clientClosed for a client's request on HTTP: when (counted as {@code elapsed} is) the client
 *                     closed the exchange carrying it before the answer was written whole, the
 *                     2026-07-28 revision's way to cancel a request; null when it did not
 */
public record JournalEntry(long sequence, Duration elapsed, Instant wallTime, String session, String transport,
                           Direction direction, MessageKind kind, Object id, String method, String tool,
                           Object requestId, Integer httpStatus, Map<String, String> httpHeaders,
                           List<FaultAction> faults, boolean delivered, String paramsFingerprint,
                           String writeFingerprint, String message, Duration clientClosed) {

    /**
     * What one rule did to the message.
     *
     * @param rule the rule's name
     * @param fault the fault type, such as {@code drop}
     * @param detail what it did, such as {@code held 300ms} or {@code dropped}; may be empty
     */
    public record FaultAction(String rule, String fault, String detail) {
        public FaultAction {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(fault, "fault");
            detail = detail == null ? "" : detail;
        }

        @Override
        public String toString() {
            return fault + "(rule '" + rule + "')" + (detail.isEmpty() ? "" : ": " + detail);
        }
    }

    /** The request header a client resumes an SSE stream with, as {@link #httpHeaders()} names it. */
    public static final String LAST_EVENT_ID = SseEvent.LAST_EVENT_ID_HEADER;

    public JournalEntry {
        Objects.requireNonNull(elapsed, "elapsed");
        Objects.requireNonNull(wallTime, "wallTime");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(kind, "kind");
        if (id != null && !(id instanceof Long || id instanceof BigDecimal || id instanceof String)) {
            throw new IllegalArgumentException("id: " + id.getClass().getName() + " (expected: Long, BigDecimal, "
                    + "String or null)");
        }
        httpHeaders = httpHeaders == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(httpHeaders));
        faults = faults == null ? List.of() : List.copyOf(faults);
        writeFingerprint = writeFingerprint == null ? paramsFingerprint : writeFingerprint;
    }

    /** An entry whose client did not close its exchange early (the form of this record before {@code clientClosed}). */
    public JournalEntry(long sequence, Duration elapsed, Instant wallTime, String session, String transport,
                        Direction direction, MessageKind kind, Object id, String method, String tool,
                        Object requestId, Integer httpStatus, Map<String, String> httpHeaders,
                        List<FaultAction> faults, boolean delivered, String paramsFingerprint,
                        String writeFingerprint, String message) {
        this(sequence, elapsed, wallTime, session, transport, direction, kind, id, method, tool, requestId,
                httpStatus, httpHeaders, faults, delivered, paramsFingerprint, writeFingerprint, message, null);
    }

    /**
     * An entry without a write fingerprint of its own: it is {@code paramsFingerprint} (the form
     * of this record before the write fingerprint, kept for callers of it).
     */
    public JournalEntry(long sequence, Duration elapsed, Instant wallTime, String session, String transport,
                        Direction direction, MessageKind kind, Object id, String method, String tool,
                        Object requestId, Integer httpStatus, Map<String, String> httpHeaders,
                        List<FaultAction> faults, boolean delivered, String paramsFingerprint, String message) {
        this(sequence, elapsed, wallTime, session, transport, direction, kind, id, method, tool, requestId,
                httpStatus, httpHeaders, faults, delivered, paramsFingerprint, null, message);
    }

    /** Whether the client sent it. */
    public boolean fromClient() {
        return direction == Direction.CLIENT_TO_SERVER;
    }

    /** Whether it left the proxy towards the server: the client sent it and the server received it. */
    public boolean reachedServer() {
        return fromClient() && delivered;
    }

    /** Whether it left the proxy towards the client: the server sent it and the client received it. */
    public boolean reachedClient() {
        return !fromClient() && delivered;
    }

    /**
     * Whether this and {@code other} are requests of the same method and tool that asked the same
     * thing: the same {@link #writeFingerprint()}, so idempotency keys aside ({@code _meta} too).
     * False when either has no fingerprint.
     */
    public boolean sameArgumentsAs(JournalEntry other) {
        return other != null && kind == MessageKind.REQUEST && other.kind == MessageKind.REQUEST
                && writeFingerprint != null && writeFingerprint.equals(other.writeFingerprint)
                && Objects.equals(method, other.method) && Objects.equals(tool, other.tool);
    }

    /** Whether a rule with this fault type or this rule name acted on it. */
    public boolean hadFault(String faultOrRule) {
        for (FaultAction action : faults) {
            if (action.fault().equals(faultOrRule) || action.rule().equals(faultOrRule)) {
                return true;
            }
        }
        return false;
    }

    /**
     * For a server's message on an SSE stream the client resumed (a GET with {@code Last-Event-ID}),
     * the event id it resumed after; else null.
     */
    public String resumedAfter() {
        return fromClient() ? null : httpHeader(LAST_EVENT_ID);
    }

    /** A header of {@link #httpHeaders()}, by name in any case, or null. */
    public String httpHeader(String name) {
        for (Map.Entry<String, String> header : httpHeaders.entrySet()) {
            if (header.getKey().equalsIgnoreCase(name)) {
                return header.getValue();
            }
        }
        return null;
    }

    /** This entry with another sequence number; for journals that number what they are given. */
    public JournalEntry withSequence(long newSequence) {
        return new JournalEntry(newSequence, elapsed, wallTime, session, transport, direction, kind, id, method, tool,
                requestId, httpStatus, httpHeaders, faults, delivered, paramsFingerprint, writeFingerprint,
                message, clientClosed);
    }

    /** This entry with one more fault action. */
    public JournalEntry withFault(FaultAction action) {
        List<FaultAction> all = new ArrayList<>(faults.size() + 1);
        all.addAll(faults);
        all.add(Objects.requireNonNull(action, "action"));
        return new JournalEntry(sequence, elapsed, wallTime, session, transport, direction, kind, id, method, tool,
                requestId, httpStatus, httpHeaders, all, delivered, paramsFingerprint, writeFingerprint, message,
                clientClosed);
    }

    /** This entry marked delivered. */
    public JournalEntry withDelivered() {
        return delivered ? this : new JournalEntry(sequence, elapsed, wallTime, session, transport, direction, kind,
                id, method, tool, requestId, httpStatus, httpHeaders, faults, true, paramsFingerprint, writeFingerprint,
                message, clientClosed);
    }

    /**
     * This entry marked not delivered: the chain let it through, but the transport could not write
     * it, its client having gone (an HTTP client that closed its exchange while a fault held the
     * answer).
     */
    public JournalEntry withoutDelivery() {
        return !delivered ? this : new JournalEntry(sequence, elapsed, wallTime, session, transport, direction, kind,
                id, method, tool, requestId, httpStatus, httpHeaders, faults, false, paramsFingerprint,
                writeFingerprint, message, clientClosed);
    }

    /**
     * This request marked as one whose exchange its client closed at {@code when} (counted as
     * {@code elapsed} is), before the answer was written whole; the first close is kept.
     */
    public JournalEntry withClientClosed(Duration when) {
        return clientClosed != null ? this : new JournalEntry(sequence, elapsed, wallTime, session, transport,
                direction, kind, id, method, tool, requestId, httpStatus, httpHeaders, faults, delivered,
                paramsFingerprint, writeFingerprint, message, Objects.requireNonNull(when, "when"));
    }

    /** When the client closed this request's exchange early, on the wall clock; null when it did not. */
    public Instant clientClosedAt() {
        return clientClosed == null ? null : wallTime.plus(clientClosed.minus(elapsed));
    }

    /** This entry with the HTTP status (and headers that matter) a fault answered its exchange with. */
    public JournalEntry withHttp(int status, Map<String, String> headers) {
        return withHttpOf((Integer) status, headers);
    }

    /** This entry with {@code other}'s HTTP status and headers (none when it has none). */
    public JournalEntry withHttpOf(JournalEntry other) {
        return withHttpOf(other.httpStatus, other.httpHeaders);
    }

    private JournalEntry withHttpOf(Integer status, Map<String, String> headers) {
        return new JournalEntry(sequence, elapsed, wallTime, session, transport, direction, kind, id, method, tool,
                requestId, status, headers, faults, delivered, paramsFingerprint, writeFingerprint,
                message, clientClosed);
    }

    /**
     * One compact line, as failure messages show it:
     * {@code #7 +1.204s abc12 c->s request id=3 tools/call search params=1f2e3d4c5b6a7988 drop(rule 'lose'): dropped; not delivered}.
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(120);
        sb.append('#').append(sequence).append(' ')
                .append(String.format(Locale.ROOT, "+%.3fs", elapsed.toNanos() / 1e9)).append(' ')
                .append(session).append(' ').append(direction.arrow()).append(' ')
                .append(kind.name().toLowerCase(Locale.ROOT));
        if (id != null) {
            sb.append(" id=").append(id instanceof String ? "\"" + id + "\"" : id);
        }
        if (method != null) {
            sb.append(' ').append(method);
        }
        if (tool != null) {
            sb.append(' ').append(tool);
        }
        if (requestId != null) {
            sb.append(" requestId=").append(requestId instanceof String ? "\"" + requestId + "\"" : requestId);
        }
        if (paramsFingerprint != null) {
            sb.append(" params=").append(paramsFingerprint);
            if (!paramsFingerprint.equals(writeFingerprint)) {
                sb.append(" write=").append(writeFingerprint); // it carried an idempotency key
            }
        }
        if (httpStatus != null) {
            sb.append(" HTTP ").append(httpStatus);
        }
        httpHeaders.forEach((name, value) -> sb.append(' ').append(name).append(": ").append(value));
        for (FaultAction action : faults) {
            sb.append(' ').append(action);
            sb.append(';');
        }
        sb.append(delivered ? " delivered" : " not delivered");
        if (clientClosed != null) {
            sb.append(String.format(Locale.ROOT, "; the client closed its stream at +%.3fs",
                    clientClosed.toNanos() / 1e9));
        }
        return sb.toString();
    }
}
