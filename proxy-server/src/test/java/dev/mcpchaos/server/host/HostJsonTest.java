package dev.mcpchaos.server.host;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;

/**
 * {@link HostJson} against the ObjectMapper it stands in for (the demo server's, with
 * FAIL_ON_TRAILING_TOKENS): every input read to the same tree, node type for node type, or refused
 * with the same words; every tree written to the same bytes.
 */
class HostJsonTest {

    private static final ObjectMapper MAPPER = HostJson.mapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]",
        "{\"id\":0}", "{\"id\":-1}", "{\"id\":2147483647}", "{\"id\":2147483648}", "{\"id\":-2147483649}",
        "{\"id\":9223372036854775807}", "{\"id\":9223372036854775808}", "{\"id\":-92233720368547758090}",
        "{\"a\":1.0}", "{\"a\":-0.0}", "{\"a\":1e3}", "{\"a\":1.5E-7}", "{\"a\":12345678901234567890.5}",
        "{\"a\":0.1,\"b\":2.5e308}",
        "{\"s\":\"tab\\tnewline\\n quote\\\" backslash\\\\ unicode \\u00e9\\u20ac \\ud83d\\ude00 slash \\/\"}",
        "{\"s\":\"é € 😀 raw\"}",
        "{\"a\":1,\"a\":2,\"b\":3}", "{\"a\":{\"x\":1},\"b\":[],\"a\":[1,2]}",
        "{}", "[]", "[[[[[]]]]]", "{\"a\":{\"b\":{\"c\":{\"d\":[1,{\"e\":null}]}}}}",
        "1", "-7", "\"text\"", "null", "true", "false", "3.25",
        "  {\"padded\":true}  \n", "\t[1,\r\n2]\n",
        "", "   ", "\n",
        "{not json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", "{} {}", "[1] 2", "1 2",
        "{\"a\":1}}", "[1,]", "{\"a\":}", "{\"a\" 1}", "[1 2]", "{\"a\":1,}", "\"unterminated", "{\"a\":tru}",
        "NaN", "[01]", "{'single':1}", "\u00ff\u00fe", "\u0000"})
    void readsEveryInputAsTheMapperDoes(String input) {
        assertSameRead(input.getBytes(UTF_8));
    }

    @Test
    void readsAndWritesRandomTreesAsTheMapperDoes() throws Exception {
        Random random = new Random(34);
        for (int i = 0; i < 2000; i++) {
            JsonNode tree = randomValue(random, 4);
            byte[] written = HostJson.write(tree);
            assertThat(new String(written, UTF_8)).as("tree %d", i)
                    .isEqualTo(new String(MAPPER.writeValueAsBytes(tree), UTF_8));
            assertSameRead(written);
        }
    }

    @Test
    void writesEveryKindOfNumberNodeAsTheMapperDoes() throws Exception {
        ArrayNode numbers = NODES.arrayNode()
                .add(NODES.numberNode((short) 7)).add(NODES.numberNode(42)).add(NODES.numberNode(-42L))
                .add(NODES.numberNode(Long.MIN_VALUE)).add(NODES.numberNode(new BigInteger("123456789012345678901234567890")))
                .add(NODES.numberNode(1.5f)).add(NODES.numberNode(0.1)).add(NODES.numberNode(1e300))
                .add(NODES.numberNode(-0.0)).add(NODES.numberNode(new BigDecimal("1.0E+3")))
                .add(NODES.numberNode(new BigDecimal("0.000001234"))).add(NODES.numberNode(new BigDecimal("100")));
        ObjectNode message = NODES.objectNode().put("jsonrpc", "2.0").put("id", 3);
        message.set("result", NODES.objectNode().set("numbers", numbers));
        message.putNull("nothing");
        message.put("flag", false);
        assertThat(new String(HostJson.write(message), UTF_8)).isEqualTo(MAPPER.writeValueAsString(message));
    }

    @Test
    void aNodeOnlyAMapperWritesIsWrittenByTheMapper() throws Exception {
        ObjectNode message = NODES.objectNode().put("jsonrpc", "2.0");
        message.set("blob", NODES.binaryNode(new byte[] {1, 2, 3}));
        message.set("pojo", NODES.pojoNode(java.util.List.of("a", 1)));
        assertThat(new String(HostJson.write(message), UTF_8)).isEqualTo(MAPPER.writeValueAsString(message));
    }

    private static void assertSameRead(byte[] input) {
        Throwable expectedFailure = catchThrowable(() -> MAPPER.readTree(input));
        Throwable actualFailure = catchThrowable(() -> HostJson.read(input));
        String shown = new String(input, UTF_8);
        if (expectedFailure != null || actualFailure != null) {
            assertThat(actualFailure).as("refused: %s", shown).isInstanceOf(JsonProcessingException.class);
            assertThat(expectedFailure).as("refused by the mapper: %s", shown).isInstanceOf(JsonProcessingException.class);
            assertThat(((JsonProcessingException) actualFailure).getOriginalMessage()).as(shown)
                    .isEqualTo(((JsonProcessingException) expectedFailure).getOriginalMessage());
            return;
        }
        JsonNode expected;
        JsonNode actual;
        try {
            expected = MAPPER.readTree(input);
            actual = HostJson.read(input);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        assertSameTree(actual, expected, shown);
    }

    /** Equal, and of the same node class at every place (equals alone takes an int node for a long one at times). */
    private static void assertSameTree(JsonNode actual, JsonNode expected, String where) {
        assertThat(actual).as(where).isEqualTo(expected);
        assertThat(actual.getClass()).as(where).isEqualTo(expected.getClass());
        if (expected.isContainerNode()) {
            assertThat(actual.size()).as(where).isEqualTo(expected.size());
            if (expected.isObject()) {
                assertThat(names(actual)).as(where).containsExactlyElementsOf(names(expected));
                expected.properties().forEach(member ->
                        assertSameTree(actual.get(member.getKey()), member.getValue(), where + " ." + member.getKey()));
            } else {
                for (int i = 0; i < expected.size(); i++) {
                    assertSameTree(actual.get(i), expected.get(i), where + " [" + i + "]");
                }
            }
        }
    }

    private static java.util.List<String> names(JsonNode object) {
        return object.properties().stream().map(java.util.Map.Entry::getKey).toList();
    }

    private static JsonNode randomValue(Random random, int depth) {
        int kind = random.nextInt(depth > 0 ? 10 : 7);
        switch (kind) {
            case 0:
                return NODES.textNode(randomText(random));
            case 1:
                return NODES.numberNode(random.nextInt());
            case 2:
                return NODES.numberNode(random.nextLong());
            case 3:
                return NODES.numberNode(random.nextBoolean() ? random.nextDouble() * 1e6 : random.nextGaussian());
            case 4:
                return NODES.numberNode(new BigInteger(96, random).negate());
            case 5:
                return NODES.booleanNode(random.nextBoolean());
            case 6:
                return NODES.nullNode();
            case 7:
            case 8: {
                ObjectNode object = NODES.objectNode();
                int members = random.nextInt(5);
                for (int i = 0; i < members; i++) {
                    object.set(randomText(random), randomValue(random, depth - 1));
                }
                return object;
            }
            default: {
                ArrayNode array = NODES.arrayNode();
                int elements = random.nextInt(5);
                for (int i = 0; i < elements; i++) {
                    array.add(randomValue(random, depth - 1));
                }
                return array;
            }
        }
    }

    private static String randomText(Random random) {
        String alphabet = "abcXYZ019 _-\"\\/\n\t\u0001é€😀";
        StringBuilder text = new StringBuilder();
        int length = random.nextInt(8);
        for (int i = 0; i < length; i++) {
            int at = random.nextInt(alphabet.length());
            char c = alphabet.charAt(at);
            if (Character.isHighSurrogate(c)) {
                text.append(c).append(alphabet.charAt(at + 1));
            } else if (!Character.isLowSurrogate(c)) {
                text.append(c);
            }
        }
        return text.toString();
    }
}
