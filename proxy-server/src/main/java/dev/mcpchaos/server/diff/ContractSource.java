package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Reads a {@link Contract} from a cassette or asks a live server (stdio or Streamable HTTP) for it. */
public final class ContractSource {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The list methods a contract is made of, with the array each answer carries and its key. */
    private static final String[][] LISTS = {
        {"tools/list", "tools", "name"},
        {"resources/list", "resources", "uri"},
        {"resources/templates/list", "resourceTemplates", "uriTemplate"},
        {"prompts/list", "prompts", "name"},
    };

    private ContractSource() {
    }

    /**
     * The contract a cassette recorded: every answer to a list request (all pages, all sessions)
     * and the outcome class of every {@code tools/call}.
     *
     * @throws dev.mcpchaos.server.record.CassetteException naming the file and line of bad input
     */
    public static Contract fromCassette(Path file) throws IOException {
        Cassette cassette = Cassette.read(file);
        Map<String, String> requestMethods = new HashMap<>();
        Map<String, String> callKeys = new HashMap<>();
        Map<String, Map<String, JsonNode>> lists = emptyLists();
        Map<String, String> outcomes = new LinkedHashMap<>();
        for (CassetteEntry entry : cassette.entries()) {
            JsonNode message = entry.message();
            if (message == null || !message.has("id")) {
                continue;
            }
            String key = entry.session() + " " + message.get("id");
            if (entry.direction() == Direction.CLIENT_TO_SERVER && entry.method() != null) {
                requestMethods.put(key, entry.method());
                if ("tools/call".equals(entry.method())) {
                    callKeys.put(key, callKey(message.path("params")));
                }
            } else if (entry.direction() == Direction.SERVER_TO_CLIENT && entry.method() == null) {
                String method = requestMethods.remove(key);
                if ("tools/call".equals(method)) {
                    outcomes.put(callKeys.remove(key), outcomeClass(message));
                } else if (method != null) {
                    collect(lists, method, message.path("result"));
                }
            }
        }
        return contract(file.toString(), lists, outcomes);
    }

