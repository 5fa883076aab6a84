package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.ProxyStartException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A JSON-RPC client with no MCP smarts, for counting: it sends requests as they are given and
 * hands every answer it reads to a {@link Listener}, duplicates and answers to unknown ids
 * included, where an SDK client would drop them or fail the session. One per transport, each
 * through an in-process mcp-chaos proxy built with {@link McpChaosProxy}:
 * <ul>
 *   <li>{@link Stdio}: lines written straight to the proxy's client input, lines read from its
 *       client output;</li>
 *   <li>{@link Http}: one POST per request ({@link java.net.http.HttpClient}, HTTP/1.1), its
 *       answer read from a JSON body or an SSE stream, with a per-request timeout.</li>
 * </ul>
 */
abstract class RawJsonRpc implements AutoCloseable {

    static final String PROTOCOL = "2025-11-25";
    /** The id of the initialize request: a string, so it never collides with the numeric ids of a test. */
    static final String INIT_ID = "raw-init";
    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":\"" + INIT_ID + "\",\"method\":\"initialize\","
            + "\"params\":{\"protocolVersion\":\"" + PROTOCOL + "\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"mcp-chaos-raw-it\",\"version\":\"0\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    /** Bound on the handshake. */
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    static final ObjectMapper JSON = new ObjectMapper();

    /** Told what the client reads; on the client's reader threads. */
    interface Listener {
        /** A JSON-RPC answer (a message with an id and a result or an error) to a numeric id. */
        void answer(JsonNode message);

        /**
         * HTTP only: the exchange of request {@code id} is over (its answers, if any, were handed
         * on first); {@code problem} is null for a 200 with a body as expected, else what went wrong.
         */
        void ended(long id, boolean answered, String problem);
    }

    final Listener listener;
    /** What the client read that was not JSON: none is expected, since no rule here breaks a message. */
    final List<String> unreadable = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final CompletableFuture<JsonNode> initAnswer = new CompletableFuture<>();

    RawJsonRpc(Listener listener) {
        this.listener = listener;
    }

    /** initialize and notifications/initialized; returns the initialize answer. */
    abstract JsonNode initialize();

    /** Sends one request; returns at once, the answers come to the listener. */
    abstract void send(long id, String request);

    @Override
    public abstract void close();

    /** Sorts one message the client read: the handshake's answer, an answer to a test request, or neither. */
    void received(JsonNode message) {
        boolean answer = message.has("id") && (message.has("result") || message.has("error")) && !message.has("method");
        if (!answer) {
            return; // a notification or a request of the server: not counted
        }
        if (INIT_ID.equals(message.path("id").textValue())) {
            initAnswer.complete(message);
        } else {
            listener.answer(message);
        }
    }

    JsonNode awaitInitAnswer() {
        try {
            return initAnswer.get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted during initialize", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("no answer to initialize within " + HANDSHAKE_TIMEOUT, e);
        }
    }

