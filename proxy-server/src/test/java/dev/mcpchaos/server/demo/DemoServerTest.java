package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Drives {@link DemoServer#serve} with raw JSON-RPC lines and checks every reply field that matters. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DemoServerTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private DemoServerHarness server;

    @BeforeEach
    void startServer() throws Exception {
        server = new DemoServerHarness();
    }

    @AfterEach
    void stopServer() throws Exception {
        server.close();
    }

    // --- lifecycle -------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
    void initializeAcceptsEverySupportedVersion(String version) {
        server.send(initialize(1, "\"" + version + "\""));

        JsonNode result = server.resultOf(1);

        assertThat(result.get("protocolVersion").asText()).isEqualTo(version);
        assertThat(result.at("/capabilities/tools/listChanged").isBoolean()).isTrue();
        assertThat(result.at("/capabilities/tools/listChanged").booleanValue()).isFalse();
        assertThat(result.at("/capabilities/logging").isObject()).isTrue();
        assertThat(result.at("/capabilities/logging").size()).isZero();
        assertThat(result.at("/serverInfo/name").asText()).isEqualTo("mcp-chaos-demo");
        assertThat(result.at("/serverInfo/version").asText()).isEqualTo(DemoServer.version()).isNotBlank();
        assertThat(result.get("instructions").asText()).contains("mcp-chaos built-in demo server");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"1999-01-01\"", "\"2025-11-26\"", "42", "null"})
    void initializeAnswersUnknownVersionsWithTheLatest(String requestedJson) {
        server.send(initialize(1, requestedJson));

        assertThat(server.resultOf(1).get("protocolVersion").asText()).isEqualTo("2025-11-25");
    }

    @Test
    void initializeWithoutParamsAnswersWithTheLatest() {
        server.request(1, "initialize");

        assertThat(server.resultOf(1).get("protocolVersion").asText()).isEqualTo("2025-11-25");
    }

    @Test
    void versionComesFromTheFilteredBuildResource() {
        // Maven filters version.properties with the project version, e.g. 0.1.0-SNAPSHOT.
        assertThat(DemoServer.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }

    @Test
    void pingAndSetLevelAnswerWithAnEmptyObject() {
        server.request(1, "ping");
        assertThat(server.resultOf(1).isObject()).isTrue();

        server.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}");
        JsonNode setLevel = server.resultOf(2);
        assertThat(setLevel.isObject()).isTrue();
        assertThat(setLevel.size()).isZero();
    }

    @Test
    void notificationsAndClientResponsesGetNoReply() {
        server.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        server.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no-such-thing\",\"params\":{}}");
        server.send("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}");
        server.send("{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}");
        server.send("{\"jsonrpc\":\"2.0\",\"id\":98,\"error\":{\"code\":-1,\"message\":\"no\"}}");
        server.request(7, "ping");

        // The server answers in order on its reader thread, so anything owed earlier would come first.
        JsonNode first = server.next();
        assertThat(first.get("id").intValue()).isEqualTo(7);
        assertThat(first.has("result")).isTrue();
    }

    // --- tools/list ------------------------------------------------------------------------

    @Test
    void toolsListDescribesTheFourToolsWithSchemas() {
        server.request("list", "tools/list");

        JsonNode tools = server.resultOf("list").get("tools");

        assertThat(tools).hasSize(4);
        List<String> names = new ArrayList<>();
        tools.forEach(tool -> names.add(tool.get("name").asText()));
        assertThat(names).containsExactly("echo", "add", "slow", "large");
        for (JsonNode tool : tools) {
            assertThat(tool.get("description").asText()).as("description of %s", tool).hasSizeGreaterThan(10);
            assertThat(tool.at("/inputSchema/type").asText()).isEqualTo("object");
        }
        assertThat(tools.get(0).at("/inputSchema/properties/text/type").asText()).isEqualTo("string");
        assertThat(tools.get(0).at("/inputSchema/required").toString()).isEqualTo("[\"text\"]");
        assertThat(tools.get(1).at("/inputSchema/properties/a/type").asText()).isEqualTo("number");
        assertThat(tools.get(1).at("/inputSchema/properties/b/type").asText()).isEqualTo("number");
        assertThat(tools.get(1).at("/inputSchema/required").toString()).isEqualTo("[\"a\",\"b\"]");
        assertThat(tools.get(2).at("/inputSchema/properties/ms/type").asText()).isEqualTo("integer");
        assertThat(tools.get(2).at("/inputSchema/properties/ms/minimum").intValue()).isZero();
        assertThat(tools.get(2).at("/inputSchema/required").toString()).isEqualTo("[\"ms\"]");
        assertThat(tools.get(3).at("/inputSchema/properties/bytes/type").asText()).isEqualTo("integer");
        assertThat(tools.get(3).at("/inputSchema/properties/bytes/maximum").longValue()).isEqualTo(64L * 1024 * 1024);
        assertThat(tools.get(3).at("/inputSchema/required").toString()).isEqualTo("[\"bytes\"]");
    }

    // --- tools -----------------------------------------------------------------------------

    @Test
    void echoReturnsTheTextOnOneLine() {
        String text = "h\u00e9llo \"w\u00f6rld\"\nsecond line \u2028 \ud83d\ude00";
        server.callTool(1, "echo", "{\"text\":" + quote(text) + "}");

        String line = server.nextLine();
        // Compact: control characters escaped, no pretty-printing.
        assertThat(line).doesNotContain("\n").doesNotContain("\r").doesNotContain("  ");
        assertSuccessText(parse(line).get("result"), text);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "2          | 3          | 5",
        "-7         | 7          | 0",
        "2.0        | 3          | 5",
        "9007199254740993 | 1    | 9007199254740994",
        "1.5        | 2.25       | 3.75",
        "0.5        | 0.5        | 1.0",
        "1e2        | 1          | 101",
    })
    void addSumsNumbers(String a, String b, String expected) {
        server.callTool(1, "add", "{\"a\":" + a + ",\"b\":" + b + "}");

        assertSuccessText(server.resultOf(1), expected);
    }

    @Test
    void slowAnswersPingWhileSleepingAndReportsProgress() {
        server.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                + "\"arguments\":{\"ms\":1000},\"_meta\":{\"progressToken\":\"tok-1\"}}}");
        server.request(2, "ping");

        List<JsonNode> beforeResult = new ArrayList<>();
        JsonNode message;
        while (!(message = server.next()).path("id").equals(intNode(1))) {
            beforeResult.add(message);
        }

        assertSuccessText(message.get("result"), "slept 1000 ms");
        assertThat(beforeResult).anySatisfy(m -> assertThat(m.path("id")).isEqualTo(intNode(2)));
        List<Integer> progress = new ArrayList<>();
        for (JsonNode m : beforeResult) {
            if (m.has("method")) {
                assertThat(m.get("method").asText()).isEqualTo("notifications/progress");
                assertThat(m.has("id")).isFalse();
                assertThat(m.at("/params/progressToken").asText()).isEqualTo("tok-1");
                assertThat(m.at("/params/progressToken").isTextual()).isTrue();
                assertThat(m.at("/params/total").intValue()).isEqualTo(5);
                assertThat(m.at("/params/message").asText()).startsWith("slept ").endsWith(" of 1000 ms");
                progress.add(m.at("/params/progress").intValue());
            }
        }
        assertThat(progress).containsExactly(1, 2, 3, 4, 5);
        assertThat(beforeResult).hasSize(6);
    }

    @Test
    void slowEchoesANumericProgressToken() {
        server.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                + "\"arguments\":{\"ms\":10},\"_meta\":{\"progressToken\":42}}}");

        for (int step = 1; step <= 5; step++) {
            JsonNode notification = server.next();
            assertThat(notification.at("/params/progressToken").isIntegralNumber()).isTrue();
            assertThat(notification.at("/params/progressToken").intValue()).isEqualTo(42);
            assertThat(notification.at("/params/progress").intValue()).isEqualTo(step);
        }
        assertSuccessText(server.resultOf(1), "slept 10 ms");
    }

    @Test
    void slowWithoutProgressTokenSendsOnlyTheResult() {
        server.callTool(1, "slow", "{\"ms\":0}");

        assertSuccessText(server.resultOf(1), "slept 0 ms");
        server.request(2, "ping");
        assertThat(server.resultOf(2).isObject()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 44, 45, 46, 100_000, 1024 * 1024})
    void largeReturnsExactlyThatManyAsciiCharacters(int bytes) {
        server.callTool(1, "large", "{\"bytes\":" + bytes + "}");

        JsonNode result = server.resultOf(1);
        assertThat(result.get("isError").booleanValue()).isFalse();
        String text = result.at("/content/0/text").asText();
        assertThat(text).hasSize(bytes);
        assertThat(text.chars().allMatch(c -> c >= 0x20 && c < 0x7f)).isTrue();
        if (bytes >= 10) {
            assertThat(text).startsWith("The quick ");
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "echo  | {}                        | echo: argument 'text' is required (expected: string)",
        "echo  | {\"text\":5}              | echo: argument 'text' must be a string, got number 5",
        "echo  | [1]                       | echo: arguments must be an object, got array [1]",
        "add   | {\"a\":1}                 | add: argument 'b' is required (expected: number)",
        "add   | {\"a\":\"1\",\"b\":2}     | add: argument 'a' must be a number, got string \"1\"",
        "slow  | {\"ms\":-1}               | slow: argument 'ms' is -1 (expected: an integer from 0 to 3600000)",
        "slow  | {\"ms\":1.5}              | slow: argument 'ms' must be an integer, got number 1.5",
        "slow  | {\"ms\":null}             | slow: argument 'ms' is required (expected: integer)",
        "large | {\"bytes\":67108865}      | large: argument 'bytes' is 67108865 (expected: an integer from 0 to 67108864)",
        "large | {\"bytes\":true}          | large: argument 'bytes' must be an integer, got boolean true",
    })
    void badArgumentsGiveAToolErrorThatSaysWhatWasWrong(String tool, String arguments, String message) {
        server.callTool(1, tool, arguments);

        JsonNode result = server.resultOf(1);
        assertThat(result.get("isError").booleanValue()).isTrue();
        assertThat(result.at("/content/0/type").asText()).isEqualTo("text");
        assertThat(result.at("/content/0/text").asText()).isEqualTo(message);
    }

    @Test
    void missingArgumentsObjectIsAToolError() {
        server.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\"}}");

        JsonNode result = server.resultOf(1);
        assertThat(result.get("isError").booleanValue()).isTrue();
        assertThat(result.at("/content/0/text").asText()).isEqualTo("add: argument 'a' is required (expected: number)");
    }

    @Test
    void concurrentToolCallsNeverInterleaveTheirLines() {
        int calls = 40;
        for (int i = 0; i < calls; i++) {
            if (i % 2 == 0) {
                server.callTool(i, "large", "{\"bytes\":" + (50_000 + i) + "}");
            } else {
                server.send("{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                        + "\"arguments\":{\"ms\":5},\"_meta\":{\"progressToken\":" + i + "}}}");
            }
        }

        Set<Integer> answered = new HashSet<>();
        int progressNotifications = 0;
        while (answered.size() < calls) {
            JsonNode message = server.next(); // fails the test if a line is not valid JSON
            if (message.has("method")) {
                progressNotifications++;
                continue;
            }
            int id = message.get("id").intValue();
            assertThat(answered.add(id)).as("duplicate reply to %s", id).isTrue();
            String text = message.at("/result/content/0/text").asText();
            if (id % 2 == 0) {
                assertThat(text).hasSize(50_000 + id);
            } else {
                assertThat(text).isEqualTo("slept 5 ms");
            }
        }
        assertThat(progressNotifications).isEqualTo(calls / 2 * 5);
    }

    // --- protocol errors -------------------------------------------------------------------

    @Test
    void unknownToolIsInvalidParams() {
        server.callTool(3, "nope", "{}");

        assertError(server.next(), intNode(3), -32602, "Unknown tool: nope");
    }

    @Test
    void toolsCallWithoutANameIsInvalidParams() {
        server.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}");

        JsonNode reply = server.next();
        assertThat(reply.at("/error/code").intValue()).isEqualTo(-32602);
        assertThat(reply.get("id").intValue()).isEqualTo(3);
    }

    @Test
    void unknownMethodIsMethodNotFound() {
        server.request("m-1", "resources/list");

        assertError(server.next(), textNode("m-1"), -32601, "Method not found: resources/list");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{not json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", "\u00ff\u00fe"})
    void aLineThatIsNotJsonIsAParseErrorAndTheServerKeepsServing(String line) {
        server.send(line);

        JsonNode reply = server.next();
        assertThat(reply.get("id").isNull()).isTrue();
        assertThat(reply.at("/error/code").intValue()).isEqualTo(-32700);
        assertThat(reply.at("/error/message").asText()).startsWith("Parse error");

        server.request(2, "ping");
        assertThat(server.resultOf(2).isObject()).isTrue();
    }

    @Test
    void invalidUtf8IsAParseError() {
        byte[] prefix = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"x\":\"".getBytes(StandardCharsets.US_ASCII);
        byte[] line = Arrays.copyOf(prefix, prefix.length + 5);
        line[prefix.length] = (byte) 0xff;
        line[prefix.length + 1] = (byte) 0xfe;
        line[prefix.length + 2] = '"';
        line[prefix.length + 3] = '}';
        line[prefix.length + 4] = '\n';
        server.sendBytes(line);

        JsonNode reply = server.next();
        assertThat(reply.get("id").isNull()).isTrue();
        assertThat(reply.at("/error/code").intValue()).isEqualTo(-32700);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "42                                                   | null | Invalid Request: expected a JSON object",
        "{\"jsonrpc\":\"2.0\",\"id\":5}                           | 5    | Invalid Request: no method",
        "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}       | 5    | Invalid Request: jsonrpc must be \"2.0\"",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}              | 5    | Invalid Request: method must be a string",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}      | null | Invalid Request: id must be a string or a number",
        "[]                                                   | null | Invalid Request: empty batch",
    })
    void malformedRequestsAreInvalidRequest(String line, String expectedIdJson, String message) throws Exception {
        server.send(line);

        assertError(server.next(), MAPPER.readTree(expectedIdJson),
                -32600, message);
    }

    // --- framing and ids -------------------------------------------------------------------

    @Test
    void blankLinesAreIgnoredAndCrLfIsAccepted() {
        server.sendRaw("\n\r\n   \t \n");
        server.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
        server.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n");

        assertThat(server.resultOf(1).isObject()).isTrue();
        assertThat(server.resultOf(2).isObject()).isTrue();
    }

    @Test
    void idsAreEchoedExactlyAsReceived() {
        server.request("1", "ping");
        server.request(1, "ping");
        server.request(12345678901234L, "ping");
        server.request("abc", "ping");
        server.send("{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"ping\"}");
        server.request(-3, "ping");

        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":\"1\",");
        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":1,");
        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":12345678901234,");
        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",");
        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,");
        assertThat(server.nextLine()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":-3,");
    }

    @Test
    void aToolCallEchoesAStringIdAsAString() {
        server.callTool("7", "echo", "{\"text\":\"x\"}");

        JsonNode reply = server.next();
        assertThat(reply.get("id").isTextual()).isTrue();
        assertThat(reply.get("id").asText()).isEqualTo("7");
    }

    // --- batches ---------------------------------------------------------------------------

    @Test
    void aBatchIsAnsweredWithAnArrayOfTheRequestsReplies() {
        server.send("["
                + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                + "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"},"
                + "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}},"
                + "17"
                + "]");

        JsonNode replies = server.next();

        assertThat(replies.isArray()).isTrue();
        assertThat(replies).hasSize(4);
        assertThat(replies.get(0).get("id").intValue()).isEqualTo(1);
        assertThat(replies.get(0).get("result").isObject()).isTrue();
        assertThat(replies.get(1).get("id").textValue()).isEqualTo("two");
        assertSuccessText(replies.get(1).get("result"), "hi");
        assertError(replies.get(2), intNode(3), -32601, "Method not found: nope");
        assertError(replies.get(3), NullNode.getInstance(), -32600,
                "Invalid Request: expected a JSON object");
    }

    @Test
    void aBatchOfNotificationsGetsNoReply() {
        server.send("[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}]");
        server.request(9, "ping");

        assertThat(server.next().get("id").intValue()).isEqualTo(9);
    }

    // --- end of input ----------------------------------------------------------------------

    @Test
    void endOfInputWaitsForRunningToolCallsThenReturnsZero() throws Exception {
        server.callTool(1, "slow", "{\"ms\":300}");
        server.closeInput();

        assertThat(server.awaitExit(Duration.ofSeconds(15))).isZero();
        // serve() returned, so the reply must already be there: no waiting.
        assertThat(server.unreadLines()).isEqualTo(1);
        assertSuccessText(server.resultOf(1), "slept 300 ms");
    }

    @Test
    void aLastLineWithoutNewlineIsStillServed() throws Exception {
        server.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        server.closeInput();

        assertThat(server.awaitExit(Duration.ofSeconds(15))).isZero();
        assertThat(server.resultOf(1).isObject()).isTrue();
    }

    // --- helpers ---------------------------------------------------------------------------

    private static String initialize(int id, String versionJson) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + versionJson + ",\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}";
    }

    private static void assertSuccessText(JsonNode result, String expectedText) {
        assertThat(result.get("isError").isBoolean()).isTrue();
        assertThat(result.get("isError").booleanValue()).isFalse();
        assertThat(result.get("content")).hasSize(1);
        assertThat(result.at("/content/0/type").asText()).isEqualTo("text");
        assertThat(result.at("/content/0/text").asText()).isEqualTo(expectedText);
    }

    private static void assertError(JsonNode reply, JsonNode expectedId, int code, String message) {
        assertThat(reply.get("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(reply.get("id")).isEqualTo(expectedId);
        assertThat(reply.has("result")).isFalse();
        assertThat(reply.at("/error/code").intValue()).isEqualTo(code);
        assertThat(reply.at("/error/message").asText()).isEqualTo(message);
    }

    private static JsonNode intNode(int value) {
        return IntNode.valueOf(value);
    }

    private static JsonNode textNode(String value) {
        return TextNode.valueOf(value);
    }

    private static JsonNode parse(String line) {
        try {
            return MAPPER.readTree(line);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String quote(String text) {
        return TextNode.valueOf(text).toString();
    }
}
