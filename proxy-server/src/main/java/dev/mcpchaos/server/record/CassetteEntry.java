package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.util.Objects;

/**
 * One recorded message: a line of a cassette after its header.
 *
 * @param seq        the line's number among the cassette's messages, from 0
 * @param timeMillis when the message passed, in milliseconds since its session's first message
 * @param direction  which way it travelled
 * @param session    the session it belongs to ({@code stdio}, or the HTTP {@code Mcp-Session-Id})
 * @param http       the HTTP exchange it travelled on; null on stdio
 * @param message    the message as JSON, when it parses; else null
 * @param raw        the message as text, when it does not parse as JSON (broken traffic records
 *                   too); else null
 */
public record CassetteEntry(long seq, double timeMillis, Direction direction, String session, HttpExchange http,
                            JsonNode message, String raw) {

    public CassetteEntry {
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(session, "session");
        if ((message == null) == (raw == null)) {
            throw new IllegalArgumentException("entry " + seq + ": message " + message + ", raw " + raw
                    + " (expected: exactly one of them)");
        }
    }

    /** The JSON-RPC method of a request or notification, or null. */
    public String method() {
        JsonNode method = message != null ? message.get("method") : null;
        return method != null && method.isTextual() ? method.asText() : null;
    }
}
