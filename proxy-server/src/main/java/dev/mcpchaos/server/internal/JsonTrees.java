package dev.mcpchaos.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;

/**
 * Reads and writes JSON trees with jackson-core's streaming parser and generator, without an
 * {@code ObjectMapper}: a mapper's first construction (its configuration, type factory, date
 * format, locale data) was about 60 ms of a cold {@code replay}'s start-up, paid by every fixture
 * spawned per test, and {@code JsonNode.toString()} builds one too. The trees are databind's node
 * classes, so code that reads them is unchanged.
 *
 * <p>Messages are read as they are: floating-point numbers keep their exact text
 * ({@code 1.0} stays {@code 1.0}), a duplicate member name is refused, a text must be one JSON
 * value with nothing after it (no value at all reads as the missing node); big decimals are
 * written plain. Not API.
 */
public final class JsonTrees {

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    /** Exact decimals: trailing zeros kept, as the cassette format promises. */
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

    private JsonTrees() {
    }

    /**
     * The tree of the JSON text {@code text}.
     *
     * @throws JsonProcessingException for text that is not one JSON value; its original message
     *                                 says where and why
     */
    public static JsonNode read(String text) throws JsonProcessingException {
        try (JsonParser parser = FACTORY.createParser(text)) {
            return readWhole(parser);
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a String is never short of bytes
        }
    }

    /** The tree of the JSON in {@code bytes} (UTF-8); as {@link #read(String)}. */
    public static JsonNode read(byte[] bytes) throws JsonProcessingException {
        try (JsonParser parser = FACTORY.createParser(bytes)) {
            return readWhole(parser);
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JsonNode readWhole(JsonParser parser) throws IOException {
        JsonToken first = parser.nextToken();
        if (first == null) {
            return MissingNode.getInstance(); // no content: what a mapper's readTree gives too
        }
        JsonNode value = value(parser, first);
        JsonToken trailing = parser.nextToken();
        if (trailing != null) {
            throw new JsonParseException(parser, "Trailing token (of type " + trailing
                    + ") found after value: not allowed (expected: one JSON value)");
        }
        return value;
    }

    private static JsonNode value(JsonParser parser, JsonToken token) throws IOException {
        return value(parser, token, NODES, true);
    }

    /**
     * The tree of the value that begins at {@code token} (the parser's current token), read to
     * its end. The same reader serves the cassettes (here) and the MCP hosts ({@code host.HostJson}),
     * whose rules differ only in what is given: a repeated member is refused by a factory with
     * {@link StreamReadFeature#STRICT_DUPLICATE_DETECTION}, or else its last value is kept; a
     * fraction is kept as its exact decimal, or read as a double as a mapper does by default.
     *
     * @param nodes the factory the nodes come from (and the containers keep)
     * @param exactDecimals whether a fraction becomes a decimal node rather than a double one
     */
    public static JsonNode value(JsonParser parser, JsonToken token, JsonNodeFactory nodes, boolean exactDecimals)
            throws IOException {
        switch (token) {
            case START_OBJECT: {
                ObjectNode object = nodes.objectNode();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
                    String name = parser.currentName();
                    object.replace(name, value(parser, parser.nextToken(), nodes, exactDecimals));
                }
                return object;
            }
            case START_ARRAY: {
                ArrayNode array = nodes.arrayNode();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    array.add(value(parser, t, nodes, exactDecimals));
                }
                return array;
            }
            case VALUE_STRING:
                return nodes.textNode(parser.getText());
            case VALUE_NUMBER_INT:
                switch (parser.getNumberType()) {
                    case INT:
                        return nodes.numberNode(parser.getIntValue());
                    case LONG:
                        return nodes.numberNode(parser.getLongValue());
                    default:
                        return nodes.numberNode(parser.getBigIntegerValue());
                }
            case VALUE_NUMBER_FLOAT:
                return exactDecimals ? nodes.numberNode(parser.getDecimalValue()) : nodes.numberNode(parser.getDoubleValue());
            case VALUE_TRUE:
                return nodes.booleanNode(true);
            case VALUE_FALSE:
                return nodes.booleanNode(false);
            case VALUE_NULL:
                return nodes.nullNode();
            default:
                // Text JSON has no other value tokens (an embedded object comes from binary formats).
                throw new JsonParseException(parser, "Unexpected token " + token);
        }
    }

    /** {@code node} as compact JSON text. */
    public static String text(JsonNode node) {
        StringWriter out = new StringWriter();
        try (JsonGenerator generator = FACTORY.createGenerator(out)) {
            write(generator, node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** {@code node} as compact JSON in UTF-8. */
    public static byte[] bytes(JsonNode node) {
        try (ByteArrayBuilder out = new ByteArrayBuilder(256)) {
            try (JsonGenerator generator = FACTORY.createGenerator(out)) {
                write(generator, node);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(JsonGenerator generator, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                generator.writeStartObject();
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> field = it.next();
                    generator.writeFieldName(field.getKey());
                    write(generator, field.getValue());
                }
                generator.writeEndObject();
            }
            case ARRAY -> {
                generator.writeStartArray();
                for (JsonNode element : node) {
                    write(generator, element);
                }
                generator.writeEndArray();
            }
            case STRING -> generator.writeString(node.textValue());
            case NUMBER -> {
                switch (node.numberType()) {
                    case INT -> generator.writeNumber(node.intValue());
                    case LONG -> generator.writeNumber(node.longValue());
                    case BIG_INTEGER -> generator.writeNumber(node.bigIntegerValue());
                    case FLOAT -> generator.writeNumber(node.floatValue());
                    case DOUBLE -> generator.writeNumber(node.doubleValue());
                    default -> generator.writeNumber(node.decimalValue());
                }
            }
            case BOOLEAN -> generator.writeBoolean(node.booleanValue());
            case NULL, MISSING -> generator.writeNull();
            case BINARY -> generator.writeBinary(node.binaryValue());
            default -> generator.writeString(node.asText()); // a POJO node: its text, as a mapper would print it
        }
    }
}
