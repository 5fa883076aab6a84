package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.demo.McpSessionHandler;
import dev.mcpchaos.server.record.Cassette;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Plays the server of recorded cassettes over Streamable HTTP, on the built-in demo server's HTTP
 * side ({@link DemoHttpServer}): each {@code initialize} starts a session with a fresh
 * {@code Mcp-Session-Id} (the recorded one is not reused), and each session replays the cassettes
 * from their start, matched as over stdio (see {@link StdioReplay}). An answer recorded as SSE
 * events is sent as SSE events, its progress notifications first, each an event of its own; one
 * recorded as JSON is sent as JSON. The server's own messages go on the session's GET stream.
 *
 * <p>Faults come from a proxy in front of it ({@code mcp-chaos replay --http} starts one), as
 * for a live server.
 */
public final class HttpReplay {

    private final List<Cassette> cassettes;
    private final OnExhausted onExhausted;
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong unmatched = new AtomicLong();

    /**
     * @param cassettes   what to play, read in this order
     * @param onExhausted what a repeat beyond its recordings gets
     */
    public HttpReplay(List<Cassette> cassettes, OnExhausted onExhausted) {
        this.cassettes = List.copyOf(Objects.requireNonNull(cassettes, "cassettes"));
        this.onExhausted = Objects.requireNonNull(onExhausted, "onExhausted");
    }

    /** Requests answered from the cassettes so far, over all sessions. */
    public long served() {
        return served.get();
    }

    /** Requests that had no recording so far, over all sessions. */
    public long unmatched() {
        return unmatched.get();
    }

    /**
     * Starts serving on {@code address} (port 0: a free one), endpoint {@code /mcp}.
     *
     * @throws IOException when the address cannot be bound
     */
    public DemoHttpServer start(InetSocketAddress address) throws IOException {
        return DemoHttpServer.start(address, DemoHttpServer.DEFAULT_KEEP_ALIVE, this::open);
    }

    private McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited) {
        Responder responder = new Responder(new ReplayIndex(cassettes), onExhausted, served, unmatched);
        return new McpSessionHandler() {
            @Override
            public CompletableFuture<JsonNode> handle(JsonNode message, Consumer<JsonNode> related) {
                if (message.isArray()) {
                    var replies = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
                    for (JsonNode element : message) {
                        JsonNode reply = one(element, related);
                        if (reply != null) {
                            replies.add(reply);
                        }
                    }
                    return CompletableFuture.completedFuture(replies.isEmpty() ? null : replies);
                }
                return CompletableFuture.completedFuture(one(message, related));
            }

            private JsonNode one(JsonNode message, Consumer<JsonNode> related) {
                Responder.Reply reply = responder.respond(message, related);
                reply.after().forEach(unsolicited);
                return reply.response();
            }

            @Override
            public boolean answersAsStream(JsonNode request) {
                return request.isObject() && responder.answeredAsStream(request);
            }

            @Override
            public boolean speaks(String protocolVersion) {
                return true; // the recording says what was negotiated; a replay does not second-guess it
            }
        };
    }
}
