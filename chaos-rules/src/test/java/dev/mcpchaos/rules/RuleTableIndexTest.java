package dev.mcpchaos.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The rule table looks only at the rules that name a message's method exactly, or name no method
 * exactly; that must never change which rule picks a message: the first in file order, as when
 * every rule is asked in turn.
 */
class RuleTableIndexTest {

    private static final String RULES = "rules:\n"
            + "  - name: tools-glob\n    match: {method: 'tools/*', tool: 'search*'}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: call-exact\n    match: {method: tools/call, direction: client_to_server}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: any-response\n    match: {kind: response}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: ping\n    match: {method: ping}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: call-to-client\n    match: {method: tools/call, direction: server_to_client}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: list-suffix\n    match: {method: '*/list'}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: notifications\n    match: {kind: notification}\n    fault: {type: latency, latency: 1s}\n"
            + "  - name: ping-again\n    match: {method: ping, direction: server_to_client}\n    fault: {type: latency, latency: 1s}\n";

    @Test
    void theMethodIndexPicksWhatAskingEveryRuleInOrderPicks() {
        RuleSet rules = RuleSet.parse(RULES, "mixed.yaml");
        RuleEngine engine = RuleEngine.builder(rules).seed(1).build();
        RuleEngine.RuleTable table = RuleEngine.RuleTable.of(rules, null, true, engine);
        Ticker ticker = Ticker.systemTicker();

        List<String> messages = List.of(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_web\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fetch\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\"}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}");
        List<String> checked = new ArrayList<>();
        int picked = 0;
        for (String json : messages) {
            byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
            Envelope envelope = new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes));
            for (Direction direction : Direction.values()) {
                Frame frame = Frame.original(Unpooled.wrappedBuffer(bytes), bytes.length, envelope, direction, 0);
                // A response is matched by the method and tool of the request it answers, when known.
                for (String method : envelope.method() != null ? Arrays.asList(envelope.method())
                        : Arrays.asList(null, "tools/call", "ping", "tools/list")) {
                    String tool = envelope.toolName() != null ? envelope.toolName()
                            : "tools/call".equals(method) ? "search_docs" : null;
                    for (int from = 0; from <= table.active.length; from++) {
                        int expected = -1;
                        for (int i = from; i < table.active.length; i++) {
                            if (table.rule(i).picks(frame, envelope, method, tool, TransportKind.STDIO, ticker)) {
                                expected = i;
                                break;
                            }
                        }
                        int actual = table.firstMatch(from, TransportKind.STDIO, frame, envelope, method, tool, ticker);
                        assertThat(actual).as("%s %s as %s from rule %d", json, direction, method, from)
                                .isEqualTo(expected);
                        picked += expected >= 0 ? 1 : 0;
                    }
                    checked.add(json + direction + method);
                }
                frame.release();
            }
        }
        assertThat(checked).hasSize(2 * (6 + 4));
        assertThat(picked).as("cases where some rule picks the message").isGreaterThan(50);
    }
}
