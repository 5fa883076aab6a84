package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mcpchaos.server.host.McpHttpHost;
import dev.mcpchaos.server.host.McpSessionHandler;
import dev.mcpchaos.server.record.Cassette;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Plays the server of recorded cassettes over Streamable HTTP, on the MCP server host the demo
 * server runs on too ({@link McpHttpHost}): each {@code initialize} starts a session with a fresh
 * {@code Mcp-Session-Id} (the recorded one is not reused), and each session replays the cassettes
 * from their start, matched as over stdio (see {@link StdioReplay}). An answer recorded as SSE
 * events is sent as SSE events, its progress notifications first, each an event of its own; one
 * recorded as JSON is sent as JSON. The server's own messages go on the session's GET stream.
 * Requests of the sessionless 2026-07-28 revision (no {@code Mcp-Session-Id}, an
 * {@code MCP-Protocol-Version} of 2026-07-28 or later; {@code server/discover} first, no
 * {@code initialize}) are all answered from one shared replay of the cassettes.
 * With a {@link Timing} other than none, each goes out at its recorded delay after the request's
 * arrival, from a scheduler thread (the HTTP server's thread of a JSON answer waits for it, as
 * for a live server's; that of an SSE answer is free at once).
 *
 * <p>Faults come from a proxy in front of it ({@code mcp-chaos replay --http} starts one), as
 * for a live server.
 */
public final class HttpReplay {

    /** Names the replay in the host's diagnostics (stderr) and threads. */
    private static final String LOG_NAME = "mcp-chaos-replay";

    private final List<Cassette> cassettes;
    private final OnExhausted onExhausted;
    private final Timing timing;
    private final Matching matching;
    private final TimedSender sender = new TimedSender();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong unmatched = new AtomicLong();

    /**
     * @param cassettes   what to play, read in this order
     * @param onExhausted what a repeat beyond its recordings gets
     */
    public HttpReplay(List<Cassette> cassettes, OnExhausted onExhausted) {
        this(cassettes, onExhausted, Timing.NONE, Matching.DEFAULT);
    }

    /**
     * @param cassettes   what to play, read in this order
     * @param onExhausted what a repeat beyond its recordings gets
     * @param timing      when answers go out
     * @param matching    how requests find their recordings (each session from the cassettes' start)
     */
    public HttpReplay(List<Cassette> cassettes, OnExhausted onExhausted, Timing timing, Matching matching) {
        this.cassettes = List.copyOf(Objects.requireNonNull(cassettes, "cassettes"));
        this.onExhausted = Objects.requireNonNull(onExhausted, "onExhausted");
        this.timing = Objects.requireNonNull(timing, "timing");
        this.matching = Objects.requireNonNull(matching, "matching");
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
    public McpHttpHost start(InetSocketAddress address) throws IOException {
        // Sessionless requests (2026-07-28) share one responder, so repeats of a request are
        // served in recorded order across them as within a session; it is synchronized.
        McpSessionHandler sessionless = handler(newResponder(), message -> {
            // What the recording holds after a sessionless request, outside any request, has no
            // stream to go on in that revision: not sent.
        });
        return McpHttpHost.start(address, McpHttpHost.DEFAULT_KEEP_ALIVE, LOG_NAME, new McpSessionHandler.Factory() {
            @Override
            public McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited) {
                return handler(newResponder(), unsolicited);
            }

            @Override
            public McpSessionHandler sessionless() {
                return sessionless;
            }
        });
    }

    private Responder newResponder() {
        return new Responder(new ReplayIndex(cassettes, matching), onExhausted, timing, served, unmatched);
    }

    private McpSessionHandler handler(Responder responder, Consumer<JsonNode> unsolicited) {
        return new McpSessionHandler() {
            @Override
            public CompletableFuture<JsonNode> handle(JsonNode message, Consumer<JsonNode> related) {
                long arrival = System.nanoTime();
                if (message.isArray()) {
                    List<CompletableFuture<JsonNode>> each = new ArrayList<>();
                    for (JsonNode element : message) {
                        each.add(one(element, arrival, related));
                    }
                    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(all -> {
                        ArrayNode replies = JsonNodeFactory.instance.arrayNode();
                        each.stream().map(CompletableFuture::join).filter(Objects::nonNull).forEach(replies::add);
                        return replies.isEmpty() ? null : replies;
                    });
                }
                return one(message, arrival, related);
            }

            /** Completes with the answer when it is due; the messages after it go out after it. */
            private CompletableFuture<JsonNode> one(JsonNode message, long arrival, Consumer<JsonNode> related) {
                CompletableFuture<JsonNode> reply = new CompletableFuture<>();
                List<Responder.Out> outs = responder.respond(message);
                if (outs.stream().noneMatch(out -> out.kind() == Responder.Kind.RESPONSE)) {
                    // A notification or a response: its 202 goes at once, whatever follows it later.
                    reply.complete(null);
                }
                sender.send(outs, arrival, out -> {
                    switch (out.kind()) {
                        case RELATED -> related.accept(out.message());
                        case RESPONSE -> reply.complete(out.message());
                        case AFTER -> unsolicited.accept(out.message());
                    }
                }, failure -> {
                    if (failure != null) {
                        reply.completeExceptionally(failure);
                    } else {
                        reply.complete(null); // done; a no-op when the answer went out already
                    }
                });
                return reply;
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
