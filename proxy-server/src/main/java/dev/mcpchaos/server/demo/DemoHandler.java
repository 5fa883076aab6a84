package dev.mcpchaos.server.demo;

import static dev.mcpchaos.server.host.JsonRpc.INTERNAL_ERROR;
import static dev.mcpchaos.server.host.JsonRpc.INVALID_PARAMS;
import static dev.mcpchaos.server.host.JsonRpc.INVALID_REQUEST;
import static dev.mcpchaos.server.host.JsonRpc.METHOD_NOT_FOUND;
import static dev.mcpchaos.server.host.JsonRpc.abbreviate;
import static dev.mcpchaos.server.host.JsonRpc.error;
import static dev.mcpchaos.server.host.JsonRpc.validIdOrNull;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.host.JsonRpc;
import dev.mcpchaos.server.host.McpHttpHost;
import dev.mcpchaos.server.host.McpRevisions;
import dev.mcpchaos.server.host.McpSessionHandler;
import dev.mcpchaos.server.host.McpStdioHost;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The demo server's JSON-RPC handling, independent of any transport: it takes one parsed message
 * (or a batch) and completes with the reply, and hands every other outgoing message to a sink.
 * The hosts of both transports drive it, stdio ({@link McpStdioHost}, through {@link DemoServer})
 * and Streamable HTTP ({@link McpHttpHost}, through {@link DemoHttpServer}), so the two answer
 * exactly alike; {@link DemoHandlers} makes one a session.
 *
 * <p>Outgoing messages other than replies come in two kinds, and the transports route them
 * differently, which is why they have separate sinks:
 * <ul>
 *   <li><em>related</em> messages belong to one request ({@code notifications/progress} of a
 *       {@code slow} call): given to the sink passed to {@link #handle}. Over HTTP they go on the
 *       request's own SSE stream.
 *   <li><em>unsolicited</em> messages belong to no request (the {@code notifications/message} log
 *       line sent after {@code logging/setLevel}): given to the sink passed to the constructor.
 *       Over HTTP they go on the session's standalone GET stream.
 * </ul>
 *
 * <p>Threads: {@link #handle} answers everything cheap on the calling thread and runs
 * {@code tools/call} on the given executor (so a {@code slow} call never delays a {@code ping});
 * sinks are therefore called from several threads and must be thread-safe. Thread-safe itself.
 */
final class DemoHandler implements McpSessionHandler {

    static final String LATEST_PROTOCOL_VERSION = McpRevisions.LATEST;
    static final List<String> SUPPORTED_PROTOCOL_VERSIONS = McpRevisions.WITH_SESSIONS;

    /** The {@code logger} named in the log notifications this server sends. */
    static final String LOGGER_NAME = DemoServer.NAME;

    /** The RFC 5424 severities MCP's {@code logging/setLevel} accepts. */
    private static final Set<String> LOG_LEVELS =
            Set.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

    static final String LOG_PREFIX = "[" + DemoServer.NAME + "] ";

    /** The -32022 error code: the version a sessionless request names is not one this server speaks. */
    static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;

    /** The {@code _meta} key that ties a notification of a {@code subscriptions/listen} stream to its request. */
    static final String SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";

    /**
     * How many {@code subscriptions/listen} streams may be open at once; another is refused with
     * -32603, as the TypeScript SDK 2.4 server refuses one past its own limit. A stream whose client
     * went away is let go when the host notices (at its next write), so this bounds a burst only.
     */
    static final int MAX_SUBSCRIPTIONS = 256;

    private static final String INSTRUCTIONS = "This is the mcp-chaos built-in demo server. Its tools (echo, add, "
            + "slow, large) give a proxy something predictable to inject faults into.";

    /**
     * Makes the nodes of every message; both hosts parse and write them with {@link JsonRpc}
     * (no ObjectMapper on the way to a spawned demo server's first answer).
     */
    private static final JsonNodeFactory NODES = JsonRpc.NODES;

    private final PrintStream log;
    private final String serverVersion;
    private final DemoTools tools;
    private final Executor toolExecutor;
    private final Consumer<JsonNode> unsolicited;
    /** Whether this handler answers sessionless 2026-07-28 requests (no initialize, _meta on each). */
    private final boolean sessionless;
    /** The open {@code subscriptions/listen} streams, each with the graceful-closure result it ends with. */
    private final Map<CompletableFuture<JsonNode>, JsonNode> subscriptions = new ConcurrentHashMap<>();

    /**
     * @param log where diagnostics go (stderr in production)
     * @param serverVersion the {@code serverInfo.version} to report
     * @param toolExecutor runs {@code tools/call}; owned by the caller, which shuts it down
     * @param unsolicited receives messages that belong to no request; must be thread-safe
     */
    DemoHandler(PrintStream log, String serverVersion, Executor toolExecutor, Consumer<JsonNode> unsolicited) {
        this(log, serverVersion, toolExecutor, unsolicited, false);
    }

    /**
     * @param sessionless whether it answers the sessionless 2026-07-28 revision: {@code server/discover},
     *     the version in each request's {@code _meta} (else -32022), {@code resultType} on results
     */
    DemoHandler(PrintStream log, String serverVersion, Executor toolExecutor, Consumer<JsonNode> unsolicited,
                boolean sessionless) {
        this.sessionless = sessionless;
        this.log = requireNonNull(log, "log");
        this.serverVersion = requireNonNull(serverVersion, "serverVersion");
        this.toolExecutor = requireNonNull(toolExecutor, "toolExecutor");
        this.unsolicited = requireNonNull(unsolicited, "unsolicited");
        this.tools = new DemoTools(NODES);
    }

    /**
     * Handles one parsed message or batch.
     *
     * @param message what the client sent: an object, an array (a batch), or any other JSON value
     *     (answered with -32600)
     * @param related receives the messages that belong to a request of {@code message} (progress)
     *     before its reply completes; must be thread-safe
     * @return the reply, or {@code null} when none is due (notifications, responses, a batch of
     *     those); a batch's reply is an array
     */
    @Override
    public CompletableFuture<JsonNode> handle(JsonNode message, Consumer<JsonNode> related) {
        requireNonNull(message, "message");
        requireNonNull(related, "related");
        if (message.isArray()) {
            return handleBatch((ArrayNode) message, related);
        }
        return handleOne(message, related);
    }

    private CompletableFuture<JsonNode> handleBatch(ArrayNode batch, Consumer<JsonNode> related) {
        if (batch.isEmpty()) {
            // JSON-RPC 2.0: an empty batch is answered with one error, not an empty array.
            return done(error(null, INVALID_REQUEST, "Invalid Request: empty batch"));
        }
        List<CompletableFuture<JsonNode>> replies = new ArrayList<>(batch.size());
        for (JsonNode element : batch) {
            replies.add(handleOne(element, related));
        }
        return CompletableFuture.allOf(replies.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            ArrayNode answers = NODES.arrayNode();
            for (CompletableFuture<JsonNode> reply : replies) {
                JsonNode answer = reply.join();
                if (answer != null) {
                    answers.add(answer);
                }
            }
            // A batch of notifications only gets no reply at all.
            return answers.isEmpty() ? null : answers;
        });
    }

    /**
     * Handles one message. A bug in handling one message becomes an internal error for that
     * message instead of ending the session, because a demo server that dies on odd input would be
     * blamed on the proxy.
     */
    private CompletableFuture<JsonNode> handleOne(JsonNode message, Consumer<JsonNode> related) {
        try {
            return dispatch(message, related);
        } catch (RuntimeException e) {
            log.println(LOG_PREFIX + "failed to handle " + abbreviate(message.toString()) + ": " + e);
            JsonNode id = message.get("id");
            // A notification gets no reply, not even an error.
            return done(id == null ? null : error(validIdOrNull(id), INTERNAL_ERROR, "Internal error: " + e));
        }
    }

    private CompletableFuture<JsonNode> dispatch(JsonNode message, Consumer<JsonNode> related) {
        if (!message.isObject()) {
            return done(error(null, INVALID_REQUEST, "Invalid Request: expected a JSON object"));
        }
        JsonNode id = message.get("id");
        JsonNode method = message.get("method");
        if (method == null) {
            if (message.has("result") || message.has("error")) {
                // A response; this server never sends requests, so there is nothing to match it to.
                return done(null);
            }
            return done(error(validIdOrNull(id), INVALID_REQUEST, "Invalid Request: no method"));
        }
        if (id == null) {
            // Notifications (notifications/initialized, cancelled, ...) need no reply and change nothing here.
            return done(null);
        }
        if (validIdOrNull(id) == null) {
            return done(error(null, INVALID_REQUEST, "Invalid Request: id must be a string or a number"));
        }
        if (!"2.0".equals(message.path("jsonrpc").textValue())) {
            return done(error(id, INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\""));
        }
        if (!method.isTextual()) {
            return done(error(id, INVALID_REQUEST, "Invalid Request: method must be a string"));
        }
        JsonNode params = message.get("params");
        if (sessionless) {
            return dispatchSessionless(id, method.textValue(), params, related);
        }
        switch (method.textValue()) {
            case "initialize":
                return done(result(id, initializeResult(params)));
            case "ping":
                return done(result(id, NODES.objectNode()));
            case "logging/setLevel":
                announceLogLevel(params);
                return done(result(id, NODES.objectNode()));
            case "tools/list":
                return done(result(id, NODES.objectNode().set("tools", tools.list())));
            case "tools/call":
                return callTool(id, params, related);
            default:
                return done(error(id, METHOD_NOT_FOUND, "Method not found: " + method.textValue()));
        }
    }

    /**
     * A sessionless (2026-07-28) request: its {@code _meta} names the version it speaks, which
     * must be one this server speaks (else -32022 with the versions it does, Versioning, "Protocol
     * Version Negotiation"); results carry {@code resultType: "complete"}.
     */
    private CompletableFuture<JsonNode> dispatchSessionless(JsonNode id, String method, JsonNode params,
                                                            Consumer<JsonNode> related) {
        String requested = params == null ? null
                : params.path("_meta").path(McpRevisions.PROTOCOL_VERSION_META).textValue();
        if (requested == null) {
            return done(error(id, INVALID_PARAMS, "Invalid params: _meta." + McpRevisions.PROTOCOL_VERSION_META
                    + " is missing (every 2026-07-28 request names its version)"));
        }
        if (!McpRevisions.SESSIONLESS.contains(requested)) {
            ObjectNode data = NODES.objectNode();
            McpRevisions.SESSIONLESS.forEach(data.putArray("supported")::add);
            data.put("requested", requested);
            ObjectNode response = error(id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version");
            ((ObjectNode) response.get("error")).set("data", data);
            return done(response);
        }
        switch (method) {
            case "server/discover":
                ObjectNode discovered = NODES.objectNode();
                McpRevisions.SESSIONLESS.forEach(discovered.putArray("supportedVersions")::add);
                // listChanged: a subscriptions/listen stream for tools/list_changed is served (the
                // list never changes, so none is ever sent; a stream to hold open and cut).
                discovered.putObject("capabilities").putObject("tools").put("listChanged", true);
                discovered.put("instructions", INSTRUCTIONS);
                discovered.put("ttlMs", 0);
                discovered.put("cacheScope", "private");
                discovered.putObject("_meta").putObject("io.modelcontextprotocol/serverInfo")
                        .put("name", DemoServer.NAME).put("version", serverVersion);
                return done(complete(result(id, discovered)));
            case "ping":
                return done(complete(result(id, NODES.objectNode())));
            case "tools/list":
                // A list result of this revision says how long it may be cached: not at all, as the
                // TypeScript SDK 2.4 server answers (its client refuses a list without them).
                ObjectNode listed = NODES.objectNode().set("tools", tools.list());
                listed.put("ttlMs", 0);
                listed.put("cacheScope", "private");
                return done(complete(result(id, listed)));
            case "tools/call":
                return callTool(id, params, related).thenApply(DemoHandler::complete);
            case "subscriptions/listen":
                return listen(id, params, related);
            default:
                return done(error(id, METHOD_NOT_FOUND, "Method not found: " + method));
        }
    }

    /**
     * A {@code subscriptions/listen} request (2026-07-28, basic/patterns/subscriptions): the
     * acknowledgment first, with the subset of the filter honoured ({@code toolsListChanged} only:
     * the demo has no prompts or resources), then the stream stays open. Its tool list never
     * changes, so no {@code notifications/tools/list_changed} follows; the reply (the graceful
     * closure, a {@code complete} result) comes only when the server stops ({@link #endSubscriptions}),
     * or at once when nothing was honoured. Over HTTP it is answered as an SSE stream
     * ({@link #answersAsStream}); the host lets it go when its client closes that stream.
     */
    private CompletableFuture<JsonNode> listen(JsonNode id, JsonNode params, Consumer<JsonNode> related) {
        JsonNode filter = params == null ? null : params.get("notifications");
        if (filter == null || !filter.isObject()) {
            return done(error(id, INVALID_PARAMS, "Invalid params: 'notifications' is required and must be an object"));
        }
        if (subscriptions.size() >= MAX_SUBSCRIPTIONS) {
            return done(error(id, INTERNAL_ERROR, "Subscription limit reached (" + MAX_SUBSCRIPTIONS + ")"));
        }
        ObjectNode honored = NODES.objectNode();
        if (filter.path("toolsListChanged").asBoolean(false)) {
            honored.put("toolsListChanged", true);
        }
        ObjectNode ack = NODES.objectNode();
        ack.put("jsonrpc", "2.0");
        ack.put("method", "notifications/subscriptions/acknowledged");
        ObjectNode ackParams = ack.putObject("params");
        ackParams.putObject("_meta").set(SUBSCRIPTION_ID_META, id);
        ackParams.set("notifications", honored);
        related.accept(ack);
        ObjectNode closure = NODES.objectNode();
        closure.put("resultType", "complete");
        closure.putObject("_meta").set(SUBSCRIPTION_ID_META, id);
        JsonNode graceful = result(id, closure);
        if (honored.isEmpty()) {
            return done(graceful); // nothing to listen for: closed gracefully at once, as the SDK's server does
        }
        CompletableFuture<JsonNode> subscription = new CompletableFuture<>();
        subscriptions.put(subscription, graceful);
        // Cancelled by the host when the client went away: forgotten, nothing sent.
        subscription.whenComplete((reply, failure) -> subscriptions.remove(subscription));
        return subscription;
    }

    /**
     * Ends every open {@code subscriptions/listen} stream gracefully, as a server that stops
     * SHOULD (basic/patterns/subscriptions, "Graceful Closure"): each gets its {@code complete}
     * result, and the host then ends the stream.
     */
    void endSubscriptions() {
        subscriptions.forEach(CompletableFuture::complete);
    }

    /** A result response with {@code resultType: "complete"}, as 2026-07-28 results carry; an error as it is. */
    private static JsonNode complete(JsonNode response) {
        JsonNode result = response.get("result");
        if (result instanceof ObjectNode object && !object.has("resultType")) {
            object.put("resultType", "complete");
        }
        return response;
    }

    /**
     * Sends one {@code notifications/message} at the level just set, so a client (or a test) has
     * a server-initiated message to observe. It is logged at exactly that level, so it never
     * breaks the filter the client asked for. An unknown level sends nothing (and is still
     * answered with an empty result, as before).
     */
    private void announceLogLevel(JsonNode params) {
        String level = params == null ? null : params.path("level").textValue();
        if (level == null || !LOG_LEVELS.contains(level)) {
            return;
        }
        ObjectNode notification = NODES.objectNode();
        notification.put("jsonrpc", "2.0");
        notification.put("method", "notifications/message");
        notification.putObject("params")
                .put("level", level)
                .put("logger", LOGGER_NAME)
                .put("data", "log level set to " + level);
        unsolicited.accept(notification);
    }

    private ObjectNode initializeResult(JsonNode params) {
        String requested = params == null ? null : params.path("protocolVersion").textValue();
        ObjectNode result = NODES.objectNode();
        result.put("protocolVersion", requested != null && SUPPORTED_PROTOCOL_VERSIONS.contains(requested)
                ? requested
                : LATEST_PROTOCOL_VERSION);
        ObjectNode capabilities = result.putObject("capabilities");
        capabilities.putObject("tools").put("listChanged", false);
        capabilities.putObject("logging");
        result.putObject("serverInfo").put("name", DemoServer.NAME).put("version", serverVersion);
        result.put("instructions", INSTRUCTIONS);
        return result;
    }

    private CompletableFuture<JsonNode> callTool(JsonNode id, JsonNode params, Consumer<JsonNode> related) {
        if (params == null || !params.isObject()) {
            return done(error(id, INVALID_PARAMS, "Invalid params: tools/call needs params with a tool name"));
        }
        JsonNode name = params.get("name");
        if (name == null || !name.isTextual()) {
            return done(error(id, INVALID_PARAMS, "Invalid params: name must be a string"));
        }
        if (!tools.isKnown(name.textValue())) {
            return done(error(id, INVALID_PARAMS, "Unknown tool: " + name.textValue()));
        }
        DemoTools.ProgressReporter progress = progressReporter(progressToken(params), related);
        return CompletableFuture
                .supplyAsync(() -> (JsonNode) result(id, tools.call(name.textValue(), params.get("arguments"), progress)),
                        toolExecutor)
                .exceptionally(failure -> {
                    log.println(LOG_PREFIX + "tool " + name.textValue() + " failed: " + failure);
                    return error(id, INTERNAL_ERROR, "Internal error: " + failure.getMessage());
                });
    }

    @Override
    public boolean answersAsStream(JsonNode request) {
        return streamsProgress(request)
                || sessionless && "subscriptions/listen".equals(request.path("method").textValue());
    }

    @Override
    public boolean speaks(String protocolVersion) {
        return SUPPORTED_PROTOCOL_VERSIONS.contains(protocolVersion);
    }

    /**
     * Whether {@code message} (one message or a batch) holds a {@code tools/call} of {@code slow}
     * with a usable progress token: the one request this server streams progress for. The HTTP
     * transport answers exactly those POSTs with an SSE stream.
     */
    static boolean streamsProgress(JsonNode message) {
        if (message.isArray()) {
            for (JsonNode element : message) {
                if (streamsProgress(element)) {
                    return true;
                }
            }
            return false;
        }
        JsonNode params = message.path("params");
        return message.isObject()
                && validIdOrNull(message.get("id")) != null
                && "tools/call".equals(message.path("method").textValue())
                && "slow".equals(params.path("name").textValue())
                && progressToken(params) != null;
    }

    /** The request's {@code _meta.progressToken} if it is a string or a number (MCP's rule), else {@code null}. */
    private static JsonNode progressToken(JsonNode params) {
        JsonNode token = params.path("_meta").get("progressToken");
        return token != null && (token.isTextual() || token.isNumber()) ? token : null;
    }

    private static DemoTools.ProgressReporter progressReporter(JsonNode token, Consumer<JsonNode> related) {
        if (token == null) {
            return DemoTools.ProgressReporter.NONE;
        }
        return (progress, total, message) -> {
            ObjectNode notification = NODES.objectNode();
            notification.put("jsonrpc", "2.0");
            notification.put("method", "notifications/progress");
            notification.putObject("params")
                    .<ObjectNode>set("progressToken", token)
                    .put("progress", progress)
                    .put("total", total)
                    .put("message", message);
            related.accept(notification);
        };
    }

    private static ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode response = NODES.objectNode();
        response.put("jsonrpc", "2.0");
        response.set("id", id);
        response.set("result", result);
        return response;
    }

    private static CompletableFuture<JsonNode> done(JsonNode reply) {
        return CompletableFuture.completedFuture(reply);
    }
}
