package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * One session with a Streamable HTTP MCP server (see {@link McpPeer}): each message a POST to
 * the endpoint; an answer as a JSON body or an SSE stream (read by {@link SseEvents} up to the
 * answer); the {@code Mcp-Session-Id} the server gives sent back on every later message, with the
 * negotiated {@code MCP-Protocol-Version} once {@linkplain #protocolVersion(String) told}; the
 * session ended with a DELETE. HTTP/1.1, one request at a time.
 *
 * <p>Each request has one deadline, its timeout from when it is sent: the head must come by
 * then (the client's own timeout), and a body still being read then (an SSE stream that never
 * brings the answer) is closed, which ends the read.
 */
public final class HttpPeer implements McpPeer {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String SESSION_HEADER = "Mcp-Session-Id";
    private static final String VERSION_HEADER = "MCP-Protocol-Version";

    /** Ends reads of bodies at their deadline: a blocked read returns when its stream is closed. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "mcp-chaos-peer-deadlines");
        thread.setDaemon(true);
        return thread;
    });

    private final URI endpoint;
    private final String name;
    private final Duration timeout;
    private final UnaryOperator<JsonNode> serverRequests;
    private final HttpClient client;
    private String sessionId;
    private String protocolVersion;

    /**
     * @param endpoint       the server's MCP endpoint, such as {@code http://127.0.0.1:3001/mcp}
     * @param timeout        how long each answer may take (and a connection to be made)
     * @param serverRequests what a request of the server's on an SSE answer is answered with
     */
    public HttpPeer(URI endpoint, Duration timeout, UnaryOperator<JsonNode> serverRequests) {
        this(client(timeout), endpoint, timeout, serverRequests);
    }

    /**
     * A session on a client shared with other sessions (one client's threads and connections for
     * all the sessions of a cassette); see {@link #client(Duration)}.
     */
    public HttpPeer(HttpClient client, URI endpoint, Duration timeout, UnaryOperator<JsonNode> serverRequests) {
        this.client = Objects.requireNonNull(client, "client");
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.name = "server " + endpoint;
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.serverRequests = Objects.requireNonNull(serverRequests, "serverRequests");
    }

    /** The HTTP client a peer uses: HTTP/1.1 (no upgrade a server may not know), connections made within {@code timeout}. */
    public static HttpClient client(Duration timeout) {
        return HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** The session id the server gave (the first it named), or null while it gave none. */
    public String sessionId() {
        return sessionId;
    }

    /** Sends {@code version} as {@code MCP-Protocol-Version} with every later message of the session. */
    public void protocolVersion(String version) {
        this.protocolVersion = version;
    }

    @Override
    public JsonNode request(JsonNode request) throws IOException {
        return request(request, Map.of());
    }

    /**
     * {@link #request(JsonNode)} with more headers on its POST (and on the POSTs that answer the
     * server's requests on its stream), such as a sessionless request's {@code Mcp-Method}.
     */
    public JsonNode request(JsonNode request, Map<String, String> headers) throws IOException {
        String method = request.path("method").asText();
        JsonNode id = request.get("id");
        long deadline = System.nanoTime() + timeout.toNanos();
        HttpResponse<InputStream> response = post(request, method, headers, deadline);
        InputStream body = response.body();
        ScheduledFuture<?> watchdog = DEADLINES.schedule(() -> closeQuietly(body),
                Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        try (body) {
            int status = response.statusCode();
            if (status / 100 != 2) {
                throw new HttpStatusException(name + " answered " + method + " with HTTP " + status
                        + " (expected: 2xx)", status, answerIn(body.readAllBytes(), id));
            }
            String type = response.headers().firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
            if (type.startsWith("text/event-stream")) {
                return fromStream(body, id, method, headers, deadline);
            }
            byte[] bytes = body.readAllBytes();
            if (bytes.length == 0) {
                throw new NoAnswerException(name + " answered " + method + " with HTTP " + status + " and no body");
            }
            JsonNode answer = matching(parse(new String(bytes, StandardCharsets.UTF_8), method), id);
            if (answer == null) {
                throw new NoAnswerException(name + " answered " + method + " with a batch that does not hold its answer");
            }
            return answer;
        } catch (NoAnswerException | HttpStatusException e) {
            throw e;
        } catch (IOException e) {
            if (System.nanoTime() - deadline >= 0) {
                throw new NoAnswerException(name + " did not answer " + method + " within " + timeout);
            }
            throw e;
        } finally {
            watchdog.cancel(false);
        }
    }

    /** Reads SSE events up to the answer to {@code id}, answering the server's requests on the way. */
    private JsonNode fromStream(InputStream body, JsonNode id, String method, Map<String, String> headers,
                                long deadline) throws IOException {
        try (SseEvents events = new SseEvents(body)) {
            String data;
            while ((data = events.next()) != null) {
                JsonNode event = parse(data, method);
                if (event.has("method") && event.has("id")) {
                    answerServer(event, headers);
                } else if (!event.has("method") && id.equals(event.get("id"))) {
                    return event;
                }
            }
        }
        if (System.nanoTime() - deadline >= 0) {
            throw new NoAnswerException(name + " did not answer " + method + " within " + timeout);
        }
        throw new NoAnswerException(name + ": its event stream ended without the answer to " + method);
    }

    /** Posts the answer to a server's request while the stream that asked stays open: the server waits on it. */
    private void answerServer(JsonNode serverRequest, Map<String, String> headers) throws IOException {
        client.sendAsync(base(headers, timeout).POST(HttpRequest.BodyPublishers.ofByteArray(
                JSON.writeValueAsBytes(serverRequests.apply(serverRequest)))).build(),
                HttpResponse.BodyHandlers.discarding());
        // its outcome is not awaited: the answer awaited still comes, or its deadline passes
    }

    @Override
    public void notify(JsonNode notification) throws IOException {
        notify(notification, Map.of());
    }

    /** {@link #notify(JsonNode)} with more headers on its POST. */
    public void notify(JsonNode notification, Map<String, String> headers) throws IOException {
        String method = notification.path("method").asText("an answer");
        HttpResponse<InputStream> response = post(notification, method, headers,
                System.nanoTime() + timeout.toNanos());
        try (InputStream body = response.body()) {
            body.readAllBytes();
        }
        if (response.statusCode() / 100 != 2) {
            throw new HttpStatusException(name + " answered " + method + " with HTTP " + response.statusCode()
                    + " (expected: 2xx)", response.statusCode(), null);
        }
    }

    private HttpRequest.Builder base(Map<String, String> headers, Duration within) {
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint).timeout(within)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream");
        if (sessionId != null) {
            request.header(SESSION_HEADER, sessionId);
            if (protocolVersion != null) {
                request.header(VERSION_HEADER, protocolVersion);
            }
        }
        headers.forEach(request::header);
        return request;
    }

    private HttpResponse<InputStream> post(JsonNode message, String method, Map<String, String> headers,
                                           long deadline) throws IOException {
        Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
        HttpRequest request = base(headers, left)
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(message))).build();
        HttpResponse<InputStream> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + name);
        } catch (HttpTimeoutException e) {
            throw new NoAnswerException(name + " did not answer " + method + " within " + timeout);
        } catch (IOException e) {
            throw new IOException(name + " does not answer " + method + ": " + e, e);
        }
        if (sessionId == null) {
            sessionId = response.headers().firstValue(SESSION_HEADER).orElse(null);
        }
        return response;
    }

    /** The answer to {@code id} in a body (an object, or a batch holding it); null when there is none. */
    private static JsonNode answerIn(byte[] body, JsonNode id) {
        try {
            return body.length == 0 ? null : matching(JSON.readTree(body), id);
        } catch (IOException notJson) {
            return null;
        }
    }

    /** An object as it is; of a batch, the element with {@code id} (null when none has it). */
    private static JsonNode matching(JsonNode answer, JsonNode id) {
        if (!answer.isArray()) {
            return answer;
        }
        for (JsonNode element : answer) {
            if (id.equals(element.get("id"))) {
                return element;
            }
        }
        return null;
    }

    private JsonNode parse(String text, String method) throws IOException {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new IOException(name + ": the answer to " + method + " is not JSON", e);
        }
    }

    /** Ends the session the server gave with a DELETE, as a well-behaved client does. */
    @Override
    public void close() {
        if (sessionId == null) {
            return;
        }
        try {
            client.send(HttpRequest.newBuilder(endpoint).timeout(timeout).header(SESSION_HEADER, sessionId)
                    .DELETE().build(), HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            // a session the server keeps is its own to expire
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // closing to end a read: nothing more to do
        }
    }
}
