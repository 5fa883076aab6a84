package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.diff.Contract.Call;
import dev.mcpchaos.server.diff.Contract.Coverage;
import dev.mcpchaos.server.diff.Contract.Listing;
import dev.mcpchaos.server.diff.Contract.Origin;
import dev.mcpchaos.server.peer.CassetteAnswers;
import dev.mcpchaos.server.peer.HttpPeer;
import dev.mcpchaos.server.peer.McpPeer;
import dev.mcpchaos.server.peer.StdioPeer;
import dev.mcpchaos.server.record.Cassette;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

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

    /** The diff is a client that offers nothing: a request of the server's is refused. */
    private static final UnaryOperator<JsonNode> REFUSING = McpPeer.refusing(
            "mcp-chaos diff answers no requests (it declared no client capabilities)");

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
        Map<ListKind, Map<String, JsonNode>> items = emptyItems();
        Map<ListKind, Integer> pages = new EnumMap<>(ListKind.class);
        Map<ListKind, Set<String>> cursorsGiven = new EnumMap<>(ListKind.class);
        Map<ListKind, Set<String>> cursorsFollowed = new EnumMap<>(ListKind.class);
        Map<String, Call> calls = new LinkedHashMap<>();
        for (CassetteAnswers.Exchange exchange : CassetteAnswers.of(cassette).exchanges()) {
            JsonNode request = exchange.request().message();
            JsonNode message = exchange.answer().message();
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
        StdioPeer peer;
        try {
            peer = StdioPeer.start(command, ProcessBuilder.Redirect.DISCARD, timeout, REFUSING);
        } catch (IOException e) {
            throw new IOException("server '" + name + "' does not start: " + e.getMessage(), e);
        }
        try (peer) {
            return ask(peer, "server '" + name + "'", replay);
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
        try (HttpPeer peer = new HttpPeer(endpoint, timeout, REFUSING)) {
            return ask(peer, "server " + endpoint, replay);
        }
    }

    /** initialize, then each list with its pages, then the calls to replay. */
    private static Contract ask(McpPeer server, String source, Collection<Call> replay) throws IOException {
        Asking peer = new Asking(server);
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
            } catch (McpPeer.NoAnswerException e) {
                outcome = NO_ANSWER; // the server's doing, and a difference: a call it answered before
            } catch (McpPeer.HttpStatusException e) {
                outcome = "HTTP " + e.status();
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
    private static Listing list(Asking peer, ListKind kind) throws IOException {
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

    /** A conversation with a live server: the ids of the requests it is asked, numbered from 1. */
    private static final class Asking {
        private final McpPeer peer;
        private int nextId = 1;

        Asking(McpPeer peer) {
            this.peer = peer;
        }

        JsonNode request(String method, JsonNode params) throws IOException {
            ObjectNode message = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", nextId++).put("method", method);
            message.set("params", params);
            return peer.request(message);
        }

        void notify(String method) throws IOException {
            peer.notify(JSON.createObjectNode().put("jsonrpc", "2.0").put("method", method));
        }
    }

    /** A tools/call's arguments, an empty object when it had none. */
    private static JsonNode arguments(JsonNode params) {
        JsonNode arguments = params.path("arguments");
        return arguments.isMissingNode() || arguments.isNull() ? JSON.createObjectNode() : arguments;
    }

    /** One side of a conversation with a live server, one request at a time. */
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
