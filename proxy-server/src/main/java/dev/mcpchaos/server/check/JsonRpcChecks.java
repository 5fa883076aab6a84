package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.util.List;

/**
 * The checks of JSON-RPC 2.0 as MCP uses it ({@code jsonrpc.*}): the envelope of each message,
 * request ids, answers (unknown, missing, after a cancel) and error codes. It also reads each
 * object's envelope for the {@link Tracker}, which goes on with what it is.
 */
final class JsonRpcChecks implements CheckFamily {

    @Override
    public List<Check> checks() {
        return List.of(Check.NOT_JSON, Check.INVALID_ENVELOPE, Check.RESULT_AND_ERROR, Check.DUPLICATE_REQUEST_ID,
                Check.RESPONSE_UNKNOWN_ID, Check.UNANSWERED_REQUEST, Check.CANCELLED_ANSWERED, Check.ERROR_CODE);
    }

    /** A message that does not parse as JSON. */
    static void notJson(Tracker t, Referee.Message m, String why) {
        if (StdioChecks.stdout(m)) {
            StdioChecks.notAMessage(t, m, "a line on stdout that is " + why);
        } else {
            t.findings.violate(Check.NOT_JSON, why, m, null, null);
        }
    }

    /** JSON that is neither an object nor a batch. */
    static void notAnObject(Tracker t, Referee.Message m, JsonNode json) {
        if (StdioChecks.stdout(m)) {
            StdioChecks.notAMessage(t, m, "a line that is JSON but no JSON-RPC message (a " + Tracker.typeName(json)
                    + ")");
        } else {
            t.findings.violate(Check.INVALID_ENVELOPE, "a " + Tracker.typeName(json)
                    + " (expected: a JSON-RPC object)", m, null, null);
        }
    }

    /** A batch, before its elements. */
    static void batch(Tracker t, Referee.Message m, JsonNode batch) {
        if (batch.isEmpty()) {
            t.findings.violate(Check.INVALID_ENVELOPE, "an empty batch", m, null, null);
        }
    }

    /** One JSON-RPC object (a batch's element, or the whole message): its envelope, then the tracker goes on. */
    static void envelope(Tracker t, TrackedSession s, Referee.Message m, JsonNode msg) {
        Findings f = t.findings;
        if (!msg.isObject()) {
            f.violate(Check.INVALID_ENVELOPE, "a batch element that is no object", m, null, null);
            return;
        }
        JsonNode idNode = msg.get("id");
        Object id = Tracker.idOf(idNode);
        JsonNode methodNode = msg.get("method");
        boolean hasResult = msg.has("result");
        boolean hasError = msg.has("error");
        JsonNode jsonrpc = msg.get("jsonrpc");
        if (jsonrpc == null || !jsonrpc.isTextual() || !jsonrpc.asText().equals("2.0")) {
            f.violate(Check.INVALID_ENVELOPE, "jsonrpc " + (jsonrpc == null ? "missing" : jsonrpc.toString())
                    + " (expected: \"2.0\")", m, id, Tracker.text(methodNode));
        }
        if (methodNode != null) {
            if (!methodNode.isTextual()) {
                f.violate(Check.INVALID_ENVELOPE, "method " + methodNode + " (expected: a string)", m, id, null);
                return;
            }
            String method = methodNode.asText();
            if (hasResult || hasError) {
                f.violate(Check.INVALID_ENVELOPE, "a " + method + " with " + (hasResult ? "result" : "error")
                        + " (expected: a request or notification has neither)", m, id, method);
            }
            JsonNode params = msg.get("params");
            if (params != null && !params.isObject() && !params.isArray()) {
                f.violate(Check.INVALID_ENVELOPE, "params " + params + " (expected: an object)", m, id, method);
            }
            if (idNode == null) {
                t.notification(s, m, method, params);
            } else if (!idNode.isTextual() && !idNode.isIntegralNumber()) {
                f.violate(Check.INVALID_ENVELOPE, "id " + idNode + " (expected: a string or an integer; MCP ids are "
                        + "never null)", m, id, method);
            } else {
                t.request(s, m, id, method, params);
            }
            return;
        }
        if (hasResult && hasError) {
            f.violate(Check.RESULT_AND_ERROR, "both result and error", m, id, null);
        } else if (!hasResult && !hasError) {
            f.violate(Check.INVALID_ENVELOPE, "no method, result or error (expected: a request, notification or "
                    + "response)", m, id, null);
            return;
        }
        if (idNode == null) {
            f.violate(Check.INVALID_ENVELOPE, "a response without id", m, null, null);
            return;
        }
        if (idNode.isNull()) {
            if (!hasError) {
                f.violate(Check.INVALID_ENVELOPE, "a result with id null (expected: the id of the request it "
                        + "answers)", m, null, null);
            } else {
                checkError(f, m, null, null, msg.get("error")); // a parse error's answer: it answers no request
            }
            return;
        }
        t.response(s, m, id, hasError ? msg.get("error") : null, hasResult ? msg.get("result") : null);
    }

