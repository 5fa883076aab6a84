package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;

import java.util.Objects;

/**
 * One breach of a {@link Check}: what was wrong and the message that was wrong, redacted.
 *
 * @param check     the check it breaks
 * @param detail    what was wrong, in a sentence
 * @param session   the session ({@code stdio}, or the HTTP {@code Mcp-Session-Id})
 * @param direction which way the offending message went
 * @param index     the message's number among the messages the referee saw, from 0 (a cassette's {@code seq}
 *                  when read from one)
 * @param id        its JSON-RPC id, or null
 * @param method    its method (for a response, of the request it answers), or null
 * @param excerpt   the message or line as it came, secrets redacted, cut to {@value Referee#EXCERPT_CHARS} chars
 */
public record Violation(Check check, String detail, String session, Direction direction, long index, Object id,
                        String method, String excerpt) {

    public Violation {
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(direction, "direction");
    }

    /** {@code c2s} or {@code s2c}, as in cassettes. */
    public String dir() {
        return direction == Direction.CLIENT_TO_SERVER ? "c2s" : "s2c";
    }

    /**
     * One line: the check, the detail, where, and the excerpt. A finding that is about no one
     * message (a server that would not exit) has an empty excerpt, as the referee never judges a
     * blank line: the line says so rather than ending in a blank.
     */
    @Override
    public String toString() {
        return check.id() + ": " + detail + " [" + session + " " + dir() + " #" + index
                + (id != null ? " id=" + id : "") + (method != null ? " " + method : "") + "] "
                + (excerpt == null || excerpt.isEmpty() ? "(no message excerpt)" : excerpt);
    }
}
