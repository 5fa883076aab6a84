package dev.mcpchaos.server.check;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.redact.SecretRedactor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Watches MCP messages in the order they passed and reports what breaks the protocol's contract
 * (the {@link Check}s), never changing a message. It is fed one message at a time, live by a
 * {@link RefereeInterceptor} on a proxy's chain or offline from a cassette
 * ({@link CassetteCheck}), and the same messages give the same violations either way.
 *
 * <p>Bounded: per session and direction at most {@value #MAX_IN_FLIGHT} requests in flight are
 * remembered (older ones are forgotten and counted as {@link Report#untracked() untracked}), at
 * most {@value #MAX_SESSIONS} sessions (the oldest is finished early), and at most
 * {@value #KEPT_PER_CHECK} violations kept per check, the rest only counted. Thread-safe (one
 * lock); the live interceptor feeds it from a thread of its own, off the event loops.
 */
public final class Referee {

    /** How many requests in flight per session and direction are remembered. */
    public static final int MAX_IN_FLIGHT = 10_000;
    /** How many sessions are followed at once. */
    public static final int MAX_SESSIONS = 1_024;
    /** How many violations of each check are kept in full. */
    public static final int KEPT_PER_CHECK = 20;
    /** How long an excerpt of an offending message is, at most. */
    public static final int EXCERPT_CHARS = 240;
    /** How long a request may wait for its answer by default. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);

    /** The MCP revisions published (and the one this project speaks beside them). */
    static final Set<String> REVISIONS = Set.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28");
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private final long deadlineNanos;
    private final SchemaChecker schemas = new SchemaChecker();
    private final Map<Check, List<Violation>> kept = new EnumMap<>(Check.class);
    private final Map<Check, Long> counts = new EnumMap<>(Check.class);
    private final Map<Object, SessionState> sessions = new LinkedHashMap<>(16, 0.75f, false);
    /** The proxy's journal, for the {@code client.*} checks; null: those are not made. */
    private java.util.function.Supplier<dev.mcpchaos.rules.journal.JournalSnapshot> journal;
    /**
     * The last complete tools/list of a sessionless revision (2026-07-28), whatever request asked:
     * each request there is a session of its own, so a tools/call is judged by it.
     */
    private Set<String> sessionlessTools;
    private Map<String, ToolSchemas> sessionlessToolSchemas;
    private long messages;
    private long untracked;
    private long dropped;
    /**
     * Whether the referee is told what left the proxy ({@link #delivered}): then a receiver owes
     * an answer only to what reached it. Offline (a cassette) what was sent is taken as received.
     */
    private boolean tracksDelivery;
    /** Whether it watches a running proxy (live-only checks can run), rather than a cassette. */
    private boolean live;
    /** Requests a fault kept from their receiver (dropped, or answered by the proxy itself). */
    private long keptFromReceiver;
    /** Answers a server sent again on a resumed stream (the same answer to the same id). */
    private long replayed;
    /** What would have been a violation but a fault caused: kept and counted apart, charged to no peer. */
    private final List<FaultFinding> byFaults = new ArrayList<>();
    private long byFaultsCount;
    // What the traffic was, for the checks that could not run on it.
    private boolean stdioSeen;
    private boolean httpSeen;
    private boolean sessionlessSeen;
    private boolean sessionlessHttpSeen;
    private boolean sessionfulHttpSeen;
    private boolean modernToolsSeen;
    private boolean anySeen;

    /** A referee with the {@linkplain #DEFAULT_DEADLINE default deadline}. */
    public Referee() {
        this(DEFAULT_DEADLINE);
    }

    /** @param deadline how long a request may wait for its answer ({@code jsonrpc.unanswered-request}) */
    public Referee(Duration deadline) {
        Objects.requireNonNull(deadline, "deadline");
        if (deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("check deadline: " + deadline + " (expected: > 0)");
        }
        this.deadlineNanos = deadline.toNanos();
    }

    /**
     * One message, as it passed.
     *
     * @param sessionKey   what tells sessions apart (live: the proxy's session object, whose name
     *                     may change; offline: the session's name)
     * @param session      the session's name now
     * @param direction    which way it went
     * @param index        its number, for the report (a cassette's {@code seq}); negative: the referee
     *                     numbers messages itself, from 0, in the order it sees them (as a recorder does)
     * @param timeNanos    when it passed, on any clock that is the same for the whole run
     * @param text         the message or line as it came, without its line end
     * @param stdioLine    whether it was a line of a stdio stream (framing checks apply)
     * @param unterminated whether it was a stdio line the stream ended before its newline
     * @param mcpHeaders   on HTTP, the {@code MCP-*} / {@code Mcp-*} headers of the POST a client
     *                     message came in (names in lower case); null where there are none to check
     * @param answeredStatus on HTTP, for a client's message: the status its exchange was answered
     *                     with so far (0: none yet), read when its answer is overdue, since a request
     *                     answered with an HTTP error (a 503, an expired session's 404) gets no
     *                     JSON-RPC answer; null where there is none to ask
     * @param resumed      on HTTP, for a server's message: it came on a stream the client opened
     *                     with {@code Last-Event-ID} (a resumption), where the server replays what
     *                     the client may have missed, answers included
     */
    public record Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                          String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders,
                          java.util.function.IntSupplier answeredStatus, boolean resumed) {
        public Message {
            Objects.requireNonNull(sessionKey, "sessionKey");
            Objects.requireNonNull(session, "session");
            Objects.requireNonNull(direction, "direction");
            Objects.requireNonNull(text, "text");
        }

        /** A message that came on no resumed stream. */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders,
                       java.util.function.IntSupplier answeredStatus) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, mcpHeaders,
                    answeredStatus, false);
        }

        /** A message without HTTP headers to check (stdio, or a server's message). */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, null, null);
        }

        /** A message with its HTTP headers but no exchange to ask for its status (a cassette's). */
        public Message(Object sessionKey, String session, Direction direction, long index, long timeNanos,
                       String text, boolean stdioLine, boolean unterminated, Map<String, String> mcpHeaders) {
            this(sessionKey, session, direction, index, timeNanos, text, stdioLine, unterminated, mcpHeaders, null);
        }


        /** The {@code MCP-*} headers of {@code headers} (name, value pairs), names in lower case; null when none. */
        public static Map<String, String> mcpHeaders(List<Map.Entry<String, String>> headers) {
            Map<String, String> mcp = null;
            for (Map.Entry<String, String> header : headers) {
                String name = header.getKey().toLowerCase(java.util.Locale.ROOT);
                if (name.startsWith("mcp-")) {
                    if (mcp == null) {
                        mcp = new java.util.TreeMap<>();
                    }
                    mcp.putIfAbsent(name, header.getValue());
                }
            }
            return mcp;
        }
    }

    /** Looks at one message. */
    public synchronized void observe(Message message) {
        Message m = message;
        if (m.text().isBlank()) {
            return; // blank lines carry nothing; the framers skip them too
        }
        if (m.index() < 0) {
            m = new Message(m.sessionKey(), m.session(), m.direction(), messages, m.timeNanos(), m.text(), m.stdioLine(),
                    m.unterminated(), m.mcpHeaders(), m.answeredStatus(), m.resumed());
        }
        messages++;
        anySeen = true;
        SessionState s = session(m);
        s.name = m.session();
        if (m.stdioLine()) {
            s.stdio = true;
            stdioSeen = true;
        } else {
            httpSeen = true;
        }
        s.sweep(m.timeNanos(), m);
        if (m.unterminated() && m.direction() == Direction.SERVER_TO_CLIENT) {
            violate(Check.UNTERMINATED_LINE, "stdout ended before this line's newline", m, null, null);
        }
        JsonNode json;
        try {
            json = JSON.readTree(m.text());
        } catch (JsonProcessingException e) {
            notJson(m, "not JSON: " + e.getOriginalMessage());
            return;
        }
        if (json == null || json.isMissingNode()) {
            notJson(m, "not JSON");
            return;
        }
        if (json.isArray()) {
            if (json.isEmpty()) {
                violate(Check.INVALID_ENVELOPE, "an empty batch", m, null, null);
            }
            for (JsonNode element : json) {
                message(s, m, element);
            }
            return;
        }
        if (!json.isObject()) {
            if (m.stdioLine() && m.direction() == Direction.SERVER_TO_CLIENT) {
                violate(Check.STDOUT_NOT_JSON, "a line that is JSON but no JSON-RPC message (a "
                        + json.getNodeType().name().toLowerCase(java.util.Locale.ROOT) + ")", m, null, null);
            } else {
                violate(Check.INVALID_ENVELOPE, "a " + json.getNodeType().name().toLowerCase(java.util.Locale.ROOT)
                        + " (expected: a JSON-RPC object)", m, null, null);
            }
            return;
        }
        message(s, m, json);
    }

    private void notJson(Message m, String why) {
        if (m.stdioLine() && m.direction() == Direction.SERVER_TO_CLIENT) {
            violate(Check.STDOUT_NOT_JSON, "a line on stdout that is " + why, m, null, null);
        } else {
            violate(Check.NOT_JSON, why, m, null, null);
        }
    }

    /**
     * What a stdio transport reports of its server's exit, for {@code stdio.exit-on-stdin-close};
     * every other event is none of the referee's.
     */
    public dev.mcpchaos.core.observe.TransportObserver transportObserver() {
        return new dev.mcpchaos.core.observe.TransportObserver() {
            @Override
            public void serverExitOverdue(dev.mcpchaos.core.transport.TransportKind transport, String sessionId,
                                          Duration deadline) {
                exitOverdue(sessionId, deadline);
            }

        };
    }

    /** The stdio server of {@code session} was still running {@code deadline} after its stdin closed. */
    public synchronized void exitOverdue(String session, Duration deadline) {
        violate(Check.EXIT_ON_STDIN_CLOSE, "the server was still running " + human(deadline) + " after its stdin "
                + "closed (the proxy sent SIGTERM; --exit-timeout sets the wait)", session, Direction.SERVER_TO_CLIENT,
                messages, null, null, "");
    }

    private static String human(Duration d) {
        return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }

    /** The server ended its output (stdio) or the message was dropped before it could be looked at. */
    public synchronized void dropped(long count) {
        dropped += count;
    }

    /** Ends every session: what is still unanswered is reported. Messages after this start new sessions. */
    public synchronized void finish() {
        java.util.Set<SessionState> ended = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (SessionState s : sessions.values()) {
            if (ended.add(s)) {
                s.finish(); // once, however many keys it had
            }
        }
        sessions.clear();
    }

    /** Ends one session (its stream closed), reporting what it left unanswered. */
    public synchronized void finish(Object sessionKey) {
        SessionState s = sessions.get(sessionKey);
        if (s != null) {
            sessions.values().removeIf(state -> state == s);
            s.finish();
        }
    }

    /**
     * Says that this referee watches a running proxy and will be told what left it
     * ({@link #delivered}) and what the rules did ({@link #fault}): a receiver then owes an answer
     * only to a request that reached it, and the live-only checks run. Called once, before the
     * first message; {@link RefereeInterceptor} does.
     */
    public synchronized void watchesLiveProxy() {
        tracksDelivery = true;
        live = true;
    }

    /**
     * One message left the proxy towards its receiver, after the rules: as it came, changed by a
     * fault, or made by one (an injected answer, a duplicate, a stray line). The receiver is
     * judged on what reached it: a request it never got is owed no answer, a cancel it got frees
     * it, and the initialize answer the client got is the version it must speak.
     *
     * @param sessionKey the session, as in {@link Message#sessionKey()}
     * @param direction  which way it went
     * @param timeNanos  when it left, on the clock of the messages
     * @param kind       its kind, as the proxy's sniffer read it
     * @param id         its JSON-RPC id ({@link Long}, {@link java.math.BigDecimal}, {@link String}), or null
     * @param method     its method, or for a response the method of the request it answers; may be null
     * @param tool       the tool of a tools/call, or null
     * @param text       its text when the referee needs to read it (a changed or made message, a
     *                   cancel, an initialize answer, a batch); null otherwise
     */
    public synchronized void delivered(Object sessionKey, Direction direction, long timeNanos,
                                       dev.mcpchaos.core.frame.MessageKind kind, Object id, String method, String tool,
                                       String text) {
        SessionState s = sessions.get(sessionKey);
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
        if (kind == dev.mcpchaos.core.frame.MessageKind.REQUEST && key != null) {
            deliveredRequest(s, direction, timeNanos, key, method, tool, null, null);
        }
    }

    private void deliveredMessage(SessionState s, Direction direction, long timeNanos, JsonNode msg, String text) {
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
    private void deliveredRequest(SessionState s, Direction direction, long timeNanos, Object id, String method,
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

    /**
     * What a rule did, as the rule engine tells it (before the fault acts). A fault that held a
     * request (latency, throttle, reorder) made any crossing with its cancel; one that ended a
     * connection or the server (crash, disconnect) leaves what was owed unanswered: neither is a
     * peer's violation.
     */
    public synchronized void fault(dev.mcpchaos.rules.FaultEvent event) {
        SessionState s = null;
        for (SessionState candidate : sessions.values()) {
            if (event.session().equals(candidate.name)) {
                s = candidate; // the newest of that name wins: names of ended HTTP sessions may return
            }
        }
        if (s == null) {
            return;
        }
        String rule = "'" + event.rule() + "' (" + event.fault() + ")";
        Object faultedId = envelopeId(event.id());
        Pending faulted = event.kind() == dev.mcpchaos.core.frame.MessageKind.REQUEST && faultedId != null
                ? s.sent.get(event.direction()).get(faultedId) : null;
        if (faulted != null && faulted.faultedBy == null) {
            faulted.faultedBy = rule;
        }
        switch (event.fault()) {
            case "latency", "throttle", "reorder" -> {
                Object id = envelopeId(event.id());
                Pending p = event.kind() == dev.mcpchaos.core.frame.MessageKind.REQUEST && id != null
                        ? s.sent.get(event.direction()).get(id) : null;
                if (p != null && p.heldBy == null) {
                    p.heldBy = rule;
                }
            }
            case "crash", "disconnect" -> s.connectionEnded(rule);
            default -> {
            }
        }
    }

    /** An id as the proxy's envelope gives it, in the form {@link #idOf} gives the same id from JSON. */
    static Object envelopeId(Object id) {
        if (id instanceof java.math.BigDecimal decimal) {
            if (decimal.scale() <= 0) {
                java.math.BigInteger integer = decimal.toBigIntegerExact();
                return integer.bitLength() < 64 ? (Object) integer.longValue() : integer;
            }
            return decimal.toString();
        }
        return id; // Long, String or null
    }

    /**
     * Makes the {@code client.*} checks too, on what {@code journal} holds each time a report is
     * asked for (see {@link ClientChecks}): a proxy with both the referee and its journal on.
     */
    public synchronized void judgeClientsBy(
            java.util.function.Supplier<dev.mcpchaos.rules.journal.JournalSnapshot> journal) {
        this.journal = Objects.requireNonNull(journal, "journal");
    }

    /** What was found so far. */
    public synchronized Report report() {
        Map<Check, Long> countsCopy = new EnumMap<>(counts);
        Map<Check, List<Violation>> keptCopy = new EnumMap<>(Check.class);
        kept.forEach((check, list) -> keptCopy.put(check, new ArrayList<>(list)));
        if (journal != null) {
            for (Violation v : ClientChecks.judge(journal.get())) {
                if (countsCopy.merge(v.check(), 1L, Long::sum) <= KEPT_PER_CHECK) {
                    keptCopy.computeIfAbsent(v.check(), c -> new ArrayList<>()).add(v);
                }
            }
        }
        keptCopy.replaceAll((check, list) -> List.copyOf(list));
        Map<Check, String> notRun = new EnumMap<>(Check.class);
        for (Check check : Check.values()) {
            String why = countsCopy.getOrDefault(check, 0L) == 0 ? whyNotRun(check) : null;
            if (why != null) {
                notRun.put(check, why);
            }
        }
        return new Report(countsCopy, keptCopy, messages, untracked, dropped, notRun, List.copyOf(byFaults),
                byFaultsCount, keptFromReceiver, replayed);
    }

    /**
     * Why {@code check} could not run on what this referee saw, or null when it could: a check
     * that never had the traffic, the journal or the live proxy it needs is "not run", never
     * "passed".
     */
    private String whyNotRun(Check check) {
        if (!anySeen && check != Check.EXIT_ON_STDIN_CLOSE) {
            return "no messages";
        }
        return switch (check) {
            case UNTERMINATED_LINE, EXIT_ON_STDIN_CLOSE -> !live ? "live only: a cassette does not show it"
                    : !stdioSeen ? "stdio only, and there was no stdio traffic" : null;
            case STDOUT_NOT_JSON -> !stdioSeen ? "stdio only, and there was no stdio traffic" : null;
            case DUPLICATE_CALL -> journal == null ? NEEDS_JOURNAL : null;
            case RETRY_AFTER_IGNORED, NO_REINITIALIZE -> journal == null ? NEEDS_JOURNAL
                    : !httpSeen ? "HTTP only, and there was no HTTP traffic" : null;
            case PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_PARAM_HEADER, MCP_NAME_HEADER -> !sessionlessHttpSeen
                    ? "2026-07-28 over HTTP only, and no such request came" : null;
            case MCP_HEADER_ANNOTATION -> !sessionlessSeen ? "2026-07-28 only, and no session spoke it" : null;
            case ERROR_CLASS -> !modernToolsSeen ? "2025-11-25 and later only, and no session spoke them" : null;
            case NEGOTIATED_VERSION_HEADER -> !sessionfulHttpSeen
                    ? "HTTP sessions with initialize only, and there was none" : null;
            default -> null;
        };
    }

    private static final String NEEDS_JOURNAL = "needs the proxy's journal, which is off (--journal; a cassette has "
            + "none)";

    private SessionState session(Message m) {
        SessionState s = sessions.get(m.sessionKey());
        if (s == null) {
            // Live, another key for a session the referee knows by name (an HTTP session the proxy
            // answers on its own once a fault expired it): the same MCP session, the same state.
            // Offline a key is all there is: two cassettes may both hold a session named stdio.
            for (SessionState known : tracksDelivery ? sessions.values() : List.<SessionState>of()) {
                if (m.session().equals(known.name)) {
                    s = known;
                }
            }
            if (s == null) {
                if (sessions.size() >= MAX_SESSIONS) {
                    SessionState eldest = sessions.values().iterator().next();
                    sessions.values().removeIf(state -> state == eldest);
                    eldest.finish();
                }
                s = new SessionState();
            }
            sessions.put(m.sessionKey(), s);
        }
        return s;
    }

    private void violate(Check check, String detail, Message m, Object id, String method) {
        violate(check, detail, m.session(), m.direction(), m.index(), id, method, m.text());
    }

    private void violate(Check check, String detail, String session, Direction direction, long index, Object id,
                         String method, String text) {
        long count = counts.merge(check, 1L, Long::sum);
        if (count <= KEPT_PER_CHECK) {
            kept.computeIfAbsent(check, c -> new ArrayList<>())
                    .add(new Violation(check, detail, session, direction, index, id, method, excerpt(text)));
        }
    }

    /** What would be a violation of {@code check} but a fault of {@code rule} caused: charged to no peer. */
    private void attribute(Check check, String rule, String detail, String session, Direction direction, long index,
                           Object id, String method, String text) {
        byFaultsCount++;
        if (byFaults.size() < KEPT_PER_CHECK * 4) {
            byFaults.add(new FaultFinding(rule, new Violation(check, detail, session, direction, index, id, method,
                    excerpt(text))));
        }
    }

    /** The text with its secrets redacted, then cut short. */
    static String excerpt(String text) {
        String redacted = SecretRedactor.redact(text);
        return redacted.length() <= EXCERPT_CHARS ? redacted : redacted.substring(0, EXCERPT_CHARS - 1) + "…";
    }

    private static Object idOf(JsonNode id) {
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

    private static String text(JsonNode node) {
        return node != null && node.isTextual() ? node.asText() : null;
    }

    /** The first revision without initialize: each request names its version in {@code _meta}. */
    private static final String FIRST_SESSIONLESS_REVISION = "2026-07-28";
    private static final String META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";

    /** The version a request of the sessionless revisions names in its {@code _meta}, or null. */
    private static String sessionlessVersion(JsonNode params) {
        JsonNode meta = params != null && params.isObject() ? params.get("_meta") : null;
        String version = meta != null && meta.isObject() ? text(meta.get(META_PROTOCOL_VERSION)) : null;
        return version != null && version.matches("\\d{4}-\\d{2}-\\d{2}")
                && version.compareTo(FIRST_SESSIONLESS_REVISION) >= 0 ? version : null;
    }

    /**
     * The 2026-07-28 request metadata (streamable-http.mdx, "Request Metadata"): on HTTP every
     * request mirrors its version, method and (for tools/call, prompts/get, resources/read) name
     * into headers, which must match the body; intermediaries route on them.
     */
    private void checkRequestMetadata(Message m, Object id, String method, JsonNode params, String version) {
        Map<String, String> h = m.mcpHeaders();
        if (h == null) {
            return; // stdio, or headers nobody recorded: nothing to compare
        }
        String versionHeader = h.get("mcp-protocol-version");
        if (!version.equals(versionHeader)) {
            violate(Check.PROTOCOL_VERSION_HEADER, versionHeader == null ? "no MCP-Protocol-Version header; _meta says "
                    + version : "MCP-Protocol-Version '" + versionHeader + "' but _meta says '" + version + "'",
                    m, id, method);
        }
        String methodHeader = h.get("mcp-method");
        if (!method.equals(methodHeader)) {
            violate(Check.MCP_METHOD_HEADER, methodHeader == null ? "no Mcp-Method header for " + method
                    : "Mcp-Method '" + methodHeader + "' but the body's method is '" + method + "'", m, id, method);
        }
        String field = switch (method) {
            case "tools/call", "prompts/get" -> "name";
            case "resources/read" -> "uri";
            default -> null;
        };
        if (method.equals("tools/call") && params != null) {
            SessionState s = sessions.get(m.sessionKey());
            Map<String, ToolSchemas> listed = s != null ? s.toolSchemas() : sessionlessToolSchemas;
            ToolSchemas known = listed != null ? listed.get(text(params.get("name"))) : null;
            if (known != null && known.headers() != null && known.headers().problems().isEmpty()) {
                for (String problem : ParamHeaders.mismatches(known.headers().bindings(), params.get("arguments"), h)) {
                    violate(Check.MCP_PARAM_HEADER, problem, m, id, method);
                }
            }
        }
        if (field != null) {
            String body = params != null ? text(params.get(field)) : null;
            String nameHeader = h.get("mcp-name");
            String decoded = decodeSentinel(nameHeader);
            if (body != null && !body.equals(decoded)) {
                violate(Check.MCP_NAME_HEADER, nameHeader == null ? "no Mcp-Name header; params." + field + " '" + body
                        + "'" : "Mcp-Name '" + nameHeader + "' but params." + field + " '" + body + "'", m, id, method);
            }
        }
    }

    /** A header value in the {@code =?base64?...?=} sentinel form decoded; others as they are; null stays null. */
    static String decodeSentinel(String value) {
        if (value == null || !value.startsWith("=?base64?") || !value.endsWith("?=") || value.length() < 11) {
            return value;
        }
        try {
            return new String(java.util.Base64.getDecoder().decode(value.substring(9, value.length() - 2)),
                    java.nio.charset.StandardCharsets.UTF_8);
        } catch (IllegalArgumentException notBase64) {
            return value; // compared as it is, so it differs and is reported
        }
    }

    /** One JSON-RPC object (a batch's element, or the whole message). */
    private void message(SessionState s, Message m, JsonNode msg) {
        if (!msg.isObject()) {
            violate(Check.INVALID_ENVELOPE, "a batch element that is no object", m, null, null);
            return;
        }
        JsonNode idNode = msg.get("id");
        Object id = idOf(idNode);
        JsonNode methodNode = msg.get("method");
        boolean hasResult = msg.has("result");
        boolean hasError = msg.has("error");
        JsonNode jsonrpc = msg.get("jsonrpc");
        if (jsonrpc == null || !jsonrpc.isTextual() || !jsonrpc.asText().equals("2.0")) {
            violate(Check.INVALID_ENVELOPE, "jsonrpc " + (jsonrpc == null ? "missing" : jsonrpc.toString())
                    + " (expected: \"2.0\")", m, id, text(methodNode));
        }
        if (methodNode != null) {
            if (!methodNode.isTextual()) {
                violate(Check.INVALID_ENVELOPE, "method " + methodNode + " (expected: a string)", m, id, null);
                return;
            }
            String method = methodNode.asText();
            if (hasResult || hasError) {
                violate(Check.INVALID_ENVELOPE, "a " + method + " with " + (hasResult ? "result" : "error")
                        + " (expected: a request or notification has neither)", m, id, method);
            }
            JsonNode params = msg.get("params");
            if (params != null && !params.isObject() && !params.isArray()) {
                violate(Check.INVALID_ENVELOPE, "params " + params + " (expected: an object)", m, id, method);
            }
            if (idNode == null) {
                s.notification(m, method, params);
            } else if (!idNode.isTextual() && !idNode.isIntegralNumber()) {
                violate(Check.INVALID_ENVELOPE, "id " + idNode + " (expected: a string or an integer; MCP ids are never"
                        + " null)", m, id, method);
            } else {
                s.request(m, id, method, params);
            }
            return;
        }
        if (hasResult && hasError) {
            violate(Check.RESULT_AND_ERROR, "both result and error", m, id, null);
        } else if (!hasResult && !hasError) {
            violate(Check.INVALID_ENVELOPE, "no method, result or error (expected: a request, notification or "
                    + "response)", m, id, null);
            return;
        }
        if (idNode == null) {
            violate(Check.INVALID_ENVELOPE, "a response without id", m, null, null);
            return;
        }
        if (idNode.isNull()) {
            if (!hasError) {
                violate(Check.INVALID_ENVELOPE, "a result with id null (expected: the id of the request it answers)",
                        m, null, null);
            } else {
                checkError(m, null, null, msg.get("error")); // a parse error's answer: it answers no request
            }
            return;
        }
        s.response(m, id, hasError ? msg.get("error") : null, hasResult ? msg.get("result") : null);
    }

    private void checkError(Message m, Object id, String method, JsonNode error) {
        if (error == null || !error.isObject()) {
            violate(Check.INVALID_ENVELOPE, "error " + error + " (expected: an object with code and message)", m, id,
                    method);
            return;
        }
        JsonNode code = error.get("code");
        if (code == null || !code.isIntegralNumber()) {
            violate(Check.ERROR_CODE, "error code " + (code == null ? "missing" : code.toString())
                    + " (expected: an integer)", m, id, method);
        } else if (code.canConvertToLong()) {
            long c = code.longValue();
            boolean reserved = c >= -32768 && c <= -32000;
            boolean defined = c == -32700 || (c >= -32603 && c <= -32600) || c >= -32099;
            if (reserved && !defined) {
                violate(Check.ERROR_CODE, "error code " + c + " lies in JSON-RPC's reserved -32768..-32000 (expected:"
                        + " -32700, -32600..-32603, a server error -32000..-32099, or a code outside the range)", m, id,
                        method);
            }
        }
        JsonNode message = error.get("message");
        if (message == null || !message.isTextual()) {
            violate(Check.INVALID_ENVELOPE, "error message " + (message == null ? "missing" : message.toString())
                    + " (expected: a string)", m, id, method);
        }
    }

    /**
     * A request, from when its sender sent it until it is answered: first in flight from the
     * sender, then (once delivered) owed an answer by the receiver.
     */
    private static final class Pending {
        final Object id;
        final String method;
        final String tool;
        final boolean firstPage;
        final long index;
        final String text;
        /** What its HTTP exchange was answered with so far, or null (see {@link Message#answeredStatus}). */
        final java.util.function.IntSupplier answeredStatus;
        /** Whether the receiver got its sender's notifications/cancelled (before its answer went). */
        boolean cancelled;
        /** For a client's tools/call: whether its arguments are valid against the listed schema; null: no verdict. */
        Boolean argumentsValid;
        /** How many copies reached the receiver (a duplicate fault makes two), and how many it answered. */
        int deliveries;
        int answers;
        /** When the first copy reached the receiver: the deadline runs from here. */
        long deliveredAt;
        /** A rule whose fault changed when it reached the receiver (latency, throttle, reorder), or null. */
        String heldBy;
        /** When its sender sent a cancel of it, or -1. */
        long cancelSentAt = -1;
        /** The first rule whose fault acted on it, or null. */
        String faultedBy;
        /** A rule whose fault ended the connection or the server before it could be answered, or null. */
        String excusedBy;

        Pending(Object id, String method, String tool, boolean firstPage, Message m) {
            this(id, method, tool, firstPage, m.index(), m.text(), m.answeredStatus());
        }

        Pending(Object id, String method, String tool, boolean firstPage, long index, String text,
                java.util.function.IntSupplier answeredStatus) {
            this.answeredStatus = answeredStatus;
            this.id = id;
            this.method = method;
            this.tool = tool;
            this.firstPage = firstPage;
            this.index = index;
            this.text = text.length() > 4 * EXCERPT_CHARS ? text.substring(0, 4 * EXCERPT_CHARS) : text;
        }
    }

    /** What the referee knows of one session. */
    private final class SessionState {
        String name;
        /**
         * Requests their sender has in flight, by id, oldest first: one table per direction they
         * were sent in. A request leaves when it is answered (or late): its id may then be used again.
         */
        final Map<Direction, LinkedHashMap<Object, Pending>> sent = new EnumMap<>(Direction.class);
        /**
         * Requests the receiver got and owes an answer to, by id, in the order they reached it:
         * the receiver is judged on what reached it, not on what a fault kept from it.
         */
        final Map<Direction, LinkedHashMap<Object, Pending>> pending = new EnumMap<>(Direction.class);
        /** Requests already reported as late: their answer is no unknown id. Bounded like pending. */
        final Map<Direction, LinkedHashMap<Object, Pending>> late = new EnumMap<>(Direction.class);
        /**
         * The answers sent, by the id they answer, as a hash of their text: the same answer again on
         * a resumed stream is the server replaying what the client missed, not a second answer.
         */
        final Map<Direction, LinkedHashMap<Object, Long>> answered = new EnumMap<>(Direction.class);
        /** A rule whose fault ended this stdio session's server (or its input): what comes later is owed nothing. */
        String endedBy;
        /** Whether the session's messages were lines of a stdio stream. */
        boolean stdio;
        /** The protocolVersion of the initialize answer that reached the client (after the rules). */
        String deliveredVersion;
        /** Whether the client was already judged on going on under a version it cannot speak. */
        boolean versionAcceptanceJudged;
        boolean initializeAnswered;
        boolean initializedNotified;
        /** The id of the client's initialize, to know its answer when it reaches the client. */
        Object initializeId;
        String requestedVersion;
        /** The revision the session speaks: the server's initialize answer, or a sessionless request's _meta. */
        String spokenVersion;
        JsonNode serverCapabilities;
        JsonNode clientCapabilities;
        /** The tools of the last complete tools/list, or null when unknown (or stale after list_changed). */
        Set<String> tools;
        Set<String> toolsInProgress;
        /** The schemas of the tools of the last complete tools/list (compiled when first used), by name. */
        Map<String, ToolSchemas> toolSchemas;

        /** Whether the session speaks a revision without initialize, where each request stands alone. */
        boolean sessionless() {
            return spokenVersion != null && spokenVersion.compareTo(FIRST_SESSIONLESS_REVISION) >= 0;
        }

        /** The tools of this session's last tools/list; for a sessionless one, the last any request got. */
        Set<String> tools() {
            return tools == null && sessionless() ? sessionlessTools : tools;
        }

        /** The schemas of {@link #tools()}. */
        Map<String, ToolSchemas> toolSchemas() {
            return toolSchemas == null && sessionless() ? sessionlessToolSchemas : toolSchemas;
        }
        Map<String, ToolSchemas> toolSchemasInProgress;

        SessionState() {
            for (Direction d : Direction.values()) {
                sent.put(d, bounded(false));
                pending.put(d, bounded(true));
                late.put(d, bounded(false));
                answered.put(d, bounded(false));
            }
        }

        private <V> LinkedHashMap<Object, V> bounded(boolean countEvictions) {
            return new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Object, V> eldest) {
                    if (size() > MAX_IN_FLIGHT) {
                        if (countEvictions) {
                            untracked++;
                        }
                        return true;
                    }
                    return false;
                }
            };
        }

        /**
         * A request that had no JSON-RPC answer, and is owed none: cancelled, answered with an HTTP
         * error, or a copy a duplicate fault made of a request already answered.
         */
        private boolean owedNothing(Pending p) {
            int status = p.answeredStatus != null ? p.answeredStatus.getAsInt() : 0;
            return p.cancelled || p.answers > 0 || (status != 0 && (status < 200 || status > 299));
        }

        /** An unanswered request: the receiver's violation, or the fault's when a fault ended its connection. */
        private void unanswered(Direction d, Pending p, String why) {
            if (owedNothing(p)) {
                return;
            }
            Pending waitingOn = keptRequestOfReceiver(d, p);
            if (p.excusedBy == null && waitingOn != null) {
                attribute(Check.UNANSWERED_REQUEST, waitingOn.faultedBy, why + ": the receiver was waiting on its own "
                        + waitingOn.method + " (#" + waitingOn.index + "), which rule " + waitingOn.faultedBy
                        + " kept from the other side", name, d, p.index, p.id, p.method, p.text);
            } else if (p.excusedBy != null) {
                attribute(Check.UNANSWERED_REQUEST, p.excusedBy, why + ": rule " + p.excusedBy + " ended the "
                        + "connection or the server before it could be answered", name, d, p.index, p.id, p.method,
                        p.text);
            } else {
                violate(Check.UNANSWERED_REQUEST, why, name, d, p.index, p.id, p.method, p.text);
            }
        }

        /** Reports the requests whose deadline passed by {@code now}. */
        void sweep(long now, Message m) {
            for (Direction d : Direction.values()) {
                Iterator<Pending> it = pending.get(d).values().iterator();
                while (it.hasNext()) {
                    Pending p = it.next();
                    if (now - p.deliveredAt <= deadlineNanos) {
                        break; // oldest first: the rest are younger
                    }
                    it.remove();
                    sent.get(d).remove(p.id);
                    late.get(d).put(p.id, p); // its answer, if it comes, is no unknown id
                    unanswered(d, p, "no answer within " + Duration.ofNanos(deadlineNanos).toString().substring(2)
                            .toLowerCase(java.util.Locale.ROOT));
                }
            }
        }

        void finish() {
            for (Direction d : Direction.values()) {
                for (Pending p : pending.get(d).values()) {
                    unanswered(d, p, "no answer by the end of the session");
                }
                for (Pending p : sent.get(d).values()) {
                    if (p.deliveries == 0) {
                        keptFromReceiver++; // a fault dropped it or answered it itself: the receiver owes nothing
                    }
                }
                pending.get(d).clear();
                sent.get(d).clear();
            }
        }

        /**
         * A request the receiver of {@code p} sent after {@code p} reached it, which a fault kept from
         * the other side and which is still unanswered: a server may rightly wait on the answer to its
         * own request (a roots/list, a sampling request) before it answers. Null when there is none.
         */
        private Pending keptRequestOfReceiver(Direction d, Pending p) {
            Direction back = d == Direction.CLIENT_TO_SERVER ? Direction.SERVER_TO_CLIENT : Direction.CLIENT_TO_SERVER;
            for (Pending own : sent.get(back).values()) {
                if (own.deliveries == 0 && own.faultedBy != null && own.index > p.index) {
                    return own;
                }
            }
            return null;
        }

        /** A copy of {@code p} reached its receiver at {@code now}: from now on it owes an answer. */
        void deliver(Direction d, Pending p, long now) {
            p.deliveries++;
            if (p.deliveries == 1) {
                p.deliveredAt = now;
            }
            if (endedBy != null && p.excusedBy == null) {
                p.excusedBy = endedBy; // the server is gone: nothing that reaches it now can be answered
            }
            if (!pending.get(d).containsKey(p.id)) {
                pending.get(d).put(p.id, p); // a copy after the first was answered: its answer is welcome
            }
        }

        /** A fault of {@code rule} ended the connection (or the server): what is owed now is the fault's. */
        void connectionEnded(String rule) {
            for (Direction d : Direction.values()) {
                for (Pending p : pending.get(d).values()) {
                    if (p.excusedBy == null) {
                        p.excusedBy = rule;
                    }
                }
            }
            if (stdio) {
                endedBy = rule; // one connection, one server: it does not come back in this session
            }
        }

        void request(Message m, Object id, String method, JsonNode params) {
            Direction d = m.direction();
            boolean fromClient = d == Direction.CLIENT_TO_SERVER;
            Pending inFlight = sent.get(d).get(id);
            if (inFlight != null) {
                violate(Check.DUPLICATE_REQUEST_ID, "id " + id + " is still in flight (the " + inFlight.method + " of #"
                        + inFlight.index + ")", m, id, method);
            }
            if (fromClient && !method.equals("initialize")) {
                judgeVersionAcceptance(m, id, method);
            }
            String modern = fromClient ? sessionlessVersion(params) : null;
            if (modern != null) {
                spokenVersion = modern;
                sessionlessSeen = true;
                modernToolsSeen = true;
                if (m.mcpHeaders() != null) {
                    sessionlessHttpSeen = true;
                }
                checkRequestMetadata(m, id, method, params, modern);
            }
            if (fromClient && modern == null && !initializeAnswered && !method.equals("initialize")
                    && !method.equals("ping")) {
                violate(Check.BEFORE_INITIALIZE, "the client sent " + method + " before the server answered initialize",
                        m, id, method);
            } else if (!fromClient && !initializedNotified && !method.equals("ping")) {
                violate(Check.BEFORE_INITIALIZE, "the server sent " + method + " before the client's "
                        + "notifications/initialized", m, id, method);
            }
            if (fromClient) {
                String needs = serverCapabilityFor(method);
                if (needs != null && serverCapabilities != null && !declared(serverCapabilities, needs)) {
                    violate(Check.UNDECLARED_CAPABILITY, method + " to a server that did not declare " + needs, m, id,
                            method);
                }
                if (method.equals("initialize")) {
                    initializeId = id;
                    if (m.mcpHeaders() != null) {
                        sessionfulHttpSeen = true;
                    }
                    requestedVersion = params != null ? text(params.get("protocolVersion")) : null;
                    clientCapabilities = params != null ? params.get("capabilities") : null;
                }
            } else {
                String needs = clientCapabilityFor(method);
                if (needs != null && clientCapabilities != null && !declared(clientCapabilities, needs)) {
                    violate(Check.UNDECLARED_CAPABILITY, method + " to a client that did not declare " + needs, m, id,
                            method);
                }
            }
            String tool = method.equals("tools/call") && params != null ? text(params.get("name")) : null;
            Boolean argumentsValid = fromClient && tool != null ? checkArguments(m, id, tool, params.get("arguments"))
                    : null;
            boolean firstPage = params == null || params.get("cursor") == null || params.get("cursor").isNull();
            Pending p = new Pending(id, method, tool, firstPage, m);
            p.argumentsValid = argumentsValid;
            sent.get(d).put(id, p);
            if (!tracksDelivery) {
                deliver(d, p, m.timeNanos()); // offline: what was sent is taken as received
            }
        }

        /**
         * A client judged on the initialize answer that reached it (after the rules): going on
         * under a version that is no published revision, nor the one it asked for, where the spec
         * says it should disconnect; and, on HTTP, an {@code MCP-Protocol-Version} header that is not
         * the version it got.
         */
        private void judgeVersionAcceptance(Message m, Object id, String method) {
            if (deliveredVersion == null || sessionless()) {
                return;
            }
            if (!versionAcceptanceJudged && !REVISIONS.contains(deliveredVersion)
                    && !deliveredVersion.equals(requestedVersion)) {
                versionAcceptanceJudged = true;
                violate(Check.UNSUPPORTED_VERSION_ACCEPTED, "the client asked for '" + requestedVersion + "', got '"
                        + deliveredVersion + "' (no published revision) and went on with " + method + " (expected: "
                        + "it disconnects)", m, id, method);
            }
            Map<String, String> headers = m.mcpHeaders();
            if (headers == null) {
                return; // stdio, or no headers recorded
            }
            // A missing header is not judged: a server falls back to 2025-03-26 for it, and the
            // referee cannot tell an old client from a careless one. A wrong one is a client that
            // ignored what the server (or a fault) told it.
            String header = headers.get("mcp-protocol-version");
            if (header != null && !header.equals(deliveredVersion)) {
                violate(Check.NEGOTIATED_VERSION_HEADER, "MCP-Protocol-Version '" + header + "' after the initialize "
                        + "answer gave the client '" + deliveredVersion + "'", m, id, method);
            }
        }

        void notification(Message m, String method, JsonNode params) {
            boolean fromClient = m.direction() == Direction.CLIENT_TO_SERVER;
            if (fromClient && method.equals("notifications/initialized")) {
                initializedNotified = true;
                judgeVersionAcceptance(m, null, method);
            } else if (fromClient && m.mcpHeaders() != null) {
                judgeVersionAcceptance(m, null, method);
            }
            if (method.equals("notifications/cancelled") && params != null) {
                Object cancelledId = idOf(params.get("requestId"));
                Pending p = sent.get(m.direction()).get(cancelledId);
                if (p == null) {
                    p = late.get(m.direction()).get(cancelledId);
                }
                if (p != null && p.cancelSentAt < 0) {
                    p.cancelSentAt = m.timeNanos();
                }
                if (!tracksDelivery) {
                    cancelReached(m.direction(), cancelledId); // offline: sent is taken as received
                }
            }
            String needs = fromClient ? null : serverNotificationCapability(method);
            if (needs != null && serverCapabilities != null && !declared(serverCapabilities, needs)) {
                violate(Check.UNDECLARED_CAPABILITY, "the server sent " + method + " but did not declare " + needs, m,
                        null, method);
            }
            if (fromClient && method.equals("notifications/roots/list_changed") && clientCapabilities != null
                    && !declared(clientCapabilities, "roots.listChanged")) {
                violate(Check.UNDECLARED_CAPABILITY, "the client sent " + method + " but did not declare "
                        + "roots.listChanged", m, null, method);
            }
            if (!fromClient && method.equals("notifications/tools/list_changed")) {
                tools = null; // the next tools/list says what there is
                toolSchemas = null;
                if (sessionless()) {
                    sessionlessTools = null;
                    sessionlessToolSchemas = null;
                }
            }
        }

        /** The receiver got its sender's cancel of {@code id}: no answer is owed now, and one sent after it is flagged. */
        void cancelReached(Direction requestDirection, Object id) {
            Pending p = pending.get(requestDirection).get(id);
            if (p == null) {
                p = late.get(requestDirection).get(id); // late already: its answer may still come
            }
            if (p != null) {
                p.cancelled = true;
            }
        }

        void response(Message m, Object id, JsonNode error, JsonNode result) {
            Direction requestDirection = m.direction() == Direction.CLIENT_TO_SERVER ? Direction.SERVER_TO_CLIENT
                    : Direction.CLIENT_TO_SERVER;
            Pending p = pending.get(requestDirection).get(id);
            if (p != null) {
                p.answers++;
                if (p.answers >= p.deliveries) {
                    pending.get(requestDirection).remove(id);
                }
            } else {
                p = late.get(requestDirection).remove(id); // reported as late already; its content still counts
            }
            long textHash = ((long) m.text().hashCode() << 32) | (m.text().length() & 0xffffffffL);
            if (p == null) {
                Long before = answered.get(requestDirection).get(id);
                if (m.resumed() && before != null && before == textHash) {
                    replayed++; // the server replays an answer on a resumed stream: what the client may have missed
                    return;
                }
            } else {
                sent.get(requestDirection).remove(id);
                answered.get(requestDirection).put(id, textHash);
            }
            String method = p != null ? p.method : null;
            if (error != null) {
                checkError(m, id, method, error);
                if (p != null && result == null) { // with both, result-and-error says what is wrong
                    checkErrorClass(m, id, p, error);
                    checkBusinessError(m, id, p, error);
                }
            }
            // The client cancelled while a fault still held the request: the cancel queued behind it and
            // the two reached the server together, a crossing the proxy made, not the server.
            if (p != null && p.cancelled && p.heldBy != null && p.cancelSentAt >= 0 && p.cancelSentAt < p.deliveredAt) {
                attribute(Check.CANCELLED_ANSWERED, p.heldBy, "id " + id + " (" + p.method + ", #" + p.index + ") was "
                        + "answered after its cancel reached the receiver, but rule " + p.heldBy + " held the request, "
                        + "so the two reached it together", name, m.direction(), m.index(), id, p.method, m.text());
            } else if (p != null && p.cancelled) {
                violate(Check.CANCELLED_ANSWERED, "id " + id + " (" + p.method + ", #" + p.index + ") was answered after "
                        + "the " + (requestDirection == Direction.CLIENT_TO_SERVER ? "client" : "server")
                        + " cancelled it (expected: no answer; unless the two crossed on the way)", m, id, p.method);
            }
            if (p == null) {
                violate(Check.RESPONSE_UNKNOWN_ID, "id " + id + " answers no request in flight from the "
                        + (requestDirection == Direction.CLIENT_TO_SERVER ? "client" : "server"), m, id, null);
                return;
            }
            if (result == null) {
                return;
            }
            switch (p.method) {
                case "initialize" -> initialized(m, id, result);
                case "tools/list" -> toolsListed(m, id, p, result);
                case "tools/call" -> {
                    if (tools() != null && p.tool != null && !tools().contains(p.tool)) {
                        violate(Check.UNKNOWN_TOOL_RESULT, "a tools/call of '" + p.tool + "', which tools/list does not "
                                + "list, was answered with a result (expected: a JSON-RPC error, such as -32602)", m,
                                id, p.method);
                    }
                    checkStructuredContent(m, id, p, result);
                    checkInvalidAccepted(m, id, p, result);
                }
                default -> {
                }
            }
        }

        /**
         * 2025-11-25 moved input validation errors (a date in the wrong format, a value out of range)
         * from protocol errors to tool execution errors, so that a model can read them and retry
         * (Tools, "Error Handling"; SEP-1303): a listed tool's call answered -32602 is flagged. A
         * call of an unknown tool, or one whose request is malformed, still gets a protocol error;
         * -32603 (the server failed) is never flagged.
         */
        private void checkErrorClass(Message m, Object id, Pending p, JsonNode error) {
            if (!"tools/call".equals(p.method) || p.tool == null || tools() == null || !tools().contains(p.tool)
                    || spokenVersion == null || spokenVersion.compareTo("2025-11-25") < 0
                    || error.path("code").asInt(0) != -32602) {
                return;
            }
            violate(Check.ERROR_CLASS, "tool '" + p.tool + "' (listed) answered with JSON-RPC error -32602 '"
                    + excerpt(error.path("message").asText("")) + "' on " + spokenVersion + " (expected: a result "
                    + "with isError: true for an input validation error, unless the request itself was malformed)",
                    m, id, p.method);
        }

        /**
         * A client's tools/call against the inputSchema its session's last tools/list gave the
         * tool: whether they are valid, or null when there is no verdict (no tools/list yet, an
         * unknown tool, a broken schema).
         */
        private Boolean checkArguments(Message m, Object id, String tool, JsonNode arguments) {
            ToolSchemas known = toolSchemas() != null ? toolSchemas().get(tool) : null;
            com.networknt.schema.Schema input = known != null ? known.input(schemas) : null;
            if (input == null) {
                return null;
            }
            JsonNode given = arguments != null ? arguments : JSON.createObjectNode(); // absent: no arguments
            List<String> problems = SchemaChecker.violations(input, given);
            if (!problems.isEmpty()) {
                violate(Check.CALL_ARGUMENTS, "tool '" + tool + "': arguments " + String.join("; ", problems), m, id,
                        "tools/call");
            }
            return problems.isEmpty();
        }

        /**
         * A listed tool called with arguments valid against its schema, answered with a JSON-RPC
         * error of the server's own (a code outside JSON-RPC's reserved range, or an
         * implementation-defined server error -32000..-32019 but MCP's -32002; -32020..-32099 are
         * the codes MCP allocates, such as -32020 HeaderMismatch and -32042 URL elicitation
         * required): most likely the tool's own failure, which the spec wants as a result with
         * isError: true, so that the model can see it.
         */
        private void checkBusinessError(Message m, Object id, Pending p, JsonNode error) {
            if (!"tools/call".equals(p.method) || !Boolean.TRUE.equals(p.argumentsValid)
                    || !error.path("code").canConvertToLong()) {
                return;
            }
            long code = error.path("code").longValue();
            boolean reserved = code >= -32768 && code <= -32000;
            boolean implementationDefined = code >= -32019 && code <= -32000 && code != -32002;
            // -32603 (internal error) is what an SDK makes of a tool that threw: the classic way a
            // business failure becomes a protocol error, which some clients take for a broken session.
            if (reserved && !implementationDefined && code != -32603) {
                return; // JSON-RPC's other codes (error-class judges -32602), and those MCP allocates
            }
            violate(Check.BUSINESS_ERROR, "tool '" + p.tool + "' (listed, arguments valid) answered with JSON-RPC error "
                    + code + " '" + excerpt(error.path("message").asText("")) + "' (expected: a result with isError: "
                    + "true for the tool's own failure; a protocol error makes some clients drop the session)", m, id,
                    p.method);
        }

        /** Arguments its schema refused, answered with a successful result: the server did not validate them. */
        private void checkInvalidAccepted(Message m, Object id, Pending p, JsonNode result) {
            if ("tools/call".equals(p.method) && Boolean.FALSE.equals(p.argumentsValid)
                    && !result.path("isError").asBoolean(false)) {
                violate(Check.INVALID_ARGUMENTS_ACCEPTED, "tool '" + p.tool + "' answered a call whose arguments its "
                        + "inputSchema refuses with a successful result (expected: a result with isError: true, or "
                        + "-32602 before 2025-11-25)", m, id, p.method);
            }
        }

        /** A tool with an outputSchema: a successful result carries structuredContent valid against it. */
        private void checkStructuredContent(Message m, Object id, Pending p, JsonNode result) {
            ToolSchemas known = toolSchemas() != null && p.tool != null ? toolSchemas().get(p.tool) : null;
            if (known == null || known.outputNode() == null || result.path("isError").asBoolean(false)) {
                return;
            }
            JsonNode structured = result.get("structuredContent");
            if (structured == null || structured.isNull()) {
                violate(Check.STRUCTURED_CONTENT, "tool '" + p.tool + "' declares an outputSchema, but its result has "
                        + "no structuredContent", m, id, p.method);
                return;
            }
            com.networknt.schema.Schema output = known.output(schemas);
            List<String> problems = output != null ? SchemaChecker.violations(output, structured) : List.of();
            if (!problems.isEmpty()) {
                violate(Check.STRUCTURED_CONTENT, "tool '" + p.tool + "': structuredContent " + String.join("; ",
                        problems), m, id, p.method);
            }
        }

        private void initialized(Message m, Object id, JsonNode result) {
            initializeAnswered = true;
            spokenVersion = text(result.get("protocolVersion"));
            if (!tracksDelivery) {
                deliveredVersion = spokenVersion; // offline: what the server sent is taken as what the client got
                versionAcceptanceJudged = false;
            }
            if (spokenVersion != null && spokenVersion.compareTo("2025-11-25") >= 0) {
                modernToolsSeen = true;
            }
            if (spokenVersion != null && spokenVersion.compareTo(FIRST_SESSIONLESS_REVISION) >= 0) {
                sessionlessSeen = true;
            }
            serverCapabilities = result.get("capabilities");
            String chosen = text(result.get("protocolVersion"));
            if (chosen == null) {
                violate(Check.PROTOCOL_VERSION, "no protocolVersion in the initialize result", m, id, "initialize");
            } else if (!chosen.equals(requestedVersion) && !REVISIONS.contains(chosen)) {
                violate(Check.PROTOCOL_VERSION, "the server chose '" + chosen + "'; the client asked for '"
                        + requestedVersion + "' (expected: that, or a published revision: " + new java.util.TreeSet<>(
                        REVISIONS) + ")", m, id, "initialize");
            }
        }

        private void toolsListed(Message m, Object id, Pending p, JsonNode result) {
            if (p.firstPage || toolsInProgress == null) {
                toolsInProgress = new HashSet<>();
                toolSchemasInProgress = new java.util.HashMap<>();
            }
            JsonNode list = result.get("tools");
            if (list != null && list.isArray()) {
                for (JsonNode tool : list) {
                    String name = text(tool.get("name"));
                    String label = name != null ? "tool '" + name + "'" : "a tool without a name";
                    if (name != null) {
                        if (!toolsInProgress.add(name)) {
                            violate(Check.DUPLICATE_TOOL_NAME, "tool '" + name + "' is listed twice", m, id, p.method);
                        }
                        if (!TOOL_NAME.matcher(name).matches()) {
                            violate(Check.TOOL_NAME_FORMAT, "tool name '" + name + "' (expected: 1 to 128 of A-Z a-z 0-9"
                                    + " _ - .)", m, id, p.method);
                        }
                    }
                    List<String> input = schemas.problems(tool.get("inputSchema"));
                    JsonNode outputSchema = tool.get("outputSchema");
                    if (name != null) {
                        // A broken schema gives no verdict on calls or results: tools.*-schema says what is wrong.
                        ParamHeaders.Scan headers = ParamHeaders.scan(tool.get("inputSchema"));
                        toolSchemasInProgress.put(name, new ToolSchemas(input.isEmpty() ? tool.get("inputSchema") : null,
                                outputSchema != null && schemas.problems(outputSchema).isEmpty() ? outputSchema : null,
                                headers));
                        if (!headers.problems().isEmpty() && spokenVersion != null
                                && spokenVersion.compareTo(FIRST_SESSIONLESS_REVISION) >= 0) {
                            violate(Check.MCP_HEADER_ANNOTATION, label + ": " + String.join("; ", headers.problems())
                                    + " (a client must leave the tool out of tools/list)", m, id, p.method);
                        }
                    }
                    if (!input.isEmpty()) {
                        violate(Check.INPUT_SCHEMA, label + ": inputSchema " + String.join("; ", input), m, id,
                                p.method);
                    }
                    JsonNode output = tool.get("outputSchema");
                    if (output != null) {
                        List<String> problems = schemas.problems(output);
                        if (!problems.isEmpty()) {
                            violate(Check.OUTPUT_SCHEMA, label + ": outputSchema " + String.join("; ", problems), m,
                                    id, p.method);
                        }
                    }
                }
            } else {
                violate(Check.INVALID_ENVELOPE, "a tools/list result without a tools array", m, id, p.method);
            }
            JsonNode next = result.get("nextCursor");
            if (next == null || next.isNull()) {
                tools = toolsInProgress;
                toolsInProgress = null;
                toolSchemas = toolSchemasInProgress;
                toolSchemasInProgress = null;
                if (sessionless()) {
                    // The next request may come on another connection, a session of its own: it is the server's list.
                    sessionlessTools = tools;
                    sessionlessToolSchemas = toolSchemas;
                }
            }
        }
    }

    /** The server capability a client request needs, as a dotted path, or null. */
    static String serverCapabilityFor(String method) {
        if (method.startsWith("tools/")) {
            return "tools";
        }
        if (method.equals("resources/subscribe") || method.equals("resources/unsubscribe")) {
            return "resources.subscribe";
        }
        if (method.startsWith("resources/")) {
            return "resources";
        }
        if (method.startsWith("prompts/")) {
            return "prompts";
        }
        if (method.equals("logging/setLevel")) {
            return "logging";
        }
        if (method.equals("completion/complete")) {
            return "completions";
        }
        return null;
    }

    /** The client capability a server request needs, or null. */
    static String clientCapabilityFor(String method) {
        return switch (method) {
            case "sampling/createMessage" -> "sampling";
            case "roots/list" -> "roots";
            case "elicitation/create" -> "elicitation";
            default -> null;
        };
    }

    /** The server capability a server notification needs, or null. */
    static String serverNotificationCapability(String method) {
        return switch (method) {
            case "notifications/tools/list_changed" -> "tools.listChanged";
            case "notifications/resources/list_changed" -> "resources.listChanged";
            case "notifications/resources/updated" -> "resources.subscribe";
            case "notifications/prompts/list_changed" -> "prompts.listChanged";
            case "notifications/message" -> "logging";
            default -> null;
        };
    }

    /** Whether {@code capabilities} has the dotted path, with a value that is not false or null. */
    static boolean declared(JsonNode capabilities, String path) {
        JsonNode node = capabilities;
        for (String part : path.split("\\.")) {
            node = node != null && node.isObject() ? node.get(part) : null;
        }
        return node != null && !node.isNull() && !(node.isBoolean() && !node.asBoolean());
    }

    /** A listed tool's schemas, each compiled once, when a call or result first needs it. */
    private static final class ToolSchemas {
        private final JsonNode inputNode;
        private final JsonNode outputNode;
        private final ParamHeaders.Scan headers;
        private com.networknt.schema.Schema input;
        private com.networknt.schema.Schema output;
        private boolean inputCompiled;
        private boolean outputCompiled;

        ToolSchemas(JsonNode inputNode, JsonNode outputNode, ParamHeaders.Scan headers) {
            this.inputNode = inputNode;
            this.outputNode = outputNode;
            this.headers = headers;
        }

        /** Its x-mcp-header annotations, valid or not. */
        ParamHeaders.Scan headers() {
            return headers;
        }

        JsonNode outputNode() {
            return outputNode;
        }

        com.networknt.schema.Schema input(SchemaChecker checker) {
            if (!inputCompiled) {
                inputCompiled = true;
                input = checker.compile(inputNode);
            }
            return input;
        }

        com.networknt.schema.Schema output(SchemaChecker checker) {
            if (!outputCompiled) {
                outputCompiled = true;
                output = checker.compile(outputNode);
            }
            return output;
        }
    }

    /**
     * What would have been a violation but a fault caused, charged to no peer.
     *
     * @param rule      the rule whose fault caused it, with the fault's type: {@code 'hold' (latency)}
     * @param violation what it would have been
     */
    public record FaultFinding(String rule, Violation violation) {
        public FaultFinding {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(violation, "violation");
        }

        @Override
        public String toString() {
            return "rule " + rule + ": " + violation;
        }
    }

    /**
     * What a referee found: the count of each check's violations, the first
     * {@value #KEPT_PER_CHECK} of each, how many messages it saw, how many requests it stopped
     * following for room ({@code untracked}), how many messages it never saw ({@code dropped}),
     * the checks that could not run and why ({@code notRun}: never "passed"), what faults caused
     * ({@code byFaults}, the first 80 of {@code byFaultsCount}; charged to no peer), how many
     * requests a fault kept from their receiver ({@code keptFromReceiver}: owed no answer), and how
     * many answers a server replayed on a resumed stream ({@code replayed}: no second answer).
     */
    public record Report(Map<Check, Long> counts, Map<Check, List<Violation>> violations, long messages,
                         long untracked, long dropped, Map<Check, String> notRun, List<FaultFinding> byFaults,
                         long byFaultsCount, long keptFromReceiver, long replayed) {

        /** A report with nothing skipped and no faults (for tests and tools that build one). */
        public Report(Map<Check, Long> counts, Map<Check, List<Violation>> violations, long messages, long untracked,
                      long dropped) {
            this(counts, violations, messages, untracked, dropped, Map.of(), List.of(), 0, 0, 0);
        }

        /** Whether {@code check} could run (see {@link #notRun}). */
        public boolean ran(Check check) {
            return !notRun.containsKey(check);
        }

        /** The violations kept, all checks, in check order. */
        public List<Violation> all() {
            List<Violation> all = new ArrayList<>();
            violations.values().forEach(all::addAll);
            return all;
        }

        /** How many violations of {@code check}. */
        public long count(Check check) {
            return counts.getOrDefault(check, 0L);
        }

        /** Whether a violation of {@code severity} or worse was found. */
        public boolean failsAt(Severity severity) {
            return counts.entrySet().stream().anyMatch(e -> e.getValue() > 0
                    && e.getKey().severity().ordinal() <= severity.ordinal());
        }

        /** The ids of the checks that fired, for tests and logs. */
        public Set<String> firedIds() {
            Set<String> ids = new java.util.TreeSet<>();
            counts.forEach((c, n) -> {
                if (n > 0) {
                    ids.add(c.id());
                }
            });
            return ids;
        }
    }

    @Override
    public String toString() {
        return "Referee(" + messages + " messages)";
    }
}
