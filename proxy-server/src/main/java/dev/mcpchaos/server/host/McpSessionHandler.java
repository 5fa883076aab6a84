package dev.mcpchaos.server.host;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What answers the messages of one MCP session of a host: the demo's tools, or a replayed
 * cassette. The transport side (over HTTP: sessions, SSE streams, resumption, Origin, limits;
 * over stdio: lines and their order) stays the host's ({@link McpHttpHost}, {@link McpStdioHost}).
 */
public interface McpSessionHandler {

    /** Makes the handler of each new session, and owns what they share (a pool of threads). */
    @FunctionalInterface
    interface Factory {
        /**
         * @param sessionId   the session's new {@code Mcp-Session-Id} (over stdio, the one session's name)
         * @param unsolicited where messages that belong to no request go (the standalone GET
         *                    stream; over stdio, nowhere); thread-safe
         */
        McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited);

        /**
         * The one handler of every sessionless request: over HTTP one without
         * {@code Mcp-Session-Id} whose protocol version is 2026-07-28 or later
         * ({@link McpRevisions#isSessionless}), over stdio one that opens as such a client does
         * ({@link McpRevisions#isSessionlessRequest}); it must be safe across threads. Null (the
         * default): such requests are refused over HTTP, 400 for the missing session header, and
         * go to the one session over stdio.
         */
        default McpSessionHandler sessionless() {
            return null;
        }

        /**
         * Called once when the host stops, after its sessions ended and before it waits for the
         * responses still being written: work still answering requests should end now (interrupt
         * it), so that those responses can finish. Does nothing by default.
         */
        default void close() {
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
