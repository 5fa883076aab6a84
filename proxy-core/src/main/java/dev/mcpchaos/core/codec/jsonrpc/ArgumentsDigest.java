package dev.mcpchaos.core.codec.jsonrpc;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The SHA-256 of a JSON-RPC message's {@code params.arguments}: what the event log writes to tell
 * the arguments of one call from another without ever writing the arguments (which may hold
 * secrets) themselves.
 *
 * <p>The digest is of the <em>bytes as sent</em>, from the value's first byte to its last: not of
 * a canonical form. Two messages whose arguments differ only in whitespace, in the order of their
 * members or in how a string is escaped ({@code "&#92;u0041"} against {@code "A"}) have different
 * digests. That is deliberate: the proxy never re-serializes what it carries, and a test that
 * sent the arguments can compute the same digest over the same bytes with nothing but SHA-256.
 *
 * <p>Only the top-level {@code params} object's own {@code arguments} member counts; an
 * {@code arguments} member anywhere else (inside a result, or deeper inside {@code params}) is
 * ignored. The value may be an object, an array or a scalar. When {@code arguments} appears twice
 * in {@code params}, the first one counts. A batch (a JSON array) has no single set of arguments.
 *
 * <p>One pass of jackson-core's streaming parser up to the end of the arguments, no tree: the rest
 * of the message is not read, so a message that breaks after its arguments still has a digest.
 * Not on the per-message hot path: it runs only for a message a fault is injected into.
 */
public final class ArgumentsDigest {

    private ArgumentsDigest() {
    }

    /**
     * The lowercase hex SHA-256 of the bytes of {@code content}'s top-level
     * {@code params.arguments} value, as sent.
     *
     * @param content one whole JSON-RPC message; its reader and writer indexes are not changed
     * @return 64 hex digits, or null when the message has no {@code params.arguments}, is not a
     *         JSON object (a batch, a scalar), or is not valid JSON up to the end of that value
     */
    public static String sha256Hex(ByteBuf content) {
        if (content == null || !content.isReadable()) {
            return null;
        }
        long start;
        long end;
        // A stream over a duplicate: the caller's indexes stay put, and direct and composite
        // buffers (which have no array) need no special case. Jackson reads through its own
        // recycled chunk buffer, a bounded copy, which is fine for a path taken once per fault.
        try (InputStream in = new ByteBufInputStream(content.duplicate());
             JsonParser parser = UnlimitedJson.FACTORY.createParser(in)) {
            long[] range = findArguments(parser);
            if (range == null) {
                return null;
            }
            start = range[0];
            end = range[1];
        } catch (IOException e) {
            // Malformed JSON before or inside the arguments (jackson's exceptions are IOExceptions).
            return null;
        }
        if (start < 0 || end <= start || end > content.readableBytes()) {
            return null; // no byte offsets (not UTF-8 input), or a location we cannot trust
        }
        MessageDigest sha = sha256();
        // nioBuffers rather than nioBuffer: a composite buffer gives its components without merging them.
        for (ByteBuffer piece : content.nioBuffers(content.readerIndex() + (int) start, (int) (end - start))) {
            sha.update(piece);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** The byte range [start, end) of the top-level params.arguments value, or null. */
    private static long[] findArguments(JsonParser parser) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            return null; // a batch, a scalar, or nothing
        }
        JsonToken token;
        while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
            boolean params = "params".equals(parser.currentName());
            JsonToken value = parser.nextToken();
            if (params && value == JsonToken.START_OBJECT) {
                return argumentsIn(parser);
            }
            parser.skipChildren();
        }
        return null; // END_OBJECT: no params object
    }

    /** With the parser on params' START_OBJECT: the range of its arguments member, or null. */
    private static long[] argumentsIn(JsonParser parser) throws IOException {
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            boolean arguments = "arguments".equals(parser.currentName());
            JsonToken value = parser.nextToken();
            if (value == null) {
                return null;
            }
            if (arguments) {
                long start = parser.currentTokenLocation().getByteOffset();
                if (value.isStructStart()) {
                    parser.skipChildren(); // now on the matching END_OBJECT / END_ARRAY, just past it
                } else if (value == JsonToken.VALUE_STRING) {
                    // Strings are decoded lazily: until finished, the location is inside the string.
                    parser.finishToken();
                }
                // Numbers and literals are read to their last byte when returned.
                return new long[] {start, parser.currentLocation().getByteOffset()};
            }
            parser.skipChildren();
        }
        return null;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256: unavailable (expected: every Java platform has it)", e);
        }
    }
}
