package dev.mcpchaos.core.codec.jsonrpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A small direct-mapped cache of the short strings the sniffer returns: versions, methods and
 * tool names repeat from one message to the next, so most messages allocate no string for them.
 * Both sniffing paths share one cache: jackson's, which has the text as chars, and
 * {@link FastEnvelopeScanner}'s, which has it as ASCII bytes. Both hash an ASCII text alike, so
 * they find the same slot for the same text.
 *
 * <p>The hash reads the text's first and last eight bytes (fewer for a shorter text) and its
 * length, not every byte, and the slot keeps those two words of its text: a text of up to 16
 * bytes is compared by them alone, a longer one also eight bytes at a time in its middle. A
 * lookup costs a few loads, not a multiply and a {@code charAt} per byte.
 *
 * <p>A text may sit in its slot or the slot's neighbour (two ways): a new text takes its slot and
 * moves the one there to the neighbour. With one way, two texts of one slot that come in turn
 * missed every time: {@code tools/call} and the tool name {@code echo} do, so every request of
 * a benchmark made two strings and two arrays.
 *
 * <p>Not thread-safe: one per {@link EnvelopeSniffer}.
 */
final class TextCache {

    /** Longer texts are not cached: they rarely repeat, and comparing them costs. */
    static final int MAX_CACHED_LENGTH = 64;

    private static final int SLOT_BITS = 6;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final String[] slots = new String[1 << SLOT_BITS];
    /** The ASCII bytes of {@code slots[i]}, or null when that text is not ASCII (no byte lookup can match it). */
    private final byte[][] keys = new byte[1 << SLOT_BITS][];
    /** The first and last words of {@code keys[i]}, as {@link #ofAscii} reads them, compared before any byte. */
    private final long[] firsts = new long[1 << SLOT_BITS];
    private final long[] lasts = new long[1 << SLOT_BITS];

    /** The text of {@code chars[offset, offset + length)}. */
    String of(char[] chars, int offset, int length) {
        if (length > MAX_CACHED_LENGTH) {
            return new String(chars, offset, length);
        }
        long first = charWord(chars, offset, Math.min(length, 8));
        long last = charWord(chars, offset + Math.max(0, length - 8), Math.min(length, 8));
        int slot = slot(first, last, length);
        for (int way = slot; ; way ^= 1) {
            String cached = slots[way];
            if (cached != null && cached.length() == length && sameChars(cached, chars, offset)) {
                return cached;
            }
            if (way != slot) {
                break;
            }
        }
        String text = new String(chars, offset, length);
        demote(slot);
        slots[slot] = text;
        keys[slot] = asciiBytes(chars, offset, length);
        firsts[slot] = first;
        lasts[slot] = last;
        return text;
    }

    /** The text of {@code bytes[offset, offset + length)}, which must all be ASCII (below 0x80). */
    String ofAscii(byte[] bytes, int offset, int length) {
        if (length > MAX_CACHED_LENGTH) {
            return new String(bytes, offset, length, StandardCharsets.ISO_8859_1);
        }
        long first;
        long last;
        if (length >= 8) {
            first = (long) LONGS.get(bytes, offset);
            last = (long) LONGS.get(bytes, offset + length - 8);
        } else {
            first = byteWord(bytes, offset, length);
            last = first;
        }
        int slot = slot(first, last, length);
        for (int way = slot; ; way ^= 1) {
            byte[] key = keys[way];
            // The two words hold all of a text up to 16 bytes; a longer one also compares its middle.
            if (key != null && key.length == length && firsts[way] == first && lasts[way] == last
                    && (length <= 16 || sameMiddle(key, bytes, offset))) {
                return slots[way];
            }
            if (way != slot) {
                break;
            }
        }
        byte[] copy = Arrays.copyOfRange(bytes, offset, offset + length);
        demote(slot);
        // ISO-8859-1 decodes ASCII as UTF-8 does, and is the cheapest decoder.
        String text = new String(copy, StandardCharsets.ISO_8859_1);
        slots[slot] = text;
        keys[slot] = copy;
        firsts[slot] = first;
        lasts[slot] = last;
        return text;
    }

    /** Moves the text in {@code slot} to its neighbour, the second way, making room for a new one. */
    private void demote(int slot) {
        int other = slot ^ 1;
        slots[other] = slots[slot];
        keys[other] = keys[slot];
        firsts[other] = firsts[slot];
        lasts[other] = lasts[slot];
    }

    /** Whether {@code key[8, length - 8)} equals the same bytes of {@code bytes} from {@code offset}, eight at a time. */
    private static boolean sameMiddle(byte[] key, byte[] bytes, int offset) {
        for (int i = 8, end = key.length - 8; i < end; i += 8) {
            if ((long) LONGS.get(key, i) != (long) LONGS.get(bytes, offset + i)) {
                return false;
            }
        }
        return true;
    }

    /** The slot of a text from its first and last (up to) eight bytes, little-endian, and its length. */
    private static int slot(long first, long last, int length) {
        long x = (first ^ Long.rotateLeft(last, 29) ^ length) * 0x9E3779B97F4A7C15L;
        return (int) (x >>> (64 - SLOT_BITS));
    }

    /** {@code n <= 8} bytes from {@code offset} as a little-endian long. */
    private static long byteWord(byte[] bytes, int offset, int n) {
        long word = 0;
        for (int i = n - 1; i >= 0; i--) {
            word = word << 8 | (bytes[offset + i] & 0xFF);
        }
        return word;
    }

    /**
     * {@code n <= 8} chars from {@code offset} as {@link #byteWord} reads their ASCII bytes (a char
     * above 0xFF is cut to its low byte: such a text is not ASCII, so any slot will do for it).
     */
    private static long charWord(char[] chars, int offset, int n) {
        long word = 0;
        for (int i = n - 1; i >= 0; i--) {
            word = word << 8 | (chars[offset + i] & 0xFF);
        }
        return word;
    }

    /** The text's bytes when it is all ASCII; else null. */
    private static byte[] asciiBytes(char[] chars, int offset, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            char c = chars[offset + i];
            if (c >= 0x80) {
                return null;
            }
            bytes[i] = (byte) c;
        }
        return bytes;
    }

    private static boolean sameChars(String text, char[] chars, int offset) {
        for (int i = 0, n = text.length(); i < n; i++) {
            if (text.charAt(i) != chars[offset + i]) {
                return false;
            }
        }
        return true;
    }
}
