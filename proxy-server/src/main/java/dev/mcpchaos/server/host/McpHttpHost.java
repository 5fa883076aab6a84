package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * An MCP server host over the Streamable HTTP transport (MCP revisions 2025-03-26, 2025-06-18
 * and 2025-11-25, and the sessionless 2026-07-28): the HTTP side of an MCP server, on one
 * endpoint, {@code /mcp}, of the JDK's built-in HTTP server, with what each session answers left
 * to a {@link McpSessionHandler}. The demo server over HTTP ({@code DemoHttpServer}), the
 * replayed cassettes of {@code replay --http} ({@code HttpReplay}) and the JUnit extension's
 * demo upstream run on it.
 *
 * <pre>{@code
 * try (McpHttpHost server = McpHttpHost.start(new InetSocketAddress("127.0.0.1", 0),
 *         McpHttpHost.DEFAULT_KEEP_ALIVE, "my-server", handlers)) {
 *     URI endpoint = server.endpoint(); // http://127.0.0.1:PORT/mcp
 *     ...
 * }
 * }</pre>
 *
 * <h2>Behaviour</h2>
 * <ul>
 *   <li><b>POST</b> carries one JSON-RPC message or a batch. Only notifications and responses
 *       (or a batch of only those): {@code 202 Accepted}, no body. Containing a request:
 *       {@code 200} with {@code Content-Type: text/event-stream} if the handler answers it as a
 *       stream ({@link McpSessionHandler#answersAsStream}; the demo's {@code slow} call with a
 *       {@code _meta.progressToken}) and the client accepts SSE (the related messages such as
 *       progress notifications, then the reply, then the stream ends), else
 *       {@code 200} with {@code Content-Type: application/json} and the reply (an array for a
 *       batch). A message that is neither (for example {@code {}}): {@code 400} with the JSON-RPC
 *       error. Not JSON: {@code 400} with a -32700 error.
 *   <li><b>Sessions</b>: a successful {@code initialize} (which must not be in a batch) always
 *       starts a new session, whose id comes in the {@code Mcp-Session-Id} response header. Every
 *       other request needs that header: {@code 400} without it, {@code 404} for an unknown or
 *       ended session. Unless the handlers serve sessionless requests
 *       ({@link McpSessionHandler.Factory#sessionless()}): then a request without the header whose
 *       {@code MCP-Protocol-Version} is 2026-07-28 or later is answered by that handler.
 *   <li><b>{@code MCP-Protocol-Version}</b>: optional (the 2025-03-26 rule for its absence); an
 *       unsupported value is {@code 400}. Not checked on {@code initialize}, whose body negotiates.
 *   <li><b>GET</b> with {@code Accept: text/event-stream} opens the session's standalone SSE stream
 *       for messages that belong to no request (the demo's: after {@code logging/setLevel} with a
 *       valid level, one {@code notifications/message} at that level). Messages sent while no GET is open wait
 *       for the next one. A new GET takes over from an older one.
 *   <li><b>Keep-alive</b>: every SSE response idle for the keep-alive interval (default
 *       {@value #DEFAULT_KEEP_ALIVE_SECONDS} s) gets a {@code : keep-alive} comment.
 *   <li><b>Resumption</b>: every SSE event has an id {@code <stream>-<sequence>}. A GET with
 *       {@code Last-Event-ID} replays that stream's later events (a POST's stream too, including
 *       its reply if it came after) and continues it; an unknown or malformed id attaches to the
 *       standalone stream. {@code SseStream} and {@code McpHttpSession} say what is kept.
 *   <li><b>DELETE</b> with the session header ends the session: {@code 204}; its open streams end.
 *   <li><b>Origin</b>: a request with an {@code Origin} header other than {@code http(s)://localhost},
 *       {@code 127.0.0.1} or {@code [::1]} (any port) is refused with {@code 403}, against DNS
 *       rebinding. Requests without one (non-browser clients) are allowed.
 *   <li>Other methods: {@code 405} with {@code Allow}; other paths: {@code 404}. An
 *       {@code Accept} header that admits neither JSON nor SSE: {@code 406}; a
 *       {@code Content-Type} other than JSON: {@code 415}; a body over 128 MiB: {@code 413}.
 *       Every error response carries a JSON-RPC error object with id {@code null}.
 * </ul>
 * It is deliberately lenient where the spec binds the client: a missing {@code Accept} counts as
 * accepting both, and a batch is accepted under every protocol version (2025-06-18 dropped them).
 *
 * <p>Limits: at most {@value #MAX_SESSIONS} sessions ({@code 503} for another {@code initialize});
 * a session with no request and no open stream for {@value #SESSION_IDLE_MINUTES} minutes is ended
 * when the next session starts. Each open SSE response or waiting JSON response holds one thread of
 * an unbounded pool of daemon threads; the handlers bring their own for work that takes time.
 *
 * <p>Binds exactly the given address; bind a loopback address unless the server must be reached
 * from elsewhere. Until {@link #close()}, the JDK server's dispatcher thread keeps the JVM alive.
 * Diagnostics (sessions starting and ending, failures) go to stderr.
 */
public final class McpHttpHost implements AutoCloseable {

    /** The path of the MCP endpoint. */
    public static final String PATH = "/mcp";

    static final int DEFAULT_KEEP_ALIVE_SECONDS = 15;

    /** How long an SSE response may be silent before a keep-alive comment, unless configured. */
    public static final Duration DEFAULT_KEEP_ALIVE = Duration.ofSeconds(DEFAULT_KEEP_ALIVE_SECONDS);
    static final int MAX_SESSIONS = 1024;
    static final int SESSION_IDLE_MINUTES = 60;
    static final Duration CLOSE_GRACE = Duration.ofSeconds(1);

    /** JSON-RPC error codes for transport-level failures, as the TypeScript and Python SDKs use them. */
    static final int TRANSPORT_ERROR = -32000;
    static final int SESSION_NOT_FOUND = -32001;

    static final String SESSION_HEADER = "Mcp-Session-Id";
    static final String PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version";
    static final String LAST_EVENT_ID_HEADER = "Last-Event-ID";

    private static final String JSON = "application/json";
    private static final String EVENT_STREAM = "text/event-stream";
    private static final SecureRandom SESSION_IDS = new SecureRandom();

    private final HttpServer http;
    private final ExecutorService httpExecutor;
    private final Duration keepAlive;
    private final PrintStream log;
    private final String logPrefix;
    private final McpSessionHandler.Factory handlers;
    private final Map<String, McpHttpSession> sessions = new ConcurrentHashMap<>();

    private final Object sessionCreation = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Whether SSE streams start with a priming event; see {@link #primingEvents}. */
    private volatile boolean priming;
    private final Object exchangeCount = new Object();
    private int activeExchanges; // guarded by exchangeCount

    private McpHttpHost(HttpServer http, ExecutorService httpExecutor, Duration keepAlive, PrintStream log,
                        String logName, McpSessionHandler.Factory handlers) {
        this.http = http;
        this.httpExecutor = httpExecutor;
        this.keepAlive = keepAlive;
        this.log = log;
        // String.concat, not +: a new shape of + costs a spawned server its own method handles at start.
        this.logPrefix = "[".concat(logName).concat("] http: ");
        this.handlers = handlers;
    }

    /**
     * Starts a server on {@code address} whose sessions are answered by {@code handlers}: the HTTP
     * side (sessions with a fresh {@code Mcp-Session-Id} per {@code initialize}, JSON or SSE
     * answers, the standalone GET stream, resumption, DELETE, Origin, limits) is this server's,
     * as described above.
     *
     * @param address where to listen; port 0 picks a free port (see {@link #address()})
     * @param keepAliveInterval how long an SSE response may be silent before a {@code : keep-alive}
     *     comment is written; positive ({@link #DEFAULT_KEEP_ALIVE} unless there is a reason)
     * @param logName names this server in its diagnostics on stderr and its threads, such as
     *     {@code mcp-chaos-demo}
     * @param handlers makes each session's handler; closed when this server closes
     * @return the running server
     * @throws IOException if the address cannot be bound
     */
    public static McpHttpHost start(InetSocketAddress address, Duration keepAliveInterval, String logName,
                                    McpSessionHandler.Factory handlers) throws IOException {
        requireNonNull(address, "address");
        requireNonNull(keepAliveInterval, "keepAliveInterval");
        requireNonNull(logName, "logName");
        requireNonNull(handlers, "handlers");
        if (keepAliveInterval.isNegative() || keepAliveInterval.isZero()) {
            throw new IllegalArgumentException("keepAliveInterval: " + keepAliveInterval + " (expected: > 0)");
        }
        // The JDK server writes a response's head and body apart: without TCP_NODELAY, Nagle and
        // the peer's delayed ACK hold every answer about 40 ms (21 requests/s on one connection).
        // Read once, when the first server is made; a value given on the command line wins.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        HttpServer http = HttpServer.create(address, 0);
        // Unbounded like a cached pool, because every open SSE response parks one thread for its
        // whole life; a bound would let idle GET streams starve the next POST.
        ExecutorService httpExecutor = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), new DaemonThreads(logName.concat("-http-")));
        McpHttpHost server = new McpHttpHost(http, httpExecutor, keepAliveInterval, System.err, logName, handlers);
        http.createContext("/", server::handle);
        http.setExecutor(httpExecutor);
        http.start();
        return server;
    }

    /**
     * With {@code true}, every SSE stream this host starts from now on (a POST's answer, a GET
     * that does not resume) begins with a priming event, an event id and empty data, for clients of
     * 2025-11-25 or later ({@code MCP-Protocol-Version}), as that revision's transport says a server
     * SHOULD: a client that got nothing else can still resume with {@code Last-Event-ID}. Off by
     * default, so that the events of a stream are its messages only. The drill turns it on.
     *
     * @return this host
     */
    public McpHttpHost primingEvents(boolean on) {
        this.priming = on;
        return this;
    }

    /**
     * Whether a stream started for this request begins with a priming event. Never for a
     * sessionless (2026-07-28) request: that revision removed event ids and resumption, so its
     * client has nothing to resume with (a broken stream is re-issued as a new request).
     */
    private boolean primes(HttpExchange exchange) {
        String version = exchange.getRequestHeaders().getFirst(PROTOCOL_VERSION_HEADER);
        return priming && McpRevisions.primes(version) && !McpRevisions.isSessionless(version);
    }

    /** The address the server listens on, with the actual port when 0 was asked for. */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    /**
     * The MCP endpoint, such as {@code http://127.0.0.1:3001/mcp}. For a wildcard address it names
     * the loopback address of the same family, which is where a local client can reach it.
     */
    public URI endpoint() {
        InetSocketAddress bound = address();
        InetAddress host = bound.getAddress();
        if (host.isAnyLocalAddress()) {
            host = loopback(host instanceof Inet6Address);
        }
        try {
            return new URI("http", null, host.getHostAddress(), bound.getPort(), PATH, null, null);
        } catch (URISyntaxException e) {
            throw new IllegalStateException("endpoint of " + bound, e);
        }
    }

    private static InetAddress loopback(boolean ipv6) {
        try {
            // Literal addresses: no name lookup happens.
            return InetAddress.getByAddress(ipv6
                    ? new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
                    : new byte[] {127, 0, 0, 1});
        } catch (UnknownHostException e) {
            throw new IllegalStateException("loopback address", e);
        }
    }

    /**
     * Stops the server: ends every session (open SSE responses write what they owe and end),
     * closes the handlers (the demo's interrupt their running tool calls), waits (at most
     * {@link #CLOSE_GRACE}) for responses still being written, and closes the listening socket
     * and every connection. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        sessions.values().forEach(McpHttpSession::end);
        sessions.clear();
        // The demo's interrupted slow calls answer at once, so JSON responses waiting for them finish too.
        handlers.close();
        awaitExchanges(CLOSE_GRACE);
        // Not stop(n): the JDK server waits the full n seconds when no exchange is running.
        http.stop(0);
        httpExecutor.shutdownNow();
    }

    /** Waits until no exchange is being handled (ended streams write their last bytes), at most {@code grace}. */
    private void awaitExchanges(Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        synchronized (exchangeCount) {
            while (activeExchanges > 0) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    log.println(logPrefix + activeExchanges + " response(s) still running at close; cutting them off");
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(exchangeCount, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** How many sessions are open (started by {@code initialize}, not yet ended or expired). */
    public int sessionCount() {
        return sessions.size();
    }

    // --- request handling ------------------------------------------------------------------

    private void handle(HttpExchange exchange) {
        synchronized (exchangeCount) {
            activeExchanges++;
        }
        try {
            if (closed.get()) {
                sendError(exchange, 503, TRANSPORT_ERROR, "Service Unavailable: the server is stopping");
            } else if (!PATH.equals(exchange.getRequestURI().getPath())) {
                sendError(exchange, 404, TRANSPORT_ERROR, "Not Found: the MCP endpoint is " + PATH);
            } else if (!isLocalOrigin(exchange.getRequestHeaders().getFirst("Origin"))) {
                sendError(exchange, 403, TRANSPORT_ERROR, "Forbidden: Origin "
                        + exchange.getRequestHeaders().getFirst("Origin") + " is not a localhost origin");
            } else {
                switch (exchange.getRequestMethod()) {
                    case "POST":
                        post(exchange);
                        break;
                    case "GET":
                        get(exchange);
                        break;
                    case "DELETE":
                        delete(exchange);
                        break;
                    default:
                        exchange.getResponseHeaders().set("Allow", "GET, POST, DELETE");
                        sendError(exchange, 405, TRANSPORT_ERROR,
                                "Method Not Allowed: " + exchange.getRequestMethod() + " (expected: GET, POST or DELETE)");
                }
            }
        } catch (IOException e) {
            // The client went away mid-response; nothing to answer, and it is routine for SSE.
            log.println(logPrefix + exchange.getRequestMethod() + " ended early: " + e);
        } catch (RuntimeException e) {
            log.println(logPrefix + "failed to handle " + exchange.getRequestMethod() + ": " + e);
            if (exchange.getResponseCode() == -1) {
                try {
                    sendError(exchange, 500, JsonRpc.INTERNAL_ERROR, "Internal error: " + e);
                } catch (IOException ignored) {
                    // The client is gone as well.
                }
            }
        } finally {
            exchange.close();
            synchronized (exchangeCount) {
                if (--activeExchanges == 0) {
                    exchangeCount.notifyAll();
                }
            }
        }
    }

    private void post(HttpExchange exchange) throws IOException {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        if (contentType != null && !JSON.equals(mediaType(contentType))) {
            sendError(exchange, 415, TRANSPORT_ERROR,
                    "Unsupported Media Type: " + contentType + " (expected: application/json)");
            return;
        }
        Accept accept = Accept.of(exchange);
        if (!accept.json() && !accept.eventStream()) {
            sendError(exchange, 406, TRANSPORT_ERROR,
                    "Not Acceptable: Accept must include application/json and text/event-stream");
            // (Either one is enough here; the spec asks clients for both.)
            return;
        }
        byte[] body = readBody(exchange);
        if (body == null) {
            sendError(exchange, 413, TRANSPORT_ERROR,
                    "Payload Too Large: a message may hold at most " + JsonRpc.MAX_MESSAGE_BYTES + " bytes");
            return;
        }
        JsonNode message;
        try {
            message = JsonRpc.parse(body);
        } catch (IOException e) {
            sendError(exchange, 400, JsonRpc.PARSE_ERROR, "Parse error: " + JsonRpc.parseErrorReason(e));
            return;
        }
        if (message.isArray() && containsInitialize(message)) {
            sendError(exchange, 400, JsonRpc.INVALID_REQUEST,
                    "Invalid Request: initialize must not be part of a batch");
            return;
        }
        if (isInitialize(message)) {
            initialize(exchange, message);
            return;
        }
        String sessionHeader = exchange.getRequestHeaders().getFirst(SESSION_HEADER);
        McpSessionHandler sessionless = handlers.sessionless();
        if ((sessionHeader == null || sessionHeader.isBlank()) && sessionless != null
                && McpRevisions.isSessionless(exchange.getRequestHeaders().getFirst(PROTOCOL_VERSION_HEADER))) {
            // No event ids: the revision has no resumption, a broken stream is re-issued instead.
            answer(exchange, accept, message, sessionless, this::unsolicitedWithoutSession,
                    number -> new SseStream(number, false));
            return;
        }
        McpHttpSession session = requireSession(exchange);
        if (session == null || !checkProtocolVersion(exchange, session)) {
            return;
        }
        session.touch();
        answer(exchange, accept, message, session.handler(), session.standalone()::append,
                number -> session.newPostStream());
    }

    /**
     * What a sessionless handler sends outside any request: the 2026-07-28 revision has no
     * standalone stream a client could read it on, so it is logged and let go.
     */
    private void unsolicitedWithoutSession(JsonNode message) {
        log.println(logPrefix + "sessionless: " + JsonRpc.abbreviate(message.path("method").asText("a message"))
                + " belongs to no request and has no stream to go on; not sent");
    }

    /** Answers one POSTed message with {@code handler}: 202 for no reply, else JSON or an SSE stream. */
    private void answer(HttpExchange exchange, Accept accept, JsonNode message, McpSessionHandler handler,
                        Consumer<JsonNode> unsolicited, IntFunction<SseStream> newStream)
            throws IOException {
        if (!containsRequest(message)) {
            // Notifications and responses are answered at once; only requests can take time.
            JsonNode reply = handler.handle(message, unsolicited).join();
            if (reply == null) {
                sendEmpty(exchange, 202);
            } else {
                // Not a request and not a notification or response: what the handler says is wrong.
                sendJson(exchange, 400, reply);
            }
            return;
        }
        if (accept.eventStream() && handler.answersAsStream(message)) {
            respondWithStream(exchange, handler, newStream.apply(0), message, handler == handlers.sessionless());
        } else {
            // A JSON response has no room for progress; should any come, the GET stream gets it.
            JsonNode reply = await(handler.handle(message, unsolicited));
            if (reply == null) {
                sendEmpty(exchange, 202);
            } else {
                sendJson(exchange, 200, reply);
            }
        }
    }

    private void initialize(HttpExchange exchange, JsonNode message) throws IOException {
        McpHttpSession session;
        synchronized (sessionCreation) {
            expireIdleSessions();
            if (sessions.size() >= MAX_SESSIONS) {
                sendError(exchange, 503, TRANSPORT_ERROR,
                        "Service Unavailable: " + MAX_SESSIONS + " sessions are open; end one with DELETE");
                return;
            }
            session = new McpHttpSession(newSessionId(), handlers);
        }
        JsonNode reply = session.handler().handle(message, session.standalone()::append).join();
        if (reply == null) {
            // An initialize notification (no id): nothing to answer, and no session to keep.
            sendEmpty(exchange, 202);
        } else if (reply.has("result")) {
            sessions.put(session.id(), session);
            log.println(logPrefix + "session " + session.id() + " started (protocol "
                    + reply.path("result").path("protocolVersion").asText() + ")");
            exchange.getResponseHeaders().set(SESSION_HEADER, session.id());
            sendJson(exchange, 200, reply);
        } else {
            sendJson(exchange, JsonRpc.validIdOrNull(message.get("id")) == null ? 400 : 200, reply);
        }
    }

    /**
     * Answers {@code message} as an SSE stream. A sessionless stream cannot be resumed (2026-07-28
     * has no {@code Last-Event-ID}), so when its connection ends, the reply is cancelled: what the
     * handler still holds open for it (a {@code subscriptions/listen}) is let go.
     */
    private void respondWithStream(HttpExchange exchange, McpSessionHandler handler, SseStream stream,
                                   JsonNode message, boolean sessionless) throws IOException {
        SseStream.Connection connection = stream.attach(0);
        if (primes(exchange)) {
            stream.prime();
        }
        CompletableFuture<JsonNode> reply = null;
        try {
            startEventStream(exchange);
            reply = handler.handle(message, stream::append);
            reply.whenComplete((answer, failure) -> {
                if (answer != null) {
                    stream.append(answer);
                }
                if (failure != null && !(failure instanceof CancellationException)) {
                    log.println(logPrefix + "failed to answer on stream " + stream.number() + ": " + failure);
                }
                stream.complete();
            });
            connection.serve(exchange.getResponseBody(), keepAlive);
        } finally {
            connection.detach();
            if (sessionless && reply != null) {
                reply.cancel(false);
            }
        }
    }

    private void get(HttpExchange exchange) throws IOException {
        if (!Accept.of(exchange).eventStream()) {
            sendError(exchange, 406, TRANSPORT_ERROR, "Not Acceptable: Accept must include text/event-stream");
            return;
        }
        McpHttpSession session = requireSession(exchange);
        if (session == null || !checkProtocolVersion(exchange, session)) {
            return;
        }
        session.touch();
        SseStream stream = session.standalone();
        long after = SseStream.AFTER_DELIVERED;
        String lastEventId = exchange.getRequestHeaders().getFirst(LAST_EVENT_ID_HEADER);
        if (lastEventId != null) {
            long[] parsed = SseStream.parseEventId(lastEventId);
            SseStream resumed = parsed == null ? null : session.stream(parsed[0]);
            if (resumed != null) {
                stream = resumed;
                after = parsed[1];
            } else {
                log.println(logPrefix + "session " + session.id() + ": cannot resume after event "
                        + JsonRpc.abbreviate(lastEventId) + " (unknown or forgotten); opening the standalone stream");
            }
        }
        // Attached before the headers go out: a client that sees them can count on the takeover.
        SseStream.Connection connection = stream.attach(after);
        if (after == SseStream.AFTER_DELIVERED && primes(exchange)) {
            stream.prime(); // a stream opened afresh, not one resumed
        }
        try {
            startEventStream(exchange);
            connection.serve(exchange.getResponseBody(), keepAlive);
        } finally {
            connection.detach();
            session.touch();
        }
    }

    private void delete(HttpExchange exchange) throws IOException {
        McpHttpSession session = requireSession(exchange);
        if (session == null) {
            return;
        }
        if (sessions.remove(session.id(), session)) {
            session.end();
            log.println(logPrefix + "session " + session.id() + " ended by the client");
        }
        sendEmpty(exchange, 204);
    }

    // --- helpers ---------------------------------------------------------------------------

    /** The session the request names; or {@code null} after answering 400 (no header) or 404 (unknown). */
    private McpHttpSession requireSession(HttpExchange exchange) throws IOException {
        String id = exchange.getRequestHeaders().getFirst(SESSION_HEADER);
        if (id == null || id.isBlank()) {
            sendError(exchange, 400, TRANSPORT_ERROR, "Bad Request: " + SESSION_HEADER + " header is required");
            return null;
        }
        McpHttpSession session = sessions.get(id.trim());
        if (session == null || session.isEnded()) {
            sendError(exchange, 404, SESSION_NOT_FOUND, "Session not found");
            return null;
        }
        return session;
    }

    /** False after answering 400 when the request names a protocol version this server does not speak. */
    private boolean checkProtocolVersion(HttpExchange exchange, McpHttpSession session) throws IOException {
        String version = exchange.getRequestHeaders().getFirst(PROTOCOL_VERSION_HEADER);
        if (version == null || session.handler().speaks(version.trim())) {
            return true;
        }
        sendError(exchange, 400, TRANSPORT_ERROR, "Bad Request: unsupported " + PROTOCOL_VERSION_HEADER + ": "
                + JsonRpc.abbreviate(version) + " (expected: one this server speaks, such as "
                + McpRevisions.WITH_SESSIONS + ")");
        return false;
    }

    /** Ends sessions nobody has used for a long time, so clients that never DELETE cannot fill the table. */
    private void expireIdleSessions() {
        long cutoff = System.nanoTime() - TimeUnit.MINUTES.toNanos(SESSION_IDLE_MINUTES);
        sessions.values().removeIf(session -> {
            if (!session.idleSince(cutoff)) {
                return false;
            }
            session.end();
            log.println(logPrefix + "session " + session.id() + " expired after "
                    + SESSION_IDLE_MINUTES + " idle minutes");
            return true;
        });
    }

    /** 128 random bits, URL-safe Base64: visible ASCII as the spec requires, and unguessable. */
    private static String newSessionId() {
        byte[] bytes = new byte[16];
        SESSION_IDS.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static boolean isInitialize(JsonNode message) {
        return message.isObject() && "initialize".equals(message.path("method").textValue());
    }

    private static boolean containsInitialize(JsonNode batch) {
        for (JsonNode element : batch) {
            if (isInitialize(element)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the message, or an element of the batch, is a request: a method and a valid id. */
    private static boolean containsRequest(JsonNode message) {
        if (message.isArray()) {
            for (JsonNode element : message) {
                if (containsRequest(element)) {
                    return true;
                }
            }
            return false;
        }
        return message.isObject() && message.has("method") && JsonRpc.validIdOrNull(message.get("id")) != null;
    }

    /**
     * Whether a request with this {@code Origin} may be served: none at all (not a browser), or
     * {@code http(s)} on a loopback name. A web page elsewhere that rebinds its DNS name to
     * 127.0.0.1 still sends its own origin, and is refused.
     */
    static boolean isLocalOrigin(String origin) {
        if (origin == null) {
            return true;
        }
        try {
            URI uri = new URI(origin.trim());
            String scheme = uri.getScheme();
            String host = uri.getHost();
            if (scheme == null || host == null
                    || !("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme))) {
                return false;
            }
            host = host.toLowerCase(Locale.ROOT);
            return host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]");
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static String mediaType(String headerValue) {
        int semicolon = headerValue.indexOf(';');
        return (semicolon < 0 ? headerValue : headerValue.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
    }

    /** What a request's {@code Accept} headers admit; none means anything. */
    private record Accept(boolean json, boolean eventStream) {
        static Accept of(HttpExchange exchange) {
            // Several Accept fields mean the same as one field with their values joined (RFC 9110).
            List<String> fields = exchange.getRequestHeaders().get("Accept");
            String header = fields == null ? "" : String.join(",", fields);
            if (header.isBlank()) {
                return new Accept(true, true);
            }
            boolean json = false;
            boolean eventStream = false;
            for (String range : header.split(",")) {
                String type = mediaType(range);
                json |= type.equals(JSON) || type.equals("application/*") || type.equals("*/*");
                eventStream |= type.equals(EVENT_STREAM) || type.equals("text/*") || type.equals("*/*");
            }
            return new Accept(json, eventStream);
        }
    }

    /** The whole request body, or {@code null} if it is longer than a message may be. */
    private static byte[] readBody(HttpExchange exchange) throws IOException {
        int limit = JsonRpc.MAX_MESSAGE_BYTES;
        String declared = exchange.getRequestHeaders().getFirst("Content-Length");
        if (declared != null) {
            try {
                if (Long.parseLong(declared.trim()) > limit) {
                    return null;
                }
            } catch (NumberFormatException e) {
                // The HTTP server has already framed the body; let the read below decide.
            }
        }
        try (InputStream in = exchange.getRequestBody()) {
            // readNBytes grows its buffer as data arrives, so a short body costs little.
            byte[] bytes = in.readNBytes(limit + 1);
            return bytes.length > limit ? null : bytes;
        }
    }

    /** Waits for a reply; {@code null} if the server is stopping (the response is then abandoned). */
    private static JsonNode await(CompletableFuture<JsonNode> reply) {
        try {
            return reply.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a reply: the server is stopping", e);
        } catch (ExecutionException e) {
            // Handlers answer their failures with error replies, so this is a bug; answer 500.
            throw new IllegalStateException("reply failed", e.getCause());
        }
    }

    private static void startEventStream(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", EVENT_STREAM);
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        // Tells nginx-style reverse proxies not to buffer the stream.
        exchange.getResponseHeaders().set("X-Accel-Buffering", "no");
        exchange.sendResponseHeaders(200, 0); // 0: chunked, length unknown
    }

    private static void sendJson(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = JsonRpc.toBytes(body);
        exchange.getResponseHeaders().set("Content-Type", JSON);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private static void sendEmpty(HttpExchange exchange, int status) throws IOException {
        exchange.sendResponseHeaders(status, -1); // -1: no body at all
    }

    private static void sendError(HttpExchange exchange, int status, int code, String message) throws IOException {
        sendJson(exchange, status, JsonRpc.error(null, code, message));
    }
}