    static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + text, e);
        }
    }

    // ============================================================================== stdio

    /** Lines to and from an in-process stdio proxy that runs {@code command} as its server. */
    static final class Stdio extends RawJsonRpc {
        private final LineQueueInput toProxy = new LineQueueInput();
        private final McpChaosProxy.Running proxy;

        Stdio(List<String> command, RuleSet rules, long seed, FaultListener faults, Listener listener) {
            super(listener);
            try {
                proxy = McpChaosProxy.stdio(command)
                        .clientInput(toProxy)
                        .clientOutput(new LineSplitter(this::receivedLine))
                        .serverErrorOutput(OutputStream.nullOutputStream())
                        .exitTimeout(Duration.ofSeconds(2))
                        .terminateTimeout(Duration.ofSeconds(2))
                        .rules(rules)
                        .seed(seed)
                        .faultListener(faults)
                        .start();
            } catch (ProxyStartException e) {
                throw new IllegalStateException("cannot start " + command + ": " + e.getMessage(), e);
            }
        }

        /** On the proxy's writer thread: must not throw. */
        private void receivedLine(String line) {
            JsonNode message;
            try {
                message = parse(line);
            } catch (RuntimeException e) {
                unreadable.add(line);
                return;
            }
            received(message);
        }

        @Override
        JsonNode initialize() {
            toProxy.offer(RawJsonRpc.INIT);
            JsonNode answer = awaitInitAnswer();
            toProxy.offer(RawJsonRpc.INITIALIZED);
            return answer;
        }

        @Override
        void send(long id, String request) {
            toProxy.offer(request);
        }

        /** The proxy's journal. */
        dev.mcpchaos.rules.journal.Journal journal() {
            return proxy.journal();
        }

        /** Ends the proxy's input (the proxy then stops its server) and closes the proxy. */
        @Override
        public void close() {
            toProxy.end();
            proxy.close();
        }
    }

    /** An input stream fed whole lines from a queue, until {@link #end()}. */
    private static final class LineQueueInput extends InputStream {
        private static final byte[] END = new byte[0];
        private final BlockingQueue<byte[]> lines = new LinkedBlockingQueue<>();
        private byte[] current = new byte[0];
        private int position;
        private boolean ended;

        void offer(String line) {
            lines.add((line + "\n").getBytes(StandardCharsets.UTF_8));
        }

        void end() {
            lines.add(END);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (position == current.length) {
                if (ended) {
                    return -1;
                }
                try {
                    current = lines.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
                position = 0;
                ended = current == END;
            }
            int n = Math.min(len, current.length - position);
            System.arraycopy(current, position, b, off, n);
            position += n;
            return n;
        }
    }

    /** Splits what is written into lines and hands each on, without the newline. */
    private static final class LineSplitter extends OutputStream {
        private final java.util.function.Consumer<String> lines;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        LineSplitter(java.util.function.Consumer<String> lines) {
            this.lines = lines;
        }

        @Override
        public void write(int b) {
            if (b == '\n') {
                lines.accept(line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else {
                line.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }
    }

    // ============================================================================== HTTP

    /** POSTs to an in-process HTTP proxy in front of {@code upstream}. */
    static final class Http extends RawJsonRpc {
        private final RunningHttp proxy;
        private final URI endpoint;
        private final Duration requestTimeout;
        private final ExecutorService executor = Executors.newFixedThreadPool(4);
        private final HttpClient http;
        private String session;

        Http(URI upstream, RuleSet rules, long seed, FaultListener faults, Duration requestTimeout, Listener listener) {
            super(listener);
            this.requestTimeout = requestTimeout;
            proxy = McpChaosProxy.http(upstream).rules(rules).seed(seed).faultListener(faults).start();
            endpoint = HttpPeers.endpoint(proxy.address());
            http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).executor(executor).build();
        }

        @Override
        JsonNode initialize() {
            try {
                HttpResponse<String> init = http.send(post(INIT, HANDSHAKE_TIMEOUT), HttpResponse.BodyHandlers.ofString());
                if (init.statusCode() != 200) {
                    throw new AssertionError("initialize: HTTP " + init.statusCode() + " " + init.body());
                }
                session = init.headers().firstValue("mcp-session-id")
                        .orElseThrow(() -> new AssertionError("initialize: no Mcp-Session-Id"));
                messages(init).forEach(this::received);
                JsonNode answer = awaitInitAnswer();
                HttpResponse<String> initialized = http.send(post(INITIALIZED, HANDSHAKE_TIMEOUT),
                        HttpResponse.BodyHandlers.ofString());
                if (initialized.statusCode() != 202) {
                    throw new AssertionError("notifications/initialized: HTTP " + initialized.statusCode());
                }
                return answer;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted during initialize", e);
            }
        }

        @Override
        void send(long id, String request) {
            http.sendAsync(post(request, requestTimeout), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((response, failure) -> {
                        if (failure != null) {
                            listener.ended(id, false, failure.toString());
                            return;
                        }
                        if (response.statusCode() != 200) {
                            listener.ended(id, false, "HTTP " + response.statusCode() + ": " + response.body());
                            return;
                        }
                        boolean answered = false;
                        List<JsonNode> messages;
                        try {
                            messages = messages(response);
                        } catch (RuntimeException e) {
                            listener.ended(id, false, "unreadable body: " + e + ": " + response.body());
                            return;
                        }
                        for (JsonNode message : messages) {
                            answered |= message.path("id").isIntegralNumber() && message.path("id").longValue() == id;
                            received(message);
                        }
                        listener.ended(id, answered, answered ? null : "no answer in: " + response.body());
                    });
        }

        private HttpRequest post(String body, Duration timeout) {
            HttpRequest.Builder builder = HttpRequest.newBuilder(endpoint).timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (session != null) {
                builder.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", PROTOCOL);
            }
            return builder.build();
        }

        /** The JSON-RPC messages of a body: a JSON object or array, or the data of each SSE event. */
        static List<JsonNode> messages(HttpResponse<String> response) {
            String type = response.headers().firstValue("content-type").orElse("");
            List<JsonNode> messages = new ArrayList<>();
            if (type.startsWith("text/event-stream")) {
                for (String event : response.body().split("\r?\n\r?\n")) {
                    StringBuilder data = new StringBuilder();
                    for (String line : event.split("\r?\n")) {
                        if (line.startsWith("data:")) {
                            String value = line.substring(5);
                            data.append(data.length() > 0 ? "\n" : "").append(value.startsWith(" ") ? value.substring(1) : value);
                        }
                    }
                    if (!data.toString().isBlank()) {
                        messages.add(parse(data.toString()));
                    }
                }
            } else if (type.startsWith("application/json")) {
                JsonNode body = parse(response.body());
                if (body.isArray()) {
                    body.forEach(messages::add);
                } else {
                    messages.add(body);
                }
            } else if (!response.body().isEmpty()) {
                throw new IllegalStateException("content type " + type);
            }
            return messages;
        }

        @Override
        public void close() {
            try {
                if (session != null) {
                    http.send(HttpRequest.newBuilder(endpoint).timeout(HANDSHAKE_TIMEOUT)
                            .header("Mcp-Session-Id", session).header("MCP-Protocol-Version", PROTOCOL)
                            .DELETE().build(), HttpResponse.BodyHandlers.discarding());
                }
            } catch (IOException e) {
                // the session ends with the proxy anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                proxy.close();
                executor.shutdownNow();
            }
        }
    }
}
