package dev.mcpchaos.server.demo;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What answers the messages of one session of a {@link DemoHttpServer}: the demo's tools by
 * default, or another server in this JVM (a replayed cassette) given to
 * {@link DemoHttpServer#start(java.net.InetSocketAddress, java.time.Duration, Factory)}. The HTTP
 * side (sessions, SSE streams, resumption, Origin, limits) stays the server's.
 */
public interface McpSessionHandler {

    /** Makes the handler of a new session. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param sessionId   the session's new {@code Mcp-Session-Id}
         * @param unsolicited where messages that belong to no request go (the standalone GET stream);
         *                    thread-safe
         */
        McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited);

        /**
         * The one handler of every sessionless request (no {@code Mcp-Session-Id}, a protocol
         * version of 2026-07-28 or later: {@link DemoHttpServer#isSessionlessRevision}); it must
         * be safe across threads. Null (the default): such requests are refused as before, 400
         * for the missing session header.
         */
        default McpSessionHandler sessionless() {
            return null;
        }
    }

    /**
     * Answers one message or batch; completes with the reply, or null for none (a notification
     * or a response). Messages related to the request (its progress) go to {@code related}, which
     * is its SSE stream when it is answered as one.
     */
    CompletableFuture<JsonNode> handle(JsonNode message, Consumer<JsonNode> related);

    /** Whether the answer to this request goes as an SSE stream (when the client accepts one) rather than JSON. */
    boolean answersAsStream(JsonNode request);

    /** Whether a request may name this {@code MCP-Protocol-Version}. */
    boolean speaks(String protocolVersion);
}
