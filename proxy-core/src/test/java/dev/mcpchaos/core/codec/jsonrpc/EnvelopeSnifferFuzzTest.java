package dev.mcpchaos.core.codec.jsonrpc;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.testing.Cuts;
import dev.mcpchaos.testing.Fragments;
import dev.mcpchaos.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of {@link EnvelopeSniffer} and {@link FastEnvelopeScanner} (Jazzer; see
 * docs/fuzzing.md), on the contracts their Javadoc states. Each input is one message:
 * <ul>
 *   <li>the fast path answers {@code null} or exactly the envelope of the parser path
 *       ({@code new EnvelopeSniffer(false)}), malformed reason included; {@code sniff} gives that
 *       envelope for a heap buffer, a direct buffer, a composite one and a byte range alike;</li>
 *   <li>the message fed in pieces (every cut of {@link Cuts}), then {@code finish()}, gives the same
 *       envelope as {@code sniff}: "the bytes may be split anywhere" (a malformed one's reason is
 *       jackson's wording for where the parser stopped, which may depend on the cut, as
 *       {@code EnvelopeSnifferTest} also allows: only its kind must agree);</li>
 *   <li>a sniffer keeps no state from one message to the next: sniffing the input between two
 *       other messages changes neither;</li>
 *   <li>against jackson's blocking parser over the same bytes (same limits, UTF-8): the envelope
 *       is MALFORMED exactly when that parser rejects the bytes (or finds more than one value),
 *       BLANK when it finds none, and otherwise equal to {@link #model}, an envelope read from that
 *       parser's tokens by the rules the sniffer documents. Inputs that jackson's encoding
 *       detection would read as UTF-16 or UTF-32, or whose UTF-8 BOM it would skip (a NUL in the
 *       first four bytes, or a first byte 0xEF, 0xFE or 0xFF), are left out of this check only;</li>
 *   <li>no exception, every buffer released, {@code sniff} leaves the buffer's indexes alone.</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code EnvelopeSnifferFuzzTestInputs/}.
 */
class EnvelopeSnifferFuzzTest {

    /** The same limits as the sniffer's parser: none. */
    private static final JsonFactory BLOCKING = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxNestingDepth(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .maxDocumentLength(-1)
                    .build())
            .build();

    private static final byte[] BEFORE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}"
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] AFTER = "[{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}]".getBytes(StandardCharsets.UTF_8);

    @DictionaryEntries({"\"jsonrpc\"", "\"2.0\"", "\"id\"", "\"method\"", "\"params\"", "\"name\"", "\"result\"", "\"error\"", "\"tools/call\"", "\\u", "\\ud83d\\udd0d", "null", "true", "1e400", "-0.0", "9223372036854775808"})
    @FuzzTest
    void sniffsAsTheParserReadsIt(byte[] input) {
        Envelope reference = new EnvelopeSniffer(false).sniff(input, 0, input.length);

        Envelope fast = new FastEnvelopeScanner(new TextCache()).scan(input, 0, input.length);
        if (fast != null) {
            assertThat(fast).as("the fast scanner's answer").isEqualTo(reference);
            assertThat(fast.kind()).as("the fast scanner answers no malformed message").isNotEqualTo(MessageKind.MALFORMED);
        }

        TrackingAllocator alloc = new TrackingAllocator();
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        long seed = Cuts.seed(input);
        for (int variant = 0; variant < 4; variant++) {
            ByteBuf buf = Fragments.buffer(alloc, input, variant);
            try {
                int reader = buf.readerIndex();
                int writer = buf.writerIndex();
                assertThat(sniffer.sniff(buf)).as("sniff, buffer layout %d", variant).isEqualTo(reference);
                assertThat(buf.readerIndex()).isEqualTo(reader);
                assertThat(buf.writerIndex()).isEqualTo(writer);
            } finally {
                buf.release();
            }
        }
        byte[] padded = new byte[input.length + 6];
        System.arraycopy(input, 0, padded, 3, input.length);
        assertThat(sniffer.sniff(padded, 3, 3 + input.length)).as("sniff of a byte range").isEqualTo(reference);
        List<List<byte[]>> cuts = Cuts.of(input);
        CompositeByteBuf composite = alloc.compositeBuffer();
        for (byte[] piece : cuts.get(cuts.size() - 1)) {
            composite.addComponent(true, alloc.directBuffer(piece.length).writeBytes(piece));
        }
        try {
            assertThat(sniffer.sniff(composite)).as("sniff of a composite buffer").isEqualTo(reference);
        } finally {
            composite.release();
        }

        // Between two other messages, through one sniffer: no state leaks either way.
        Envelope before = new EnvelopeSniffer(false).sniff(BEFORE, 0, BEFORE.length);
        Envelope after = new EnvelopeSniffer(false).sniff(AFTER, 0, AFTER.length);
        for (List<byte[]> pieces : cuts) {
            assertThat(sniffer.sniff(BEFORE, 0, BEFORE.length)).as("the message before").isEqualTo(before);
            for (int i = 0; i < pieces.size(); i++) {
                ByteBuf piece = Fragments.buffer(alloc, pieces.get(i), (int) (seed >>> (i % 60)) + i);
                try {
                    sniffer.feed(piece);
                } finally {
                    piece.release();
                }
            }
            assertThat(comparable(sniffer.finish())).as("fed in %d pieces", pieces.size())
                    .isEqualTo(comparable(reference));
            assertThat(sniffer.sniff(AFTER, 0, AFTER.length)).as("the message after").isEqualTo(after);
        }
        alloc.assertAllReleased("sniffing");

        if (detectedAsUtf8(input)) {
            Envelope jackson = model(input);
            if (jackson.kind() == MessageKind.MALFORMED) {
                assertThat(reference.kind()).as("jackson's blocking parser rejects it: %s", jackson.malformedReason())
                        .isEqualTo(MessageKind.MALFORMED);
            } else {
                assertThat(reference).as("the envelope of jackson's blocking parse").isEqualTo(jackson);
            }
        }
    }

    /** The envelope, a malformed one with a fixed reason once its own is checked non-blank. */
    private static Envelope comparable(Envelope envelope) {
        if (envelope.kind() != MessageKind.MALFORMED) {
            return envelope;
        }
        assertThat(envelope.malformedReason()).as("a malformed envelope's reason").isNotBlank();
        return Envelope.malformed("(any reason)");
    }

    /** Whether jackson's blocking parser reads {@code input} as UTF-8 without skipping anything. */
    private static boolean detectedAsUtf8(byte[] input) {
        for (int i = 0; i < Math.min(4, input.length); i++) {
            if (input[i] == 0) {
                return false;
            }
        }
        return input.length == 0 || (input[0] != (byte) 0xEF && input[0] != (byte) 0xFE && input[0] != (byte) 0xFF);
    }

    /**
     * The envelope of {@code input} read with jackson's blocking parser, by the sniffer's documented
     * rules, with every string decoded (so invalid UTF-8 fails); MALFORMED with jackson's message
     * when the parser fails or a second value follows; BLANK for whitespace only.
     */
    static Envelope model(byte[] input) {
        try (JsonParser parser = BLOCKING.createParser(input)) {
            JsonToken root = parser.nextToken();
            if (root == null) {
                return Envelope.blank();
            }
            Envelope envelope;
            if (root == JsonToken.START_OBJECT) {
                envelope = object(parser);
            } else if (root == JsonToken.START_ARRAY) {
                List<Envelope> elements = new ArrayList<>();
                for (JsonToken t = next(parser); t != JsonToken.END_ARRAY; t = next(parser)) {
                    if (t == JsonToken.START_OBJECT) {
                        elements.add(object(parser));
                    } else {
                        skip(parser, t);
                        elements.add(Envelope.ofOther());
                    }
                }
                envelope = Envelope.ofBatch(elements);
            } else {
                skip(parser, root);
                envelope = Envelope.ofOther();
            }
            if (parser.nextToken() != null) {
                return Envelope.malformed("more than one JSON value");
            }
            return envelope;
        } catch (JsonProcessingException e) {
            return Envelope.malformed(e.getOriginalMessage());
        } catch (IOException e) {
            return Envelope.malformed(String.valueOf(e.getMessage()));
        }
    }

    /** The members of the object whose '{' was just read, up to its '}'. */
    private static Envelope object(JsonParser parser) throws IOException {
        String jsonrpc = null;
        boolean hasId = false;
        Object id = null;
        String method = null;
        String paramsName = null;
        boolean hasResult = false;
        boolean hasError = false;
        for (JsonToken t = next(parser); t != JsonToken.END_OBJECT; t = next(parser)) {
            String name = parser.currentName();
            JsonToken value = next(parser);
            boolean container = value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY;
            switch (name) {
                case "jsonrpc":
                    if (!container) {
                        jsonrpc = value == JsonToken.VALUE_STRING ? parser.getText() : null;
                    }
                    break;
                case "method":
                    if (!container) {
                        method = value == JsonToken.VALUE_STRING ? parser.getText() : null;
                    }
                    break;
                case "id":
                    hasId = true;
                    if (!container) {
                        id = idValue(parser, value);
                    }
                    break;
                case "result":
                    hasResult = true;
                    break;
                case "error":
                    hasError = true;
                    break;
                case "params":
                    if (value == JsonToken.START_OBJECT) {
                        for (JsonToken m = next(parser); m != JsonToken.END_OBJECT; m = next(parser)) {
                            String member = parser.currentName();
                            JsonToken v = next(parser);
                            if (member.equals("name") && v == JsonToken.VALUE_STRING) {
                                paramsName = parser.getText();
                            } else {
                                skip(parser, v);
                            }
                        }
                        continue;
                    }
                    break;
                default:
                    break;
            }
            skip(parser, value);
        }
        return Envelope.ofObject(jsonrpc, hasId, id, method, paramsName, hasResult, hasError);
    }

    private static Object idValue(JsonParser parser, JsonToken token) throws IOException {
        switch (token) {
            case VALUE_STRING:
                return parser.getText();
            case VALUE_NUMBER_INT:
                JsonParser.NumberType type = parser.getNumberType();
                return type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG
                        ? (Object) parser.getLongValue() : new BigDecimal(parser.getText());
            case VALUE_NUMBER_FLOAT:
                try {
                    return new BigDecimal(parser.getText());
                } catch (NumberFormatException e) {
                    return null;
                }
            default:
                return null;
        }
    }

    /** The next token inside a container, where the end of the input is an error. */
    private static JsonToken next(JsonParser parser) throws IOException {
        JsonToken token = parser.nextToken();
        if (token == null) {
            throw new IOException("unexpected end of input inside a container");
        }
        return token;
    }

    /** Reads past the value that starts with {@code token}, decoding every string and name in it. */
    private static void skip(JsonParser parser, JsonToken token) throws IOException {
        if (token == JsonToken.VALUE_STRING || token == JsonToken.FIELD_NAME) {
            parser.getText();
        }
        if (token != JsonToken.START_OBJECT && token != JsonToken.START_ARRAY) {
            return;
        }
        int depth = 1;
        while (depth > 0) {
            JsonToken t = next(parser);
            if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                depth++;
            } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                depth--;
            } else if (t == JsonToken.VALUE_STRING || t == JsonToken.FIELD_NAME) {
                parser.getText();
            }
        }
    }
}
