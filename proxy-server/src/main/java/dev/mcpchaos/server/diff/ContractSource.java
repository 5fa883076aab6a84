package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.diff.Contract.Call;
import dev.mcpchaos.server.diff.Contract.Coverage;
import dev.mcpchaos.server.diff.Contract.Listing;
import dev.mcpchaos.server.diff.Contract.Origin;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reads a {@link Contract} from a cassette or asks a live server (stdio or Streamable HTTP) for it,
 * and, when asked to, sends a live server the calls a cassette recorded.
 */
public final class ContractSource {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** A live server that keeps a cursor going: this many pages of one list, then the list is taken as partial. */
    private static final int MAX_PAGES = 1000;
    /** What an answer to a call the server did not answer in time is classed as. */
    static final String NO_ANSWER = "no answer";

    /** Ends reads of HTTP answers at their deadline: a blocked read returns when its stream is closed. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "mcp-chaos-diff-deadlines");
        thread.setDaemon(true);
        return thread;
    });

    private ContractSource() {
    }

    /**
     * The contract a cassette recorded: every answer to a list request (all pages, all sessions),
     * how much of each list that is (a list never answered is {@link Coverage#ABSENT}, one whose
     * {@code nextCursor} was never followed {@link Coverage#PARTIAL}), and every {@code tools/call}
     * with the class of its answer (the last, when the same call was recorded more than once).
     *
     * @throws dev.mcpchaos.server.record.CassetteException naming the file and line of bad input
     */
    public static Contract fromCassette(Path file) throws IOException {
        Cassette cassette = Cassette.read(file);
        String source = file.toString();
        Map<String, JsonNode> requests = new HashMap<>(); // by session and id, until answered
        Map<ListKind, Map<String, JsonNode>> items = emptyItems();
        Map<ListKind, Integer> pages = new EnumMap<>(ListKind.class);
        Map<ListKind, Set<String>> cursorsGiven = new EnumMap<>(ListKind.class);
        Map<ListKind, Set<String>> cursorsFollowed = new EnumMap<>(ListKind.class);
        Map<String, Call> calls = new LinkedHashMap<>();
        for (CassetteEntry entry : cassette.entries()) {
            JsonNode message = entry.message();
            if (message == null || !message.has("id")) {
                continue;
            }
            String key = entry.session() + " " + message.get("id");
            if (entry.direction() == Direction.CLIENT_TO_SERVER && entry.method() != null) {
                requests.put(key, message);
                continue;
            }
            if (entry.direction() != Direction.SERVER_TO_CLIENT || entry.method() != null) {
                continue;
            }
            JsonNode request = requests.remove(key);
            if (request == null) {
                continue;
            }
            String method = request.path("method").asText();
            JsonNode params = request.path("params");
            if ("tools/call".equals(method)) {
                Call call = new Call(params.path("name").asText(), arguments(params), outcomeClass(message));
                calls.put(Contract.callKey(call.tool(), call.arguments()), call);
                continue;
            }
            ListKind kind = ListKind.ofMethod(method);
            if (kind == null) {
                continue;
            }
            pages.merge(kind, 1, Integer::sum);
            if (params.path("cursor").isTextual()) {
                cursorsFollowed.computeIfAbsent(kind, k -> new HashSet<>()).add(params.path("cursor").asText());
            }
            collect(items.get(kind), kind, message.path("result"));
            String next = nextCursor(message);
            if (next != null) {
                cursorsGiven.computeIfAbsent(kind, k -> new HashSet<>()).add(next);
            }
        }
        Map<ListKind, Listing> lists = new EnumMap<>(ListKind.class);
        for (ListKind kind : ListKind.values()) {
            int n = pages.getOrDefault(kind, 0);
            Set<String> unfollowed = new HashSet<>(cursorsGiven.getOrDefault(kind, Set.of()));
            unfollowed.removeAll(cursorsFollowed.getOrDefault(kind, Set.of()));
            if (n == 0) {
                lists.put(kind, new Listing(Map.of(), Coverage.ABSENT, "never listed them (no answer to "
                        + kind.method() + " in it)"));
            } else if (!unfollowed.isEmpty()) {
                lists.put(kind, new Listing(items.get(kind), Coverage.PARTIAL, "holds " + Contract.count(n, "page")
                        + " of " + kind.method() + " and not the rest (a nextCursor it never followed)"));
            } else {
                lists.put(kind, Listing.complete(items.get(kind)));
            }
        }
        return new Contract(source, Origin.CASSETTE, lists, calls, List.of());
    }

