package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Answers one client message from a {@link ReplayIndex}, for both transports: the recorded answer
 * with the live id, its progress with the live progress token, the server's own messages after
 * it, an error for a request with no recording (counted), each with the delay its {@link Timing}
 * gives it. Thread-safe: one lock per index, since an HTTP session's requests come on several
 * threads.
 */
final class Responder {

    private static final Logger log = LoggerFactory.getLogger(Responder.class);

    /** Where a message of a reply goes. */
    enum Kind {
        /** Before the answer, with it: its progress, the server's own messages recorded before it. */
        RELATED,
        /** The answer (or the error). */
        RESPONSE,
        /** The server's own messages recorded after the answer (over HTTP: the GET stream). */
        AFTER
    }

    /**
     * One message to send, {@code delayNanos} after the client message arrived; the delays of one
     * reply never decrease, so sending in list order at those delays keeps the recorded order.
     */
    record Out(Kind kind, JsonNode message, long delayNanos) {
    }

    private final ReplayIndex index;
    private final OnExhausted onExhausted;
    private final Timing timing;
    private final AtomicLong served;
    private final AtomicLong unmatched;

    Responder(ReplayIndex index, OnExhausted onExhausted, AtomicLong served, AtomicLong unmatched) {
        this(index, onExhausted, Timing.NONE, served, unmatched);
    }

    Responder(ReplayIndex index, OnExhausted onExhausted, Timing timing, AtomicLong served, AtomicLong unmatched) {
        this.index = index;
        this.onExhausted = onExhausted;
        this.timing = timing;
        this.served = served;
        this.unmatched = unmatched;
    }

    /** Whether the recorded answer to a request like this came as SSE events. */
    synchronized boolean answeredAsStream(JsonNode request) {
        return index.answeredAsStream(request);
    }

    /**
     * What to send for {@code message}, in order: what the server sent before its answer (its own
     * messages recorded between the request and the answer, then the progress notifications), the
     * answer, then the server's own messages after it. Empty for a client's answer to a server request.
     */
    synchronized List<Out> respond(JsonNode message) {
        if (!message.isObject() || !message.has("method")) {
            return List.of(); // a client's answer to a server request, or no message
        }
        String method = message.get("method").asText();
        Plan plan = new Plan();
        if (!message.has("id")) {
            index.afterNotification(method).forEach(own -> plan.add(Kind.AFTER, own.message(), own.atMillis()));
            return plan.outs;
        }
        JsonNode id = message.get("id");
        ReplayIndex.Answer answer = find(message, id, plan);
        if (answer == null) {
            return plan.outs; // the error
        }
        served.incrementAndGet();
        answer.before().forEach(own -> plan.add(Kind.RELATED, own.message(), own.atMillis()));
        JsonNode liveToken = message.path("params").path("_meta").get("progressToken");
        if (liveToken != null && !liveToken.isNull()) {
            for (ReplayIndex.Timed recorded : answer.progress()) {
                ObjectNode copy = recorded.message().deepCopy();
                ((ObjectNode) copy.get("params")).set("progressToken", liveToken);
                plan.add(Kind.RELATED, copy, recorded.atMillis());
            }
        }
        ObjectNode response = answer.response().message().deepCopy();
        response.set("id", id);
        plan.add(Kind.RESPONSE, response, answer.response().atMillis());
        answer.after().forEach(own -> plan.add(Kind.AFTER, own.message(), own.atMillis()));
        return plan.outs;
    }

    /** The recording for a request, or null with the error (counted) put in {@code plan}. */
    private ReplayIndex.Answer find(JsonNode message, JsonNode id, Plan plan) {
        if (index.matching().mode() == MatchMode.SEQUENTIAL) {
            String expected = index.expectedNext();
            ReplayIndex.Answer answer = index.next(message);
            if (answer != null) {
                return answer;
            }
            String text = expected == null
                    ? "no recording left for " + index.key(message) + ": every one of the "
                            + index.position() + " recorded request(s) was served in order (match: sequential)"
                    : "not the next recorded request: " + index.key(message) + " (expected next, recorded request "
                            + (index.position() + 1) + ": " + expected + "; match: sequential)";
            return unmatched(id, text, plan);
        }
        ReplayIndex.Answer answer = index.answer(message, onExhausted);
        if (answer == ReplayIndex.EXHAUSTED) {
            return unmatched(id, "no recording left for " + index.key(message) + ": it was recorded "
                    + index.recordings(message) + " time(s) and every one was served (on-exhausted: error)", plan);
        }
        if (answer == null) {
            String closest = index.closest(message);
            MatchMode mode = index.matching().mode();
            // A fixture's recording often has other arguments than the test sends, or none: say
            // which mode would serve the request rather than leave --match-ignore to be found.
            String hint = mode == MatchMode.METHOD ? "; match: method"
                    : index.servedByMethod(message) ? "; --match method would serve it" : "";
            return unmatched(id, "no recording for " + index.key(message) + " (closest recorded: "
                    + (closest == null ? "none, the cassettes hold no requests" : closest) + hint + ")", plan);
        }
        return answer;
    }

    private ReplayIndex.Answer unmatched(JsonNode id, String text, Plan plan) {
        unmatched.incrementAndGet();
        log.warn("replay: {}", text);
        plan.outs.add(new Out(Kind.RESPONSE, error(id, -32601, text), 0)); // an error is not recorded: at once
        return null;
    }

    /** A reply being put together: each message's delay at least the one before it. */
    private final class Plan {
        final List<Out> outs = new ArrayList<>();
        private long last;

        void add(Kind kind, JsonNode message, double recordedMillis) {
            last = Math.max(last, timing.delayNanos(recordedMillis));
            outs.add(new Out(kind, message, last));
        }
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
