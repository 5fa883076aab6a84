package dev.mcpchaos.rules;

/** JSON-RPC lines for tests, written as a real MCP peer would write them. */
final class Msg {

    private Msg() {
    }

    static String request(Object id, String method) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id(id) + ",\"method\":\"" + method + "\"}";
    }

    static String call(Object id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id(id) + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":{}}}";
    }

    static String result(Object id, String resultJson) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id(id) + ",\"result\":" + resultJson + "}";
    }

    static String textResult(Object id, String text) {
        return result(id, "{\"content\":[{\"type\":\"text\",\"text\":\"" + text + "\"}],\"isError\":false}");
    }

    static String notification(String method) {
        return "{\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\"}";
    }

    static String error(Object id, int code, String message) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id(id) + ",\"error\":{\"code\":" + code + ",\"message\":\"" + message
                + "\"}}";
    }

    private static String id(Object id) {
        return id instanceof String ? "\"" + id + "\"" : String.valueOf(id);
    }
}
