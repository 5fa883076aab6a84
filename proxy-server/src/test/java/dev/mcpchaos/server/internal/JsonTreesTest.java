package dev.mcpchaos.server.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link JsonTrees} against the data-binding mapper it replaced on the replay path (the cassette
 * format's settings): the same trees and the same text for the same input, and the same refusals.
 */
class JsonTreesTest {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    private static final List<String> CORPUS = List.of(
            "{}", "[]", "null", "true", "0", "-1", "\"\"",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
            "{\"a\":1.0,\"b\":1.50,\"c\":1e3,\"d\":-0.0,\"e\":12345678901234567890.000}",
            "{\"big\":123456789012345678901234567890,\"long\":9223372036854775807,\"int\":2147483647,\"neg\":-2147483649}",
            "{\"s\":\"\\u00e9\\n\\t\\\"\\\\ \\ud83d\\ude00\",\"nested\":[[],[{}],[1,[2,[3]]]],\"n\":null,\"f\":false}",
            "  {\"spaced\" :  [ 1 , 2 ] }  ");

    @Test
    void readsAndWritesWhatTheMapperDid() throws Exception {
        for (String text : CORPUS) {
            JsonNode ours = JsonTrees.read(text);
            JsonNode theirs = MAPPER.readTree(text);
            assertEquals(theirs, ours, text);
            assertEquals(MAPPER.writeValueAsString(theirs), JsonTrees.text(ours), text);
            assertArrayEquals(MAPPER.writeValueAsBytes(theirs), JsonTrees.bytes(ours), text);
            assertEquals(ours, JsonTrees.read(text.getBytes(StandardCharsets.UTF_8)), text);
        }
        // Numbers keep their text: what a cassette recorded is what it replays.
        assertEquals("{\"a\":1.0,\"b\":1.50,\"c\":1000,\"d\":0.0,\"e\":12345678901234567890.000}",
                JsonTrees.text(JsonTrees.read(CORPUS.get(8))));
    }

    @Test
    void refusesWhatTheMapperRefused() throws Exception {
        for (String empty : List.of("", "   ")) {
            assertTrue(MAPPER.readTree(empty).isMissingNode(), empty);
            assertTrue(JsonTrees.read(empty).isMissingNode(), empty);
        }
        for (String text : List.of("{", "{\"a\":1,\"a\":2}", "{} {}", "[1] x", "NaN", "{\"a\":NaN}", "'x'", "[1,]")) {
            assertThrows(JsonProcessingException.class, () -> MAPPER.readTree(text).isMissingNode(), "mapper: " + text);
            JsonProcessingException e = assertThrows(JsonProcessingException.class, () -> JsonTrees.read(text), text);
            assertTrue(!e.getOriginalMessage().isBlank(), text);
        }
    }
}
