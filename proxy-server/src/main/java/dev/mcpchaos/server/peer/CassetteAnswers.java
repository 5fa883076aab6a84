package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.internal.JsonTrees;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a cassette recorded as answered: each request with the answer to it, both ways. A
 * request's answer is the next message of the other direction in its session with its id (so a
 * request id used again after its answer is paired with its own answer, not another's). The one
 * index of what a cassette answered, for every tool that reads it: {@code diff},
 * {@code replay --verify} and the replayer ({@code ReplayIndex} keys these pairs for matching live
 * requests, and adds what the server sent around each answer).
 */
public final class CassetteAnswers {

    /** A client request and the server's answer to it. */
    public record Exchange(CassetteEntry request, CassetteEntry answer) {
    }

    private final List<Exchange> answered = new ArrayList<>();
    private final Map<CassetteEntry, CassetteEntry> answerOf = new IdentityHashMap<>();
    /** What the recording's client answered to the server's requests, by their method, in recorded order. */
    private final Map<String, List<JsonNode>> clientAnswers = new HashMap<>();

    private CassetteAnswers(Cassette cassette) {
        Map<String, CassetteEntry> fromClient = new HashMap<>(); // by session and id, until answered
        Map<String, CassetteEntry> fromServer = new HashMap<>();
        for (CassetteEntry e : cassette.entries()) {
            JsonNode message = e.message();
            JsonNode id = message != null ? message.get("id") : null;
            if (id == null) {
                continue; // a notification, or a line that is not JSON
            }
            boolean byClient = e.direction() == Direction.CLIENT_TO_SERVER;
            // JsonTrees, not JsonNode.toString(): that builds an ObjectMapper, which a replay's start avoids (#34).
            String key = e.session() + " " + JsonTrees.text(id);
            if (message.has("method")) {
                (byClient ? fromClient : fromServer).put(key, e);
                continue;
            }
            CassetteEntry request = (byClient ? fromServer : fromClient).remove(key);
            if (request == null) {
                continue; // answers nothing recorded
            }
            if (byClient) {
                clientAnswers.computeIfAbsent(request.method(), m -> new ArrayList<>()).add(message);
            } else {
                answered.add(new Exchange(request, e));
                answerOf.put(request, e);
            }
        }
    }

    /** The index of {@code cassette}. */
    public static CassetteAnswers of(Cassette cassette) {
        return new CassetteAnswers(cassette);
    }

    /** The client's requests that were answered, each with its answer, in the order of the answers. */
    public List<Exchange> exchanges() {
        return List.copyOf(answered);
    }

    /** The recorded answer to the client's {@code request} (an entry of the cassette), or null. */
    public CassetteEntry answerTo(CassetteEntry request) {
        return answerOf.get(request);
    }

    /**
     * A client that answers a live server's request as the recording's client answered the same
     * method: the recorded answers in order, then the last one again, each with the live id; a
     * method it never answered gets error -32601. Each call gives a client with its own order.
     */
    public UnaryOperator<JsonNode> recordedClient(String who) {
        Map<String, List<JsonNode>> left = new HashMap<>();
        clientAnswers.forEach((method, answers) -> left.put(method, new ArrayList<>(answers)));
        return request -> {
            String method = request.path("method").asText();
            List<JsonNode> recorded = left.get(method);
            if (recorded == null || recorded.isEmpty()) {
                return McpPeer.error(request, -32601, who + ": no recorded answer to " + method);
            }
            ObjectNode answer = (ObjectNode) (recorded.size() > 1 ? recorded.remove(0) : recorded.get(0)).deepCopy();
            answer.set("id", request.get("id"));
            return answer;
        };
    }
}
