package dev.mcpchaos.server.host;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.mcpchaos.server.internal.JsonTrees;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The hosts' JSON: messages read into jackson-databind trees and trees written as compact
 * UTF-8, by jackson-core's streaming parser and generator, without an {@link ObjectMapper}. A
 * mapper's first use initializes its date formats, time zone and locale data, 40-80 ms of a cold
 * start: the largest part of a spawned demo server's time to its first answer (issue #34).
 * {@link JsonRpc} is its face to the handlers.
 *
 * <p>Read and written exactly as {@link #MAPPER} reads and writes them, which
 * {@code HostJsonTest} checks input by input: the same node types (an integer as an int, a long
 * or a big integer node by its size; a fraction as a double), a repeated member's last value in
 * its first place, the same parse errors (the parser's own; a second value after the first is
 * refused with databind's words for {@link DeserializationFeature#FAIL_ON_TRAILING_TOKENS}), no
 * content as a {@link MissingNode}; the same bytes out. A node this writer does not know (binary,
 * a POJO) is written by {@link #MAPPER}. (The cassettes' reader, {@code internal.JsonTrees}, is
 * stricter on purpose: it refuses a repeated member and keeps decimals exact.)
 */
final class HostJson {

    /** Jackson's default cap (20 M chars per string) is below what MAX_MESSAGE_BYTES allows. */
    static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(JsonRpc.MAX_MESSAGE_BYTES).build())
            .build();

    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private HostJson() {
    }

    /** The mapper this class stands in for, made on first use only (see the class comment). */
    private static final class Mapper {
        static final ObjectMapper INSTANCE = JsonMapper.builder(FACTORY)
                // A message with trailing garbage is not one JSON value; answer it as a parse error.
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .build();
    }

    /** The equivalent {@link ObjectMapper}: for what this class does not write, and for tests. */
    static ObjectMapper mapper() {
        return Mapper.INSTANCE;
    }

    /**
     * One JSON value, as {@code MAPPER.readTree(bytes)} reads it.
     *
     * @return the value, or a {@link MissingNode} when there is none (no content, or only white space)
     * @throws JsonProcessingException when it is not exactly one JSON value
     */
    static JsonNode read(byte[] bytes) throws IOException {
        try (JsonParser parser = FACTORY.createParser(bytes)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return MissingNode.getInstance();
            }
            JsonNode value = JsonTrees.value(parser, first, NODES, false);
            JsonToken trailing = parser.nextToken();
            if (trailing != null) {
                throw new JsonParseException(parser, "Trailing token (of type " + trailing + ") found after value (bound as "
                        + "`" + JsonNode.class.getName() + "`): not allowed as per "
                        + "`DeserializationFeature.FAIL_ON_TRAILING_TOKENS`");
            }
            return value;
        }
    }

    /** Compact UTF-8 JSON of {@code message}, the bytes {@code MAPPER.writeValueAsBytes} gives. */
    static byte[] write(JsonNode message) {
        try (ByteArrayBuilder bytes = new ByteArrayBuilder()) {
            try (JsonGenerator generator = FACTORY.createGenerator(bytes, JsonEncoding.UTF8)) {
                if (!write(generator, message)) {
                    return Mapper.INSTANCE.writeValueAsBytes(message);
                }
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes {@code node}; false when it holds a node only a mapper writes (binary, POJO). */
    private static boolean write(JsonGenerator generator, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT:
                generator.writeStartObject();
                for (Map.Entry<String, JsonNode> member : node.properties()) {
                    generator.writeFieldName(member.getKey());
                    if (!write(generator, member.getValue())) {
                        return false;
                    }
                }
                generator.writeEndObject();
                return true;
            case ARRAY:
                generator.writeStartArray();
                for (JsonNode element : node) {
                    if (!write(generator, element)) {
                        return false;
                    }
                }
                generator.writeEndArray();
                return true;
            case STRING:
                generator.writeString(node.textValue());
                return true;
            case BOOLEAN:
                generator.writeBoolean(node.booleanValue());
                return true;
            case NULL:
            case MISSING:
                generator.writeNull();
                return true;
            case NUMBER:
                switch (node.numberType()) {
                    case INT:
                        generator.writeNumber(node.intValue());
                        return true;
                    case LONG:
                        generator.writeNumber(node.longValue());
                        return true;
                    case BIG_INTEGER:
                        generator.writeNumber(node.bigIntegerValue());
                        return true;
                    case FLOAT:
                        generator.writeNumber(node.floatValue());
                        return true;
                    case DOUBLE:
                        generator.writeNumber(node.doubleValue());
                        return true;
                    case BIG_DECIMAL:
                        generator.writeNumber(node.decimalValue());
                        return true;
                    default:
                        return false;
                }
            default:
                return false;
        }
    }
}
