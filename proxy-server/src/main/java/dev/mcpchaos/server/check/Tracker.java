package dev.mcpchaos.server.check;

import dev.mcpchaos.rules.fault.FaultRegistry;
import dev.mcpchaos.rules.fault.FaultType;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The referee's bookkeeping: each session's state ({@link TrackedSession}), what reached each
 * peer (the departures), what the faults did, and what kind of traffic was seen; it parses each
 * message and hands it to the {@link CheckFamily}s at each step. Not thread-safe: the
 * {@link Referee} holds the lock.
 */
final class Tracker {

    /** The first revision without initialize: each request names its version in {@code _meta}. */
    static final String FIRST_SESSIONLESS_REVISION = "2026-07-28";
    private static final String META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
    static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    final long deadlineNanos;
    final SchemaChecker schemas = new SchemaChecker();
    final Findings findings = new Findings();
    private final Map<Object, TrackedSession> sessions = new LinkedHashMap<>(16, 0.75f, false);
    /** The proxy's journal, for the {@code client.*} checks; null: those are not made. */
    Supplier<JournalSnapshot> journal;
    /**
     * The last complete tools/list of a sessionless revision (2026-07-28), whatever request asked:
     * each request there is a session of its own, so a tools/call is judged by it.
     */
    Set<String> sessionlessTools;
    Map<String, ToolSchemas> sessionlessToolSchemas;
    long messages;
    long untracked;
    long dropped;
    /**
     * Whether the referee is told what left the proxy ({@link #delivered}): then a receiver owes
     * an answer only to what reached it. Offline (a cassette) what was sent is taken as received.
     */
    boolean tracksDelivery;
    /** Whether it watches a running proxy (live-only checks can run), rather than a cassette. */
    boolean live;
    /** Requests a fault kept from their receiver (dropped, or answered by the proxy itself). */
    long keptFromReceiver;
    /** Answers a server sent again on a resumed stream (the same answer to the same id). */
    long replayed;
    // What the traffic was, for the checks that could not run on it.
    boolean stdioSeen;
    boolean httpSeen;
    boolean sessionlessSeen;
    boolean sessionlessHttpSeen;
    boolean sessionfulHttpSeen;
    boolean modernToolsSeen;
    boolean anySeen;

