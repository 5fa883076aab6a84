package dev.mcpchaos.server.traffic;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.server.redact.SecretRedactor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TrafficLog#describe}: the part of a message it shows is redacted before it is cut, so
 * wherever the cut falls, what is shown is the start of the redacted message and never part of a
 * secret.
 */
class TrafficLogTest {

    private static final String SECRET = "sk-live-abcdef123456";

    @Test
    void theStartShownIsAlwaysAPrefixOfTheRedactedMessage() {
        String message = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
                + "\"arguments\":{\"api_key\":\"" + SECRET + "\",\"note\":\"Bearer s3cr3t-token-value é\"}}}";
        String redacted = SecretRedactor.redact(message);
        assertThat(redacted).doesNotContain(SECRET).doesNotContain("s3cr3t");
        for (int maxChars = 1; maxChars <= message.length() + 2; maxChars++) {
            String line = describe(message, maxChars);
            String shown = line.substring(line.indexOf(" B) ") + 4);
            String expected = maxChars < redacted.length() ? redacted.substring(0, maxChars) + "…" : redacted;
            assertThat(shown).as("maxChars %d", maxChars).isEqualTo(expected);
        }
    }

    @Test
    void aSecretPastTheLookaheadIsNeitherShownNorNeeded() {
        // The secret starts beyond what is looked at: the cut already hides it.
        String message = "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"pad\":\""
                + "x".repeat(TrafficLog.LOOKAHEAD + 100) + "\",\"token\":\"" + SECRET + "\"}}";
        assertThat(describe(message, 20)).endsWith(" {\"jsonrpc\":\"2.0\",\"me…").doesNotContain(SECRET);
        // A secret-named value that starts in the part shown and runs past the lookahead is
        // redacted to the end of what is looked at.
        String longValue = "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"token\":\"" + "s".repeat(5000) + "\"}}";
        assertThat(describe(longValue, 60)).contains("\"token\":\"[redacted]\"").doesNotContain("ss");
    }

    @Test
    void summaryAndParserReasonCarryNoSecret() {
        String line = describe("Bearer " + SECRET + " is not JSON", 0);
        assertThat(line).startsWith("c->s #0 malformed").doesNotContain(SECRET).doesNotContain("sk-live");
        assertThat(describe("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 200))
                .isEqualTo("c->s #0 request id=1 ping (40 B) {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    }

    private static String describe(String message, int maxChars) {
        ByteBuf content = Unpooled.copiedBuffer(message, StandardCharsets.UTF_8);
        Frame frame = Frame.synthesized(content, new EnvelopeSniffer().sniff(content), Direction.CLIENT_TO_SERVER, 0);
        try {
            return TrafficLog.describe(frame, maxChars);
        } finally {
            frame.release();
        }
    }
}
