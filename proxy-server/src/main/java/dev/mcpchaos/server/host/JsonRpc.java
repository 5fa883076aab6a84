package dev.mcpchaos.server.host;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * The JSON-RPC 2.0 pieces the hosts ({@link McpHttpHost}, {@link McpStdioHost}) and their
 * handlers share: parsing a message, writing one as a line of compact JSON, error responses and
 * their codes. Messages are jackson-databind trees, read and written without an
 * {@code ObjectMapper} (see {@code HostJson}), which keeps a spawned server's start fast.
 */
public final class JsonRpc {

    /** Parse error: the message is not JSON. */
    public static final int PARSE_ERROR = -32700;
    /** Invalid Request: JSON, but not a JSON-RPC request. */
    public static final int INVALID_REQUEST = -32600;
    /** Method not found. */
    public static final int METHOD_NOT_FOUND = -32601;
    /** Invalid params. */
    public static final int INVALID_PARAMS = -32602;
    /** Internal error. */
    public static final int INTERNAL_ERROR = -32603;

    /**
     * The largest message a host reads, in bytes: a longer stdio line is skipped and answered
     * with a parse error, a longer HTTP body is answered 413. Room for an {@code echo} of the
     * demo's largest {@code large} payload (64 MiB), plus its envelope.
     */
    public static final int MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

    /** Makes the nodes of every message. */
    public static final JsonNodeFactory NODES = HostJson.NODES;

    private JsonRpc() {
    }

    /**
     * Parses one message (an object, or an array for a batch).
     *
     * @throws IOException if it is not exactly one JSON value; {@link #parseErrorReason} turns it
     *     into the text of a -32700 reply
     */
    public static JsonNode parse(byte[] bytes) throws IOException {
        JsonNode message = HostJson.read(bytes);
        if (message == null || message.isMissingNode()) {
            throw new IOException("no JSON value");
        }
        return message;
    }

    /** The reason of a parse failure, without Jackson's location suffix, for a -32700 message. */
    public static String parseErrorReason(IOException e) {
        return e instanceof JsonProcessingException
                ? ((JsonProcessingException) e).getOriginalMessage()
                : e.getMessage();
    }

    /** Compact UTF-8 JSON of {@code message}: one line, since JSON strings escape their newlines. */
    public static byte[] toBytes(JsonNode message) {
        return HostJson.write(message);
    }

    /** {@code id} if it is a valid JSON-RPC request id (a string or a number), else {@code null}. */
    public static JsonNode validIdOrNull(JsonNode id) {
        return id != null && (id.isTextual() || id.isNumber()) ? id : null;
    }

    /** A JSON-RPC error response; {@code id} {@code null} becomes JSON {@code null}, as JSON-RPC wants when it is unknown. */
    public static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode response = NODES.objectNode();
        response.put("jsonrpc", "2.0");
        response.set("id", id == null ? NullNode.getInstance() : id);
        response.putObject("error").put("code", code).put("message", message);
        return response;
    }

    /** At most 200 characters of {@code text}, for a diagnostic line. */
    public static String abbreviate(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }
}
