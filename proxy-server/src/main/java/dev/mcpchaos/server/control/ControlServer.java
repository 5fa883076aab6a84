package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Rule;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.server.events.EventRing;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The control API: see and steer a running proxy over HTTP. Every body is JSON; rule bodies may
 * also be YAML (the rule file's format). The full reference is {@code docs/control-api.md}.
 *
 * <table>
 *   <caption>Endpoints</caption>
 *   <tr><td>{@code GET /health}</td><td>200 {@code ok} while the proxy serves; never asks for the token</td></tr>
 *   <tr><td>{@code GET /status}</td><td>transport, seed, uptime, faults on or off, sessions, messages, and each rule's counters</td></tr>
 *   <tr><td>{@code GET /metrics}</td><td>Prometheus text</td></tr>
 *   <tr><td>{@code GET /rules}</td><td>the rules in force, in the rule file's format</td></tr>
 *   <tr><td>{@code PUT /rules}</td><td>replace every rule with those of a rule file given as the body</td></tr>
 *   <tr><td>{@code POST /rules}</td><td>add one rule (201; 409 when its name is taken)</td></tr>
 *   <tr><td>{@code GET|PATCH|DELETE /rules/{name}}</td><td>one rule; PATCH merges the body into it (RFC 7386)</td></tr>
 *   <tr><td>{@code POST /faults/disable}, {@code /faults/enable}</td><td>the panic switch</td></tr>
 *   <tr><td>{@code GET /events?since=N&limit=M}</td><td>recent events after sequence number N</td></tr>
 * </table>
 *
 * <p>A change applies atomically to the next message; a change that is not valid is answered
 * with 400 and a message naming the field, and the rules in force stay. Errors are
 * {@code {"error": "..."}}. With a token, every request but {@code GET /health} must carry
 * {@code Authorization: Bearer <token>}; a refusal is 401 and is logged (without what was sent).
 * Served by the JDK's HTTP server on one daemon thread: requests are few, and none blocks.
 */
public final class ControlServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ControlServer.class);

    /** The Prometheus text exposition format's content type. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    /** The largest request body taken (a rule file); larger ones get 413. */
    public static final int MAX_BODY_BYTES = 1024 * 1024;
    /** How many events {@code GET /events} returns at most, unless {@code limit} asks for fewer. */
    public static final int MAX_EVENTS_PER_PAGE = 1000;

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final String JSON_TYPE = "application/json";
    private static final String TEXT_TYPE = "text/plain; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrometheusMeterRegistry registry;
    private final RuleEngine engine;
    private final TransportKind transport;
    private final EventRing events;
    private final byte[] token;

    private ControlServer(Builder b, HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
        this.registry = b.registry;
        this.engine = b.engine;
        this.transport = b.transport;
        this.events = b.events;
        this.token = b.token == null ? null : b.token.getBytes(StandardCharsets.UTF_8);
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
        return server.getAddress();
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

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getPath();
            Reply reply;
            try {
                if (!("GET".equals(method) && "/health".equals(path))) {
                    authorize(exchange, method, path);
                }
                reply = route(exchange, method, path);
            } catch (Refusal r) {
                if (r.allow != null) {
                    exchange.getResponseHeaders().set("Allow", r.allow);
                }
                if (r.status == 401) {
                    exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"mcp-chaos\"");
                }
                reply = Reply.error(r.status, r.getMessage());
            } catch (RuleFileException e) {
                reply = Reply.error(400, e.getMessage());
            } catch (NoSuchElementException e) {
                reply = Reply.error(404, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("control request {} {} failed", method, exchange.getRequestURI(), e);
                reply = Reply.error(500, "internal error: " + e);
            }
            send(exchange, reply);
        }
    }

    private void authorize(HttpExchange exchange, String method, String path) {
        if (token == null) {
            return;
        }
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        String why;
        if (header == null) {
            why = "no Authorization header";
        } else if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            why = "an Authorization header that is not a bearer token";
        } else if (!MessageDigest.isEqual(token, header.substring(7).trim().getBytes(StandardCharsets.UTF_8))) {
            why = "a wrong bearer token";
        } else {
            return;
        }
        log.warn("control request refused: {} {} from {}: {}", method, path,
                exchange.getRemoteAddress().getAddress().getHostAddress(), why);
        throw new Refusal(401, method + " " + path + ": refused (" + why
                + "; expected: Authorization: Bearer <the proxy's control token>)");
    }

    private Reply route(HttpExchange exchange, String method, String path) throws IOException {
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
                return events(exchange);
            case "/faults/disable":
            case "/faults/enable":
                requireMethod(method, path, "POST");
                boolean on = path.endsWith("enable");
                boolean changed = engine.faultsEnabled(on, "POST " + path);
                return Reply.json(200, JSON.createObjectNode().put("faults_enabled", on).put("changed", changed));
            case "/rules":
                return rules(exchange, method);
            default:
                if (path.startsWith("/rules/") && path.length() > "/rules/".length()) {
                    return rule(exchange, method, path.substring("/rules/".length()));
                }
                throw new Refusal(404, "not found: " + path + " (expected: /health, /status, /metrics, /rules, "
                        + "/rules/{name}, /faults/disable, /faults/enable or /events)");
        }
    }

    private Reply rules(HttpExchange exchange, String method) throws IOException {
        switch (method) {
            case "GET":
                return Reply.json(200, rulesJson(engine.ruleSet()));
            case "PUT": {
                String body = body(exchange);
                RuleSet replaced = engine.update("PUT /rules", old -> RuleSet.parse(body, "PUT /rules"));
                return Reply.json(200, rulesJson(replaced));
            }
            case "POST": {
                Rule rule = RuleSet.parseRule(body(exchange), "POST /rules");
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
                throw new Refusal(405, method + " /rules: not allowed (expected: GET, PUT or POST)", "GET, PUT, POST");
        }
    }

    private Reply rule(HttpExchange exchange, String method, String name) throws IOException {
        String cause = method + " /rules/" + name;
        switch (method) {
            case "GET":
                return Reply.json(200, ruleJson(engine.ruleSet(), name));
            case "PATCH": {
                String body = body(exchange);
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

    private Reply events(HttpExchange exchange) {
        if (events == null) {
            throw new Refusal(404, "/events: this proxy keeps no events");
        }
        long since = queryNumber(exchange, "since", 0);
        long limit = queryNumber(exchange, "limit", MAX_EVENTS_PER_PAGE);
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

    private static long queryNumber(HttpExchange exchange, String name, long fallback) {
        String query = exchange.getRequestURI().getQuery();
        if (query == null) {
            return fallback;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            if (key.equals(name)) {
                String value = eq < 0 ? "" : pair.substring(eq + 1);
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
        }
        return fallback;
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

    private static String body(HttpExchange exchange) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
            if (bytes.length > MAX_BODY_BYTES) {
                throw new Refusal(413, "the body is larger than " + MAX_BODY_BYTES + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    private static void send(HttpExchange exchange, Reply reply) throws IOException {
        byte[] bytes = reply.body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", reply.contentType);
        boolean noBody = "HEAD".equals(exchange.getRequestMethod()) || reply.status == 204;
        exchange.sendResponseHeaders(reply.status, noBody ? -1 : bytes.length);
        if (!noBody) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** Stops listening at once. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /** Configures a {@link ControlServer}. */
    public static final class Builder {
        private final InetSocketAddress address;
        private final PrometheusMeterRegistry registry;
        private final RuleEngine engine;
        private final TransportKind transport;
        private EventRing events;
        private String token;

        private Builder(InetSocketAddress address, PrometheusMeterRegistry registry, RuleEngine engine,
                        TransportKind transport) {
            this.address = Objects.requireNonNull(address, "address");
            this.registry = Objects.requireNonNull(registry, "registry");
            this.engine = Objects.requireNonNull(engine, "engine");
            this.transport = Objects.requireNonNull(transport, "transport");
        }

        /** The recent events {@code GET /events} serves; without, it answers 404. */
        public Builder events(EventRing events) {
            this.events = events;
            return this;
        }

        /** The bearer token every request but {@code GET /health} must carry; null for none. */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /**
         * Binds the address and starts serving.
         *
         * @throws IOException when the address cannot be bound
         * @throws IllegalArgumentException when the address is not loopback and there is no token
         */
        public ControlServer start() throws IOException {
            requireTokenBeyondLoopback(address, token);
            HttpServer server;
            try {
                server = HttpServer.create(address, 0);
            } catch (IOException e) {
                throw new IOException("cannot listen for control requests on " + address.getHostString() + ":"
                        + address.getPort() + ": " + e.getMessage(), e);
            }
            ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
                Thread thread = new Thread(r, "mcp-chaos-control");
                thread.setDaemon(true);
                return thread;
            });
            ControlServer control = new ControlServer(this, server, executor);
            server.createContext("/", control::handle);
            server.setExecutor(executor);
            server.start();
            log.info("control API on http://{}:{}/ (/status, /rules, /faults/disable, /events, /metrics){}",
                    server.getAddress().getHostString(), server.getAddress().getPort(),
                    token != null ? "; bearer token required" : "");
            return control;
        }
    }
}
