package dev.mcpchaos.server.it;

import static dev.mcpchaos.server.it.HttpPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a client receives through the proxy is byte for byte what it receives directly, and what
 * the upstream receives through the proxy is what it receives from the client directly: status
 * codes, headers (all but Date and the hop-by-hop ones, which HTTP/1.1 says a proxy removes) and
 * bodies, compared as bytes.
 *
 * <p>The strict comparison runs against {@link ScriptedUpstream}, which answers with fixed bytes
 * chosen to be awkward: SSE with comments, a priming event with an empty {@code data}, {@code retry},
 * multi-line data, an unknown field, a field without a colon, CRLF and CR-only line ends, UTF-8
 * (including 4-byte characters), a 100 KB event, all written in chunks of 1, 2, 3... bytes that
 * split lines, CRLF pairs and characters; a stream delimited by the connection's end; cookies,
 * CORS, {@code WWW-Authenticate} on a 401, custom headers, a query string. A second test does the
 * same against the MCP Java SDK's server, with its random session id named in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpByteExactIT {

    private static final String SESSION = "fixed-session-\u0031";
    private static final String PATH = "/mcp?tenant=a%20b&x=1";

    @TempDir
    Path tempDir;

    private ScriptedUpstream upstream;
    private HttpPeers.SdkServer sdk;
    private RunningHttp proxy;

    @AfterEach
    void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        if (sdk != null) {
            sdk.close();
        }
    }

    // ------------------------------------------------------------------------------ scripted upstream

    static final String INIT_RESULT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"scripted \u00e9\u4e2d\",\"version\":\"1\"}}}";

    /** The SSE answer to a tools/call: every awkward shape, in one stream. */
    static final String TOOL_SSE = ": a comment before anything\n\n"
            + "id: p-0\nretry: 1500\ndata: \n\n"
            + "id: e-1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
            + "\"params\":{\"progressToken\":\"t\",\"progress\":1,\"total\":2,\"message\":\"h\u00e9llo \u2713 \u4e2d"
            + "\ud83d\ude00\"}}\r\n\r\n"
            + ": keep-alive\n\n"
            + "data:{\"jsonrpc\":\"2.0\",\n"
            + "data: \"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"two lines\"}}\n\n"
            + "event: message\nfoo: an unknown field\nid: e-3\ndata: {\"jsonrpc\":\"2.0\","
            + "\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":2,\"total\":2}}\n\n"
            + "id: e-4\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
            + "x\u00e9\u4e2d\ud83d\ude00".repeat(10_000) + "\"}]}}\n\n";

    /** The standalone GET stream: a comment, CR-only line ends, a server-to-client request, retry alone, a bare field. */
    static final String GET_SSE = ": stream open\n\n"
            + "id: g-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
            + "id: g-2\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\r\r"
            + "id: g-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n"
            + "retry: 10\n\n"
            + "event: ping\ndata\n\n";

    /** An SSE answer whose end is the connection's end (no length, not chunked). */
    static final String CLOSE_DELIMITED_SSE = "id: c-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
            + "\"params\":{\"progressToken\":\"c\",\"progress\":1}}\n\n"
            + "id: c-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}\n\n";

    private static final int[] PIECES = {1, 2, 3, 5, 7, 11, 13, 64, 1, 1, 4096, 2};

    private static void scripted(ScriptedUpstream.Request request, ScriptedUpstream.Conn conn) throws IOException {
        String body = request.bodyText();
        switch (request.method) {
            case "OPTIONS":
                // No Content-Length on a 204 (RFC 9110 8.6 forbids it; Netty's encoder drops one).
                conn.writeHead(204, List.of("Access-Control-Allow-Origin: http://app.example",
                        "Access-Control-Allow-Methods: GET, POST, DELETE", "Access-Control-Allow-Headers: "
                                + "content-type, mcp-session-id, mcp-protocol-version, last-event-id, authorization",
                        "Access-Control-Max-Age: 600", "Vary: Origin"));
                return;
            case "DELETE":
                conn.writeHead(204, List.of("Mcp-Session-Id: " + SESSION));
                return;
            case "GET":
                conn.writeHead(200, List.of("Content-Type: text/event-stream", "Cache-Control: no-cache, no-transform",
                        "X-Accel-Buffering: no", "Mcp-Session-Id: " + SESSION, "Transfer-Encoding: chunked"));
                writeInPieces(conn, GET_SSE.getBytes(UTF_8));
                conn.endChunked();
                return;
            default:
                break;
        }
        if (body.contains("\"initialize\"")) {
            conn.respond(200, List.of("Content-Type: application/json", "Mcp-Session-Id: " + SESSION,
                    "MCP-Protocol-Version: 2025-11-25", "Set-Cookie: a=1; Path=/", "Set-Cookie: b=2; HttpOnly",
                    "X-Custom: kept as is", "Cache-Control: no-store", "Access-Control-Allow-Origin: *",
                    "Access-Control-Expose-Headers: Mcp-Session-Id", "Connection: keep-alive, X-Hop",
                    "Keep-Alive: timeout=5", "X-Hop: named by Connection, so removed"),
                    INIT_RESULT.getBytes(UTF_8));
        } else if (body.contains("notifications/")) {
            conn.respond(202, List.of("Mcp-Session-Id: " + SESSION), new byte[0]);
        } else if (body.contains("\"whoami\"")) {
            conn.respond(401, List.of("Content-Type: application/json",
                    "WWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\""),
                    "{\"error\":\"unauthorized\"}".getBytes(UTF_8));
        } else if (body.contains("\"close-delimited\"")) {
            conn.writeHead(200, List.of("Content-Type: text/event-stream", "Connection: close"));
            byte[] bytes = CLOSE_DELIMITED_SSE.getBytes(UTF_8);
            conn.raw(java.util.Arrays.copyOfRange(bytes, 0, 50));
            conn.raw(java.util.Arrays.copyOfRange(bytes, 50, bytes.length));
            conn.close();
        } else if (body.contains("\"tools/call\"")) {
            conn.writeHead(200, List.of("Content-Type: text/event-stream; charset=utf-8", "Cache-Control: no-cache",
                    "Mcp-Session-Id: " + SESSION, "Transfer-Encoding: chunked"));
            writeInPieces(conn, TOOL_SSE.getBytes(UTF_8));
            conn.endChunked();
        } else {
            conn.respond(200, List.of("Content-Type: application/json; charset=utf-8", "Mcp-Session-Id: " + SESSION),
                    "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}".getBytes(UTF_8));
        }
    }

    private static void writeInPieces(ScriptedUpstream.Conn conn, byte[] bytes) throws IOException {
        int at = 0;
        for (int i = 0; at < bytes.length; i++) {
            int n = Math.min(PIECES[i % PIECES.length], bytes.length - at);
            conn.chunk(bytes, at, n);
            at += n;
        }
    }

    @Test
    void everyShapeIsRelayedByteForByteBothWays() throws Exception {
        upstream = ScriptedUpstream.start(HttpByteExactIT::scripted);
        proxy = McpChaosProxy.http(upstream.endpoint()).start();

        List<String> direct = scriptedTranscript(URI.create("http://127.0.0.1:" + upstream.port() + PATH));
        List<ScriptedUpstream.Request> directRequests = List.copyOf(upstream.requests);
        upstream.requests.clear();
        List<String> proxied = scriptedTranscript(URI.create("http://127.0.0.1:" + proxy.address().getPort() + PATH));
        List<ScriptedUpstream.Request> proxiedRequests = List.copyOf(upstream.requests);

        // What the client received.
        assertThat(proxied).hasSameSizeAs(direct);
        for (int i = 0; i < direct.size(); i++) {
            assertThat(proxied.get(i)).as("response %d", i).isEqualTo(direct.get(i));
        }
        assertThat(String.join("", direct)).contains(TOOL_SSE, GET_SSE, CLOSE_DELIMITED_SSE, INIT_RESULT,
                "set-cookie=[a=1; Path=/, b=2; HttpOnly]", "www-authenticate=[Bearer resource_metadata=");
        // Hop-by-hop headers are left out of the comparison; check that the proxy removed them.
        try (RawHttp raw = RawHttp.connect(proxy.address().getPort())) {
            RawHttp.Response init = raw.post(PATH, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}")
                    .readResponse();
            assertThat(init.header("X-Custom")).isEqualTo("kept as is");
            assertThat(init.header("Mcp-Session-Id")).isEqualTo(SESSION);
            assertThat(init.header("Keep-Alive")).isNull();
            assertThat(init.header("X-Hop")).as("a header named by Connection is hop-by-hop").isNull();
            assertThat(init.bodyText()).isEqualTo(INIT_RESULT);
        }

        // What the upstream received: same requests, same bytes; Host as the client sent it.
        assertThat(proxiedRequests).hasSameSizeAs(directRequests);
        for (int i = 0; i < directRequests.size(); i++) {
            ScriptedUpstream.Request d = directRequests.get(i);
            ScriptedUpstream.Request p = proxiedRequests.get(i);
            assertThat(p.method + " " + p.path).as("request %d", i).isEqualTo(d.method + " " + d.path);
            assertThat(requestHeaders(p, h -> h.replace(":" + proxy.address().getPort(), ":PORT")))
                    .as("request %d headers", i)
                    .isEqualTo(requestHeaders(d, h -> h.replace(":" + upstream.port(), ":PORT")));
            assertThat(p.body).as("request %d body", i).isEqualTo(d.body);
        }
        assertThat(directRequests.get(0).path).isEqualTo(PATH);
    }

    /** The scripted session with a plain HTTP/1.1 client, each answer {@link #describe described}. */
    private static List<String> scriptedTranscript(URI endpoint) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        List<String> out = new ArrayList<>();
        out.add(describe(http.send(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                + "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"b\u00fftes\",\"version\":\"0\"}}}")
                .header("Authorization", "Bearer t0k3n")
                .header("Cookie", "a=1; b=2")
                .header("Origin", "http://app.example")
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"))
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"sse\",\"arguments\":{},\"_meta\":{\"progressToken\":\"t\"}}}"))
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", "sse")
                .header("Mcp-Param-Region", "eu-west")
                .header("X-Request-Custom", "\u00e9 stays")
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .header("Accept", "text/event-stream")
                .header("Last-Event-ID", "g-0"))
                .GET().build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"result\":{\"roots\":[]}}"))
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]"))
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"whoami\"}"))
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", "http://app.example")
                .header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "content-type, mcp-session-id")
                .build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"close-delimited\"}}")).build(), HttpResponse.BodyHandlers.ofByteArray())));
        out.add(describe(http.send(session(HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)).DELETE().build(),
                HttpResponse.BodyHandlers.ofByteArray())));
        return out;
    }

    private static HttpRequest.Builder post(URI endpoint, String json) {
        return HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(json));
    }

    private static HttpRequest.Builder session(HttpRequest.Builder builder) {
        return builder.header("Mcp-Session-Id", SESSION).header("MCP-Protocol-Version", "2025-11-25");
    }

    /** Status, headers but Date and hop-by-hop ones (and those Connection names), body. */
    static String describe(HttpResponse<byte[]> response) {
        return describe(response, true);
    }

    /**
     * As {@link #describe(HttpResponse)}; without {@code withLength}, Content-Length is left out
     * too: the proxy holds a JSON body whole to pass it through the interceptors and sends it
     * with a Content-Length even when the upstream chunked it (Transfer-Encoding is hop-by-hop,
     * so the framing is the proxy's to choose); the body bytes are still compared.
     */
    static String describe(HttpResponse<byte[]> response, boolean withLength) {
        List<String> named = new ArrayList<>();
        response.headers().allValues("connection").forEach(v -> {
            for (String token : v.split(",")) {
                named.add(token.trim().toLowerCase(Locale.ROOT));
            }
        });
        Map<String, List<String>> headers = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (!HttpServerEverythingIT.NOT_COMPARED.contains(lower) && !named.contains(lower)
                    && (withLength || !lower.equals("content-length"))) {
                headers.put(lower, values);
            }
        });
        return response.statusCode() + "\n" + headers + "\n" + new String(response.body(), UTF_8);
    }

    private static String requestHeaders(ScriptedUpstream.Request request, UnaryOperator<String> host) {
        Map<String, List<String>> headers = new TreeMap<>();
        for (String[] header : request.headers) {
            String lower = header[0].toLowerCase(Locale.ROOT);
            if (HttpServerEverythingIT.NOT_COMPARED.contains(lower) || lower.equals("http2-settings")) {
                continue;
            }
            headers.computeIfAbsent(lower, k -> new ArrayList<>())
                    .add(lower.equals("host") ? host.apply(header[1]) : header[1]);
        }
        return headers.toString();
    }

    // ------------------------------------------------------------------------------ the SDK's server

    @Test
    void theSdkServersAnswersAreByteForByteTheSame() throws Exception {
        sdk = HttpPeers.SdkServer.start(tempDir);
        proxy = McpChaosProxy.http(sdk.endpoint()).start();

        List<String> direct = sdkTranscript(sdk.endpoint());
        List<String> proxied = sdkTranscript(HttpPeers.endpoint(proxy.address()));

        assertThat(proxied).hasSameSizeAs(direct);
        for (int i = 0; i < direct.size(); i++) {
            assertThat(proxied.get(i)).as("exchange %d", i).isEqualTo(direct.get(i));
        }
        assertThat(String.join("", direct)).contains("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"")
                .contains("completed 3 steps").contains("logged");
    }

    private static List<String> sdkTranscript(URI endpoint) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<byte[]> init = http.send(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                + "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"bytes\",\"version\":\"0\"}}}").build(), HttpResponse.BodyHandlers.ofByteArray());
        String session = init.headers().firstValue("mcp-session-id").orElseThrow();
        List<String> out = new ArrayList<>();
        out.add(describe(init, false));
        String[] bodies = {
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"progress\","
                    + "\"arguments\":{\"steps\":3},\"_meta\":{\"progressToken\":\"p\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"log\","
                    + "\"arguments\":{\"message\":\"b\u00fftes \u4e2d\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"five\",\"method\":\"ping\"}",
        };
        for (String body : bodies) {
            out.add(describe(http.send(post(endpoint, body)
                    .header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-11-25").build(),
                    HttpResponse.BodyHandlers.ofByteArray()), false));
        }
        out.add(describe(http.send(HttpRequest.newBuilder(endpoint).timeout(TIMEOUT)
                .header("Mcp-Session-Id", session).DELETE().build(), HttpResponse.BodyHandlers.ofByteArray()), false));
        return HttpPeers.nameRandomValues(out, session);
    }
}