    /**
     * Starts {@code command}, speaks MCP to it over stdio (initialize, then each list, following
     * {@code nextCursor}), and stops it.
     *
     * @param timeout how long to wait for each answer
     * @throws IOException naming the command when it cannot start, exits or does not answer
     */
    public static Contract fromStdio(List<String> command, Duration timeout) throws IOException {
        String name = String.join(" ", command);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new IOException("server '" + name + "' does not start: " + e.getMessage(), e);
        }
        BlockingQueue<JsonNode> answers = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> readAnswers(process, answers), "mcp-chaos-diff-reader");
        reader.setDaemon(true);
        reader.start();
        try (OutputStream out = process.getOutputStream()) {
            return ask(new StdioPeer(name, out, answers, timeout), "server '" + name + "'");
        } finally {
            process.destroy();
            try {
                if (!process.waitFor(2, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    /**
     * Asks a live Streamable HTTP server at {@code endpoint} (a POST per request, answers as JSON
     * or SSE, the {@code Mcp-Session-Id} it gives sent back), then ends the session with a DELETE.
     *
     * @throws IOException naming the URL when it does not answer, or not with JSON-RPC
     */
    public static Contract fromUrl(java.net.URI endpoint, Duration timeout) throws IOException {
        HttpPeer peer = new HttpPeer(endpoint, timeout);
        try {
            return ask(peer, "server " + endpoint);
        } finally {
            peer.close();
        }
    }

    /** initialize, then each list with its pages. */
    private static Contract ask(Peer peer, String source) throws IOException {
        ObjectNode init = JSON.createObjectNode();
        init.put("protocolVersion", "2025-06-18");
        init.putObject("capabilities");
        init.putObject("clientInfo").put("name", "mcp-chaos-diff").put("version", "1");
        JsonNode initAnswer = peer.request("initialize", init);
        if (initAnswer.has("error")) {
            throw new IOException(source + ": initialize failed: " + initAnswer.get("error"));
        }
        peer.notify("notifications/initialized");
        Map<String, Map<String, JsonNode>> lists = emptyLists();
        for (String[] list : LISTS) {
            String cursor = null;
            for (int page = 0; page < 1000; page++) { // bounded: a server that loops its cursor
                ObjectNode params = JSON.createObjectNode();
                if (cursor != null) {
                    params.put("cursor", cursor);
                }
                JsonNode answer = peer.request(list[0], params);
                if (answer.has("error")) {
                    break; // a capability the server does not have: nothing of that kind
                }
                collect(lists, list[0], answer.path("result"));
                JsonNode next = answer.path("result").path("nextCursor");
                if (!next.isTextual() || next.asText().isEmpty()) {
                    break;
                }
                cursor = next.asText();
            }
        }
        return contract(source, lists, Map.of());
    }

    /** One side of a conversation with a live server, one request at a time. */
    private interface Peer {
        JsonNode request(String method, JsonNode params) throws IOException;

        void notify(String method) throws IOException;
    }

    /** Streamable HTTP with {@link java.net.http.HttpClient}: small, one request at a time. */
    private static final class HttpPeer implements Peer {
        private final java.net.URI endpoint;
        private final Duration timeout;
        private final java.net.http.HttpClient client;
        private String sessionId;
        private int nextId = 1;

        HttpPeer(java.net.URI endpoint, Duration timeout) {
            this.endpoint = endpoint;
            this.timeout = timeout;
            this.client = java.net.http.HttpClient.newBuilder().connectTimeout(timeout).build();
        }

        @Override
        public JsonNode request(String method, JsonNode params) throws IOException {
            int id = nextId++;
            ObjectNode message = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", id).put("method", method);
            message.set("params", params);
            java.net.http.HttpResponse<String> response = post(message, method);
            String type = response.headers().firstValue("Content-Type").orElse("");
            if (type.startsWith("text/event-stream")) {
                for (String event : response.body().split("\r?\n\r?\n")) {
                    StringBuilder data = new StringBuilder();
                    for (String line : event.split("\r?\n")) {
                        if (line.startsWith("data:")) {
                            data.append(line.substring(line.startsWith("data: ") ? 6 : 5));
                        }
                    }
                    if (data.length() > 0) {
                        JsonNode answer = parse(data.toString(), method);
                        if (answer.path("id").asInt(-1) == id && !answer.has("method")) {
                            return answer;
                        }
                    }
                }
                throw new IOException("server " + endpoint + ": no answer to " + method + " in its event stream");
            }
            return parse(response.body(), method);
        }

        @Override
        public void notify(String method) throws IOException {
            post(JSON.createObjectNode().put("jsonrpc", "2.0").put("method", method), method);
        }

        private java.net.http.HttpResponse<String> post(JsonNode message, String method) throws IOException {
            java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(endpoint)
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(message)));
            if (sessionId != null) {
                request.header("Mcp-Session-Id", sessionId);
            }
            java.net.http.HttpResponse<String> response;
            try {
                response = client.send(request.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for server " + endpoint);
            } catch (IOException e) {
                throw new IOException("server " + endpoint + " does not answer " + method + ": " + e, e);
            }
            if (response.statusCode() / 100 != 2) {
                throw new IOException("server " + endpoint + " answered " + method + " with HTTP "
                        + response.statusCode() + " (expected: 2xx)");
            }
            response.headers().firstValue("Mcp-Session-Id").ifPresent(id -> sessionId = id);
            return response;
        }

        private JsonNode parse(String body, String method) throws IOException {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new IOException("server " + endpoint + ": the answer to " + method + " is not JSON", e);
            }
        }

        void close() {
            if (sessionId == null) {
                return;
            }
            try {
                client.send(java.net.http.HttpRequest.newBuilder(endpoint).timeout(timeout)
                        .header("Mcp-Session-Id", sessionId).DELETE().build(),
                        java.net.http.HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                // the session ends with the server anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void readAnswers(Process process, BlockingQueue<JsonNode> answers) {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                try {
                    answers.add(JSON.readTree(line));
                } catch (IOException ignored) {
                    // not JSON on stdout: the referee's business, not the diff's
                }
            }
        } catch (IOException ignored) {
            // the process went away; the waiting request times out with a message
        }
    }

    /** A request/response exchange over a child's pipes, one request at a time. */
    private static final class StdioPeer implements Peer {
        private final String name;
        private final OutputStream out;
        private final BlockingQueue<JsonNode> answers;
        private final Duration timeout;
        private int nextId = 1;

        StdioPeer(String name, OutputStream out, BlockingQueue<JsonNode> answers, Duration timeout) {
            this.name = name;
            this.out = out;
            this.answers = answers;
            this.timeout = timeout;
        }

        @Override
        public JsonNode request(String method, JsonNode params) throws IOException {
            int id = nextId++;
            ObjectNode message = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", id).put("method", method);
            message.set("params", params);
            write(message);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                long left = deadline - System.nanoTime();
                JsonNode answer;
                try {
                    answer = left > 0 ? answers.poll(left, TimeUnit.NANOSECONDS) : null;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted waiting for server '" + name + "'");
                }
                if (answer == null) {
                    throw new IOException("server '" + name + "' did not answer " + method + " within " + timeout);
                }
                if (answer.path("id").asInt(-1) == id && !answer.has("method")) {
                    return answer;
                }
                // a notification or a server request: nothing the contract needs
            }
        }

        @Override
        public void notify(String method) throws IOException {
            write(JSON.createObjectNode().put("jsonrpc", "2.0").put("method", method));
        }

        private void write(JsonNode message) throws IOException {
            try {
                out.write((JSON.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            } catch (IOException e) {
                throw new IOException("server '" + name + "' closed its input: " + e.getMessage(), e);
            }
        }
    }

    private static Map<String, Map<String, JsonNode>> emptyLists() {
        Map<String, Map<String, JsonNode>> lists = new HashMap<>();
        for (String[] list : LISTS) {
            lists.put(list[0], new LinkedHashMap<>());
        }
        return lists;
    }

    private static void collect(Map<String, Map<String, JsonNode>> lists, String method, JsonNode result) {
        for (String[] list : LISTS) {
            if (list[0].equals(method)) {
                for (JsonNode item : result.path(list[1])) {
                    JsonNode key = item.get(list[2]);
                    if (key != null && key.isTextual()) {
                        lists.get(method).put(key.asText(), item);
                    }
                }
            }
        }
    }

    private static Contract contract(String source, Map<String, Map<String, JsonNode>> lists,
                                     Map<String, String> outcomes) {
        return new Contract(source, lists.get("tools/list"), lists.get("resources/list"),
                lists.get("resources/templates/list"), lists.get("prompts/list"), outcomes);
    }

    /** A recorded call by tool and arguments: Jackson's tree equality makes the text stable enough. */
    private static String callKey(JsonNode params) {
        return "tools/call " + params.path("name").asText() + " " + canonical(params.path("arguments"));
    }

    private static String canonical(JsonNode node) {
        if (node.isObject()) {
            StringBuilder text = new StringBuilder("{");
            List<String> names = new java.util.ArrayList<>();
            node.fieldNames().forEachRemaining(names::add);
            names.sort(null);
            for (String field : names) {
                text.append('"').append(field).append("\":").append(canonical(node.get(field))).append(',');
            }
            return text.append('}').toString();
        }
        return node.isMissingNode() ? "{}" : node.toString();
    }

    /** {@code result}, {@code isError} (a tool error result) or {@code error <code>} (JSON-RPC). */
    static String outcomeClass(JsonNode answer) {
        if (answer.has("error")) {
            return "error " + answer.path("error").path("code").asText("?");
        }
        return answer.path("result").path("isError").asBoolean(false) ? "isError" : "result";
    }
}
