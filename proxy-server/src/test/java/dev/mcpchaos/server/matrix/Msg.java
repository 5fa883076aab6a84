package dev.mcpchaos.server.matrix;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The exact messages the scripted peers of the matrix send. The target of every cell is a
 * {@code tools/call} of the tool {@code target} (or its answer, or a notification or a request
 * named here); the witness is the next message in the same direction, to show what a fault does
 * to the messages behind the one it acts on.
 */
final class Msg {

    static final String T_CALL = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
            + "\"params\":{\"name\":\"target\",\"arguments\":{\"n\":1}}}";
    static final String W_CALL = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
            + "\"params\":{\"name\":\"witness\",\"arguments\":{\"n\":2}}}";
    static final String T_RESULT = toolResult("1", "target done");
    static final String W_RESULT = toolResult("2", "witness done");
    static final String PROGRESS = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
            + "\"params\":{\"progressToken\":1,\"progress\":1,\"total\":2}}";

    /** Stdio: the client's call that makes the server ask the client for its roots. */
    static final String ASK = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
            + "\"params\":{\"name\":\"ask\",\"arguments\":{}}}";
    static final String ROOTS = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}";
    static final String NOTE_AFTER = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
            + "\"params\":{\"level\":\"info\",\"data\":\"after roots/list\"}}";
    static final String ROOTS_ANSWER = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"roots\":[]}}";
    static final String ASK_ANSWERED = toolResult("1", "roots: answered");
    static final String ASK_ERRORED = toolResult("1", "roots: error");

    /** What the scripted servers answer to what they cannot parse (stdio: to a line not scripted). */
    static final String PARSE_ERROR =
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}";

    // HTTP
    static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
            + "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"matrix\",\"version\":\"1\"}}}";
    static final String INIT_RESULT = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"scripted\",\"version\":\"1\"}}}";
    static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
    static final String PONG = "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}";
    static final String NOTE_T = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
            + "\"params\":{\"level\":\"info\",\"data\":\"target\"}}";
    static final String NOTE_W = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}";

    private Msg() {
    }

    static String toolResult(String id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + text
                + "\"}]}}";
    }

    static String toolResult(JsonNode id, String text) {
        return toolResult(id.toString(), text);
    }

    static String result(JsonNode id, String result) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result + "}";
    }
}
