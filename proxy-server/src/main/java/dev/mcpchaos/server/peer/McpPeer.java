package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.io.IOException;
import java.util.function.UnaryOperator;

/**
 * The client side of a conversation with one live MCP server, one request at a time: the one MCP
 * client of the offline tools ({@code diff}'s live sides, {@code replay --verify}). Two
 * transports: {@link StdioPeer} (a child process, newline-delimited JSON-RPC on its pipes) and
 * {@link HttpPeer} (Streamable HTTP: a POST per message, answers as JSON or SSE events, the
 * session id and protocol version headers).
 *
 * <p>A request the server sends while an answer is awaited (sampling, elicitation, roots) is
 * answered at once by the peer's {@code serverRequests} function, so that it does not hold up
 * the answer; notifications and answers to other ids are skipped.
 */
public interface McpPeer extends AutoCloseable {

    /**
     * Sends a request (a JSON-RPC object with an {@code id}) and waits for the answer with its id.
     *
     * @throws NoAnswerException   when no answer came in time, or the server went away first
     * @throws HttpStatusException when an HTTP server answered the POST with a status other than 2xx
     * @throws IOException         when the message could not be sent (the server's input closed,
     *                             its endpoint refused the connection: {@link #unreachable})
     */
    JsonNode request(JsonNode request) throws IOException;

    /** Sends a notification, or an answer, and waits for nothing but its delivery. */
    void notify(JsonNode notification) throws IOException;

    /** Ends the conversation: a stdio server is stopped, an HTTP session ended with a DELETE. */
    @Override
    void close();

    /** Whether {@code e} is a connection the server's address refused (nothing listens there). */
    static boolean unreachable(IOException e) {
        return e instanceof java.net.ConnectException || e.getCause() instanceof java.net.ConnectException;
    }

    /** A request of the server's answered with error -32601 by a client that {@code says} why it offers nothing. */
    static UnaryOperator<JsonNode> refusing(String says) {
        return request -> error(request, -32601, says);
    }

    /** A JSON-RPC error answer to {@code request}. */
    static ObjectNode error(JsonNode request, int code, String message) {
        ObjectNode answer = JsonNodeFactory.instance.objectNode().put("jsonrpc", "2.0");
        answer.set("id", request.get("id"));
        answer.putObject("error").put("code", code).put("message", message);
        return answer;
    }

    /** A request the server did not answer in time, or that it went away without answering. */
    final class NoAnswerException extends IOException {
        public NoAnswerException(String message) {
            super(message);
        }
    }

    /** A Streamable HTTP server answered a POST with a status other than 2xx. */
    final class HttpStatusException extends IOException {
        private final int status;
        private final transient JsonNode answer;

        public HttpStatusException(String message, int status, JsonNode answer) {
            super(message);
            this.status = status;
            this.answer = answer;
        }

        /** The HTTP status. */
        public int status() {
            return status;
        }

        /** The JSON-RPC answer the body held (such as a 400 with a -32020 error), or null. */
        public JsonNode answer() {
            return answer;
        }
    }
}
