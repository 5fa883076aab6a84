package dev.mcpchaos.rules.match;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.internal.Text;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code match:} part of a rule: which messages it picks. Every key given must match; a key
 * not given matches anything. A blank frame (an empty line) is never matched.
 *
 * <p>{@link #matches} looks only at the envelope the sniffer made when the message was read and
 * at the correlation (a response carries the method and tool of the request it answers): it
 * parses nothing and allocates nothing, since it runs for every message and rule.
 */
public final class MessageMatch {

    /** Matches every message that is not blank. */
    public static final MessageMatch ANY = builder().build();

    private final Direction direction;
    private final TransportKind transport;
    private final MessageKind kind;
    private final Glob method;
    private final Glob tool;
    private final boolean matchId;
    private final Object id;
    private final Map<String, Glob> headers;

    private MessageMatch(Builder b) {
        direction = b.direction;
        transport = b.transport;
        kind = b.kind;
        method = b.method;
        tool = b.tool;
        matchId = b.matchId;
        id = b.id;
        headers = Map.copyOf(b.headers);
    }

    /** A builder; every key is optional. */
    public static Builder builder() {
        return new Builder();
    }

    /** Whether this frame, on this transport, is one the rule picks. */
    public boolean matches(Frame frame, TransportKind on) {
        return matches(frame.direction(), frame.envelope(), frame.method(), frame.toolName(), on)
                && headersMatch(frame);
    }

    /**
     * Whether the HTTP request the frame travels with has the headers the rule asks for; true
     * when it asks for none. A frame without such a request (stdio) has no headers.
     */
    public boolean headersMatch(Frame frame) {
        if (headers.isEmpty()) {
            return true;
        }
        for (Map.Entry<String, Glob> header : headers.entrySet()) {
            String value = frame.requestHeader(header.getKey());
            if (value == null || !header.getValue().matches(value)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a message with these properties is one the rule picks. The engine matches a
     * message by what it was when it arrived, so that a rule after one that rewrote it (a
     * truncated request has no method any more) still recognises it.
     *
     * @param method the message's method, or that of the request it answers
     * @param tool the tool of a {@code tools/call}, or of the request answered
     * @see #headersMatch(Frame) for the {@code headers} condition, which needs the frame
     */
    public boolean matches(Direction travelling, Envelope envelope, String method, String tool, TransportKind on) {
        if (envelope.kind() == MessageKind.BLANK) {
            return false;
        }
        if (direction != null && travelling != direction) {
            return false;
        }
        if (transport != null && on != transport) {
            return false;
        }
        if (kind != null && envelope.kind() != kind) {
            return false;
        }
        if (this.method != null && !this.method.matches(method)) {
            return false;
        }
        if (this.tool != null && !this.tool.matches(tool)) {
            return false;
        }
        if (matchId && !(envelope.hasId() && sameId(id, envelope.id()))) {
            return false;
        }
        return true;
    }

    /** JSON-RPC ids are equal when of the same type and value; numbers compare by value. */
    static boolean sameId(Object expected, Object actual) {
        if (expected instanceof String || actual instanceof String || expected == null || actual == null) {
            return Objects.equals(expected, actual);
        }
        if (expected instanceof Long && actual instanceof Long) {
            return expected.equals(actual);
        }
        return toBigDecimal(expected).compareTo(toBigDecimal(actual)) == 0;
    }

    private static BigDecimal toBigDecimal(Object number) {
        return number instanceof BigDecimal ? (BigDecimal) number : new BigDecimal(number.toString());
    }

    /** The direction matched, or null for any. */
    public Direction direction() {
        return direction;
    }

    /** The transport matched, or null for any. */
    public TransportKind transport() {
        return transport;
    }

    /** The kind matched, or null for any. */
    public MessageKind kind() {
        return kind;
    }

    /** The method glob, or null. */
    public Glob method() {
        return method;
    }

    /** The tool glob, or null. */
    public Glob tool() {
        return tool;
    }

    /** Whether an exact id is matched. */
    public boolean matchesId() {
        return matchId;
    }

    /** The id matched, when {@link #matchesId()}: Long, BigDecimal or String. */
    public Object id() {
        return id;
    }

    /** Header globs (HTTP only). */
    public Map<String, Glob> headers() {
        return headers;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("match{");
        if (direction != null) {
            sb.append(" direction=").append(direction.arrow());
        }
        if (transport != null) {
            sb.append(" transport=").append(transport);
        }
        if (kind != null) {
            sb.append(" kind=").append(kind);
        }
        if (method != null) {
            sb.append(" method=").append(method);
        }
        if (tool != null) {
            sb.append(" tool=").append(tool);
        }
        if (matchId) {
            sb.append(" id=").append(Text.id(id));
        }
        if (!headers.isEmpty()) {
            sb.append(" headers=").append(headers);
        }
        return sb.append(" }").toString();
    }

    /** Builds a {@link MessageMatch}. */
    public static final class Builder {
        private Direction direction;
        private TransportKind transport;
        private MessageKind kind;
        private Glob method;
        private Glob tool;
        private boolean matchId;
        private Object id;
        private final LinkedHashMap<String, Glob> headers = new LinkedHashMap<>();

        private Builder() {
        }

        /** Only messages travelling this way; null for both. */
        public Builder direction(Direction direction) {
            this.direction = direction;
            return this;
        }

        /** Only on this transport; null for any. */
        public Builder transport(TransportKind transport) {
            this.transport = transport;
            return this;
        }

        /**
         * Only messages of this kind: {@code REQUEST}, {@code RESPONSE}, {@code NOTIFICATION} or
         * {@code ERROR}; null for any.
         */
        public Builder kind(MessageKind kind) {
            if (kind != null && kind != MessageKind.REQUEST && kind != MessageKind.RESPONSE
                    && kind != MessageKind.NOTIFICATION && kind != MessageKind.ERROR) {
                throw new IllegalArgumentException("kind: " + kind
                        + " (expected: REQUEST, RESPONSE, NOTIFICATION, ERROR or null for any)");
            }
            this.kind = kind;
            return this;
        }

        /** Only messages whose method (or whose request's method) matches the glob. */
        public Builder method(String glob) {
            this.method = glob == null ? null : Glob.of(glob);
            return this;
        }

        /** Only {@code tools/call} requests (and their responses) whose tool name matches the glob. */
        public Builder tool(String glob) {
            this.tool = glob == null ? null : Glob.of(glob);
            return this;
        }

        /** Only messages with exactly this id: a {@link Long}, {@link BigDecimal} or {@link String}. */
        public Builder id(Object id) {
            if (id instanceof Integer || id instanceof Short || id instanceof Byte) {
                id = ((Number) id).longValue();
            }
            if (!(id instanceof Long || id instanceof BigDecimal || id instanceof String)) {
                throw new IllegalArgumentException("id: " + id + " (expected: a Long, BigDecimal or String)");
            }
            this.matchId = true;
            this.id = id;
            return this;
        }

        /** HTTP only: the header's value must match the glob. */
        public Builder header(String name, String glob) {
            headers.put(Objects.requireNonNull(name, "name"), Glob.of(glob));
            return this;
        }

        public MessageMatch build() {
            return new MessageMatch(this);
        }
    }
}
