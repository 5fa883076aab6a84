package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads an HTTP/1.1 message head where it lies, into offsets, with no header objects: how the
 * proxy's codecs ({@link Http1ServerCodec}, {@link Http1ClientCodec}) read most heads without
 * Netty's decoder, which alone cost about a third of nginx's whole CPU per request (#16,
 * docs/benchmarks.md).
 *
 * <p><b>Strict on purpose.</b> It vouches only for heads that every conforming parser reads the
 * same way, and answers {@link #DEFER} for everything else, which the caller hands to Netty's
 * decoder: that one refuses what must be refused, and reads the rest as it does today. Deferred
 * are: leading empty lines; anything but exactly one space between the parts of the start line;
 * versions other than {@code HTTP/1.1} and {@code HTTP/1.0}; control characters (HTAB aside, in
 * values), DEL and bytes above 0x7F; a bare CR or a bare LF; obsolete line folding; whitespace
 * or any non-token character before a colon; {@code Transfer-Encoding} in any form; a
 * {@code Content-Length} that is repeated (even with the same value), empty, signed, a list or
 * over 18 digits; 1xx, 204, 304 and other non-final or bodiless answers; heads over the size
 * limit or with too many fields. So what a head the scanner accepts means cannot differ between
 * this proxy, Netty and the upstream in the ways request smuggling needs (RFC 9112 sections 2.2,
 * 5, 6.1 and 6.3); {@code HeadScannerTest} checks each accepted head against Netty's decoder.
 *
 * <p>The body of an accepted head is {@link #contentLength()} bytes (0 for a request without
 * one); an answer to {@code HEAD} has none whatever it says, which only the caller knows.
 *
 * <p>One instance per connection and direction; not thread-safe. The offsets of a scan are valid
 * until the next one, and index the array {@link #scan(byte[], int, int)} read (or, for
 * {@link #scan(ByteBuf)}, a copy of the head that {@link #bytes()} returns).
 */
public final class HeadScanner {

    /** The head is not complete yet (and nothing so far is deferred): scan again with more bytes. */
    public static final int INCOMPLETE = -1;
    /** Not a head this scanner vouches for: let the full decoder read it, and refuse it if it must. */
    public static final int DEFER = -2;

    private static final boolean[] TOKEN = new boolean[256];
    private static final boolean[] FIELD_VALUE = new boolean[256];
    private static final byte[] HTTP_1 = "HTTP/1.".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTENT_LENGTH = "content-length".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding".getBytes(StandardCharsets.US_ASCII);

    static {
        // tchar, RFC 9110 section 5.6.2
        for (char c = '0'; c <= '9'; c++) {
            TOKEN[c] = true;
        }
        for (char c = 'a'; c <= 'z'; c++) {
            TOKEN[c] = true;
            TOKEN[c - 'a' + 'A'] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TOKEN[c] = true;
        }
        // field-vchar, SP and HTAB; obs-text (0x80-0xFF) is deferred
        for (int c = 0x21; c <= 0x7e; c++) {
            FIELD_VALUE[c] = true;
        }
        FIELD_VALUE[' '] = true;
        FIELD_VALUE['\t'] = true;
    }

    private final boolean requests;
    private final int maxHeadSize;
    private final int maxFields;

    private byte[] copy = new byte[512];
    private byte[] bytes;
    private int start;
    private int length;
    private int[] fieldOffsets;
    private int fields;
    private long contentLength;
    private int methodEnd;
    private int targetStart;
    private int targetEnd;
    private int status;
    private int reasonStart;
    private int reasonEnd;
    private boolean http11;
    private long scans;

    private HeadScanner(boolean requests, int maxHeadSize, int maxFields) {
        if (maxHeadSize < 16 || maxFields < 1) {
            throw new IllegalArgumentException("maxHeadSize " + maxHeadSize + ", maxFields " + maxFields);
        }
        this.requests = requests;
        this.maxHeadSize = maxHeadSize;
        this.maxFields = maxFields;
        this.fieldOffsets = new int[4 * Math.min(maxFields, 16)];
    }

    /**
     * A scanner of request heads.
     *
     * @param maxHeadSize the largest head it accepts, start line and final blank line included; no
     *                    more than the full decoder's limits allow, so that it never passes a head
     *                    that decoder would refuse as too long
     * @param maxFields   the most header fields it accepts
     */
    public static HeadScanner forRequests(int maxHeadSize, int maxFields) {
        return new HeadScanner(true, maxHeadSize, maxFields);
    }

    /** A scanner of response heads; see {@link #forRequests} for the limits. */
    public static HeadScanner forResponses(int maxHeadSize, int maxFields) {
        return new HeadScanner(false, maxHeadSize, maxFields);
    }

    /**
     * Scans the head at {@code in}'s reader index without moving it; the offsets then index
     * {@link #bytes()}, a copy of (at most the limit's worth of) the readable bytes.
     *
     * @return the head's length in bytes (through its blank line), {@link #INCOMPLETE} or {@link #DEFER}
     */
    public int scan(ByteBuf in) {
        return scan(in, false);
    }

    /**
     * As {@link #scan(ByteBuf)}, for a caller that says whether its last scan of this head, from
     * the same reader index, found it incomplete: then all that is there is head so far, and is
     * taken in one window.
     */
    public int scan(ByteBuf in, boolean continuing) {
        int readable = Math.min(in.readableBytes(), maxHeadSize);
        // A window that grows: a head is a few hundred bytes, and what follows it (a body of
        // megabytes, pipelined requests) is not copied.
        int window = continuing ? readable : Math.min(readable, 1024);
        while (true) {
            if (copy.length < window) {
                copy = new byte[Math.max(window, copy.length * 2)];
            }
            in.getBytes(in.readerIndex(), copy, 0, window);
            int result = scan(copy, 0, window);
            if (result != INCOMPLETE || window == readable) {
                return result;
            }
            window = Math.min(readable, window * 4);
        }
    }

    /**
     * Scans the head at {@code from} in {@code array}, {@code available} bytes of which are there.
     *
     * @return the head's length in bytes (through its blank line), {@link #INCOMPLETE} or {@link #DEFER}
     */
    public int scan(byte[] array, int from, int available) {
        scans++;
        bytes = array;
        start = from;
        fields = 0;
        contentLength = requests ? 0 : -1;
        boolean sawLength = false;
        int end = from + Math.min(available, maxHeadSize);
        int at = requests ? requestLine(array, from, end) : statusLine(array, from, end);
        while (at >= 0) {
            if (at >= end) {
                return incomplete(available);
            }
            byte first = array[at];
            if (first == '\r') {
                if (at + 1 >= end) {
                    return incomplete(available);
                }
                if (array[at + 1] != '\n' || (!requests && !sawLength)) {
                    // A response without a length runs to the close: the full decoder's business.
                    return DEFER;
                }
                length = at + 2 - from;
                return length;
            }
            int nameEnd = at;
            while (nameEnd < end && TOKEN[array[nameEnd] & 0xff]) {
                nameEnd++;
            }
            if (nameEnd >= end) {
                return incomplete(available);
            }
            if (nameEnd == at || array[nameEnd] != ':') {
                return DEFER; // obs-fold, whitespace or a non-token before the colon, a bare LF, ...
            }
            int valueStart = nameEnd + 1;
            while (valueStart < end && (array[valueStart] == ' ' || array[valueStart] == '\t')) {
                valueStart++;
            }
            int valueEnd = valueStart;
            int cursor = valueStart;
            while (cursor < end && FIELD_VALUE[array[cursor] & 0xff]) {
                if (array[cursor] != ' ' && array[cursor] != '\t') {
                    valueEnd = cursor + 1;
                }
                cursor++;
            }
            if (cursor < end && array[cursor] != '\r') {
                return DEFER; // a control character, obs-text, a bare LF
            }
            if (cursor + 1 >= end) {
                return incomplete(available);
            }
            if (array[cursor + 1] != '\n') {
                return DEFER; // a bare CR
            }
            if (fields == maxFields) {
                return DEFER;
            }
            int nameLength = nameEnd - at;
            if (nameLength == TRANSFER_ENCODING.length && equalsLowerCase(array, at, TRANSFER_ENCODING)) {
                return DEFER;
            }
            if (nameLength == CONTENT_LENGTH.length && equalsLowerCase(array, at, CONTENT_LENGTH)) {
                if (sawLength) {
                    return DEFER;
                }
                sawLength = true;
                contentLength = digits(array, valueStart, valueEnd);
                if (contentLength < 0) {
                    return DEFER;
                }
            }
            addField(at, nameEnd, valueStart, valueEnd);
            at = cursor + 2;
        }
        return at == INCOMPLETE ? incomplete(available) : DEFER;
    }

    /** Past the request line, or {@link #INCOMPLETE} or {@link #DEFER}. */
    private int requestLine(byte[] array, int from, int end) {
        int at = from;
        while (at < end && TOKEN[array[at] & 0xff]) {
            at++;
        }
        if (at >= end) {
            return INCOMPLETE;
        }
        if (at == from || array[at] != ' ') {
            return DEFER;
        }
        methodEnd = at;
        targetStart = ++at;
        while (at < end && array[at] > ' ' && array[at] < 0x7f) {
            at++;
        }
        if (at >= end) {
            return INCOMPLETE;
        }
        if (at == targetStart || array[at] != ' ') {
            return DEFER;
        }
        targetEnd = at;
        return version(array, at + 1, end, true);
    }

    /** Past the status line, or {@link #INCOMPLETE} or {@link #DEFER}. */
    private int statusLine(byte[] array, int from, int end) {
        int at = version(array, from, end, false);
        if (at < 0) {
            return at;
        }
        if (end - at < 4) {
            for (int i = at; i < end; i++) {
                if (i - at < 3 ? !isDigit(array[i]) : array[i] != ' ') {
                    return DEFER;
                }
            }
            return INCOMPLETE;
        }
        if (!isDigit(array[at]) || !isDigit(array[at + 1]) || !isDigit(array[at + 2]) || array[at + 3] != ' ') {
            return DEFER;
        }
        status = (array[at] - '0') * 100 + (array[at + 1] - '0') * 10 + (array[at + 2] - '0');
        if (status < 200 || status > 599 || status == 204 || status == 304) {
            return DEFER;
        }
        at += 4;
        reasonStart = at;
        while (at < end && FIELD_VALUE[array[at] & 0xff]) {
            at++;
        }
        // The phrase without the spaces and tabs around it, as Netty's decoder reads it.
        reasonEnd = at;
        while (reasonStart < reasonEnd && isBlank(array[reasonStart])) {
            reasonStart++;
        }
        while (reasonEnd > reasonStart && isBlank(array[reasonEnd - 1])) {
            reasonEnd--;
        }
        return lineEnd(array, at, end);
    }

    /**
     * {@code HTTP/1.1} or {@code HTTP/1.0} at {@code at}, then the line's end (a request line) or
     * a space (a status line).
     */
    private int version(byte[] array, int at, int end, boolean endsLine) {
        for (int i = 0; i < HTTP_1.length + 2; i++) {
            if (at + i >= end) {
                return INCOMPLETE;
            }
            byte b = array[at + i];
            boolean ok = i < HTTP_1.length ? b == HTTP_1[i]
                    : i == HTTP_1.length ? b == '1' || b == '0'
                    : endsLine ? b == '\r' : b == ' ';
            if (!ok) {
                return DEFER;
            }
        }
        http11 = array[at + HTTP_1.length] == '1';
        return endsLine ? lineEnd(array, at + HTTP_1.length + 1, end) : at + HTTP_1.length + 2;
    }

    /** Past the CRLF at {@code at}. */
    private static int lineEnd(byte[] array, int at, int end) {
        if (at + 1 >= end) {
            return at < end && array[at] != '\r' ? DEFER : INCOMPLETE;
        }
        return array[at] == '\r' && array[at + 1] == '\n' ? at + 2 : DEFER;
    }

    private int incomplete(int available) {
        return available >= maxHeadSize ? DEFER : INCOMPLETE;
    }

    private void addField(int nameStart, int nameEnd, int valueStart, int valueEnd) {
        int slot = 4 * fields;
        if (slot == fieldOffsets.length) {
            fieldOffsets = Arrays.copyOf(fieldOffsets, fieldOffsets.length * 2);
        }
        fieldOffsets[slot] = nameStart;
        fieldOffsets[slot + 1] = nameEnd;
        fieldOffsets[slot + 2] = valueStart;
        fieldOffsets[slot + 3] = valueEnd;
        fields++;
    }

    /** 1 to 18 ASCII digits as a number, else -1. */
    private static long digits(byte[] array, int from, int to) {
        if (to == from || to - from > 18) {
            return -1;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            if (!isDigit(array[i])) {
                return -1;
            }
            value = value * 10 + (array[i] - '0');
        }
        return value;
    }

    private static boolean isBlank(byte b) {
        return b == ' ' || b == '\t';
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    private static boolean equalsLowerCase(byte[] array, int at, byte[] lowerCase) {
        for (int i = 0; i < lowerCase.length; i++) {
            if ((array[at + i] | 0x20) != lowerCase[i]) {
                return false;
            }
        }
        return true;
    }

    /** The largest head it accepts. */
    public int maxHeadSize() {
        return maxHeadSize;
    }

    /** How many scans it has made: for tests of how often a caller scans. */
    long scans() {
        return scans;
    }

    /** The array the offsets index. */
    public byte[] bytes() {
        return bytes;
    }

    /** Where the head starts in {@link #bytes()}. */
    public int start() {
        return start;
    }

    /** The length of the last accepted head. */
    public int length() {
        return length;
    }

    /** {@code Content-Length}, 0 for a request without one; -1 never for an accepted head. */
    public long contentLength() {
        return contentLength;
    }

    /** Whether the version is {@code HTTP/1.1} (else {@code HTTP/1.0}). */
    public boolean http11() {
        return http11;
    }

    /** The status code of a response head. */
    public int status() {
        return status;
    }

    /** The reason phrase of a response head (a new String; empty when there is none). */
    public String reason() {
        return ascii(reasonStart, reasonEnd);
    }

    /** The method of a request head (a new String: for tests and logs, not the hot path). */
    public String method() {
        return ascii(start, methodEnd);
    }

    /** The method of a request head: Netty's constant for the usual ones, read without a String. */
    public HttpMethod httpMethod() {
        int length = methodEnd - start;
        HttpMethod known = switch (length) {
            case 3 -> isMethod(HttpMethod.GET) ? HttpMethod.GET : isMethod(HttpMethod.PUT) ? HttpMethod.PUT : null;
            case 4 -> isMethod(HttpMethod.POST) ? HttpMethod.POST : isMethod(HttpMethod.HEAD) ? HttpMethod.HEAD : null;
            case 6 -> isMethod(HttpMethod.DELETE) ? HttpMethod.DELETE : null;
            case 7 -> isMethod(HttpMethod.OPTIONS) ? HttpMethod.OPTIONS : null;
            default -> null;
        };
        return known != null ? known : HttpMethod.valueOf(method());
    }

    private boolean isMethod(HttpMethod method) {
        AsciiString name = method.asciiName();
        for (int i = 0; i < name.length(); i++) {
            if (bytes[start + i] != name.byteAt(i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The status of a response head: Netty's constant when the reason phrase is its usual one (as
     * {@code HttpResponseStatus.valueOf(code, reason)} answers), read without a String.
     */
    public HttpResponseStatus responseStatus() {
        HttpResponseStatus usual = HttpResponseStatus.valueOf(status);
        String phrase = usual.reasonPhrase();
        if (phrase.length() == reasonEnd - reasonStart) {
            boolean same = true;
            for (int i = 0; i < phrase.length() && same; i++) {
                same = bytes[reasonStart + i] == phrase.charAt(i);
            }
            if (same) {
                return usual;
            }
        }
        return HttpResponseStatus.valueOf(status, reason());
    }

    /** The request-target of a request head (a new String). */
    public String target() {
        return ascii(targetStart, targetEnd);
    }

    /** How many header fields the head has. */
    public int fields() {
        return fields;
    }

    /** Where field {@code i}'s name starts in {@link #bytes()}. */
    public int nameStart(int i) {
        return fieldOffsets[4 * i];
    }

    /** Where field {@code i}'s name ends (the colon). */
    public int nameEnd(int i) {
        return fieldOffsets[4 * i + 1];
    }

    /** Where field {@code i}'s value starts, leading whitespace skipped. */
    public int valueStart(int i) {
        return fieldOffsets[4 * i + 2];
    }

    /** Where field {@code i}'s value ends, trailing whitespace left out. */
    public int valueEnd(int i) {
        return fieldOffsets[4 * i + 3];
    }

    /** Field {@code i}'s name (a new String). */
    public String name(int i) {
        return ascii(nameStart(i), nameEnd(i));
    }

    /** Field {@code i}'s value (a new String). */
    public String value(int i) {
        return ascii(valueStart(i), valueEnd(i));
    }

    private String ascii(int from, int to) {
        return new String(bytes, from, to - from, StandardCharsets.US_ASCII);
    }
}
