package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Plays a cassette's client messages to a live Streamable HTTP server in recorded order and
 * compares each answer with the recorded one, as {@link StdioVerifier} does over stdio. Each
 * recorded session becomes a live one: its {@code initialize} answer gives the live
 * {@code Mcp-Session-Id} and protocol version its later requests carry. Sessionless 2026-07-28
 * requests carry their recorded {@code Mcp-*} headers ({@code MCP-Protocol-Version},
 * {@code Mcp-Method}, {@code Mcp-Name}). An answer may come as JSON or as an SSE stream; a
 * request the server sends on that stream is answered with what the recording's client answered
 * to the same method, else with error -32601.
 */
public final class HttpVerifier {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String SESSION_HEADER = "Mcp-Session-Id";
    private static final String VERSION_HEADER = "MCP-Protocol-Version";

    private final Cassette cassette;
    private final URI url;
    private final JsonDiff diff;
    private final Duration timeout;
    private final HttpClient http;

    /**
     * @param cassette what to send and expect
     * @param url      the live server's MCP endpoint, such as {@code http://127.0.0.1:3001/mcp}
     * @param diff     how answers are compared
     * @param timeout  how long one answer may take before it counts as unanswered
     */
    public HttpVerifier(Cassette cassette, URI url, JsonDiff diff, Duration timeout) {
        this.cassette = Objects.requireNonNull(cassette, "cassette");
        this.url = Objects.requireNonNull(url, "url");
        this.diff = Objects.requireNonNull(diff, "diff");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** What a live session has learned: its id and negotiated version, once its initialize was answered. */
    private static final class LiveSession {
        String id;
        String protocolVersion;
    }

    /**
     * Runs the check.
     *
     * @throws IOException when the server cannot be reached at all (its first request fails to connect)
     */
    public VerifyResult run() throws IOException {
        List<CassetteEntry> entries = cassette.entries().stream().filter(e -> e.message() != null).toList();
        Map<String, CassetteEntry> recordedAnswers = new HashMap<>();
        Map<String, List<JsonNode>> clientAnswersByMethod = new HashMap<>();
        Map<String, String> serverRequestMethods = new HashMap<>();
        for (CassetteEntry e : entries) {
            JsonNode m = e.message();
            JsonNode id = m.get("id");
            if (e.direction() == Direction.SERVER_TO_CLIENT) {
                if (id != null && m.has("method")) {
                    serverRequestMethods.put(id.toString(), m.get("method").asText());
                } else if (id != null) {
                    recordedAnswers.put(e.session() + " " + id, e);
                }
            } else if (id != null && !m.has("method")) {
                String method = serverRequestMethods.get(id.toString());
                if (method != null) {
                    clientAnswersByMethod.computeIfAbsent(method, k -> new ArrayList<>()).add(m);
                }
            }
        }
        Map<String, LiveSession> sessions = new HashMap<>();
        List<VerifyResult.Item> items = new ArrayList<>();
        boolean reached = false;
        for (CassetteEntry e : entries) {
            JsonNode m = e.message();
            if (e.direction() != Direction.CLIENT_TO_SERVER || !m.has("method")) {
                continue; // answers to server requests go when the live server asks
            }
            LiveSession session = sessions.computeIfAbsent(e.session(), s -> new LiveSession());
            JsonNode id = m.get("id");
            JsonNode live;
            try {
                live = post(e, m, session, clientAnswersByMethod);
                reached = true;
            } catch (java.net.ConnectException refused) {
                if (!reached) {
                    throw refused;
                }
                live = null;
            } catch (IOException | TimeoutException failed) {
                live = null;
            }
            if (id == null) {
                continue; // a notification: nothing to compare
            }
            if (live != null && "initialize".equals(m.get("method").asText())) {
                session.protocolVersion = live.path("result").path("protocolVersion").asText(null);
            }
            CassetteEntry expected = recordedAnswers.get(e.session() + " " + id);
            String label = m.get("method").asText() + (m.path("params").has("name")
                    ? " " + m.path("params").path("name").asText() : "");
            items.add(new VerifyResult.Item(e.seq(), id.toString(), label, live == null ? null
                    : expected == null ? List.of() : diff.diff(expected.message(), live), live != null,
                        expected == null ? -1 : expected.seq(), live));
        }
        for (LiveSession session : sessions.values()) {
            if (session.id != null) {
                end(session);
            }
        }
        return new VerifyResult(items);
    }

    /** POSTs one client message; the answer to it (null for a notification), or an exception. */
    private JsonNode post(CassetteEntry entry, JsonNode message, LiveSession session,
                          Map<String, List<JsonNode>> clientAnswers) throws IOException, TimeoutException {
        HttpRequest.Builder request = base(session, entry)
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(message)));
        HttpResponse<InputStream> response = send(request.build());
        Optional<String> sessionId = response.headers().firstValue(SESSION_HEADER);
        if (sessionId.isPresent() && session.id == null) {
            session.id = sessionId.get();
        }
        JsonNode id = message.get("id");
        String type = response.headers().firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
        InputStream stream = response.body();
        // The request's timeout covers the head only: a body (an SSE stream) that stalls is cut here.
        CompletableFuture<Void> watchdog = CompletableFuture.runAsync(() -> {
            try {
                stream.close();
            } catch (IOException ignored) {
                // closing is all there is to do
            }
        }, CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS));
        try (InputStream body = stream) {
            if (id == null || response.statusCode() == 202) {
                body.readAllBytes();
                return null;
            }
            if (type.startsWith("text/event-stream")) {
                return fromStream(body, id, session, entry, clientAnswers);
            }
            byte[] bytes = body.readAllBytes();
            if (response.statusCode() / 100 != 2 && bytes.length == 0) {
                throw new IOException("HTTP " + response.statusCode());
            }
            JsonNode answer = JSON.readTree(bytes);
            return answer.isArray() ? matching(answer, id) : answer;
        } finally {
            watchdog.cancel(false);
        }
    }

    /** Reads SSE events until the answer to {@code id}, answering server requests on the way. */
    private JsonNode fromStream(InputStream body, JsonNode id, LiveSession session, CassetteEntry entry,
                                Map<String, List<JsonNode>> clientAnswers) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        StringBuilder data = new StringBuilder();
        String line;
        while ((line = lines.readLine()) != null) {
            if (line.isEmpty()) {
                if (data.length() > 0) {
                    JsonNode event = parse(data.toString());
                    data.setLength(0);
                    if (event != null && event.has("method") && event.has("id")) {
                        answerServerRequest(event, session, entry, clientAnswers);
                    } else if (event != null && !event.has("method") && id.equals(event.get("id"))) {
                        return event;
                    }
                }
            } else if (line.startsWith("data:")) {
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(line.startsWith("data: ") ? line.substring(6) : line.substring(5));
            }
        }
        return null; // the stream ended without the answer
    }

    private void answerServerRequest(JsonNode request, LiveSession session, CassetteEntry entry,
                                     Map<String, List<JsonNode>> answers) {
        List<JsonNode> recorded = answers.get(request.get("method").asText());
        ObjectNode reply;
        if (recorded != null && !recorded.isEmpty()) {
            reply = (ObjectNode) (recorded.size() > 1 ? recorded.remove(0) : recorded.get(0)).deepCopy();
        } else {
            reply = JSON.createObjectNode().put("jsonrpc", "2.0");
            reply.putObject("error").put("code", -32601).put("message",
                    "mcp-chaos verify: no recorded answer to " + request.get("method").asText());
        }
        reply.set("id", request.get("id"));
        try {
            // Sent while the stream that asked stays open: the server waits for it to go on.
            http.sendAsync(base(session, entry).POST(HttpRequest.BodyPublishers.ofByteArray(
                    JSON.writeValueAsBytes(reply))).build(), HttpResponse.BodyHandlers.discarding());
        } catch (IOException ignored) {
            // cannot happen for a tree; the request then ends unanswered
        }
    }

    private HttpRequest.Builder base(LiveSession session, CassetteEntry entry) {
        HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream");
        if (session.id != null) {
            request.header(SESSION_HEADER, session.id);
            if (session.protocolVersion != null) {
                request.header(VERSION_HEADER, session.protocolVersion);
            }
        } else if (entry.http() != null && entry.http().requestHeaders() != null) {
            // No session: the recorded Mcp-* headers (the sessionless revision requires them).
            for (Map.Entry<String, String> header : entry.http().requestHeaders()) {
                String name = header.getKey().toLowerCase(Locale.ROOT);
                if (name.startsWith("mcp-") && !name.equals("mcp-session-id")) {
                    request.header(header.getKey(), header.getValue());
                }
            }
        }
        return request;
    }

    private HttpResponse<InputStream> send(HttpRequest request) throws IOException, TimeoutException {
        CompletableFuture<HttpResponse<InputStream>> response = http.sendAsync(request,
                HttpResponse.BodyHandlers.ofInputStream());
        try {
            return response.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(e.getCause());
        } catch (TimeoutException e) {
            response.cancel(true);
            throw e;
        }
    }

    /** DELETE ends a live session, as a well-behaved client does. */
    private void end(LiveSession session) {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout).header(SESSION_HEADER, session.id)
                .DELETE().build();
        try {
            http.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            // the check is done; a session the server keeps is its own to expire
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static JsonNode matching(JsonNode batch, JsonNode id) {
        for (JsonNode element : batch) {
            if (id.equals(element.get("id"))) {
                return element;
            }
        }
        return null;
    }

    private static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException notJson) {
            return null;
        }
    }
}
