package dev.mcpchaos.core.frame;

import java.util.List;
import java.util.Objects;

/**
 * The few JSON-RPC fields the proxy needs to route and match a message, pulled out of its
 * bytes by {@link dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer} without building a tree.
 *
 * <p>Immutable. Ids are {@link Long} (integral numbers that fit), {@link java.math.BigDecimal}
 * (other numbers), {@link String}, or {@code null}; two ids are the same id when they are
 * {@link Object#equals equal}, so {@code 7} and {@code "7"} stay different, as JSON-RPC says.
 */
public final class Envelope {

    private static final Envelope BLANK = new Envelope(MessageKind.BLANK, null, false, null, null, null, null, List.of());

    private final MessageKind kind;
    private final String jsonrpc;
    private final boolean hasId;
    private final Object id;
    private final String method;
    private final String paramsName;
    private final String malformedReason;
    private final List<Envelope> batch;

    private Envelope(MessageKind kind, String jsonrpc, boolean hasId, Object id, String method,
                     String paramsName, String malformedReason, List<Envelope> batch) {
        this.kind = kind;
        this.jsonrpc = jsonrpc;
        this.hasId = hasId;
        this.id = id;
        this.method = method;
        this.paramsName = paramsName;
        this.malformedReason = malformedReason;
        this.batch = batch;
    }

    /**
     * The envelope of one JSON object, classified by the members it has.
     *
     * @param jsonrpc the {@code jsonrpc} member, or null when absent or not a string
     * @param hasId whether an {@code id} member is present (its value may be null)
     * @param id the id value (see the class comment)
     * @param method the {@code method} member, or null
     * @param paramsName {@code params.name}, or null
     * @param hasResult whether a {@code result} member is present
     * @param hasError whether an {@code error} member is present
     */
    public static Envelope ofObject(String jsonrpc, boolean hasId, Object id, String method, String paramsName,
                                    boolean hasResult, boolean hasError) {
        MessageKind kind;
        if (method != null) {
            kind = hasId ? MessageKind.REQUEST : MessageKind.NOTIFICATION;
        } else if (hasError) {
            kind = MessageKind.ERROR;
        } else if (hasResult && hasId) {
            kind = MessageKind.RESPONSE;
        } else {
            kind = MessageKind.OTHER;
        }
        return new Envelope(kind, jsonrpc, hasId, id, method, paramsName, null, List.of());
    }

    /** A JSON array; {@code elements} holds one envelope per element, in order. */
    public static Envelope ofBatch(List<Envelope> elements) {
        return new Envelope(MessageKind.BATCH, null, false, null, null, null, null, List.copyOf(elements));
    }

    /** Well-formed JSON that is not an object or array (a bare string, number, literal). */
    public static Envelope ofOther() {
        return new Envelope(MessageKind.OTHER, null, false, null, null, null, null, List.of());
    }

    /** Bytes that are not one well-formed JSON value; {@code reason} says what is wrong. */
    public static Envelope malformed(String reason) {
        return new Envelope(MessageKind.MALFORMED, null, false, null, null, null,
                Objects.requireNonNull(reason, "reason"), List.of());
    }

    /** A whitespace-only frame. */
    public static Envelope blank() {
        return BLANK;
    }

    public MessageKind kind() {
        return kind;
    }

    /** The {@code jsonrpc} member as given (normally {@code "2.0"}), or null. */
    public String jsonrpc() {
        return jsonrpc;
    }

    /** Whether the message has an {@code id} member, even {@code "id": null}. */
    public boolean hasId() {
        return hasId;
    }

    /** The id: {@link Long}, {@link java.math.BigDecimal}, {@link String} or null. */
    public Object id() {
        return id;
    }

    /** The {@code method} of a request or notification, else null. */
    public String method() {
        return method;
    }

    /** {@code params.name} when present as a string (tool name, prompt name), else null. */
    public String paramsName() {
        return paramsName;
    }

    /** The tool name when this is a {@code tools/call} request, else null. */
    public String toolName() {
        return "tools/call".equals(method) ? paramsName : null;
    }

    /** Why the bytes are not well-formed JSON, for {@link MessageKind#MALFORMED}; else null. */
    public String malformedReason() {
        return malformedReason;
    }

    /** The elements of a {@link MessageKind#BATCH}; empty for everything else. */
    public List<Envelope> batch() {
        return batch;
    }

    public boolean isRequest() {
        return kind == MessageKind.REQUEST;
    }

    /** A response or an error response: something that answers a request by id. */
    public boolean isResponse() {
        return kind == MessageKind.RESPONSE || kind == MessageKind.ERROR;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Envelope)) {
            return false;
        }
        Envelope that = (Envelope) o;
        return kind == that.kind && hasId == that.hasId && Objects.equals(jsonrpc, that.jsonrpc)
                && Objects.equals(id, that.id) && Objects.equals(method, that.method)
                && Objects.equals(paramsName, that.paramsName)
                && Objects.equals(malformedReason, that.malformedReason) && batch.equals(that.batch);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, jsonrpc, hasId, id, method, paramsName, malformedReason, batch);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(kind.name());
        if (hasId) {
            sb.append(" id=").append(id instanceof String ? "\"" + id + "\"" : id);
        }
        if (method != null) {
            sb.append(' ').append(method);
        }
        if (paramsName != null) {
            sb.append(" name=").append(paramsName);
        }
        if (malformedReason != null) {
            sb.append(" (").append(malformedReason).append(')');
        }
        if (kind == MessageKind.BATCH) {
            sb.append(' ').append(batch);
        }
        return sb.toString();
    }
}
