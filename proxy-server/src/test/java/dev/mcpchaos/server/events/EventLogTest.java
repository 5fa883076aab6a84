package dev.mcpchaos.server.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The event log through a real stdio proxy: one line per injected fault and notable event, in
 * order, with the fields that name the message, and nothing of the message's content.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventLogTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void faultsSessionsParseErrorsAndLimitsAreLoggedWithoutContent() throws Exception {
        Pipe clientPipe = Pipe.open();
        OutputStream client = Channels.newOutputStream(clientPipe.sink());
        InputStream clientInput = Channels.newInputStream(clientPipe.source());
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        ByteArrayOutputStream events = new ByteArrayOutputStream();
        RuleSet rules = RuleSet.parse("rules:\n"
                + "  - name: search-down\n"
                + "    match: {method: tools/call, tool: search, kind: request}\n"
                + "    fault: {type: error, code: -32050, message: down}\n", "events.yaml");
        // The "server" is cat: whatever reaches it comes back, so the client sees what got through.
        McpChaosProxy.Running proxy = McpChaosProxy.stdio(List.of("cat"))
                .clientInput(clientInput)
                .clientOutput(received)
                .maxLineLength(200)
                .rules(rules)
                .seed(1)
                .events(events, true)
                .start();
        String secret = "sk-live-SECRET-do-not-log";
        client.write(("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                + "\"arguments\":{\"token\":\"" + secret + "\"}}}\n").getBytes(StandardCharsets.UTF_8));
        client.write(("Bearer " + secret + " is not JSON\n").getBytes(StandardCharsets.UTF_8));
        client.write(("{\"jsonrpc\":\"2.0\",\"method\":\"big\",\"params\":{\"pad\":\"" + "x".repeat(300) + "\"}}\n")
                .getBytes(StandardCharsets.UTF_8));
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        proxy.close();

        String text = events.toString(StandardCharsets.UTF_8);
        assertThat(text).doesNotContain(secret).doesNotContain("Bearer");
        List<JsonNode> lines = new ArrayList<>();
        for (String line : text.split("\n")) {
            lines.add(JSON.readTree(line));
        }
        // The limit is noticed while framing, before the event loop sees earlier lines: order
        // between kinds may vary, so compare as a multiset. cat echoes the non-JSON line back, so
        // there is one parse error per direction.
        assertThat(lines.get(0).path("event").asText()).isEqualTo("session_started");
        assertThat(lines.get(lines.size() - 1).path("event").asText()).isEqualTo("session_ended");
        assertThat(lines).extracting(l -> l.path("event").asText()).containsExactlyInAnyOrder(
                "session_started", "fault", "parse_error", "parse_error", "limit_breach", "session_ended");
        assertThat(lines).extracting(l -> l.path("seq").asLong()).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        JsonNode fault = only(lines, "fault");
        assertThat(fault.path("rule").asText()).isEqualTo("search-down");
        assertThat(fault.path("fault").asText()).isEqualTo("error");
        assertThat(fault.path("direction").asText()).isEqualTo("client_to_server");
        assertThat(fault.path("kind").asText()).isEqualTo("request");
        assertThat(fault.path("id").asLong()).isEqualTo(4);
        assertThat(fault.path("method").asText()).isEqualTo("tools/call");
        assertThat(fault.path("tool").asText()).isEqualTo("search");
        assertThat(fault.path("session").asText()).isEqualTo("stdio");
        // The arguments are named by the digest of their bytes as sent, never written.
        assertThat(fault.path("arguments_sha256").asText()).isEqualTo(sha256("{\"token\":\"" + secret + "\"}"));
        assertThat(lines).filteredOn(l -> l.path("event").asText().equals("parse_error"))
                .extracting(l -> l.path("direction").asText())
                .containsExactlyInAnyOrder("client_to_server", "server_to_client");
        JsonNode limit = only(lines, "limit_breach");
        assertThat(limit.path("limit").asText()).isEqualTo("line_length");
        assertThat(limit.path("size").asLong()).isGreaterThan(300);
        assertThat(lines).allSatisfy(l -> assertThat(l.path("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z"));
        // What cat echoed back: the error answered by the proxy went to the client, the request never reached cat.
        assertThat(received.toString(StandardCharsets.UTF_8)).contains("\"id\":4").contains("-32050")
                .doesNotContain("\"method\":\"tools/call\"");
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static JsonNode only(List<JsonNode> lines, String event) {
        List<JsonNode> matching = new ArrayList<>();
        for (JsonNode line : lines) {
            if (line.path("event").asText().equals(event)) {
                matching.add(line);
            }
        }
        assertThat(matching).as(event).hasSize(1);
        return matching.get(0);
    }

    @Test
    void parserReasonsLoseTheQuotedPiecesOfTheMessage() {
        assertThat(EventLog.redact("Unrecognized token 'sk-abc': was expecting (JSON String or token 'null')"))
                .isEqualTo("Unrecognized token '…': was expecting (JSON String or token '…')");
    }

    /**
     * The event log only observes (it counts nothing and changes nothing): without that promise a
     * transport passes an SSE stream's every event through the chain when nothing else acts on
     * them, as it did after #35 (the relay with metrics on at 0.4 of the unframed one).
     */
    @Test
    void onlyObservesOnEveryTransportAndDirection() {
        EventLog events = new EventLog(null, false, null);
        for (TransportKind transport : TransportKind.values()) {
            for (Direction direction : Direction.values()) {
                assertThat(events.onlyObserves(transport, direction)).as(transport + " " + direction).isTrue();
            }
        }
    }
}
