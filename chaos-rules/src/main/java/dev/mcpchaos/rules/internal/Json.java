package dev.mcpchaos.rules.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.codec.jsonrpc.UnlimitedJson;
import dev.mcpchaos.core.frame.Envelope;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * JSON helpers for faults that rewrite a message: streaming generation of new messages and byte
 * offsets of values inside an existing one. Only the message being rewritten is parsed; nothing
 * here runs for a message no rule touches. Not API.
 */
public final class Json {

    /** Streaming parsers and generators without size limits (proxy-core's): the framer bounds message size. */
    public static final JsonFactory FACTORY = UnlimitedJson.FACTORY;

    /**
     * Data binding, for the control plane and for {@code mutate} (which may parse the one message
     * it patches). Big numbers stay exact so a patch does not change values it does not touch.
     */
    public static final ObjectMapper MAPPER = new ObjectMapper(FACTORY)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private Json() {
    }

    /** Writes a new message with a streaming generator into a buffer from {@code alloc}. */
    @FunctionalInterface
    public interface Writer {
        void write(JsonGenerator generator) throws IOException;
    }

    /** A new buffer holding what {@code writer} generates; the caller owns it. */
    public static ByteBuf generate(ByteBufAllocator alloc, Writer writer) {
        ByteBuf buf = alloc.buffer(256);
        try (ByteBufOutputStream out = new ByteBufOutputStream(buf);
             JsonGenerator generator = FACTORY.createGenerator((OutputStream) out)) {
            writer.write(generator);
        } catch (IOException | RuntimeException e) {
            buf.release();
            if (e instanceof IOException) {
                throw new UncheckedIOException((IOException) e);
            }
            throw (RuntimeException) e;
        }
        return buf;
    }

    /** Writes a JSON-RPC id as the envelope holds it: Long, BigDecimal, String or null. */
    public static void writeId(JsonGenerator generator, Object id) throws IOException {
        if (id instanceof Long) {
            generator.writeNumber((Long) id);
        } else if (id instanceof BigDecimal) {
            generator.writeNumber((BigDecimal) id);
        } else if (id instanceof String) {
            generator.writeString((String) id);
        } else {
            generator.writeNull();
        }
    }

    /** The envelope of new content, by the same sniffer the transports use. */
    public static Envelope sniff(ByteBuf content) {
        return new EnvelopeSniffer().sniff(content);
    }

    /** A half-open range {@code [start, end)} of bytes holding one JSON value. */
    public record Span(int start, int end) {
        public int length() {
            return end - start;
        }
    }

    /**
     * Where the value at {@code path} sits, following object members from the root: for example
     * {@code ["params", "_meta"]}. Null when the message is not well-formed up to there, or some
     * member on the way is missing or not an object.
     */
    public static Span locate(byte[] json, List<String> path) {
        try (JsonParser parser = FACTORY.createParser(json)) {
            if (parser.nextToken() == null) {
                return null;
            }
            for (String member : path) {
                if (parser.currentToken() != JsonToken.START_OBJECT) {
                    return null;
                }
                if (!seekMember(parser, member)) {
                    return null;
                }
            }
            return spanOfCurrent(parser, json);
        } catch (IOException e) {
            return null;
        }
    }

    /** Moves to the value of {@code name} in the object whose start is the current token. */
    private static boolean seekMember(JsonParser parser, String name) throws IOException {
        JsonToken token;
        while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
            String field = parser.currentName();
            parser.nextToken();
            if (field.equals(name)) {
                return true;
            }
            parser.skipChildren();
        }
        return false;
    }

    /** The span of the value the parser is on; containers are skipped to their end. */
    private static Span spanOfCurrent(JsonParser parser, byte[] json) throws IOException {
        int start = (int) parser.currentTokenLocation().getByteOffset();
        JsonToken token = parser.currentToken();
        if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
            parser.skipChildren();
            int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
            return new Span(start, end);
        }
        return new Span(start, scalarEnd(json, start));
    }

    /** The spans of every scalar value of the given kind, in document order. */
    public static List<Span> scalars(byte[] json, boolean strings) {
        List<Span> spans = new ArrayList<>();
        try (JsonParser parser = FACTORY.createParser(json)) {
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                boolean match = strings ? token == JsonToken.VALUE_STRING : token.isNumeric();
                if (match) {
                    int start = (int) parser.currentTokenLocation().getByteOffset();
                    spans.add(new Span(start, scalarEnd(json, start)));
                }
            }
        } catch (IOException e) {
            // A malformed message: the spans found before the error are still right.
        }
        return spans;
    }

    /** Where the scalar starting at {@code start} ends: after a string's closing quote, or at a delimiter. */
    static int scalarEnd(byte[] json, int start) {
        if (json[start] == '"') {
            for (int i = start + 1; i < json.length; i++) {
                if (json[i] == '\\') {
                    i++;
                } else if (json[i] == '"') {
                    return i + 1;
                }
            }
            return json.length;
        }
        int i = start;
        while (i < json.length) {
            byte b = json[i];
            if (b == ',' || b == '}' || b == ']' || b == ' ' || b == '\t' || b == '\r' || b == '\n') {
                break;
            }
            i++;
        }
        return i;
    }

    /** Whether the object starting at {@code start} (its '{') has no members. */
    public static boolean isEmptyObject(byte[] json, int start) {
        for (int i = start + 1; i < json.length; i++) {
            byte b = json[i];
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return b == '}';
            }
        }
        return false;
    }

    /** {@code json} with {@code [span)} replaced by {@code replacement}. */
    public static byte[] splice(byte[] json, int start, int end, byte[] replacement) {
        byte[] out = new byte[json.length - (end - start) + replacement.length];
        System.arraycopy(json, 0, out, 0, start);
        System.arraycopy(replacement, 0, out, start, replacement.length);
        System.arraycopy(json, end, out, start + replacement.length, json.length - end);
        return out;
    }
}
