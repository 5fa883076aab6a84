package dev.mcpchaos.rules;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FaultEvent#argumentsSha256()}: a fault on a request or notification names its
 * {@code params.arguments} by the SHA-256 of their bytes as sent; other messages have none.
 */
class FaultEventArgumentsTest {

    private static final String DROP_ALL = "rules:\n"
            + "  - name: everything\n"
            + "    match: {}\n"
            + "    fault: {type: drop}\n";

    @Test
    void requestsAndNotificationsCarryTheDigestOfTheirArguments() {
        String args = "{\"query\": \"chaos\", \"limit\": 5}";
        try (ChainHarness h = ChainHarness.of(DROP_ALL, 1)) {
            h.fromClient(call(1, args));
            h.fromClient(call(2, args)); // the same arguments: the same digest, whatever the id
            h.fromClient(call(3, "{\"query\":\"chaos\",\"limit\":5}")); // the same value, other bytes
            h.fromClient("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/custom\",\"params\":{\"arguments\":[1,2]}}");

            assertThat(h.events).extracting(FaultEvent::argumentsSha256).containsExactly(
                    sha256(args), sha256(args), sha256("{\"query\":\"chaos\",\"limit\":5}"), sha256("[1,2]"));
        }
    }

    @Test
    void messagesWithoutArgumentsHaveNoDigest() {
        try (ChainHarness h = ChainHarness.of(DROP_ALL, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(Msg.notification("notifications/initialized"));
            // A response never has one, even when its result holds an "arguments" member.
            h.fromServer(Msg.result(1, "{\"params\":{\"arguments\":{\"a\":1}},\"arguments\":{}}"));
            h.fromServer(Msg.error(2, -32000, "down"));
            h.fromClient("[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}]");
            h.fromClient("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"arguments\":{");

            assertThat(h.events).hasSize(6);
            assertThat(h.events).extracting(FaultEvent::argumentsSha256).containsOnlyNulls();
        }
    }

    private static String call(int id, String args) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                + "\"arguments\":" + args + "}}";
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
