package dev.mcpchaos.server.replay;

import dev.mcpchaos.server.record.Cassette;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StdioReplayTest {

    private static final String HEADER = "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
            + "\"transport\":\"stdio\",\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}";

    private static String line(int seq, String dir, String message) {
        return "{\"type\":\"message\",\"seq\":" + seq + ",\"t\":" + seq + ",\"dir\":\"" + dir
                + "\",\"session\":\"stdio\",\"message\":" + message + "}";
    }

    private static final String CASSETTE = String.join("\n", HEADER,
            line(0, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}"),
            line(1, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"v\":\"first\"}}"),
            line(2, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}"),
            line(3, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"v\":\"second\"}}"),
            line(4, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                    + "\"_meta\":{\"progressToken\":\"rec\"}}}"),
            line(5, "s2c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"rec\","
                    + "\"progress\":1}}"),
            line(6, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"v\":\"slow\"}}"),
            line(7, "s2c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}")) + "\n";

    private static List<String> replay(StdioReplay replay, String... lines) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        replay.serve(new ByteArrayInputStream((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8)), out);
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void repeatsComeInRecordedOrderThenTheLastAgainWithTheLiveIdsAndProgressTokens() throws IOException {
        StdioReplay replay = new StdioReplay(List.of(Cassette.read(new StringReader(CASSETTE), "mem")));
        assertThat(replay.recordedRequests()).isEqualTo(3);
        List<String> out = replay(replay,
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{\"name\":\"n\",\"_meta\":{\"x\":1}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                        + "\"_meta\":{\"progressToken\":77}}}");
        assertThat(out).containsExactly(
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"v\":\"first\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{\"v\":\"second\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":{\"v\":\"second\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":77,\"progress\":1}}",
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"v\":\"slow\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
        assertThat(replay.served()).isEqualTo(4);
        assertThat(replay.unmatched()).isZero();
    }

    @Test
    void aRequestWithNoRecordingGetsMinus32601NamingTheClosestAndIsCounted() throws IOException {
        StdioReplay replay = new StdioReplay(List.of(Cassette.read(new StringReader(CASSETTE), "mem")));
        List<String> out = replay(replay,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"m\"}}",
                "not json",
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}");
        assertThat(out).hasSize(3);
        assertThat(out.get(0)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32601,\"message\":"
                + "\"no recording for tools/call {\\\"name\\\":\\\"m\\\"} (closest recorded: tools/call "
                + "{\\\"name\\\":\\\"n\\\"})\"}}");
        assertThat(out.get(1)).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,");
        assertThat(out.get(2)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"v\":\"first\"}}");
        assertThat(replay.unmatched()).isEqualTo(1);
        assertThat(replay.served()).isEqualTo(1);
    }
}
