package dev.mcpchaos.core.codec.jsonrpc;

import java.nio.charset.StandardCharsets;

/**
 * A small direct-mapped cache of the short strings the sniffer returns: versions, methods and
 * tool names repeat from one message to the next, so most messages allocate no string for them.
 * Both sniffing paths share one cache: jackson's, which has the text as chars, and
 * {@link FastEnvelopeScanner}'s, which has it as ASCII bytes. An ASCII byte hashes as the char
 * it decodes to, so both find the same slot for the same text.
 *
 * <p>Not thread-safe: one per {@link EnvelopeSniffer}.
 */
final class TextCache {

    /** Longer texts are not cached: they rarely repeat, and comparing them costs. */
    static final int MAX_CACHED_LENGTH = 64;

    private final String[] slots = new String[64];

    /** The text of {@code chars[offset, offset + length)}. */
    String of(char[] chars, int offset, int length) {
        if (length > MAX_CACHED_LENGTH) {
            return new String(chars, offset, length);
        }
        int hash = 0;
        for (int i = offset, end = offset + length; i < end; i++) {
            hash = 31 * hash + chars[i];
        }
        int slot = slot(hash);
        String cached = slots[slot];
        if (cached != null && cached.length() == length && sameChars(cached, chars, offset)) {
            return cached;
        }
        String text = new String(chars, offset, length);
        slots[slot] = text;
        return text;
    }

    /** The text of {@code bytes[offset, offset + length)}, which must all be ASCII (below 0x80). */
    String ofAscii(byte[] bytes, int offset, int length) {
        if (length > MAX_CACHED_LENGTH) {
            return new String(bytes, offset, length, StandardCharsets.ISO_8859_1);
        }
        int hash = 0;
        for (int i = offset, end = offset + length; i < end; i++) {
            hash = 31 * hash + bytes[i];
        }
        int slot = slot(hash);
        String cached = slots[slot];
        if (cached != null && cached.length() == length && sameBytes(cached, bytes, offset)) {
            return cached;
        }
        // ISO-8859-1 decodes ASCII as UTF-8 does, and is the cheapest decoder.
        String text = new String(bytes, offset, length, StandardCharsets.ISO_8859_1);
        slots[slot] = text;
        return text;
    }

    private int slot(int hash) {
        return (hash ^ (hash >>> 16)) & (slots.length - 1);
    }

    private static boolean sameChars(String text, char[] chars, int offset) {
        for (int i = 0, n = text.length(); i < n; i++) {
            if (text.charAt(i) != chars[offset + i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameBytes(String text, byte[] bytes, int offset) {
        for (int i = 0, n = text.length(); i < n; i++) {
            if (text.charAt(i) != bytes[offset + i]) {
                return false;
            }
        }
        return true;
    }
}