    /**
     * Starts {@code command}, speaks MCP to it over stdio (initialize, then each list, following
     * {@code nextCursor}), and stops it.
     *
     * @param timeout how long to wait for each answer
     * @throws IOException naming the command when it cannot start, exits or does not answer
     */
    public static Contract fromStdio(List<String> command, Duration timeout) throws IOException {
        return fromStdio(command, timeout, null);
    }

    /**
     * {@link #fromStdio(List, Duration)}, then, when {@code replay} is not null, sends the server
     * each of those calls (a cassette's recorded calls) and classes its answers, as a cassette's
     * are. This runs the server's tools for real: a tool that writes, deletes or sends does it
     * again. Calls of tools the server does not list are not sent ({@link Contract#unsentTools()}).
     *
     * @param replay the calls to send, in their order, or null to send none
     */
    public static Contract fromStdio(List<String> command, Duration timeout, Collection<Call> replay)
            throws IOException {
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
            return ask(new StdioPeer(name, out, answers, timeout), "server '" + name + "'", replay);
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
    public static Contract fromUrl(URI endpoint, Duration timeout) throws IOException {
        return fromUrl(endpoint, timeout, null);
    }

    /**
     * {@link #fromUrl(URI, Duration)}, then the calls of {@code replay} as in
     * {@link #fromStdio(List, Duration, Collection)}, with the same warning: they run for real.
     *
     * @param replay the calls to send, in their order, or null to send none
     */
    public static Contract fromUrl(URI endpoint, Duration timeout, Collection<Call> replay) throws IOException {
        HttpPeer peer = new HttpPeer(endpoint, timeout);
        try {
            return ask(peer, "server " + endpoint, replay);
        } finally {
            peer.close();
        }
    }

    /** initialize, then each list with its pages, then the calls to replay. */
    private static Contract ask(Peer peer, String source, Collection<Call> replay) throws IOException {
        ObjectNode init = JSON.createObjectNode();
        init.put("protocolVersion", "2025-06-18");
        init.putObject("capabilities");
        init.putObject("clientInfo").put("name", "mcp-chaos-diff").put("version", "1");
        JsonNode initAnswer = peer.request("initialize", init);
        if (initAnswer.has("error")) {
            throw new IOException(source + ": initialize failed: " + initAnswer.get("error"));
        }
        peer.notify("notifications/initialized");
        Map<ListKind, Listing> lists = new EnumMap<>(ListKind.class);
        for (ListKind kind : ListKind.values()) {
            lists.put(kind, list(peer, kind));
        }
        if (replay == null) {
            return new Contract(source, Origin.LIVE, lists, Map.of(), List.of());
        }
        Map<String, Call> calls = new LinkedHashMap<>();
        List<String> unsent = new ArrayList<>();
        Map<String, JsonNode> tools = lists.get(ListKind.TOOLS).items();
        for (Call recorded : replay) {
            if (!tools.containsKey(recorded.tool())) {
                unsent.add(recorded.tool()); // never call what the server does not offer
                continue;
            }
            ObjectNode params = JSON.createObjectNode().put("name", recorded.tool());
            params.set("arguments", recorded.arguments());
            String outcome;
            try {
                outcome = outcomeClass(peer.request("tools/call", params));
            } catch (NoAnswerException e) {
                outcome = NO_ANSWER; // the server's doing, and a difference: a call it answered before
            } catch (HttpStatusException e) {
                outcome = "HTTP " + e.status;
            }
            calls.put(Contract.callKey(recorded.tool(), recorded.arguments()),
                    new Call(recorded.tool(), recorded.arguments(), outcome));
        }
        return new Contract(source, Origin.LIVE_REPLAYED, lists, calls, unsent);
    }

    /**
     * One list, page after page. An error on the first page is an empty list (a capability the
     * server does not have); an error on a later page, or a cursor still going after
     * {@value #MAX_PAGES} pages, leaves the list partial.
     */
    private static Listing list(Peer peer, ListKind kind) throws IOException {
        Map<String, JsonNode> items = new LinkedHashMap<>();
        String cursor = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            ObjectNode params = JSON.createObjectNode();
            if (cursor != null) {
                params.put("cursor", cursor);
            }
            JsonNode answer = peer.request(kind.method(), params);
            if (answer.has("error")) {
                return page == 0 ? Listing.complete(items) : new Listing(items, Coverage.PARTIAL, "answered "
                        + Contract.count(page, "page") + " of " + kind.method() + ", then error "
                        + answer.path("error").path("code").asText("?") + " for the next");
            }
            collect(items, kind, answer.path("result"));
            cursor = nextCursor(answer);
            if (cursor == null) {
                return Listing.complete(items);
            }
        }
        return new Listing(items, Coverage.PARTIAL, "answered " + MAX_PAGES + " pages of " + kind.method()
                + " and still gave a nextCursor");
    }

