package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Answers one client message from a {@link ReplayIndex}, for both transports: the recorded answer
 * with the live id, its progress with the live progress token, the server's own messages after
 * it, an error for a request with no recording (counted). Thread-safe: one lock per index, since
 * an HTTP session's requests come on several threads.
 */
final class Responder {

    private static final Logger log = LoggerFactory.getLogger(Responder.class);

    /** What to send for one client message: the reply (null for none), then the server's own messages. */
    record Reply(JsonNode response, List<JsonNode> after) {
    }

    private final ReplayIndex index;
    private final OnExhausted onExhausted;
    private final AtomicLong served;
    private final AtomicLong unmatched;

    Responder(ReplayIndex index, OnExhausted onExhausted, AtomicLong served, AtomicLong unmatched) {
        this.index = index;
        this.onExhausted = onExhausted;
        this.served = served;
        this.unmatched = unmatched;
    }

    /** Whether the recorded answer to a request like this came as SSE events. */
    synchronized boolean answeredAsStream(JsonNode request) {
        return index.answeredAsStream(request);
    }

    /**
     * The reply to {@code message}; what the server sent before it (its own messages recorded
     * between the request and the answer, then the progress notifications) is given to
     * {@code progress} first.
     */
    synchronized Reply respond(JsonNode message, Consumer<JsonNode> progress) {
        if (!message.isObject() || !message.has("method")) {
            return new Reply(null, List.of()); // a client's answer to a server request, or no message
        }
        String method = message.get("method").asText();
        if (!message.has("id")) {
            return new Reply(null, index.afterNotification(method));
        }
        JsonNode id = message.get("id");
        ReplayIndex.Answer answer = index.answer(message, onExhausted);
        if (answer == ReplayIndex.EXHAUSTED) {
            unmatched.incrementAndGet();
            String text = "no recording left for " + ReplayIndex.key(message) + ": it was recorded "
                    + index.recordings(message) + " time(s) and every one was served (on-exhausted: error)";
            log.warn("replay: {}", text);
            return new Reply(error(id, -32601, text), List.of());
        }
        if (answer == null) {
            unmatched.incrementAndGet();
            String closest = index.closest(message);
            String text = "no recording for " + ReplayIndex.key(message) + " (closest recorded: "
                    + (closest == null ? "none, the cassettes hold no requests" : closest) + ")";
            log.warn("replay: {}", text);
            return new Reply(error(id, -32601, text), List.of());
        }
        served.incrementAndGet();
        answer.before().forEach(progress); // the server's own messages recorded before the answer
        JsonNode liveToken = message.path("params").path("_meta").get("progressToken");
        if (liveToken != null && !liveToken.isNull()) {
            for (JsonNode recorded : answer.progress()) {
                ObjectNode copy = recorded.deepCopy();
                ((ObjectNode) copy.get("params")).set("progressToken", liveToken);
                progress.accept(copy);
            }
        }
        ObjectNode response = answer.response().deepCopy();
        response.set("id", id);
        return new Reply(response, answer.after());
    }

    static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode error = JsonNodeFactory.instance.objectNode();
        error.put("jsonrpc", "2.0");
        error.set("id", id == null ? JsonNodeFactory.instance.nullNode() : id);
        ObjectNode body = error.putObject("error");
        body.put("code", code);
        body.put("message", message);
        return error;
    }
}
