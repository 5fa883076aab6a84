package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.peer.CassetteAnswers;
import dev.mcpchaos.server.peer.HttpPeer;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Plays a cassette's client messages to a live Streamable HTTP server in recorded order and
 * compares each answer with the recorded one, as {@link StdioVerifier} does over stdio. Each
 * recorded session becomes a live one (an {@link HttpPeer}): its {@code initialize} answer gives
 * the live {@code Mcp-Session-Id} and protocol version its later requests carry. Sessionless
 * 2026-07-28 requests carry their recorded {@code Mcp-*} headers ({@code MCP-Protocol-Version},
 * {@code Mcp-Method}, {@code Mcp-Name}). An answer may come as JSON or as an SSE stream; a
 * request the server sends on that stream is answered with what the recording's client answered
 * to the same method, else with error -32601.
 */
public final class HttpVerifier {

    private final Cassette cassette;
    private final URI url;
    private final JsonDiff diff;
    private final Duration timeout;

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
    }

    /**
     * Runs the check.
     *
     * @throws IOException when the server cannot be reached at all (its first request fails to connect)
     */
    public VerifyResult run() throws IOException {
        CassetteAnswers answers = CassetteAnswers.of(cassette);
        UnaryOperator<JsonNode> recordedClient = answers.recordedClient(CassettePlayback.CLIENT);
        HttpClient client = HttpPeer.client(timeout);
        Map<String, HttpPeer> sessions = new LinkedHashMap<>(); // by recorded session
        return CassettePlayback.play(cassette, answers, diff, new CassettePlayback.Link() {
            private HttpPeer peer(CassetteEntry entry) {
                return sessions.computeIfAbsent(entry.session(), s -> new HttpPeer(client, url, timeout,
                        recordedClient));
            }

            @Override
            public JsonNode request(CassetteEntry entry) throws IOException {
                HttpPeer peer = peer(entry);
                JsonNode live = peer.request(entry.message(), recordedHeaders(peer, entry));
                if ("initialize".equals(entry.method())) {
                    peer.protocolVersion(live.path("result").path("protocolVersion").asText(null));
                }
                return live;
            }

            @Override
            public void notify(CassetteEntry entry) throws IOException {
                HttpPeer peer = peer(entry);
                peer.notify(entry.message(), recordedHeaders(peer, entry));
            }

            @Override
            public boolean stopsOn(IOException failed) {
                return false; // one POST failed: the next may still get through
            }

            @Override
            public void close() {
                sessions.values().forEach(HttpPeer::close);
            }
        });
    }

    /** Without a live session, the recorded {@code Mcp-*} headers: the sessionless revision requires them. */
    private static Map<String, String> recordedHeaders(HttpPeer peer, CassetteEntry entry) {
        Map<String, String> headers = new HashMap<>();
        if (peer.sessionId() == null && entry.http() != null && entry.http().requestHeaders() != null) {
            for (Map.Entry<String, String> header : entry.http().requestHeaders()) {
                String name = header.getKey().toLowerCase(Locale.ROOT);
                if (name.startsWith("mcp-") && !name.equals("mcp-session-id")) {
                    headers.putIfAbsent(header.getKey(), header.getValue());
                }
            }
        }
        return headers;
    }
}