    /** The answer's {@code result.nextCursor}, or null when there is no next page. */
    private static String nextCursor(JsonNode answer) {
        JsonNode next = answer.path("result").path("nextCursor");
        return next.isTextual() && !next.asText().isEmpty() ? next.asText() : null;
    }

    /** A tools/call's arguments, an empty object when it had none. */
    private static JsonNode arguments(JsonNode params) {
        JsonNode arguments = params.path("arguments");
        return arguments.isMissingNode() || arguments.isNull() ? JSON.createObjectNode() : arguments;
    }

    /** One side of a conversation with a live server, one request at a time. */
    private interface Peer {
        /**
         * Sends a request and returns its answer.
         *
         * @throws NoAnswerException when no answer came within the timeout, or the server went away first
         */
        JsonNode request(String method, JsonNode params) throws IOException;

        void notify(String method) throws IOException;
    }

    /** A request the server did not answer in time, or that it went away without answering. */
    private static final class NoAnswerException extends IOException {
        NoAnswerException(String message) {
            super(message);
        }
    }

    /** A Streamable HTTP server answered a POST with a status other than 2xx. */
    private static final class HttpStatusException extends IOException {
        final int status;

        HttpStatusException(String message, int status) {
            super(message);
            this.status = status;
        }
    }

    /** The error answer to a request the server sends: the diff is a client that offers nothing. */
    private static ObjectNode refusal(JsonNode serverRequest) {
        ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
        answer.set("id", serverRequest.get("id"));
        answer.putObject("error").put("code", -32601)
                .put("message", "mcp-chaos diff answers no requests (it declared no client capabilities)");
        return answer;
    }

    /** Streamable HTTP with {@link HttpClient}: small, one request at a time. */
    private static final class HttpPeer implements Peer {
        private final URI endpoint;
        private final Duration timeout;
        private final HttpClient client;
        private String sessionId;
        private int nextId = 1;

        HttpPeer(URI endpoint, Duration timeout) {
            this.endpoint = endpoint;
            this.timeout = timeout;
            this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
        }

        @Override
        public JsonNode request(String method, JsonNode params) throws IOException {
            int id = nextId++;
            ObjectNode message = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", id).put("method", method);
            message.set("params", params);
            long deadline = System.nanoTime() + timeout.toNanos();
            HttpResponse<InputStream> response = post(message, method, HttpResponse.BodyHandlers.ofInputStream());
            InputStream body = response.body();
            // An answer on an SSE stream may never come, and HttpClient's timeout ends at the
            // headers: closing the body at the deadline ends a read blocked on it.
            ScheduledFuture<?> watchdog = DEADLINES.schedule(() -> closeQuietly(body),
                    Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            try (body) {
                String type = response.headers().firstValue("Content-Type").orElse("");
                if (!type.startsWith("text/event-stream")) {
                    return parse(new String(body.readAllBytes(), StandardCharsets.UTF_8), method);
                }
                BufferedReader events = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
                StringBuilder data = new StringBuilder();
                String line;
                do {
                    line = events.readLine();
                    if ((line == null || line.isEmpty()) && data.length() > 0) {
                        JsonNode event = parse(data.toString(), method);
                        data.setLength(0);
                        if (event.path("id").asInt(-1) == id && !event.has("method")) {
                            return event;
                        }
                        if (event.has("method") && event.has("id")) {
                            refuse(event);
                        }
                    } else if (line != null && line.startsWith("data:")) {
                        data.append(data.length() > 0 ? "\n" : "").append(line, line.startsWith("data: ") ? 6 : 5,
                                line.length());
                    }
                } while (line != null);
                if (System.nanoTime() - deadline >= 0) {
                    throw new NoAnswerException("server " + endpoint + " did not answer " + method + " within "
                            + timeout);
                }
                throw new NoAnswerException("server " + endpoint + ": its event stream ended without the answer to "
                        + method);
            } catch (NoAnswerException | HttpStatusException e) {
                throw e;
            } catch (IOException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new NoAnswerException("server " + endpoint + " did not answer " + method + " within "
                            + timeout);
                }
                throw e;
            } finally {
                watchdog.cancel(false);
            }
        }