    @Override
    public void requestSent(Tracker t, TrackedSession s, Referee.Message m, Object id, String method) {
        Pending inFlight = s.sent.get(m.direction()).get(id);
        if (inFlight != null) {
            t.findings.violate(Check.DUPLICATE_REQUEST_ID, "id " + id + " is still in flight (the " + inFlight.method
                    + " of #" + inFlight.index + ")", m, id, method);
        }
    }

    @Override
    public void response(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p, JsonNode error,
                         JsonNode result) {
        Findings f = t.findings;
        if (error != null) {
            checkError(f, m, id, p != null ? p.method : null, error);
        }
        Direction requestDirection = m.direction() == Direction.CLIENT_TO_SERVER ? Direction.SERVER_TO_CLIENT
                : Direction.CLIENT_TO_SERVER;
        // The client cancelled while a fault still held the request: the cancel queued behind it and
        // the two reached the server together, a crossing the proxy made, not the server.
        if (p != null && p.cancelled && p.heldBy != null && p.cancelSentAt >= 0 && p.cancelSentAt < p.deliveredAt) {
            f.attribute(Check.CANCELLED_ANSWERED, p.heldBy, "id " + id + " (" + p.method + ", #" + p.index + ") was "
                    + "answered after its cancel reached the receiver, but rule " + p.heldBy + " held the request, "
                    + "so the two reached it together", s.name, m.direction(), m.index(), id, p.method, m.text());
        } else if (p != null && p.cancelled) {
            f.violate(Check.CANCELLED_ANSWERED, "id " + id + " (" + p.method + ", #" + p.index + ") was answered "
                    + "after the " + side(requestDirection) + " cancelled it (expected: no answer; unless the two "
                    + "crossed on the way)", m, id, p.method);
        }
        if (p == null) {
            f.violate(Check.RESPONSE_UNKNOWN_ID, "id " + id + " answers no request in flight from the "
                    + side(requestDirection), m, id, null);
        }
    }

    private static String side(Direction requestDirection) {
        return requestDirection == Direction.CLIENT_TO_SERVER ? "client" : "server";
    }

    /** An unanswered request: the receiver's violation, or the fault's when a fault ended its connection. */
    static void unanswered(Tracker t, TrackedSession s, Direction d, Pending p, String why) {
        if (s.owedNothing(p)) {
            return;
        }
        Pending waitingOn = s.keptRequestOfReceiver(d, p);
        if (p.excusedBy == null && waitingOn != null) {
            t.findings.attribute(Check.UNANSWERED_REQUEST, waitingOn.faultedBy, why + ": the receiver was waiting on "
                    + "its own " + waitingOn.method + " (#" + waitingOn.index + "), which rule " + waitingOn.faultedBy
                    + " kept from the other side", s.name, d, p.index, p.id, p.method, p.text);
        } else if (p.excusedBy != null) {
            t.findings.attribute(Check.UNANSWERED_REQUEST, p.excusedBy, why + ": rule " + p.excusedBy + " ended the "
                    + "connection or the server before it could be answered", s.name, d, p.index, p.id, p.method,
                    p.text);
        } else {
            t.findings.violate(Check.UNANSWERED_REQUEST, why, s.name, d, p.index, p.id, p.method, p.text);
        }
    }

    private static void checkError(Findings f, Referee.Message m, Object id, String method, JsonNode error) {
        if (error == null || !error.isObject()) {
            f.violate(Check.INVALID_ENVELOPE, "error " + error + " (expected: an object with code and message)", m,
                    id, method);
            return;
        }
        JsonNode code = error.get("code");
        if (code == null || !code.isIntegralNumber()) {
            f.violate(Check.ERROR_CODE, "error code " + (code == null ? "missing" : code.toString())
                    + " (expected: an integer)", m, id, method);
        } else if (code.canConvertToLong()) {
            long c = code.longValue();
            boolean reserved = c >= -32768 && c <= -32000;
            boolean defined = c == -32700 || (c >= -32603 && c <= -32600) || c >= -32099;
            if (reserved && !defined) {
                f.violate(Check.ERROR_CODE, "error code " + c + " lies in JSON-RPC's reserved -32768..-32000 "
                        + "(expected: -32700, -32600..-32603, a server error -32000..-32099, or a code outside the "
                        + "range)", m, id, method);
            }
        }
        JsonNode message = error.get("message");
        if (message == null || !message.isTextual()) {
            f.violate(Check.INVALID_ENVELOPE, "error message " + (message == null ? "missing" : message.toString())
                    + " (expected: a string)", m, id, method);
        }
    }
}
