package dev.mcpchaos.server.demo;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of the demo server over one pair of streams: frames lines, dispatches JSON-RPC messages,
 * runs tool calls on worker threads and writes replies.
 *
 * <p>Threads: the caller of {@link #run()} reads and answers everything cheap inline (in order);
 * {@code tools/call} runs on a pool of at most {@value #MAX_TOOL_THREADS} daemon threads (more calls
 * queue), so a {@code slow} call never delays a {@code ping}. Every write goes through one lock
 * because replies and progress notifications come from several threads and a line must never be
 * interleaved with another.
 *
 * <p>Limits: an incoming line may hold at most {@value #MAX_LINE_BYTES} bytes (a longer one is
 * skipped and answered with a parse error); at end of input, tool calls still running get
 * {@link #DRAIN_TIMEOUT} to finish before they are interrupted.
 */
final class DemoSession {

    static final String LATEST_PROTOCOL_VERSION = "2025-11-25";
    static final List<String> SUPPORTED_PROTOCOL_VERSIONS =
            List.of("2024-11-05", "2025-03-26", "2025-06-18", LATEST_PROTOCOL_VERSION);

    /** Room for an {@code echo} of the largest {@code large} payload, plus its envelope. */
    static final int MAX_LINE_BYTES = 128 * 1024 * 1024;

    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int METHOD_NOT_FOUND = -32601;
    static final int INVALID_PARAMS = -32602;
    static final int INTERNAL_ERROR = -32603;

    private static final int MAX_TOOL_THREADS = 64;
    private static final String LOG_PREFIX = "[mcp-chaos-demo] ";
    private static final AtomicInteger SESSION_COUNTER = new AtomicInteger();

    private final ObjectMapper mapper = JsonMapper.builder(JsonFactory.builder()
                    // Jackson's default cap (20 M chars per string) is below what MAX_LINE_BYTES allows.
                    .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(MAX_LINE_BYTES).build())
                    .build())
            // A line with trailing garbage is not one JSON value; answer it as a parse error.
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private final BoundedLineReader reader;
    private final OutputStream out;
    private final PrintStream log;
    private final String serverVersion;
    private final DemoTools tools;
    private final ExecutorService toolExecutor;
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private final Object writeLock = new Object();
    private boolean outputBroken; // guarded by writeLock

    DemoSession(InputStream in, OutputStream out, PrintStream log, String serverVersion) {
        this.reader = new BoundedLineReader(requireNonNull(in, "in"), MAX_LINE_BYTES);
        this.out = requireNonNull(out, "out");
        this.log = requireNonNull(log, "log");
        this.serverVersion = requireNonNull(serverVersion, "serverVersion");
        this.tools = new DemoTools(mapper.getNodeFactory());
        ThreadPoolExecutor executor = new ThreadPoolExecutor(MAX_TOOL_THREADS, MAX_TOOL_THREADS,
                30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), toolThreadFactory());
        executor.allowCoreThreadTimeOut(true);
        this.toolExecutor = executor;
    }

    /** Serves until the input ends, then drains in-flight tool calls; returns the exit code. */
    int run() throws IOException {
        try {
            BoundedLineReader.Line line;
            while ((line = reader.next()) != null) {
                onLine(line);
            }
            drainInFlight();
            return 0;
        } finally {
            toolExecutor.shutdownNow();
        }
    }

    private void onLine(BoundedLineReader.Line line) {
        if (line.tooLong()) {
            log.println(LOG_PREFIX + "skipped a message longer than " + MAX_LINE_BYTES + " bytes");
            write(error(null, PARSE_ERROR, "Parse error: message longer than " + MAX_LINE_BYTES + " bytes"));
            return;
        }
        if (line.isBlank()) {
            return;
        }
        JsonNode message;
        try {
            message = mapper.readTree(line.bytes());
        } catch (IOException e) {
            String reason = e instanceof JsonProcessingException
                    ? ((JsonProcessingException) e).getOriginalMessage()
                    : e.getMessage();
            write(error(null, PARSE_ERROR, "Parse error: " + reason));
            return;
        }
        if (message.isArray()) {
            onBatch((ArrayNode) message);
        } else {
            track(handle(message).thenAccept(reply -> {
                if (reply != null) {
                    write(reply);
                }
            }));
        }
    }

    private void onBatch(ArrayNode batch) {
        if (batch.isEmpty()) {
            // JSON-RPC 2.0: an empty batch is answered with one error, not an empty array.
            write(error(null, INVALID_REQUEST, "Invalid Request: empty batch"));
            return;
        }
        List<CompletableFuture<JsonNode>> replies = new ArrayList<>(batch.size());
        for (JsonNode element : batch) {
            replies.add(handle(element));
        }
        track(CompletableFuture.allOf(replies.toArray(new CompletableFuture<?>[0])).thenRun(() -> {
            ArrayNode answers = mapper.createArrayNode();
            for (CompletableFuture<JsonNode> reply : replies) {
                JsonNode answer = reply.join();
                if (answer != null) {
                    answers.add(answer);
                }
            }
            // A batch of notifications only gets no reply at all.
            if (!answers.isEmpty()) {
                write(answers);
            }
        }));
    }

    /**
     * Handles one message; completes with its reply, or with {@code null} when none is due. A bug
     * in handling one message becomes an internal error for that message instead of ending the
     * session, because a demo server that dies on odd input would be blamed on the proxy.
     */
    private CompletableFuture<JsonNode> handle(JsonNode message) {
        try {
            return dispatch(message);
        } catch (RuntimeException e) {
            log.println(LOG_PREFIX + "failed to handle " + abbreviate(message.toString()) + ": " + e);
            JsonNode id = message.get("id");
            // A notification gets no reply, not even an error.
            return done(id == null ? null : error(validIdOrNull(id), INTERNAL_ERROR, "Internal error: " + e));
        }
    }

    private CompletableFuture<JsonNode> dispatch(JsonNode message) {
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
        switch (method.textValue()) {
            case "initialize":
                return done(result(id, initializeResult(params)));
            case "ping":
            case "logging/setLevel":
                return done(result(id, mapper.createObjectNode()));
            case "tools/list":
                return done(result(id, mapper.createObjectNode().set("tools", tools.list())));
            case "tools/call":
                return callTool(id, params);
            default:
                return done(error(id, METHOD_NOT_FOUND, "Method not found: " + method.textValue()));
        }
    }

    private ObjectNode initializeResult(JsonNode params) {
        String requested = params == null ? null : params.path("protocolVersion").textValue();
        ObjectNode result = mapper.createObjectNode();
        result.put("protocolVersion", requested != null && SUPPORTED_PROTOCOL_VERSIONS.contains(requested)
                ? requested
                : LATEST_PROTOCOL_VERSION);
        ObjectNode capabilities = result.putObject("capabilities");
        capabilities.putObject("tools").put("listChanged", false);
        capabilities.putObject("logging");
        result.putObject("serverInfo").put("name", DemoServer.NAME).put("version", serverVersion);
        result.put("instructions", "This is the mcp-chaos built-in demo server. Its tools (echo, add, slow, "
                + "large) give a proxy something predictable to inject faults into.");
        return result;
    }

    private CompletableFuture<JsonNode> callTool(JsonNode id, JsonNode params) {
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
        DemoTools.ProgressReporter progress = progressReporter(params.path("_meta").get("progressToken"));
        return CompletableFuture
                .supplyAsync(() -> (JsonNode) result(id, tools.call(name.textValue(), params.get("arguments"), progress)),
                        toolExecutor)
                .exceptionally(failure -> {
                    log.println(LOG_PREFIX + "tool " + name.textValue() + " failed: " + failure);
                    return error(id, INTERNAL_ERROR, "Internal error: " + failure.getMessage());
                });
    }

    private DemoTools.ProgressReporter progressReporter(JsonNode token) {
        if (token == null || !(token.isTextual() || token.isNumber())) {
            return DemoTools.ProgressReporter.NONE;
        }
        return (progress, total, message) -> {
            ObjectNode notification = mapper.createObjectNode();
            notification.put("jsonrpc", "2.0");
            notification.put("method", "notifications/progress");
            notification.putObject("params")
                    .<ObjectNode>set("progressToken", token)
                    .put("progress", progress)
                    .put("total", total)
                    .put("message", message);
            write(notification);
        };
    }

    private static String abbreviate(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }

    private static JsonNode validIdOrNull(JsonNode id) {
        return id != null && (id.isTextual() || id.isNumber()) ? id : null;
    }

    private ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode response = mapper.createObjectNode();
        response.put("jsonrpc", "2.0");
        response.set("id", id);
        response.set("result", result);
        return response;
    }

    private ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode response = mapper.createObjectNode();
        response.put("jsonrpc", "2.0");
        response.set("id", id == null ? NullNode.getInstance() : id);
        response.putObject("error").put("code", code).put("message", message);
        return response;
    }

    private static CompletableFuture<JsonNode> done(JsonNode reply) {
        return CompletableFuture.completedFuture(reply);
    }

    /** Writes one message as one line; serialises outside the lock so a big reply does not hold others up longer than its copy. */
    private void write(JsonNode message) {
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(message);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
        synchronized (writeLock) {
            if (outputBroken) {
                return;
            }
            try {
                out.write(bytes);
                out.write('\n');
                out.flush();
            } catch (IOException e) {
                // The client has gone; keep reading until its input ends too, but stop writing.
                outputBroken = true;
                log.println(LOG_PREFIX + "cannot write to the client any more: " + e);
            }
        }
    }

    private void track(CompletableFuture<?> work) {
        inFlight.add(work);
        work.whenComplete((ignored, failure) -> {
            inFlight.remove(work);
            if (failure != null) {
                log.println(LOG_PREFIX + "failed to answer a message: " + failure);
            }
        });
    }

    private void drainInFlight() {
        CompletableFuture<?>[] pending = inFlight.toArray(new CompletableFuture<?>[0]);
        if (pending.length == 0) {
            return;
        }
        try {
            CompletableFuture.allOf(pending).get(DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.println(LOG_PREFIX + inFlight.size() + " tool call(s) still running after " + DRAIN_TIMEOUT.toSeconds()
                    + " s at end of input; interrupting them");
        } catch (ExecutionException e) {
            // Already logged by track(); the session is over either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadFactory toolThreadFactory() {
        int session = SESSION_COUNTER.incrementAndGet();
        AtomicInteger threads = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "mcp-chaos-demo-" + session + "-tool-" + threads.incrementAndGet());
            // Never keep a JVM alive just because a slow call is still sleeping.
            thread.setDaemon(true);
            return thread;
        };
    }
}