        /** Answers a request of the server's with an error, so that it does not hold up the answer awaited. */
        private void refuse(JsonNode serverRequest) {
            try {
                post(refusal(serverRequest), "its own " + serverRequest.path("method").asText(),
                        HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                // the answer awaited still comes, or its deadline passes: the request's outcome says which
            }
        }

        @Override
        public void notify(String method) throws IOException {
            post(JSON.createObjectNode().put("jsonrpc", "2.0").put("method", method), method,
                    HttpResponse.BodyHandlers.discarding());
        }

        private <T> HttpResponse<T> post(JsonNode message, String method, HttpResponse.BodyHandler<T> handler)
                throws IOException {
            HttpRequest.Builder request = HttpRequest.newBuilder(endpoint)
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(message)));
            if (sessionId != null) {
                request.header("Mcp-Session-Id", sessionId);
            }
            HttpResponse<T> response;
            try {
                response = client.send(request.build(), handler);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for server " + endpoint);
            } catch (HttpTimeoutException e) {
                throw new NoAnswerException("server " + endpoint + " did not answer " + method + " within " + timeout);
            } catch (IOException e) {
                throw new IOException("server " + endpoint + " does not answer " + method + ": " + e, e);
            }
            if (response.statusCode() / 100 != 2) {
                if (response.body() instanceof InputStream unread) {
                    closeQuietly(unread);
                }
                throw new HttpStatusException("server " + endpoint + " answered " + method + " with HTTP "
                        + response.statusCode() + " (expected: 2xx)", response.statusCode());
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
                client.send(HttpRequest.newBuilder(endpoint).timeout(timeout)
                        .header("Mcp-Session-Id", sessionId).DELETE().build(),
                        HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                // the session ends with the server anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // closing to end a read: nothing more to do
        }
    }

    /** Reads the child's stdout, a JSON message a line; at its end, {@link MissingNode} marks that no more will come. */
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
            // the process went away: marked below
        }
        answers.add(MissingNode.getInstance());
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
                    throw new NoAnswerException("server '" + name + "' did not answer " + method + " within " + timeout);
                }
                if (answer.isMissingNode()) {
                    answers.add(answer); // for every later request too
                    throw new NoAnswerException("server '" + name + "' ended its output (exited?) before answering "
                            + method);
                }
                if (answer.path("id").asInt(-1) == id && !answer.has("method")) {
                    return answer;
                }
                if (answer.has("method") && answer.has("id")) {
                    write(refusal(answer)); // a server request left unanswered could hold up the answer
                }
                // a notification, or an answer to an earlier request that timed out: nothing the contract needs
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

    private static Map<ListKind, Map<String, JsonNode>> emptyItems() {
        Map<ListKind, Map<String, JsonNode>> items = new EnumMap<>(ListKind.class);
        for (ListKind kind : ListKind.values()) {
            items.put(kind, new LinkedHashMap<>());
        }
        return items;
    }

    private static void collect(Map<String, JsonNode> items, ListKind kind, JsonNode result) {
        for (JsonNode item : result.path(kind.field())) {
            JsonNode key = item.get(kind.key());
            if (key != null && key.isTextual()) {
                items.put(key.asText(), item);
            }
        }
    }

    /** {@code result}, {@code isError} (a tool error result) or {@code error <code>} (JSON-RPC). */
    static String outcomeClass(JsonNode answer) {
        if (answer.has("error")) {
            return "error " + answer.path("error").path("code").asText("?");
        }
        return answer.path("result").path("isError").asBoolean(false) ? "isError" : "result";
    }
}
