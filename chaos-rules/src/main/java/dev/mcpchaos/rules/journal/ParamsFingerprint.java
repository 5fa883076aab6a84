package dev.mcpchaos.rules.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A stable fingerprint of a JSON-RPC message's {@code params}, so that a journal can tell
 * "retried with the same arguments" without keeping them: the first 16 hex digits (64 bits) of
 * the SHA-256 of the params' canonical JSON. Canonical: object members sorted by name (the last
 * of duplicates wins), no whitespace, numbers by value ({@code 1}, {@code 1.0} and {@code 1e0}
 * are one number), strings with only {@code "}, {@code \} and control characters escaped. The
 * {@code _meta} member of {@code params} is left out: MCP clients put a fresh progress token
 * there on every attempt, which is not part of what was asked.
 *
 * <p>The <em>write fingerprint</em> ({@link #ofRequest}, {@link #writeOfParams}) is the same hash
 * with the members of {@code params.arguments} that only carry an idempotency key left out as
 * well ({@link #isIdempotencyKeyField}): a client that sends a write again under a fresh
 * {@code request_id} asks the same thing again, and a check of duplicate writes must see that.
 * When the arguments hold no such member, it is the params fingerprint itself.
 */
public final class ParamsFingerprint {

    /**
     * The names of argument members that only carry an idempotency key, as
     * {@link #isIdempotencyKeyField} compares them: lower case, without {@code -}, {@code _},
     * {@code .} and spaces. So {@code request_id}, {@code requestId} and {@code Request-ID} are
     * one name. A tool whose {@code request_id} names another request (a cancel) is the price:
     * two such calls that differ only there look like one write.
     */
    public static final Set<String> IDEMPOTENCY_KEY_FIELDS = Set.of(
            "idempotencykey", "idempotencytoken", "idempotencyid",
            "requestid", "clientrequestid", "xrequestid", "xidempotencykey", "clienttoken",
            "dedupekey", "dedupkey", "dedupeid", "dedupid", "deduplicationkey", "deduplicationid");

    /**
     * The two fingerprints of a request.
     *
     * @param params the fingerprint of its {@code params} ({@code _meta} aside)
     * @param write the same without the idempotency-key members of {@code params.arguments};
     *              the very same string as {@code params} when there were none
     */
    public record Fingerprints(String params, String write) {
    }

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxNestingDepth(10_000)
                    .maxDocumentLength(-1)
                    .build())
            .build();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ParamsFingerprint() {
    }

    /**
     * The fingerprint of {@code message}'s top-level {@code params}, or null when it has none or
     * is not well-formed JSON. The buffer's indexes are not changed.
     */
    public static String of(ByteBuf message) {
        Object params = member(message, "params");
        return params == NONE ? null : digest(params);
    }

    /**
     * Both fingerprints of {@code message}'s {@code params}, from one pass over it, or null when
     * it has none or is not well-formed JSON. The buffer's indexes are not changed.
     */
    public static Fingerprints ofRequest(ByteBuf message) {
        return fingerprints(member(message, "params"));
    }

    /** Both fingerprints of {@code message}'s {@code params} (see {@link #ofRequest(ByteBuf)}). */
    public static Fingerprints ofRequest(String message) {
        try (JsonParser parser = FACTORY.createParser(message)) {
            return fingerprints(member(parser, "params"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Both fingerprints of params read by {@link #member}; null when absent. */
    private static Fingerprints fingerprints(Object params) {
        if (params == NONE) {
            return null;
        }
        String exact = digest(params);
        Object write = withoutKeys(params);
        return new Fingerprints(exact, write == params ? exact : digest(write));
    }

    /**
     * The write fingerprint of a params value given as JSON text: {@link #ofParams} with the
     * idempotency-key members of its {@code arguments} left out, to compare a journal entry's
     * {@link JournalEntry#writeFingerprint()} with a call a test made.
     *
     * @throws IllegalArgumentException when {@code paramsJson} is not one JSON value
     */
    public static String writeOfParams(String paramsJson) {
        return digest(withoutKeys(parseParams(paramsJson)));
    }

    /**
     * Whether an argument named {@code name} only carries an idempotency key: its name, in lower
     * case and without {@code -}, {@code _}, {@code .} and spaces, is one of
     * {@link #IDEMPOTENCY_KEY_FIELDS} ({@code idempotency_key}, {@code Idempotency-Key},
     * {@code requestId}, {@code client_request_id}, {@code dedupe_key}, ...).
     */
    public static boolean isIdempotencyKeyField(String name) {
        StringBuilder normal = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c != '-' && c != '_' && c != '.' && c != ' ') {
                normal.append(c);
            }
        }
        return IDEMPOTENCY_KEY_FIELDS.contains(normal.toString().toLowerCase(Locale.ROOT));
    }

    /**
     * {@code params} without the idempotency-key members of its {@code arguments} (the top level
     * of them only: deeper, a member of that name is data), or {@code params} itself when it had
     * none, so that the caller can tell.
     */
    private static Object withoutKeys(Object params) {
        if (!(params instanceof Map<?, ?> map) || !(map.get("arguments") instanceof Map<?, ?> arguments)) {
            return params;
        }
        Map<String, Object> kept = new TreeMap<>();
        for (Map.Entry<?, ?> member : arguments.entrySet()) {
            if (!isIdempotencyKeyField((String) member.getKey())) {
                kept.put((String) member.getKey(), member.getValue());
            }
        }
        if (kept.size() == arguments.size()) {
            return params;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> copy = new TreeMap<>((Map<String, Object>) map);
        copy.put("arguments", kept);
        return copy;
    }

    /** The fingerprint of {@code message}'s {@code params} (see {@link #of(ByteBuf)}). */
    public static String of(String message) {
        try (JsonParser parser = FACTORY.createParser(message)) {
            Object params = member(parser, "params");
            return params == NONE ? null : digest(params);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The fingerprint of a params value given as JSON text (such as {@code {"name":"search",...}}),
     * for comparing an entry with the call a test made; {@code _meta} is left out as for a message.
     *
     * @throws IllegalArgumentException when {@code paramsJson} is not one JSON value
     */
    public static String ofParams(String paramsJson) {
        return digest(parseParams(paramsJson));
    }

    /** A params value given as JSON text, read as {@link #read} reads it. */
    private static Object parseParams(String paramsJson) {
        try (JsonParser parser = FACTORY.createParser(paramsJson)) {
            if (parser.nextToken() == null) {
                throw new IllegalArgumentException("params: '' (expected: a JSON value)");
            }
            Object value = read(parser, true);
            if (parser.nextToken() != null) {
                throw new IllegalArgumentException("params: " + paramsJson + " (expected: one JSON value)");
            }
            return value;
        } catch (IOException e) {
            throw new IllegalArgumentException("params: " + paramsJson + " (expected: JSON; " + e.getMessage()
                    + ')', e);
        }
    }

    /**
     * The {@code params.requestId} of a message (what {@code notifications/cancelled} cancels):
     * Long, BigDecimal or String, or null when absent or of another type.
     */
    public static Object requestId(ByteBuf message) {
        Object params = member(message, "params");
        if (params instanceof Map<?, ?> map) {
            Object id = map.get("requestId");
            if (id instanceof BigDecimal number) {
                try {
                    return number.longValueExact();
                } catch (ArithmeticException e) {
                    return number;
                }
            }
            return id instanceof String ? id : null;
        }
        return null;
    }

    /** Marks an absent member (a present one may be JSON null, read as {@link #NULL}). */
    private static final Object NONE = new Object();
    private static final Object NULL = new Object();

    private static Object member(ByteBuf message, String name) {
        try (JsonParser parser = message.hasArray()
                ? FACTORY.createParser(message.array(), message.arrayOffset() + message.readerIndex(),
                        message.readableBytes())
                : FACTORY.createParser((java.io.InputStream) new ByteBufInputStream(message.duplicate()))) {
            return member(parser, name);
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    private static Object member(JsonParser parser, String name) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            return NONE;
        }
        Object found = NONE;
        for (JsonToken token = parser.nextToken(); token == JsonToken.FIELD_NAME; token = parser.nextToken()) {
            String field = parser.currentName();
            parser.nextToken();
            if (field.equals(name)) {
                found = read(parser, true);
            } else {
                parser.skipChildren();
            }
        }
        return found;
    }

    /** The value at the parser's current token, as maps (sorted), lists, strings, BigDecimals, booleans or NULL. */
    private static Object read(JsonParser parser, boolean topOfParams) throws IOException {
        JsonToken token = parser.currentToken();
        switch (token) {
            case START_OBJECT: {
                Map<String, Object> members = new TreeMap<>();
                for (JsonToken t = parser.nextToken(); t == JsonToken.FIELD_NAME; t = parser.nextToken()) {
                    String field = parser.currentName();
                    parser.nextToken();
                    if (topOfParams && field.equals("_meta")) {
                        parser.skipChildren();
                    } else {
                        members.put(field, read(parser, false));
                    }
                }
                return members;
            }
            case START_ARRAY: {
                List<Object> items = new ArrayList<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    items.add(read(parser, false));
                }
                return items;
            }
            case VALUE_STRING:
                return parser.getText();
            case VALUE_NUMBER_INT:
                return new BigDecimal(parser.getBigIntegerValue());
            case VALUE_NUMBER_FLOAT:
                return parser.getDecimalValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return NULL;
            default:
                throw new IOException("unexpected " + token);
        }
    }

    private static String digest(Object value) {
        StringBuilder canonical = new StringBuilder(128);
        write(canonical, value);
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(canonical.toString()
                    .getBytes(StandardCharsets.UTF_8));
            char[] hex = new char[16];
            for (int i = 0; i < 8; i++) {
                hex[2 * i] = HEX[(hash[i] >> 4) & 0xf];
                hex[2 * i + 1] = HEX[hash[i] & 0xf];
            }
            return new String(hex);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static void write(StringBuilder out, Object value) {
        if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> member : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(out, (String) member.getKey());
                out.append(':');
                write(out, member.getValue());
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, list.get(i));
            }
            out.append(']');
        } else if (value instanceof String text) {
            quote(out, text);
        } else if (value instanceof BigDecimal number) {
            out.append(number(number));
        } else if (value == NULL) {
            out.append("null");
        } else {
            out.append(value); // Boolean
        }
    }

    /** A number by value: integral ones as plain integers, others in their shortest scientific form. */
    private static String number(BigDecimal number) {
        if (number.signum() == 0) {
            return "0";
        }
        BigDecimal stripped = number.stripTrailingZeros();
        if (stripped.scale() <= 0 && stripped.precision() - stripped.scale() <= 100) {
            return stripped.toBigInteger().toString();
        }
        return stripped.toString();
    }

    private static void quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
