package dev.mcpchaos.rules;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.MessageKind;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The faults that change, replace, multiply or remove one message, each through a chain. */
class MessageFaultsTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static ChainHarness harness(String match, String fault) {
        return ChainHarness.of("rules:\n  - name: r\n    match: " + match + "\n    fault: " + fault + "\n", 3);
    }

    private static Envelope sniff(String line) {
        return new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(line.getBytes(StandardCharsets.UTF_8)));
    }

    private static JsonNode json(String line) throws IOException {
        return MAPPER.readTree(line);
    }

    @Test
    void dropRemovesTheMessage() {
        try (ChainHarness h = harness("{method: ping}", "{type: drop}")) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(Msg.request(2, "other"));
            assertThat(h.toServer()).containsExactly(Msg.request(2, "other"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.fault()).isEqualTo("drop"));
        }
    }

    @Test
    void blackholeSwallowsTheMessageAndSaysSo() {
        try (ChainHarness h = harness("{method: ping}", "{type: blackhole}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).isEmpty();
            assertThat(h.connectionActions).isEmpty();
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.fault()).isEqualTo("blackhole");
                assertThat(e.detail()).isEqualTo("swallowed; the connection stays open");
            });
        }
    }

    @Test
    void duplicateSendsTheSameBytesAgain() {
        try (ChainHarness h = harness("{method: ping}", "{type: duplicate, copies: 2}")) {
            String odd = "{\"jsonrpc\":\"2.0\", \"id\":1, \"method\":\"ping\"}";
            h.fromClient(odd);
            h.fromClient(Msg.request(2, "other"));
            assertThat(h.stream(Direction.CLIENT_TO_SERVER))
                    .isEqualTo(odd + "\n" + odd + "\n" + odd + "\n" + Msg.request(2, "other") + "\n");
            assertThat(h.events.get(0).detail()).isEqualTo("sent 3 times");
        }
    }

    @Test
    void truncateCutsAtBytesAndKeepsTheDelimiter() {
        try (ChainHarness h = harness("{method: ping}", "{type: truncate, at: 12B}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.stream(Direction.CLIENT_TO_SERVER)).isEqualTo("{\"jsonrpc\":\"\n");
            assertThat(h.events.get(0).detail()).isEqualTo("cut at 12 of 40 B");
        }
    }

    @Test
    void truncateCutsAtAFractionAndLeavesShortMessagesAlone() {
        try (ChainHarness h = harness("{}", "{type: truncate, fraction: 0.25}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping").substring(0, 10));
        }
        try (ChainHarness h = harness("{}", "{type: truncate, at: 1KiB}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping"));
            assertThat(h.events).isEmpty(); // nothing to do is no injection (see NothingToDoTest)
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"truncated_json", "invalid_escape", "unclosed_bracket", "nan_literal", "garbage",
            "invalid_utf8"})
    void corruptMakesTheMessageMalformedOnOneLine(String mode) {
        try (ChainHarness h = harness("{kind: response}", "{type: corrupt, mode: " + mode + "}")) {
            h.fromClient(Msg.request(1, "tools/list"));
            h.fromServer(Msg.result(1, "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}"));
            assertThat(h.written).hasSize(2);
            byte[] bytes = h.written.get(1).bytes();
            assertThat(bytes[bytes.length - 1]).isEqualTo((byte) '\n');
            String line = h.written.get(1).line();
            assertThat(line).doesNotContain("\n");
            Envelope envelope = new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes, 0, bytes.length - 1));
            assertThat(envelope.kind()).as("%s gives %s", mode, line).isEqualTo(MessageKind.MALFORMED);
            assertThatThrownBy(() -> MAPPER.readTree(bytes)).as(mode).isInstanceOf(IOException.class);
        }
    }

    @Test
    void corruptModesBreakTheMessageInTheirOwnWay() {
        String response = Msg.result(1, "{\"n\":5,\"s\":\"ok\"}");
        assertThat(corrupted(response, "invalid_escape")).isEqualTo("{\"jsonrpc\":\"\\q2.0\",\"id\":1,\"result\":{\"n\":5,\"s\":\"ok\"}}");
        assertThat(corrupted(response, "unclosed_bracket")).isEqualTo(response.substring(0, response.length() - 1));
        assertThat(corrupted(response, "nan_literal")).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":NaN,\"result\":{\"n\":5,\"s\":\"ok\"}}");
        assertThat(corrupted(response, "garbage")).startsWith("#").hasSameSizeAs(response).doesNotContain("{", "\"");
        String cut = corrupted(response, "truncated_json");
        assertThat(response).startsWith(cut);
        assertThat(cut.length()).isBetween(response.length() / 2, response.length() - 1);
        assertThat(corrupted(Msg.result("a", "{}"), "nan_literal"))
                .isEqualTo("{\"nan\":NaN,\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}");
    }

    @Test
    void invalidUtf8InsertsALeadByteWithoutItsContinuation() {
        try (ChainHarness h = harness("{}", "{type: corrupt, mode: invalid_utf8}")) {
            h.fromServer(Msg.result(1, "{}"));
            byte[] bytes = h.written.get(0).bytes();
            assertThat(bytes[12]).isEqualTo((byte) 0xC3);
            assertThat(bytes[13]).isEqualTo((byte) 0x28);
        }
    }

    private static String corrupted(String line, String mode) {
        try (ChainHarness h = harness("{}", "{type: corrupt, mode: " + mode + "}")) {
            h.fromServer(line);
            return h.toClient().get(0);
        }
    }

    @Test
    void oversizeGrowsAResponseToTheSizeAndKeepsItValid() throws IOException {
        try (ChainHarness h = harness("{kind: response}", "{type: oversize, size: 64KiB}")) {
            h.fromClient(Msg.call(7, "echo"));
            h.fromServer(Msg.textResult(7, "hi"));
            String line = h.toClient().get(0);
            assertThat(line.getBytes(StandardCharsets.UTF_8)).hasSize(65536);
            JsonNode message = json(line);
            assertThat(message.get("id").asInt()).isEqualTo(7);
            assertThat(message.at("/result/content/0/text").asText()).isEqualTo("hi");
            assertThat(message.at("/result/_meta/dev.mcpchaos~1padding").asText()).matches("x+");
            assertThat(sniff(line).kind()).isEqualTo(MessageKind.RESPONSE);
        }
    }

    @Test
    void oversizePadsParamsOfRequestsAndAnExistingMeta() throws IOException {
        try (ChainHarness h = harness("{}", "{type: oversize, size: 1000}")) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    + "\"_meta\":{\"progressToken\":\"t\"}}}");
            h.fromClient("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":{}}");
            for (String line : h.toServer()) {
                assertThat(line.getBytes(StandardCharsets.UTF_8)).hasSize(1000);
                assertThat(json(line).at("/params/_meta/dev.mcpchaos~1padding").isTextual()).isTrue();
            }
            assertThat(json(h.toServer().get(1)).at("/params/_meta/progressToken").asText()).isEqualTo("t");
            assertThat(sniff(h.toServer().get(1)).toolName()).isEqualTo("echo");
        }
    }

    @Test
    void errorAnswersARequestAndNeverForwardsIt() throws IOException {
        try (ChainHarness h = harness("{method: tools/call}",
                "{type: error, code: -32000, message: Server overloaded, data: {retryAfter: 5}}")) {
            h.fromClient(Msg.call("a-1", "search"));
            assertThat(h.toServer()).isEmpty();
            assertThat(h.toClient()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"error\":{\"code\":-32000,"
                    + "\"message\":\"Server overloaded\",\"data\":{\"retryAfter\":5}}}");
            assertThat(h.events.get(0).detail()).isEqualTo("answered with error -32000; not forwarded");
        }
    }

    @Test
    void errorReplacesAResponse() {
        try (ChainHarness h = harness("{direction: server_to_client, method: tools/call}", "{type: error}")) {
            h.fromClient(Msg.call(5, "search"));
            h.fromServer(Msg.textResult(5, "found"));
            assertThat(h.toServer()).containsExactly(Msg.call(5, "search"));
            assertThat(h.toClient()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32603,"
                    + "\"message\":\"Internal error (injected by mcp-chaos)\"}}");
        }
    }

    @Test
    void toolErrorReplacesAToolResultAndAnswersACall() {
        String expected = "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\","
                + "\"text\":\"quota exceeded\"}],\"isError\":true}}";
        try (ChainHarness h = harness("{direction: server_to_client}", "{type: tool_error, text: quota exceeded}")) {
            h.fromClient(Msg.call(5, "search"));
            h.fromClient(Msg.request(6, "tools/list"));
            h.fromServer(Msg.textResult(5, "found"));
            h.fromServer(Msg.result(6, "{\"tools\":[]}")); // not a tools/call result: untouched
            assertThat(h.toClient()).containsExactly(String.format(expected, 5), Msg.result(6, "{\"tools\":[]}"));
        }
        try (ChainHarness h = harness("{direction: client_to_server}", "{type: tool_error, text: quota exceeded}")) {
            h.fromClient(Msg.call(5, "search"));
            assertThat(h.toServer()).isEmpty();
            assertThat(h.toClient()).containsExactly(String.format(expected, 5));
        }
    }

    @Test
    void noiseWritesAStrayLineBeforeTheMessage() {
        try (ChainHarness h = harness("{kind: response}", "{type: noise, text: 'DEBUG connected to db'}")) {
            h.fromServer(Msg.result(1, "{}"));
            assertThat(h.stream(Direction.SERVER_TO_CLIENT)).isEqualTo("DEBUG connected to db\n" + Msg.result(1, "{}")
                    + "\n");
        }
    }

    @Test
    void mutateRemovesAToolFromToolsList() throws IOException {
        String tools = "{\"tools\":[{\"name\":\"echo\"},{\"name\":\"add\"},{\"name\":\"slow\"}]}";
        String patch = "{type: mutate, patch: [{op: test, path: /result/tools/1/name, value: add},"
                + " {op: remove, path: /result/tools/1}]}";
        try (ChainHarness h = harness("{kind: response, method: tools/list}", patch)) {
            h.fromClient(Msg.request(1, "tools/list"));
            h.fromServer(Msg.result(1, tools));
            JsonNode result = json(h.toClient().get(0));
            assertThat(result.at("/result/tools").findValuesAsText("name")).containsExactly("echo", "slow");
            assertThat(result.get("id").asInt()).isEqualTo(1);
            assertThat(h.events.get(0).detail()).isEqualTo("patched (2 operations)");
        }
    }

    @Test
    void mutateLeavesTheMessageAloneWhenATestFails() {
        String tools = "{\"tools\":[{\"name\":\"echo\"},{\"name\":\"search\"}]}";
        String patch = "{type: mutate, patch: [{op: test, path: /result/tools/1/name, value: add},"
                + " {op: remove, path: /result/tools/1}]}";
        try (ChainHarness h = harness("{kind: response}", patch)) {
            h.fromServer(Msg.result(1, tools));
            assertThat(h.toClient()).containsExactly(Msg.result(1, tools));
            assertThat(h.events).isEmpty(); // nothing to do is no injection (see NothingToDoTest)
        }
    }

    @Test
    void mutateRenamesAndRetypesFields() throws IOException {
        String patch = "{type: mutate, patch: [{op: move, from: /result/content, path: /result/contents},"
                + " {op: replace, path: /result/isError, value: 'no'}, {op: copy, from: /id, path: /result/echoedId},"
                + " {op: add, path: /result/extra/-, value: 1}]}";
        try (ChainHarness h = harness("{kind: response}", patch)) {
            h.fromServer(Msg.result(1, "{\"content\":[],\"isError\":false,\"extra\":[0]}"));
            JsonNode result = json(h.toClient().get(0)).get("result");
            assertThat(result.has("content")).isFalse();
            assertThat(result.get("contents").isArray()).isTrue();
            assertThat(result.get("isError").asText()).isEqualTo("no");
            assertThat(result.get("echoedId").asInt()).isEqualTo(1);
            assertThat(result.get("extra").toString()).isEqualTo("[0,1]");
        }
    }

    @Test
    void idMismatchGivesTheResponseAnotherId() {
        try (ChainHarness h = harness("{kind: response}", "{type: id_mismatch}")) {
            h.fromServer(Msg.result(7, "{}"));
            h.fromServer(Msg.result("abc", "{}"));
            assertThat(h.toClient()).containsExactly(Msg.result(1000007, "{}"), Msg.result("abc-mismatch", "{}"));
            assertThat(h.events.get(0).detail()).isEqualTo("id 7 -> 1000007");
        }
        try (ChainHarness h = harness("{kind: response}", "{type: id_mismatch, id: unknown-1}")) {
            h.fromServer("{\"jsonrpc\":\"2.0\", \"id\" : 7 , \"result\":{}}");
            assertThat(h.toClient()).containsExactly("{\"jsonrpc\":\"2.0\", \"id\" : \"unknown-1\" , \"result\":{}}");
        }
    }

    @Test
    void faultsThatCannotActOnAMessageLetItPass() {
        try (ChainHarness h = harness("{}", "{type: id_mismatch}")) {
            h.fromClient(Msg.request(1, "ping"));             // a request has no response id to change
            h.fromClient(Msg.notification("notifications/x"));
            assertThat(h.toServer()).hasSize(2);
            assertThat(h.events).isEmpty();
        }
    }
}
