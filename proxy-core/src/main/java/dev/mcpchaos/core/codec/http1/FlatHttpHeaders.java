package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Collections;
import java.util.Date;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header fields of a head {@link HeadScanner} accepted, kept in the bytes they arrived in:
 * no object per field until one is asked for, and, while no field was changed,
 * {@link #encodeTo} writes the field lines back in one copy (#16). Behaves as Netty's
 * {@code DefaultHttpHeaders} with validation on: names match case-insensitively, fields keep
 * their order, a name or value that Netty would refuse is refused with the same exception.
 * {@code FlatHttpHeadersTest} runs random operations on both and compares what they answer. One
 * difference: {@link #getTimeMillis(CharSequence)} of a value that is no date is null, where
 * Netty's throws.
 *
 * <p>Lookups go through the fields in order: faster than hashing for the ten or so fields of an
 * MCP request or answer, slower for a head with hundreds, which the scanner's field limit keeps
 * out. Not thread-safe, as Netty's are not.
 */
public final class FlatHttpHeaders extends HttpHeaders {

    private static final int RAW = -1;

    private final byte[] raw;
    /** Where the field lines start and end in {@link #raw} (before the blank line). */
    private final int linesStart;
    private final int linesEnd;
    private int size;
    /** Per field: name start, name end, value start, value end in {@link #raw}; name start {@code -1} for a field set since. */
    private int[] offsets;
    /** Per field: its name and value as Strings, made when first asked for (always there for a field set since). */
    private String[] names;
    private String[] values;
    /** No field was added, changed or removed: {@link #encodeTo} copies the lines as they came. */
    private boolean pristine;

    private FlatHttpHeaders(byte[] raw, int linesStart, int linesEnd, int[] offsets, int size) {
        this.raw = raw;
        this.linesStart = linesStart;
        this.linesEnd = linesEnd;
        this.offsets = offsets;
        this.size = size;
        this.pristine = true;
    }

    /** An empty, writable set of headers. */
    public FlatHttpHeaders() {
        this(new byte[0], 0, 0, new int[16], 0);
        pristine = false;
    }

    /**
     * The fields of the head {@code scanner} has just accepted, copied out of its bytes (the
     * scanner's may be overwritten by its next scan).
     */
    public static FlatHttpHeaders of(HeadScanner scanner) {
        int fields = scanner.fields();
        int base = scanner.start();
        int headEnd = base + scanner.length();
        int first = fields == 0 ? headEnd - 2 : scanner.nameStart(0);
        byte[] raw = Arrays.copyOfRange(scanner.bytes(), first, headEnd - 2);
        int[] offsets = new int[Math.max(4 * fields, 8)];
        for (int i = 0; i < fields; i++) {
            offsets[4 * i] = scanner.nameStart(i) - first;
            offsets[4 * i + 1] = scanner.nameEnd(i) - first;
            offsets[4 * i + 2] = scanner.valueStart(i) - first;
            offsets[4 * i + 3] = scanner.valueEnd(i) - first;
        }
        return new FlatHttpHeaders(raw, 0, raw.length, offsets, fields);
    }

    /**
     * Writes the field lines, each ending with CRLF, as a head encoder does between the start
     * line and the blank line: the received lines in one copy if nothing was changed, else each
     * field as {@code name: value}.
     */
    public void encodeTo(ByteBuf out) {
        if (pristine) {
            out.writeBytes(raw, linesStart, linesEnd - linesStart);
            return;
        }
        for (int i = 0; i < size; i++) {
            int slot = 4 * i;
            if (offsets[slot] != RAW) {
                out.writeBytes(raw, offsets[slot], offsets[slot + 1] - offsets[slot]);
                out.writeByte(':').writeByte(' ');
                out.writeBytes(raw, offsets[slot + 2], offsets[slot + 3] - offsets[slot + 2]);
            } else {
                // As Netty's encoder writes them: a char above 0xff as '?', 0x80-0xff as its byte.
                ByteBufUtil.writeAscii(out, names[i]);
                out.writeByte(':').writeByte(' ');
                ByteBufUtil.writeAscii(out, values[i]);
            }
            out.writeByte('\r').writeByte('\n');
        }
    }

    /** Receives the fields of {@link #forEachField}. */
    public interface FieldVisitor {
        /** One field; {@code name} and {@code value} are valid during this call only (copy what is kept). */
        void field(CharSequence name, CharSequence value);
    }

    /**
     * Hands each field to {@code visitor} in order, as two views of the received bytes that are
     * moved from field to field: for a reader that looks at every field and keeps a few
     * ({@code HeadFacts}), without the entry and two strings per field of
     * {@link #iteratorCharSequence()}.
     */
    public void forEachField(FieldVisitor visitor) {
        ByteView name = new ByteView(raw);
        ByteView value = new ByteView(raw);
        for (int i = 0; i < size; i++) {
            int slot = 4 * i;
            if (offsets[slot] == RAW) {
                visitor.field(names[i], values[i]);
            } else {
                visitor.field(name.at(offsets[slot], offsets[slot + 1]), value.at(offsets[slot + 2], offsets[slot + 3]));
            }
        }
    }

    /** ASCII bytes of a range of an array as a CharSequence; the range moves. */
    private static final class ByteView implements CharSequence {
        private final byte[] bytes;
        private int start;
        private int length;

        ByteView(byte[] bytes) {
            this.bytes = bytes;
        }

        ByteView at(int from, int to) {
            start = from;
            length = to - from;
            return this;
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public char charAt(int index) {
            if (index < 0 || index >= length) {
                throw new IndexOutOfBoundsException(index);
            }
            return (char) (bytes[start + index] & 0xff);
        }

        @Override
        public CharSequence subSequence(int from, int to) {
            return toString().substring(from, to);
        }

        @Override
        public String toString() {
            return new String(bytes, start, length, StandardCharsets.US_ASCII);
        }
    }

    /** Whether {@link #encodeTo} will copy the lines as received. */
    public boolean pristine() {
        return pristine;
    }

    // ---- reading

    private int indexOf(CharSequence name, int from) {
        for (int i = from; i < size; i++) {
            if (nameIs(i, name)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether field {@code i} is called {@code name}, in any case. */
    private boolean nameIs(int i, CharSequence name) {
        int slot = 4 * i;
        int start = offsets[slot];
        if (start != RAW) {
            return offsets[slot + 1] - start == name.length() && rawNameEquals(start, name);
        }
        return names[i].length() == name.length() && names[i].equalsIgnoreCase(name.toString());
    }

    private boolean rawNameEquals(int start, CharSequence name) {
        for (int k = 0; k < name.length(); k++) {
            char c = name.charAt(k);
            if (c > 0x7f || lower(raw[start + k]) != lower((byte) c)) {
                return false;
            }
        }
        return true;
    }

    private static int lower(byte b) {
        return b >= 'A' && b <= 'Z' ? b + 32 : b;
    }

    private String name(int i) {
        ensureStrings();
        String name = names[i];
        if (name == null) {
            int slot = 4 * i;
            name = new String(raw, offsets[slot], offsets[slot + 1] - offsets[slot], StandardCharsets.US_ASCII);
            names[i] = name;
        }
        return name;
    }

    private String value(int i) {
        ensureStrings();
        String value = values[i];
        if (value == null) {
            int slot = 4 * i;
            value = new String(raw, offsets[slot + 2], offsets[slot + 3] - offsets[slot + 2], StandardCharsets.US_ASCII);
            values[i] = value;
        }
        return value;
    }

    private void ensureStrings() {
        if (names == null || names.length < offsets.length / 4) {
            names = names == null ? new String[offsets.length / 4] : Arrays.copyOf(names, offsets.length / 4);
            values = values == null ? new String[offsets.length / 4] : Arrays.copyOf(values, offsets.length / 4);
        }
    }

    @Override
    public String get(String name) {
        return get((CharSequence) name);
    }

    @Override
    public String get(CharSequence name) {
        int i = indexOf(name, 0);
        return i < 0 ? null : value(i);
    }

    @Override
    public Integer getInt(CharSequence name) {
        String value = get(name);
        if (value == null) {
            return null;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public int getInt(CharSequence name, int defaultValue) {
        Integer value = getInt(name);
        return value != null ? value : defaultValue;
    }

    @Override
    public Short getShort(CharSequence name) {
        String value = get(name);
        if (value == null) {
            return null;
        }
        try {
            return Short.parseShort(value);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public short getShort(CharSequence name, short defaultValue) {
        Short value = getShort(name);
        return value != null ? value : defaultValue;
    }

    @Override
    public Long getTimeMillis(CharSequence name) {
        String value = get(name);
        if (value == null) {
            return null;
        }
        Date date = DateFormatter.parseHttpDate(value);
        return date != null ? date.getTime() : null;
    }

    @Override
    public long getTimeMillis(CharSequence name, long defaultValue) {
        Long value = getTimeMillis(name);
        return value != null ? value : defaultValue;
    }

    @Override
    public List<String> getAll(String name) {
        return getAll((CharSequence) name);
    }

    @Override
    public List<String> getAll(CharSequence name) {
        int i = indexOf(name, 0);
        if (i < 0) {
            return Collections.emptyList();
        }
        List<String> all = new ArrayList<>(2);
        for (; i >= 0; i = indexOf(name, i + 1)) {
            all.add(value(i));
        }
        return all;
    }

    @Override
    public List<Map.Entry<String, String>> entries() {
        if (size == 0) {
            return Collections.emptyList();
        }
        List<Map.Entry<String, String>> entries = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            entries.add(new AbstractMap.SimpleImmutableEntry<>(name(i), value(i)));
        }
        return entries;
    }

    @Override
    public boolean contains(String name) {
        return indexOf(name, 0) >= 0;
    }

    @Override
    public boolean contains(CharSequence name) {
        return indexOf(name, 0) >= 0;
    }

    @Override
    public Iterator<Map.Entry<String, String>> iterator() {
        return entries().iterator();
    }

    /**
     * The fields as views of the received bytes (Netty's encoder copies an {@code AsciiString} in
     * one go) or, for a field set since, its Strings. The views share bytes that never change.
     */
    @Override
    public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < size;
            }

            @Override
            public Map.Entry<CharSequence, CharSequence> next() {
                if (next >= size) {
                    throw new java.util.NoSuchElementException();
                }
                int i = next++;
                int slot = 4 * i;
                if (offsets[slot] == RAW) {
                    return new AbstractMap.SimpleImmutableEntry<>(names[i], values[i]);
                }
                return new AbstractMap.SimpleImmutableEntry<>(
                        new AsciiString(raw, offsets[slot], offsets[slot + 1] - offsets[slot], false),
                        new AsciiString(raw, offsets[slot + 2], offsets[slot + 3] - offsets[slot + 2], false));
            }
        };
    }

    @Override
    public boolean isEmpty() {
        return size == 0;
    }

    @Override
    public int size() {
        return size;
    }

    /** The names in the order they first appear, as written: two that differ in case both, as Netty's. */
    @Override
    public Set<String> names() {
        Set<String> names = new LinkedHashSet<>(size * 2);
        for (int i = 0; i < size; i++) {
            names.add(name(i));
        }
        return names;
    }

    // ---- writing

    @Override
    public HttpHeaders add(String name, Object value) {
        append(validName(name), validValue(value));
        return this;
    }

    @Override
    public HttpHeaders add(String name, Iterable<?> values) {
        String valid = validName(name);
        for (Object value : values) {
            append(valid, validValue(value)); // one by one, as Netty's: those before a bad one stay
        }
        return this;
    }

    @Override
    public HttpHeaders addInt(CharSequence name, int value) {
        return add(name.toString(), Integer.toString(value));
    }

    @Override
    public HttpHeaders addShort(CharSequence name, short value) {
        return add(name.toString(), Short.toString(value));
    }

    @Override
    public HttpHeaders set(String name, Object value) {
        String valid = validName(name);
        String validValue = validValue(value);
        removeAll(valid);
        append(valid, validValue);
        return this;
    }

    @Override
    public HttpHeaders set(String name, Iterable<?> values) {
        String valid = validName(name);
        removeAll(valid); // first, as Netty's: a bad value leaves the name gone and those before it set
        for (Object value : values) {
            if (value == null) {
                break; // as Netty's: the values up to the first null
            }
            append(valid, validValue(value));
        }
        return this;
    }

    @Override
    public HttpHeaders setInt(CharSequence name, int value) {
        return set(name.toString(), Integer.toString(value));
    }

    @Override
    public HttpHeaders setShort(CharSequence name, short value) {
        return set(name.toString(), Short.toString(value));
    }

    @Override
    public HttpHeaders remove(String name) {
        removeAll(name);
        return this;
    }

    @Override
    public HttpHeaders remove(CharSequence name) {
        removeAll(name);
        return this;
    }

    @Override
    public HttpHeaders clear() {
        if (size > 0) {
            size = 0;
            pristine = false;
            if (names != null) {
                Arrays.fill(names, null);
                Arrays.fill(values, null);
            }
        }
        return this;
    }

    private void append(String name, String value) {
        int slot = 4 * size;
        if (slot == offsets.length) {
            offsets = Arrays.copyOf(offsets, Math.max(16, offsets.length * 2));
        }
        ensureStrings();
        offsets[slot] = RAW;
        names[size] = name;
        values[size] = value;
        size++;
        pristine = false;
    }

    private void removeAll(CharSequence name) {
        int kept = 0;
        for (int i = 0; i < size; i++) {
            if (nameIs(i, name)) {
                continue;
            }
            if (kept != i) {
                System.arraycopy(offsets, 4 * i, offsets, 4 * kept, 4);
                if (names != null) {
                    names[kept] = names[i];
                    values[kept] = values[i];
                }
            }
            kept++;
        }
        if (kept != size) {
            if (names != null) {
                Arrays.fill(names, kept, size, null);
                Arrays.fill(values, kept, size, null);
            }
            size = kept;
            pristine = false;
        }
    }

    private static String validName(String name) {
        if (name == null) {
            throw new NullPointerException("name");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("empty headers are not allowed [" + name + "]");
        }
        int invalid = HttpHeaderValidationUtil.validateToken(name);
        if (invalid != -1) {
            throw new IllegalArgumentException("a header name can only contain \"token\" characters, but found invalid"
                    + " character 0x" + Integer.toHexString(name.charAt(invalid)) + " at index " + invalid
                    + " of header '" + name + "'.");
        }
        return name;
    }

    private static String validValue(Object value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        String text;
        if (value instanceof Date) {
            text = DateFormatter.format((Date) value);
        } else if (value instanceof Calendar) {
            text = DateFormatter.format(((Calendar) value).getTime());
        } else {
            text = value.toString();
        }
        int invalid = HttpHeaderValidationUtil.validateValidHeaderValue(text);
        if (invalid != -1) {
            throw new IllegalArgumentException("a header value contains prohibited character 0x"
                    + Integer.toHexString(text.charAt(invalid)) + " at index " + invalid + '.');
        }
        return text;
    }
}
