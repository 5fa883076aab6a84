package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Rule;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.server.check.CheckReports;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.events.EventRing;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * The control API: see and steer a running proxy over HTTP. Every body is JSON; rule bodies may
 * also be YAML (the rule file's format). The full reference is {@code docs/control-api.md}.
 *
 * <table>
 *   <caption>Endpoints</caption>
 *   <tr><td>{@code GET|HEAD /health}</td><td>200 {@code ok} while the proxy serves; never asks for the token</td></tr>
 *   <tr><td>{@code GET /status}</td><td>transport, seed, uptime, faults on or off, sessions, messages, and each rule's counters</td></tr>
 *   <tr><td>{@code GET /metrics}</td><td>Prometheus text</td></tr>
 *   <tr><td>{@code GET /rules}</td><td>the rules in force, in the rule file's format</td></tr>
 *   <tr><td>{@code PUT /rules}</td><td>replace every rule with those of a rule file given as the body</td></tr>
 *   <tr><td>{@code POST /rules}</td><td>add one rule (201; 409 when its name is taken)</td></tr>
 *   <tr><td>{@code GET|PATCH|DELETE /rules/{name}}</td><td>one rule; PATCH merges the body into it (RFC 7386)</td></tr>
 *   <tr><td>{@code POST /faults/disable}, {@code /faults/enable}</td><td>the panic switch</td></tr>
 *   <tr><td>{@code GET /events?since=N&limit=M}</td><td>recent events after sequence number N</td></tr>
 *   <tr><td>{@code GET /journal?since=N}, {@code DELETE /journal}</td><td>the journal's entries after N; clear it</td></tr>
 *   <tr><td>{@code GET /check}</td><td>the referee's report so far (with {@code --check})</td></tr>
 *   <tr><td>{@code GET|HEAD /ui}</td><td>the live page ({@link UiPages}); never asks for the token, its API calls do</td></tr>
 * </table>
 *
 * <p>A change applies atomically to the next message; a change that is not valid is answered
 * with 400 and a message naming the field, and the rules in force stay. Errors are
 * {@code {"error": "..."}}. With a token, every request must carry
 * {@code Authorization: Bearer <token>} but {@code GET|HEAD /health} and the page's static files
 * under {@code /ui}, which hold nothing of the proxy (and a browser cannot send a token on a
 * navigation). A refusal is 401 and is logged (without what was sent).
 * The token is looked at when the head has been read: the body of a refused request is read and
 * dropped, never held.
 * Bodies are UTF-8: one that is not is refused (400).
 *
 * <p>Served by {@link HttpEndpoint} (shared with the {@link OperationsServer operations listener})
 * with Netty on an event loop of its own, apart from the proxy's, so that no client
 * (with a token or without) can hold it for the others: every connection is read as its bytes
 * come, and each phase of a request has a deadline. Limits, with their defaults:
 * <ul>
 *   <li>request head: complete within {@link #DEFAULT_HEAD_TIMEOUT 10 s} of its first byte, else
 *       408 and the connection is closed; request line 8 KiB (414), header block 16 KiB (431);</li>
 *   <li>request body: complete within {@link #DEFAULT_BODY_TIMEOUT 30 s} of the end of the head,
 *       else 408 and a close; {@link #MAX_BODY_BYTES 1 MiB} (413);</li>
 *   <li>a connection with nothing of a request read is closed after
 *       {@link #DEFAULT_IDLE_TIMEOUT 60 s}, without an answer;</li>
 *   <li>a client that stops reading its answers: while they pile up past 64 KiB the connection
 *       reads no more of its requests, and it is closed when that lasts the body timeout.</li>
 * </ul>
 * Each 408 and each close for a client that does not read (its deadline, or more than 16
 * requests sent ahead of unread answers) is counted in
 * {@value ProxyMetrics#CONTROL_TIMEOUTS} by {@code phase} ({@code head}, {@code body},
 * {@code send}). Requests are answered on the event loop, one at a time: each is short and none
 * waits on anything.
 */
public final class ControlServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ControlServer.class);

    /** The Prometheus text exposition format's content type. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    /** The largest request body taken (a rule file); larger ones get 413. */
    public static final int MAX_BODY_BYTES = 1024 * 1024;
    /** How many events {@code GET /events} returns at most, unless {@code limit} asks for fewer. */
    public static final int MAX_EVENTS_PER_PAGE = 1000;
    /** Time from a request's first byte to the end of its head, by default. */
    public static final Duration DEFAULT_HEAD_TIMEOUT = Duration.ofSeconds(10);
    /** Time from the end of a request's head to the end of its body, by default. */
    public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);
    /** Time a connection with nothing of a request read is kept, by default. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final String JSON_TYPE = "application/json";
    private static final String TEXT_TYPE = "text/plain; charset=utf-8";

    private final HttpEndpoint endpoint;
    private final PrometheusMeterRegistry registry;
    private final RuleEngine engine;
    private final TransportKind transport;
    private final EventRing events;
    private final JournalRing journal;
    private final Referee referee;
    private final String seedSource;
    private final byte[] token;

    private ControlServer(Builder b) throws IOException {
        this.registry = b.registry;
        this.engine = b.engine;
        this.transport = b.transport;
        this.events = b.events;
        this.journal = b.journal;
        this.referee = b.referee;
        this.seedSource = b.seedSource;
        this.token = b.token == null ? null : b.token.getBytes(StandardCharsets.UTF_8);
        HttpEndpoint.TimeoutCounters timeouts = new HttpEndpoint.TimeoutCounters(timeoutCounter("head"),
                timeoutCounter("body"), timeoutCounter("send"));
        this.endpoint = new HttpEndpoint("control", b.address, new HttpEndpoint.Handler() {
            @Override
            public FullHttpResponse handle(FullHttpRequest request, String peer) {
                return ControlServer.this.handle(request, peer);
            }

            @Override
            public boolean answerFromHead(HttpRequest head) {
                return !isOpen(head.method().name(), pathOf(head)) && refusedBecause(head) != null;
            }
        }, MAX_BODY_BYTES, b.headTimeout, b.bodyTimeout, b.idleTimeout, timeouts);
    }

    private static String pathOf(HttpRequest request) {
        try {
            return new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            return request.uri(); // not /health: the token is asked, and the 400 comes after
        }
    }

    private Counter timeoutCounter(String phase) {
        return Counter.builder(ProxyMetrics.CONTROL_TIMEOUTS)
                .description("Control API connections closed because a phase of a request took too long")
                .tag("phase", phase)
                .register(registry);
    }

    /**
     * A control endpoint on {@code address} (port 0: any free port) for a proxy whose meters are
     * in {@code registry} and whose rules {@code engine} applies.
     */
    public static Builder builder(InetSocketAddress address, PrometheusMeterRegistry registry, RuleEngine engine,
                                  TransportKind transport) {
        return new Builder(address, registry, engine, transport);
    }

    /**
     * Refuses a control endpoint that would listen beyond loopback without a token: anyone who
     * can reach it could change the rules.
     *
     * @throws IllegalArgumentException saying what to do
     */
    public static void requireTokenBeyondLoopback(InetSocketAddress address, String token) {
        boolean loopback = address.getAddress() != null && address.getAddress().isLoopbackAddress();
        if (!loopback && token == null) {
            throw new IllegalArgumentException("control address " + address.getHostString() + ":" + address.getPort()
                    + " is not loopback, so the control API needs a token (expected: --control-token or the "
                    + "MCP_CHAOS_CONTROL_TOKEN environment variable, or a loopback address such as 127.0.0.1)");
        }
    }

    /** The address it listens on (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return endpoint.address();
    }

    /** An answer to a request: status, content type, body. */
    private record Reply(int status, String contentType, String body) {
        static Reply json(int status, JsonNode body) {
            return new Reply(status, JSON_TYPE, body.toString());
        }

        static Reply error(int status, String message) {
            return new Reply(status, JSON_TYPE, JSON.createObjectNode().put("error", message).toString());
        }
    }

    /** A request that cannot be served as asked, answered with its status and message. */
    private static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int status;
        private final String allow;

        Refusal(int status, String message) {
            this(status, message, null);
        }

        Refusal(int status, String message, String allow) {
            super(message, null, false, false);
            this.status = status;
            this.allow = allow;
        }
    }

    /** What a handler needs of a request: method, decoded path and query, headers, body, peer. */
    private record Request(String method, String path, QueryStringDecoder uri, FullHttpRequest http, String peer) {
    }

    private FullHttpResponse handle(FullHttpRequest http, String peer) {
        String method = http.method().name();
        FullHttpResponse response;
        if (!http.decoderResult().isSuccess()) {
            response = HttpEndpoint.malformed(http);
        } else {
            Reply reply;
            String allow = null;
            boolean unauthorized = false;
            try {
                QueryStringDecoder uri = decodeTarget(http.uri());
                String path = uri.path();
                if (UiPages.serves(method, path)) {
                    return UiPages.response(path, "HEAD".equals(method));
                }
                if (!isOpen(method, path)) {
                    authorize(http, method, path, peer);
                }
                reply = route(new Request(method, path, uri, http, peer));
            } catch (Refusal r) {
                allow = r.allow;
                unauthorized = r.status == 401;
                reply = Reply.error(r.status, r.getMessage());
            } catch (RuleFileException e) {
                reply = Reply.error(400, e.getMessage());
            } catch (NoSuchElementException e) {
                reply = Reply.error(404, e.getMessage());
            } catch (IOException | RuntimeException e) {
                log.warn("control request {} {} failed", method, http.uri(), e);
                reply = Reply.error(500, "internal error: " + e);
            }
            response = response(reply, "HEAD".equals(method));
            if (allow != null) {
                response.headers().set(HttpHeaderNames.ALLOW, allow);
            }
            if (unauthorized) {
                response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"mcp-chaos\"");
            }
        }
        return response;
    }

    /** The request target, its path and query decoded now (Netty's decoder is lazy): a bad %-escape is a 400. */
    private static QueryStringDecoder decodeTarget(String target) {
        QueryStringDecoder uri = new QueryStringDecoder(target);
        try {
            uri.path();
            uri.parameters();
        } catch (IllegalArgumentException e) {
            throw new Refusal(400, "request target: '" + target + "': " + e.getMessage()
                    + " (expected: a path and query with valid %-escapes)");
        }
        return uri;
    }

    private void authorize(HttpRequest http, String method, String path, String peer) {
        String why = refusedBecause(http);
        if (why == null) {
            return;
        }
        log.warn("control request refused: {} {} from {}: {}", method, path, peer, why);
        throw new Refusal(401, method + " " + path + ": refused (" + why
                + "; expected: Authorization: Bearer <the proxy's control token>)");
    }

    /** Why a request is not let in, or null when it is: no token is needed, or it has the right one. */
    private String refusedBecause(HttpRequest http) {
        if (token == null) {
            return null;
        }
        String header = http.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (header == null) {
            return "no Authorization header";
        } else if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return "an Authorization header that is not a bearer token";
        } else if (!MessageDigest.isEqual(token, header.substring(7).trim().getBytes(StandardCharsets.UTF_8))) {
            return "a wrong bearer token";
        }
        return null;
    }

    /** Whether a request head is for {@code GET} or {@code HEAD /health}, which never needs the token. */
    private static boolean isHealth(String method, String path) {
        return ("GET".equals(method) || "HEAD".equals(method)) && "/health".equals(path);
    }

    /** Whether a request never needs the token: {@code /health}, and the page's static files ({@link UiPages}). */
    private static boolean isOpen(String method, String path) {
        return isHealth(method, path) || UiPages.serves(method, path);
    }

    private Reply route(Request request) throws IOException {
        String method = request.method;
        String path = request.path;
        switch (path) {
            case "/health":
                requireMethod(method, path, "GET");
                return new Reply(200, TEXT_TYPE, "ok");
            case "/metrics":
                requireMethod(method, path, "GET");
                return new Reply(200, PROMETHEUS_CONTENT_TYPE, registry.scrape());
            case "/status":
                requireMethod(method, path, "GET");
                return Reply.json(200, status());
            case "/events":
                requireMethod(method, path, "GET");
                return events(request);
            case "/journal":
                return journal(request);
            case "/check":
                requireMethod(method, path, "GET");
                if (referee == null) {
                    throw new Refusal(404, "/check: this proxy runs no referee (expected: a proxy started with --check)");
                }
                return new Reply(200, JSON_TYPE, CheckReports.json(referee.report()));
            case "/faults/disable":
            case "/faults/enable":
                requireMethod(method, path, "POST");
                boolean on = path.endsWith("enable");
                boolean changed = engine.faultsEnabled(on, "POST " + path);
                return Reply.json(200, JSON.createObjectNode().put("faults_enabled", on).put("changed", changed));
            case "/rules":
                return rules(request);
            default:
                if (path.startsWith("/rules/") && path.length() > "/rules/".length()) {
                    return rule(request, path.substring("/rules/".length()));
                }
                throw new Refusal(404, "not found: " + path + " (expected: /health, /status, /metrics, /rules, "
                        + "/rules/{name}, /faults/disable, /faults/enable, /events, /journal, /check or /ui)");
        }
    }

    private Reply rules(Request request) throws IOException {
        switch (request.method) {
            case "GET":
                return Reply.json(200, rulesJson(engine.ruleSet()));
            case "PUT": {
                String body = body(request);
                RuleSet replaced = engine.update("PUT /rules", old -> RuleSet.parse(body, "PUT /rules"));
                return Reply.json(200, rulesJson(replaced));
            }
            case "POST": {
                Rule rule = RuleSet.parseRule(body(request), "POST /rules");
                RuleSet now = engine.update("POST /rules", old -> {
                    if (old.rule(rule.name()).isPresent()) {
                        throw new Refusal(409, "POST /rules: rule '" + rule.name() + "': a rule with this name "
                                + "exists (expected: a new name; PATCH or DELETE /rules/" + rule.name()
                                + " to change the one there)");
                    }
                    return old.with(rule, "POST /rules");
                });
                return Reply.json(201, ruleJson(now, rule.name()));
            }
            default:
                throw new Refusal(405, request.method + " /rules: not allowed (expected: GET, PUT or POST)",
                        "GET, PUT, POST");
        }
    }

    private Reply rule(Request request, String name) throws IOException {
        String cause = request.method + " /rules/" + name;
        switch (request.method) {
            case "GET":
                return Reply.json(200, ruleJson(engine.ruleSet(), name));
            case "PATCH": {
                String body = body(request);
                RuleSet now = engine.update(cause, old -> old.patch(name, body, cause));
                return Reply.json(200, ruleJson(now, name));
            }
            case "DELETE":
                engine.update(cause, old -> old.without(name, cause));
                return new Reply(204, JSON_TYPE, "");
            default:
                throw new Refusal(405, cause + ": not allowed (expected: GET, PATCH "
                        + "or DELETE)", "GET, PATCH, DELETE");
        }
    }

    private ObjectNode status() {
        ObjectNode status = JSON.createObjectNode();
        status.put("transport", transport.name().toLowerCase(Locale.ROOT));
        status.put("seed", engine.seed());
        status.put("seed_source", seedSource);
        status.put("uptime_seconds", engine.uptime().toMillis() / 1000.0);
        status.put("faults_enabled", engine.faultsEnabled());
        Gauge sessions = registry.find(ProxyMetrics.SESSIONS_ACTIVE).gauge();
        status.put("sessions_active", sessions == null ? 0 : (long) sessions.value());
        ObjectNode messages = status.putObject("messages");
        for (Direction direction : Direction.values()) {
            String tag = direction.name().toLowerCase(Locale.ROOT);
            double count = registry.find(ProxyMetrics.MESSAGES).tag("direction", tag).counters().stream()
                    .mapToDouble(Counter::count).sum();
            messages.put(tag, (long) count);
        }
        ArrayNode rules = status.putArray("rules");
        long injected = 0;
        for (RuleStats stats : engine.stats()) {
            rules.addObject().put("name", stats.name()).put("enabled", stats.enabled()).put("fault", stats.fault())
                    .put("matched", stats.matched()).put("injected", stats.injected());
            injected += stats.injected();
        }
        status.put("faults_injected", injected);
        return status;
    }

    private Reply events(Request request) {
        if (events == null) {
            throw new Refusal(404, "/events: this proxy keeps no events");
        }
        long since = queryNumber(request.uri, "since", 0);
        long limit = queryNumber(request.uri, "limit", MAX_EVENTS_PER_PAGE);
        EventRing.Page page = events.since(since, (int) Math.min(limit, MAX_EVENTS_PER_PAGE));
        StringBuilder body = new StringBuilder(64 + page.events().size() * 160);
        body.append("{\"last\":").append(page.last()).append(",\"missed\":").append(page.missed())
                .append(",\"events\":[");
        for (int i = 0; i < page.events().size(); i++) {
            body.append(i == 0 ? "" : ",").append(page.events().get(i)); // each is a JSON object already
        }
        body.append("]}");
        return new Reply(200, JSON_TYPE, body.toString());
    }

    private Reply journal(Request request) {
        if (journal == null) {
            throw new Refusal(404, "/journal: this proxy keeps no journal (it was turned off)");
        }
        switch (request.method) {
            case "GET":
                return new Reply(200, JSON_TYPE, JournalJson.write(journal.since(queryNumber(request.uri, "since", 0))));
            case "DELETE":
                journal.clear();
                return new Reply(204, JSON_TYPE, "");
            default:
                throw new Refusal(405, request.method + " /journal: not allowed (expected: GET or DELETE)",
                        "GET, DELETE");
        }
    }

    private static long queryNumber(QueryStringDecoder uri, String name, long fallback) {
        List<String> values = uri.parameters().get(name);
        if (values == null || values.isEmpty()) {
            return fallback;
        }
        String value = values.get(0);
        try {
            long number = Long.parseLong(value);
            if (number >= 0) {
                return number;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new Refusal(400, name + ": '" + value + "' (expected: a whole number >= 0)");
    }

    private static ObjectNode rulesJson(RuleSet rules) throws IOException {
        return (ObjectNode) JSON.readTree(rules.toJson());
    }

    private static JsonNode ruleJson(RuleSet rules, String name) throws IOException {
        for (JsonNode rule : rulesJson(rules).path("rules")) {
            if (name.equals(rule.path("name").asText())) {
                return rule;
            }
        }
        throw new NoSuchElementException("rule '" + name + "': no rule has this name");
    }

    private static void requireMethod(String method, String path, String allowed) {
        if (!allowed.equals(method) && !("GET".equals(allowed) && "HEAD".equals(method))) {
            throw new Refusal(405, method + " " + path + ": not allowed (expected: " + allowed + ")", allowed);
        }
    }

    /**
     * The body as text, decoded strictly: a byte sequence that is not UTF-8 is refused rather
     * than read as U+FFFD, which would make a rule named {@code "��"} of it.
     */
    private static String body(Request request) {
        ByteBuf content = request.http.content();
        ByteBuffer bytes = content.nioBuffer();
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer text = CharBuffer.allocate(bytes.remaining());
        CoderResult result = decoder.decode(bytes, text, true);
        if (!result.isError()) {
            result = decoder.flush(text);
        }
        if (result.isError()) {
            throw new Refusal(400, request.method + " " + request.path + ": the body is not valid UTF-8 (at byte "
                    + bytes.position() + " of " + content.readableBytes() + ": "
                    + String.format("0x%02x", content.getByte(content.readerIndex() + bytes.position()) & 0xff)
                    + "; expected: UTF-8 text, YAML or JSON)");
        }
        return text.flip().toString();
    }

    private static FullHttpResponse response(Reply reply, boolean head) {
        return HttpEndpoint.response(reply.status, reply.contentType, reply.body, head);
    }

    /** Stops listening and closes every connection at once. */
    @Override
    public void close() {
        endpoint.close();
    }


    /** Configures a {@link ControlServer}. */
    public static final class Builder {
        private final InetSocketAddress address;
        private final PrometheusMeterRegistry registry;
        private final RuleEngine engine;
        private final TransportKind transport;
        private EventRing events;
        private JournalRing journal;
        private Referee referee;
        private String seedSource = "given";
        private String token;
        private Duration headTimeout = DEFAULT_HEAD_TIMEOUT;
        private Duration bodyTimeout = DEFAULT_BODY_TIMEOUT;
        private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;

        private Builder(InetSocketAddress address, PrometheusMeterRegistry registry, RuleEngine engine,
                        TransportKind transport) {
            this.address = Objects.requireNonNull(address, "address");
            this.registry = Objects.requireNonNull(registry, "registry");
            this.engine = Objects.requireNonNull(engine, "engine");
            this.transport = Objects.requireNonNull(transport, "transport");
        }

        /** The journal {@code GET|DELETE /journal} serves; without (null), it answers 404. */
        public Builder journal(JournalRing journal) {
            this.journal = journal;
            return this;
        }

        /**
         * The referee whose report so far {@code GET /check} serves (as {@code --check-json} writes
         * it at the end); without (null), it answers 404.
         */
        public Builder referee(Referee referee) {
            this.referee = referee;
            return this;
        }

        /** The recent events {@code GET /events} serves; without, it answers 404. */
        public Builder events(EventRing events) {
            this.events = events;
            return this;
        }

        /**
         * Where the run's seed came from, shown as {@code seed_source} on {@code /status}:
         * {@code given}, {@code env:VAR}, {@code file} or {@code generated}; default {@code given}.
         */
        public Builder seedSource(String source) {
            this.seedSource = Objects.requireNonNull(source, "source");
            return this;
        }

        /**
         * The bearer token every request but {@code GET|HEAD /health} and the page's static files
         * ({@code GET|HEAD /ui}) must carry; null for none.
         */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** Time from a request's first byte to the end of its head (then 408); default 10 s. */
        public Builder headTimeout(Duration timeout) {
            this.headTimeout = requirePositive(timeout, "control head timeout");
            return this;
        }

        /**
         * Time from the end of a request's head to the end of its body (then 408), and the longest
         * a client may leave its answers unread; default 30 s.
         */
        public Builder bodyTimeout(Duration timeout) {
            this.bodyTimeout = requirePositive(timeout, "control body timeout");
            return this;
        }

        /** Time a connection with nothing of a request read is kept (then closed); default 60 s. */
        public Builder idleTimeout(Duration timeout) {
            this.idleTimeout = requirePositive(timeout, "control idle timeout");
            return this;
        }

        static Duration requirePositive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
            }
            return value;
        }

        /**
         * Binds the address and starts serving.
         *
         * @throws IOException when the address cannot be bound
         * @throws IllegalArgumentException when the address is not loopback and there is no token
         */
        public ControlServer start() throws IOException {
            requireTokenBeyondLoopback(address, token);
            ControlServer control = new ControlServer(this);
            InetSocketAddress bound = control.address();
            log.info("control API on http://{}:{}/ (/status, /rules, /faults/disable, /events, /journal, /metrics; "
                    + "the live page: /ui){}",
                    bound.getHostString(), bound.getPort(), token != null ? "; bearer token required" : "");
            return control;
        }
    }
}
