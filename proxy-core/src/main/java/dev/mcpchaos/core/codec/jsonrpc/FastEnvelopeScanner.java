package dev.mcpchaos.core.codec.jsonrpc;

import dev.mcpchaos.core.frame.Envelope;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The fast path of {@link EnvelopeSniffer#sniff}: one pass over a message that is whole in a byte
 * array, which checks that it is well-formed JSON (RFC 8259) and pulls out the same envelope as
 * the jackson path, without tokenizing or decoding anything it does not return.
 *
 * <p>Why it exists: jackson's non-blocking parser decodes every string and number of a message
 * into its char buffers, and that dominated the per-message cost of both transports (issue #6).
 * An envelope needs a handful of values near the top of the message; everything else only has
 * to be checked and skipped: strings by looking for their closing quote eight bytes at a time,
 * containers with a bit stack.
 *
 * <p>The fall-back contract: {@link #scan} returns either exactly the envelope the jackson path
 * would return for the same bytes, or {@code null}, which means "not sure": the caller must then
 * sniff the message on the jackson path. It returns {@code null} for every malformed message
 * (so the reasons stay jackson's own wording, which tests and the event log show) and for
 * anything well-formed it does not handle itself with certainty:
 * <ul>
 *   <li>a root that is not an object or array (a bare scalar: rare, and jackson's root-scalar
 *       rules are subtle);</li>
 *   <li>an escape in a member name: {@code "\u0069d"} is {@code id}, and jackson rejects a lone
 *       surrogate escape in a name (not in a value);</li>
 *   <li>an escape in a captured string value ({@code jsonrpc}, {@code id}, {@code method},
 *       {@code params.name});</li>
 *   <li>an id that is a fraction, has an exponent, or has more than 18 digits (jackson makes
 *       those {@link java.math.BigDecimal}s);</li>
 *   <li>UTF-8 that is not strictly well-formed (overlong forms, encoded surrogates, beyond
 *       U+10FFFF), whatever jackson makes of it.</li>
 * </ul>
 * So the fast path only has to be fast; correctness of every odd case stays with jackson.
 * {@code EnvelopeSnifferDifferentialTest} checks the contract on generated and mutated messages.
 *
 * <p>One instance per sniffer, not thread-safe. The common path allocates nothing but the
 * envelope (and the id, a {@link Long} or {@link String}); a notification like the one before it
 * not even that.
 */
final class FastEnvelopeScanner {

    /** A position that means: malformed, or not sure. */
    private static final int FAIL = -1;

    /** Members of the root object (or a batch element) that the envelope reads. */
    private static final int OTHER = 0;
    private static final int JSONRPC = 1;
    private static final int ID = 2;
    private static final int METHOD = 3;
    private static final int RESULT = 4;
    private static final int ERROR = 5;
    private static final int PARAMS = 6;

    /** Bytes that may stand in a string as they are: ASCII from 0x20, but not '"' or '\'. */
    private static final boolean[] PLAIN = new boolean[256];

    static {
        for (int c = 0x20; c < 0x80; c++) {
            PLAIN[c] = c != '"' && c != '\\';
        }
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long QUOTES = ONES * '"';
    private static final long BACKSLASHES = ONES * '\\';
    private static final long SPACES = ONES * 0x20;

    private final TextCache texts;
    private final List<Envelope> elements = new ArrayList<>();
    /** Bit stack of the containers being skipped: bit d is 1 when depth d is an object. */
    private long[] containers = new long[2];

    // The message being scanned; buffer is dropped after each scan.
    private byte[] buffer;
    private int limit;

    // The object being captured (the root object, or the current element of a batch).
    private final EnvelopeMembers members = new EnvelopeMembers();

    // Set by skipString: whether the string just skipped had an escape, or a non-ASCII byte.
    private boolean escaped;
    private boolean nonAscii;
    // Set by opened and nextValue: the container's closer was reached (they return the position past it).
    private boolean closed;
    // The last notification's envelope and the texts it was made of (see capturedObject).
    private Envelope lastNotification;
    private String lastMethod;
    private String lastJsonrpc;
    private String lastParamsName;
    // Set by captureString and captureId; meaningless after they fail (the whole scan fails).
    private String capturedText;
    private Object capturedId;
    // Set by memberName: where the name just read starts and ends in buffer (without its quotes).
    private int nameStart;
    private int nameEnd;

    FastEnvelopeScanner(TextCache texts) {
        this.texts = texts;
    }

    /**
     * The envelope of {@code bytes[start, end)}, or {@code null} when the jackson path must decide
     * (see the class comment). Does not keep {@code bytes}.
     */
    Envelope scan(byte[] bytes, int start, int end) {
        buffer = bytes;
        limit = end;
        try {
            return scanMessage(start);
        } finally {
            buffer = null;
            elements.clear();
            members.clear();
            capturedText = null;
            capturedId = null;
        }
    }

    private Envelope scanMessage(int start) {
        int p = skipWhitespace(start);
        if (p == limit) {
            return Envelope.blank();
        }
        Envelope envelope;
        byte first = buffer[p];
        if (first == '{') {
            p = envelopeObject(p);
            if (p == FAIL) {
                return null;
            }
            envelope = capturedObject();
        } else if (first == '[') {
            p = batch(p);
            if (p == FAIL) {
                return null;
            }
            envelope = Envelope.ofBatch(elements);
        } else {
            return null;
        }
        // Only whitespace may follow the root.
        return skipWhitespace(p) == limit ? envelope : null;
    }

    /**
     * The envelope of the object just captured. A notification like the last one (the same
     * jsonrpc, method and tool texts, which the text cache hands out as the same strings) gets the
     * last one's envelope again: envelopes are immutable, a notification's says nothing but those
     * three, and a stream of progress or log notifications then makes no envelope per message.
     * Anything with an id gets its own.
     */
    private Envelope capturedObject() {
        EnvelopeMembers m = members;
        if (m.method == null || m.hasId) {
            return m.envelope();
        }
        Envelope last = lastNotification;
        if (last != null && m.method == lastMethod && m.jsonrpc == lastJsonrpc && m.paramsName == lastParamsName) {
            return last;
        }
        last = m.envelope();
        lastNotification = last;
        lastMethod = m.method;
        lastJsonrpc = m.jsonrpc;
        lastParamsName = m.paramsName;
        return last;
    }

    /** A root array: one envelope per element, objects captured, everything else "other". */
    private int batch(int p) {
        p = opened(p, (byte) ']');
        if (closed) {
            return p;
        }
        while (true) {
            if (p >= limit) {
                return FAIL;
            }
            if (buffer[p] == '{') {
                p = envelopeObject(p);
                if (p == FAIL) {
                    return FAIL;
                }
                elements.add(capturedObject());
            } else {
                p = skipValue(p);
                if (p == FAIL) {
                    return FAIL;
                }
                elements.add(Envelope.ofOther());
            }
            p = nextValue(p, (byte) ']');
            if (p == FAIL || closed) {
                return p;
            }
        }
    }

    /**
     * The object at {@code p} (its '{'), whose members are the envelope's. Mirrors the jackson
     * path's rules exactly: the last of duplicate members wins, but a container value leaves
     * jsonrpc, id and method as they were (id still counts as present); result and error count
     * whatever their value.
     */
    private int envelopeObject(int p) {
        members.clear();
        p = opened(p, (byte) '}');
        while (!closed) {
            p = memberName(p);
            if (p == FAIL) {
                return FAIL;
            }
            p = nextValue(memberValue(member(nameStart, nameEnd), p), (byte) '}');
            if (p == FAIL) {
                return FAIL;
            }
        }
        return p;
    }

    /** Which member {@code buffer[start, end)} (a name without escapes) is. */
    private int member(int start, int end) {
        switch (end - start) {
            case 2:
                return is(start, "id") ? ID : OTHER;
            case 5:
                return is(start, "error") ? ERROR : OTHER;
            case 6:
                if (is(start, "method")) {
                    return METHOD;
                }
                if (is(start, "result")) {
                    return RESULT;
                }
                return is(start, "params") ? PARAMS : OTHER;
            case 7:
                return is(start, "jsonrpc") ? JSONRPC : OTHER;
            default:
                return OTHER;
        }
    }

    private boolean is(int start, String ascii) {
        for (int i = 0, n = ascii.length(); i < n; i++) {
            if (buffer[start + i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** The value at {@code p} of a member of the envelope object. */
    private int memberValue(int member, int p) {
        byte c = buffer[p];
        boolean container = c == '{' || c == '[';
        switch (member) {
            case JSONRPC:
            case METHOD:
                if (container) {
                    return skipContainer(p); // leaves the member as it was, as jackson's path does
                }
                String text = null;
                if (c == '"') {
                    p = captureString(p);
                    text = capturedText;
                } else {
                    p = skipScalar(p);
                }
                if (member == JSONRPC) {
                    members.jsonrpc = text;
                } else {
                    members.method = text;
                }
                return p;
            case ID:
                members.hasId = true;
                if (container) {
                    return skipContainer(p); // present, but its value stays as it was
                }
                p = captureId(p);
                members.id = capturedId;
                return p;
            case RESULT:
                members.hasResult = true;
                return skipValue(p);
            case ERROR:
                members.hasError = true;
                return skipValue(p);
            case PARAMS:
                return c == '{' ? paramsObject(p) : skipValue(p);
            default:
                return skipValue(p);
        }
    }

    /**
     * The params object at {@code p}: only its own member "name", when a string, is kept. A loop of
     * its own rather than {@link #envelopeObject}'s with another member table: one loop for both
     * (and the name's end kept by skipMemberName) cost 10-20 % more CPU per message (#35).
     */
    private int paramsObject(int p) {
        p = opened(p, (byte) '}');
        while (!closed) {
            p = memberName(p);
            if (p == FAIL) {
                return FAIL;
            }
            if (nameEnd - nameStart == 4 && is(nameStart, "name") && buffer[p] == '"') {
                p = captureString(p);
                if (p == FAIL) {
                    return FAIL;
                }
                members.paramsName = capturedText;
            } else {
                p = skipValue(p);
            }
            p = nextValue(p, (byte) '}');
            if (p == FAIL) {
                return FAIL;
            }
        }
        return p;
    }

    /**
     * The member at {@code p} (its name's '"'): the name, which must be a string without escapes
     * (kept as {@link #nameStart} to {@link #nameEnd}), then ':'; the position of its value.
     */
    private int memberName(int p) {
        if (p >= limit || buffer[p] != '"') {
            return FAIL;
        }
        nameStart = p + 1;
        p = skipString(nameStart);
        if (p == FAIL || escaped) {
            return FAIL;
        }
        nameEnd = p - 1;
        return skipColon(p);
    }

    /**
     * Just inside the container opened at {@code p} (its '[' or '{'): past whitespace, the position
     * of its first value or member; or, for an empty one, just past {@code closer} with
     * {@link #closed} set.
     */
    private int opened(int p, byte closer) {
        p = skipWhitespace(p + 1);
        closed = p < limit && buffer[p] == closer;
        return closed ? p + 1 : p;
    }

    /**
     * After a value in a container: whitespace, then ',' and the position of the next value or
     * member (whitespace skipped), or {@code closer} and the position just past it with
     * {@link #closed} set; FAIL for anything else, and for a value that failed ({@code p} FAIL).
     */
    private int nextValue(int p, byte closer) {
        if (p == FAIL) {
            return FAIL;
        }
        p = skipWhitespace(p);
        if (p >= limit) {
            return FAIL;
        }
        byte c = buffer[p];
        closed = c == closer;
        if (closed) {
            return p + 1;
        }
        return c == ',' ? skipWhitespace(p + 1) : FAIL;
    }

    /** After a member name: whitespace, ':', whitespace; the position of the value. */
    private int skipColon(int p) {
        p = skipWhitespace(p);
        if (p >= limit || buffer[p] != ':') {
            return FAIL;
        }
        p = skipWhitespace(p + 1);
        return p < limit ? p : FAIL;
    }

    /** The string at {@code p} (its '"') into {@link #capturedText}: from the text cache when ASCII. */
    private int captureString(int p) {
        int start = p + 1;
        p = skipString(start);
        if (p == FAIL || escaped) {
            return FAIL; // decoding escapes is jackson's job
        }
        int length = p - 1 - start;
        capturedText = nonAscii
                ? new String(buffer, start, length, StandardCharsets.UTF_8)
                : texts.ofAscii(buffer, start, length);
        return p;
    }

    /**
     * The id scalar at {@code p} into {@link #capturedId}: a {@link String} (not cached, ids rarely
     * repeat), a {@link Long}, or null for a literal. Other numbers go to jackson.
     */
    private int captureId(int p) {
        byte c = buffer[p];
        if (c == '"') {
            int start = p + 1;
            p = skipString(start);
            if (p == FAIL || escaped) {
                return FAIL;
            }
            capturedId = new String(buffer, start, p - 1 - start,
                    nonAscii ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
            return p;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            boolean negative = c == '-';
            int digits = negative ? p + 1 : p;
            int end = skipNumber(p);
            // An integer of at most 18 digits is a long for sure; anything else is jackson's.
            if (end == FAIL || end - digits > 18 || end - digits < 1) {
                return FAIL;
            }
            long value = 0;
            for (int i = digits; i < end; i++) {
                byte d = buffer[i];
                if (d < '0' || d > '9') {
                    return FAIL; // a fraction or an exponent
                }
                value = value * 10 + (d - '0');
            }
            capturedId = negative ? -value : value;
            return end;
        }
        capturedId = null; // true, false or null: present, no value
        return skipScalar(p);
    }

    private int skipValue(int p) {
        byte c = buffer[p];
        return c == '{' || c == '[' ? skipContainer(p) : skipScalar(p);
    }

    /** A string, number or literal at {@code p}; its end. */
    private int skipScalar(int p) {
        switch (buffer[p]) {
            case '"':
                return skipString(p + 1);
            case 't':
                return skipLiteral(p, "true");
            case 'f':
                return skipLiteral(p, "false");
            case 'n':
                return skipLiteral(p, "null");
            default:
                return skipNumber(p);
        }
    }

    private int skipLiteral(int p, String literal) {
        int n = literal.length();
        if (limit - p < n) {
            return FAIL;
        }
        for (int i = 1; i < n; i++) {
            if (buffer[p + i] != literal.charAt(i)) {
                return FAIL;
            }
        }
        // What follows is checked by the caller, which accepts only whitespace, ',', '}' or ']'.
        return p + n;
    }

    /**
     * RFC 8259's number: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}. The caller
     * checks what follows, so "01" fails there, at the '1'.
     */
    private int skipNumber(int p) {
        byte[] b = buffer;
        int end = limit;
        if (p < end && b[p] == '-') {
            p++;
        }
        if (p >= end) {
            return FAIL;
        }
        byte c = b[p];
        if (c == '0') {
            p++;
        } else if (c >= '1' && c <= '9') {
            p = skipDigits(b, p + 1, end);
        } else {
            return FAIL;
        }
        if (p < end && b[p] == '.') {
            int digits = p + 1;
            p = skipDigits(b, digits, end);
            if (p == digits) {
                return FAIL;
            }
        }
        if (p < end && (b[p] == 'e' || b[p] == 'E')) {
            p++;
            if (p < end && (b[p] == '+' || b[p] == '-')) {
                p++;
            }
            int digits = p;
            p = skipDigits(b, digits, end);
            if (p == digits) {
                return FAIL;
            }
        }
        return p;
    }

    private static int skipDigits(byte[] b, int p, int end) {
        while (p < end && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
        return p;
    }

    /**
     * Any object or array at {@code p}, with everything in it: iterative, with the kind of each
     * open container in a bit stack, so depth costs a bit, not a stack frame.
     */
    private int skipContainer(int p) {
        byte[] b = buffer;
        int end = limit;
        int depth = 0;
        boolean object = false; // the kind of the innermost open container
        while (true) {
            // p is at a value.
            byte c = b[p];
            if (c == '{' || c == '[') {
                object = c == '{';
                push(depth++, object);
                p = skipWhitespace(p + 1);
                if (p >= end) {
                    return FAIL;
                }
                if (b[p] != (object ? '}' : ']')) {
                    if (object) {
                        p = skipMemberName(p);
                        if (p == FAIL) {
                            return FAIL;
                        }
                    }
                    continue;
                }
                // An empty container: closed at once.
                p++;
                if (--depth == 0) {
                    return p;
                }
                object = isObject(depth - 1);
            } else {
                p = skipScalar(p);
                if (p == FAIL) {
                    return FAIL;
                }
            }
            // After a value: a ',' and the next one, or the end of one or more containers.
            while (true) {
                p = skipWhitespace(p);
                if (p >= end) {
                    return FAIL;
                }
                c = b[p];
                if (c == ',') {
                    p = skipWhitespace(p + 1);
                    if (object) {
                        p = skipMemberName(p);
                        if (p == FAIL) {
                            return FAIL;
                        }
                    } else if (p >= end) {
                        return FAIL;
                    }
                    break;
                }
                if (c != (object ? '}' : ']')) {
                    return FAIL;
                }
                p++;
                if (--depth == 0) {
                    return p;
                }
                object = isObject(depth - 1);
            }
        }
    }

    /**
     * A member name, ':' and whitespace; the position of the value. A name with an escape is
     * jackson's: it rejects a lone surrogate escape in a name, though not in a value.
     */
    private int skipMemberName(int p) {
        if (p >= limit || buffer[p] != '"') {
            return FAIL;
        }
        p = skipString(p + 1);
        return p == FAIL || escaped ? FAIL : skipColon(p);
    }

    private void push(int depth, boolean object) {
        int word = depth >>> 6;
        if (word == containers.length) {
            containers = Arrays.copyOf(containers, word * 2);
        }
        long bit = 1L << depth;
        containers[word] = object ? containers[word] | bit : containers[word] & ~bit;
    }

    private boolean isObject(int depth) {
        return (containers[depth >>> 6] & (1L << depth)) != 0;
    }

    /**
     * The rest of a string from {@code p} (just after its opening quote); the position after its
     * closing quote. Sets {@link #escaped} and {@link #nonAscii}. Checks escapes, rejects control
     * characters, and takes only strictly well-formed UTF-8.
     */
    private int skipString(int p) {
        byte[] b = buffer;
        int end = limit;
        boolean sawEscape = false;
        boolean sawNonAscii = false;
        while (true) {
            p = skipPlain(b, p, end);
            if (p >= end) {
                return FAIL;
            }
            int c = b[p] & 0xFF;
            if (c == '"') {
                escaped = sawEscape;
                nonAscii = sawNonAscii;
                return p + 1;
            } else if (c == '\\') {
                p = skipEscape(b, p + 1, end);
                sawEscape = true;
            } else if (c >= 0x80) {
                p = skipUtf8(b, p, end, c);
                sawNonAscii = true;
            } else if (PLAIN[c]) {
                p++; // not reached with skipPlain exact; kept so a loose skipPlain stays correct
            } else {
                return FAIL; // a control character: JSON wants it escaped
            }
            if (p == FAIL) {
                return FAIL;
            }
        }
    }

    /**
     * The first position from {@code p} that is not a plain string byte (see {@link #PLAIN}), or
     * {@code end}. Eight bytes at a time: one long is tested for '"', '\', a byte below 0x20 or
     * one from 0x80 with the usual "has a zero byte" arithmetic. The lowest flagged byte is a true
     * hit (borrows only carry upward from a hit), so the position is exact.
     */
    private static int skipPlain(byte[] b, int p, int end) {
        while (p + 8 <= end) {
            long x = (long) LONGS.get(b, p);
            long quote = x ^ QUOTES;
            long backslash = x ^ BACKSLASHES;
            long hits = ((quote - ONES) & ~quote)
                    | ((backslash - ONES) & ~backslash)
                    | (x - SPACES)
                    | x;
            hits &= HIGHS;
            if (hits != 0) {
                return p + (Long.numberOfTrailingZeros(hits) >>> 3);
            }
            p += 8;
        }
        while (p < end && PLAIN[b[p] & 0xFF]) {
            p++;
        }
        return p;
    }

    /** An escape after its '\' at {@code p}: one of {@code "\/bfnrt} or u and four hex digits. */
    private static int skipEscape(byte[] b, int p, int end) {
        if (p >= end) {
            return FAIL;
        }
        switch (b[p]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                return p + 1;
            case 'u':
                if (end - p < 5) {
                    return FAIL;
                }
                for (int i = p + 1; i <= p + 4; i++) {
                    if (Character.digit(b[i], 16) < 0) {
                        return FAIL;
                    }
                }
                // A lone surrogate escape is taken as jackson takes it: as one char.
                return p + 5;
            default:
                return FAIL;
        }
    }

    /**
     * A multi-byte UTF-8 sequence starting with {@code lead} at {@code p}, well-formed by the
     * Unicode standard's table 3-7 (no overlong forms, no surrogates, nothing beyond U+10FFFF).
     * Anything else is left to jackson. Ordered by how common the sequences are in text.
     */
    private static int skipUtf8(byte[] b, int p, int end, int lead) {
        if (lead < 0xE0) {
            // 2 bytes, U+0080..U+07FF: C2..DF, then a continuation byte.
            return lead >= 0xC2 && p + 1 < end && (b[p + 1] & 0xC0) == 0x80 ? p + 2 : FAIL;
        }
        if (lead < 0xF0) {
            // 3 bytes: E0 needs A0..BF next (no overlong), ED needs 80..9F (no surrogates).
            if (p + 2 >= end || (b[p + 2] & 0xC0) != 0x80) {
                return FAIL;
            }
            int second = b[p + 1] & 0xFF;
            int min = lead == 0xE0 ? 0xA0 : 0x80;
            int max = lead == 0xED ? 0x9F : 0xBF;
            return second >= min && second <= max ? p + 3 : FAIL;
        }
        if (lead > 0xF4 || p + 3 >= end || (b[p + 2] & 0xC0) != 0x80 || (b[p + 3] & 0xC0) != 0x80) {
            return FAIL;
        }
        // 4 bytes: F0 needs 90..BF next (no overlong), F4 needs 80..8F (not beyond U+10FFFF).
        int second = b[p + 1] & 0xFF;
        int min = lead == 0xF0 ? 0x90 : 0x80;
        int max = lead == 0xF4 ? 0x8F : 0xBF;
        return second >= min && second <= max ? p + 4 : FAIL;
    }

    private int skipWhitespace(int p) {
        byte[] b = buffer;
        int end = limit;
        // Most JSON on the wire is compact: check for "no whitespace here" first.
        if (p < end && b[p] > ' ') {
            return p;
        }
        return skipSomeWhitespace(b, p, end);
    }

    private static int skipSomeWhitespace(byte[] b, int p, int end) {
        while (p < end) {
            byte c = b[p];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                return p;
            }
            p++;
        }
        return p;
    }
}
