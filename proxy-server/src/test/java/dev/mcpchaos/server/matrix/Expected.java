package dev.mcpchaos.server.matrix;

/** The bytes a fault of the matrix makes of a scripted message, written out from the reference (docs/rules.md). */
final class Expected {

    private Expected() {
    }

    /** {@code mutate} with {@code [{op: add, path: /drift, value: true}]}: a member added at the end. */
    static String drift(String message) {
        return message.substring(0, message.length() - 1) + ",\"drift\":true}";
    }

    /** {@code truncate} with {@code at}: the first bytes (the messages here are ASCII). */
    static String truncated(String message, int at) {
        return message.substring(0, at);
    }

    /** {@code corrupt} with {@code mode: unclosed_bracket}: the final brace removed. */
    static String unclosed(String message) {
        return message.substring(0, message.length() - 1);
    }

    /** {@code id_mismatch} without {@code id}: a number plus 1000000. */
    static String mismatched(String message, long id) {
        return message.replace("\"id\":" + id + ",", "\"id\":" + (id + 1_000_000) + ",");
    }

    /** {@code error} with {@code code: -32001, message: injected}, for the message with this id (JSON text). */
    static String error(String id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32001,\"message\":\"injected\"}}";
    }

    /** {@code tool_error} with {@code text: injected tool failure}. */
    static String toolError(String id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                + "\"injected tool failure\"}],\"isError\":true}}";
    }
}