    Tracker(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** Looks at one message (see {@link Referee#observe}). */
    void observe(Referee.Message message) {
        Referee.Message m = message;
        if (m.text().isBlank()) {
            return; // blank lines carry nothing; the framers skip them too
        }
        if (m.index() < 0) {
            m = new Referee.Message(m.sessionKey(), m.session(), m.direction(), messages, m.timeNanos(), m.text(),
                    m.stdioLine(), m.unterminated(), m.mcpHeaders(), m.answeredStatus(), m.resumed());
        }
        messages++;
        anySeen = true;
        TrackedSession s = session(m);
        s.name = m.session();
        if (m.stdioLine()) {
            s.stdio = true;
            stdioSeen = true;
        } else {
            httpSeen = true;
        }
        s.sweep(m.timeNanos());
        StdioChecks.unterminated(this, m);
        JsonNode json;
        try {
            json = JSON.readTree(m.text());
        } catch (JsonProcessingException e) {
            JsonRpcChecks.notJson(this, m, "not JSON: " + e.getOriginalMessage());
            return;
        }
        if (json == null || json.isMissingNode()) {
            JsonRpcChecks.notJson(this, m, "not JSON");
            return;
        }
        if (json.isArray()) {
            JsonRpcChecks.batch(this, m, json);
            for (JsonNode element : json) {
                JsonRpcChecks.envelope(this, s, m, element);
            }
            return;
        }
        if (!json.isObject()) {
            JsonRpcChecks.notAnObject(this, m, json);
            return;
        }
        JsonRpcChecks.envelope(this, s, m, json);
    }

    private TrackedSession session(Referee.Message m) {
        TrackedSession s = sessions.get(m.sessionKey());
        if (s == null) {
            // Live, another key for a session the referee knows by name (an HTTP session the proxy
            // answers on its own once a fault expired it): the same MCP session, the same state.
            // Offline a key is all there is: two cassettes may both hold a session named stdio.
            for (TrackedSession known : tracksDelivery ? sessions.values() : List.<TrackedSession>of()) {
                if (m.session().equals(known.name)) {
                    s = known;
                }
            }
            if (s == null) {
                if (sessions.size() >= Referee.MAX_SESSIONS) {
                    TrackedSession eldest = sessions.values().iterator().next();
                    sessions.values().removeIf(state -> state == eldest);
                    eldest.finish();
                }
                s = new TrackedSession(this);
            }
            sessions.put(m.sessionKey(), s);
        }
        return s;
    }

    /** Ends every session (see {@link Referee#finish()}). */
    void finish() {
        Set<TrackedSession> ended = Collections.newSetFromMap(new IdentityHashMap<>());
        for (TrackedSession s : sessions.values()) {
            if (ended.add(s)) {
                s.finish(); // once, however many keys it had
            }
        }
        sessions.clear();
    }

    /** Ends one session (see {@link Referee#finish(Object)}). */
    void finish(Object sessionKey) {
        TrackedSession s = sessions.get(sessionKey);
        if (s != null) {
            sessions.values().removeIf(state -> state == s);
            s.finish();
        }
    }

    /** A request, as its sender sent it. */
    void request(TrackedSession s, Referee.Message m, Object id, String method, JsonNode params) {
        Direction d = m.direction();
        boolean fromClient = d == Direction.CLIENT_TO_SERVER;
        for (CheckFamily family : CheckFamilies.ALL) {
            family.requestSent(this, s, m, id, method);
        }
        if (fromClient && !method.equals("initialize")) {
            clientWentOn(s, m, id, method);
        }
        String sessionless = fromClient ? sessionlessVersion(params) : null;
        if (sessionless != null) {
            s.spokenVersion = sessionless;
            sessionlessSeen = true;
            modernToolsSeen = true;
            if (m.mcpHeaders() != null) {
                sessionlessHttpSeen = true;
            }
        }
        String tool = method.equals("tools/call") && params != null ? text(params.get("name")) : null;
        boolean firstPage = params == null || params.get("cursor") == null || params.get("cursor").isNull();
        Pending p = new Pending(id, method, tool, firstPage, m);
        for (CheckFamily family : CheckFamilies.ALL) {
            family.request(this, s, m, p, params, sessionless);
        }
        if (fromClient && method.equals("initialize")) {
            s.initializeId = id;
            if (m.mcpHeaders() != null) {
                sessionfulHttpSeen = true;
            }
            s.requestedVersion = params != null ? text(params.get("protocolVersion")) : null;
            s.clientCapabilities = params != null ? params.get("capabilities") : null;
        }
        s.sent.get(d).put(id, p);
        if (!tracksDelivery) {
            s.deliver(d, p, m.timeNanos()); // offline: what was sent is taken as received
        }
    }

    private void clientWentOn(TrackedSession s, Referee.Message m, Object id, String method) {
        for (CheckFamily family : CheckFamilies.ALL) {
            family.clientWentOn(this, s, m, id, method);
        }
    }

    /** A notification, as its sender sent it. */
    void notification(TrackedSession s, Referee.Message m, String method, JsonNode params) {
        boolean fromClient = m.direction() == Direction.CLIENT_TO_SERVER;
        if (fromClient && method.equals("notifications/initialized")) {
            s.initializedNotified = true;
            clientWentOn(s, m, null, method);
        } else if (fromClient && m.mcpHeaders() != null) {
            clientWentOn(s, m, null, method);
        }
        if (method.equals("notifications/cancelled") && params != null) {
            Object cancelledId = idOf(params.get("requestId"));
            Pending p = s.sent.get(m.direction()).get(cancelledId);
            if (p == null) {
                p = s.late.get(m.direction()).get(cancelledId);
            }
            if (p != null && p.cancelSentAt < 0) {
                p.cancelSentAt = m.timeNanos();
            }
            if (!tracksDelivery) {
                s.cancelReached(m.direction(), cancelledId); // offline: sent is taken as received
            }
        }
        for (CheckFamily family : CheckFamilies.ALL) {
            family.notification(this, s, m, method, params);
        }
        if (!fromClient && method.equals("notifications/tools/list_changed")) {
            s.toolsChanged();
        }
    }

    /** A response (with an id that is not null), as its sender sent it. */
    void response(TrackedSession s, Referee.Message m, Object id, JsonNode error, JsonNode result) {
        Direction requestDirection = m.direction() == Direction.CLIENT_TO_SERVER ? Direction.SERVER_TO_CLIENT
                : Direction.CLIENT_TO_SERVER;
        Pending p = s.pending.get(requestDirection).get(id);
        if (p != null) {
            p.answers++;
            if (p.answers >= p.deliveries) {
                s.pending.get(requestDirection).remove(id);
            }
        } else {
            p = s.late.get(requestDirection).remove(id); // reported as late already; its content still counts
        }
        long textHash = ((long) m.text().hashCode() << 32) | (m.text().length() & 0xffffffffL);
        if (p == null) {
            Long before = s.answered.get(requestDirection).get(id);
            if (m.resumed() && before != null && before == textHash) {
                replayed++; // the server replays an answer on a resumed stream: what the client may have missed
                return;
            }
        } else {
            s.sent.get(requestDirection).remove(id);
            s.answered.get(requestDirection).put(id, textHash);
        }
        if (p != null && result != null && p.method.equals("initialize")) {
            s.initialized(result);
        }
        for (CheckFamily family : CheckFamilies.ALL) {
            family.response(this, s, m, id, p, error, result);
        }
    }

    /** What left the proxy (see {@link Referee#delivered}). */
    void delivered(Object sessionKey, Direction direction, long timeNanos, MessageKind kind, Object id, String method,
                   String tool, String text) {
        TrackedSession s = sessions.get(sessionKey);
        if (s == null) {
            return; // nothing of this session was sent: a message the proxy made on its own
        }
        if (text != null) {
            JsonNode json;
            try {
                json = JSON.readTree(text);
            } catch (JsonProcessingException e) {
                return; // a fault broke it: the receiver got no request, no cancel, no answer it could read
            }
            if (json != null && json.isArray()) {
                for (JsonNode element : json) {
                    deliveredMessage(s, direction, timeNanos, element, text);
                }
            } else if (json != null && json.isObject()) {
                deliveredMessage(s, direction, timeNanos, json, text);
            }
            return;
        }
        Object key = envelopeId(id);
        if (kind == MessageKind.REQUEST && key != null) {
            deliveredRequest(s, direction, timeNanos, key, method, tool, null, null);
        }
    }

    private void deliveredMessage(TrackedSession s, Direction direction, long timeNanos, JsonNode msg, String text) {
        if (!msg.isObject()) {
            return;
        }
        JsonNode idNode = msg.get("id");
        String method = text(msg.get("method"));
        JsonNode params = msg.get("params");
        if (method != null && idNode != null && (idNode.isTextual() || idNode.isIntegralNumber())) {
            String tool = method.equals("tools/call") && params != null ? text(params.get("name")) : null;
            deliveredRequest(s, direction, timeNanos, idOf(idNode), method, tool, params, text);
        } else if (method != null && idNode == null) {
            if (method.equals("notifications/cancelled") && params != null) {
                s.cancelReached(direction, idOf(params.get("requestId")));
            }
        } else if (method == null && direction == Direction.SERVER_TO_CLIENT && idNode != null && !idNode.isNull()) {
            JsonNode result = msg.get("result");
            if (s.initializeId != null && s.initializeId.equals(idOf(idNode)) && result != null && result.isObject()) {
                s.deliveredVersion = text(result.get("protocolVersion"));
                s.versionAcceptanceJudged = false;
            }
        }
    }

    /** A request reached its receiver: the sender's copy if it sent one, else one a fault made or changed. */
    private void deliveredRequest(TrackedSession s, Direction direction, long timeNanos, Object id, String method,
                                  String tool, JsonNode params, String text) {
        Pending p = s.sent.get(direction).get(id);
        if (p == null || (method != null && !method.equals(p.method))) {
            Pending late = s.late.get(direction).get(id);
            if (late != null && (method == null || method.equals(late.method))) {
                return; // a copy of a request already reported late
            }
            boolean firstPage = params == null || params.get("cursor") == null || params.get("cursor").isNull();
            p = new Pending(id, method != null ? method : "?", tool, firstPage, messages,
                    text != null ? text : "(a request the proxy made or changed)", null);
            s.sent.get(direction).put(id, p);
        }
        s.deliver(direction, p, timeNanos);
    }

    /** What a rule did (see {@link Referee#fault}). */
    void fault(FaultEvent event) {
        TrackedSession s = null;
        for (TrackedSession candidate : sessions.values()) {
            if (event.session().equals(candidate.name)) {
                s = candidate; // the newest of that name wins: names of ended HTTP sessions may return
            }
        }
        if (s == null) {
            return;
        }
        String rule = "'" + event.rule() + "' (" + event.fault() + ")";
        Object faultedId = envelopeId(event.id());
        Pending faulted = event.kind() == MessageKind.REQUEST && faultedId != null
                ? s.sent.get(event.direction()).get(faultedId) : null;
        if (faulted != null && faulted.faultedBy == null) {
            faulted.faultedBy = rule;
        }
        // What the fault does beyond its message is declared in its own file (FaultType.effect).
        switch (FaultRegistry.find(event.fault()).map(FaultType::effect).orElse(FaultType.Effect.NONE)) {
            case HOLDS -> {
                if (faulted != null && faulted.heldBy == null) {
                    faulted.heldBy = rule;
                }
            }
            case ENDS_CONNECTION -> s.connectionEnded(rule);
            default -> {
            }
        }
    }

    /** An id as the proxy's envelope gives it, in the form {@link #idOf} gives the same id from JSON. */
    static Object envelopeId(Object id) {
        if (id instanceof BigDecimal decimal) {
            if (decimal.scale() <= 0) {
                BigInteger integer = decimal.toBigIntegerExact();
                return integer.bitLength() < 64 ? (Object) integer.longValue() : integer;
            }
            return decimal.toString();
        }
        return id; // Long, String or null
    }

    static Object idOf(JsonNode id) {
        if (id == null || id.isNull()) {
            return null;
        }
        if (id.isTextual()) {
            return id.asText();
        }
        if (id.isIntegralNumber()) {
            return id.bigIntegerValue().bitLength() < 64 ? (Object) id.longValue() : id.bigIntegerValue();
        }
        return id.toString();
    }

    static String text(JsonNode node) {
        return node != null && node.isTextual() ? node.asText() : null;
    }

    /** The version a request of the sessionless revisions names in its {@code _meta}, or null. */
    private static String sessionlessVersion(JsonNode params) {
        JsonNode meta = params != null && params.isObject() ? params.get("_meta") : null;
        String version = meta != null && meta.isObject() ? text(meta.get(META_PROTOCOL_VERSION)) : null;
        return version != null && version.matches("\\d{4}-\\d{2}-\\d{2}")
                && version.compareTo(FIRST_SESSIONLESS_REVISION) >= 0 ? version : null;
    }

    /** The lower-case name of a JSON node's type, for messages. */
    static String typeName(JsonNode json) {
        return json.getNodeType().name().toLowerCase(Locale.ROOT);
    }
}
