package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CassetteUpdate}: a live answer replaces the recorded one, redacted, the recording's placeholders kept. */
class CassetteUpdateTest {

    private static final String HEADER = "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
            + "\"transport\":\"stdio\",\"recordedAt\":\"2026-12-02T18:55:44.736Z\",\"recorder\":\"mcp-chaos test\"}";
    private static final String REQUEST = "{\"type\":\"message\",\"seq\":0,\"t\":0.000,\"dir\":\"c2s\",\"session\":\"stdio\","
            + "\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"login\","
            + "\"arguments\":{\"password\":\"<redacted:1>\"}}}}";
    private static final String ANSWER = "{\"type\":\"message\",\"seq\":1,\"t\":12.500,\"dir\":\"s2c\",\"session\":\"stdio\","
            + "\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"session\":\"<redacted:2>\",\"text\":\"old\"}}}";
    private static final String OTHER = "{\"type\":\"message\",\"seq\":2,\"t\":20.000,\"dir\":\"s2c\",\"session\":\"stdio\","
            + "\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\"}}}";
    /** A JWT-shaped value: the recorder's redactor takes these out of any string. */
    private static final String JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

    @TempDir
    Path dir;

    @Test
    void theLiveAnswerReplacesTheRecordedOneRedactedWithTheRecordedPlaceholdersAndIdKept() throws Exception {
        Path file = dir.resolve("c.ndjson");
        Files.writeString(file, String.join("\n", HEADER, REQUEST, ANSWER, OTHER) + "\n", StandardCharsets.UTF_8);
        Cassette original = Cassette.read(file);
        JsonNode live = dev.mcpchaos.server.internal.JsonTrees.read("{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"session\":\"live-session-secret\","
                + "\"text\":\"new\",\"token\":\"" + JWT + "\"}}");

        int replaced = CassetteUpdate.write(original, Map.of(1L, live), file);

        assertThat(replaced).isEqualTo(1);
        Cassette updated = Cassette.read(file);
        String text = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(text).doesNotContain("live-session-secret").doesNotContain(JWT);
        JsonNode answer = updated.entries().get(1).message();
        assertThat(answer.get("id").asInt()).as("the recorded id").isEqualTo(7);
        assertThat(answer.at("/result/text").asText()).isEqualTo("new");
        assertThat(answer.at("/result/session").asText()).as("the recording's placeholder stays").isEqualTo("<redacted:2>");
        assertThat(answer.at("/result/token").asText()).as("a new secret, numbered after the cassette's")
                .isEqualTo("<redacted:3>");
        // The rest as it was: the request, the notification, timings and the header.
        assertThat(updated.entries().get(0).message()).isEqualTo(original.entries().get(0).message());
        assertThat(updated.entries().get(2).message()).isEqualTo(original.entries().get(2).message());
        assertThat(updated.entries().get(1).timeMillis()).isEqualTo(12.5);
        assertThat(updated.header()).isEqualTo(original.header());
    }

    @Test
    void aCassetteWithGapsIsRefusedAndLeftAsItWas() throws Exception {
        String gap = "{\"type\":\"gap\",\"dropped\":3,\"reason\":\"writer behind\"}";
        Cassette withGap = Cassette.read(new StringReader(String.join("\n", HEADER, REQUEST, gap, ANSWER) + "\n"), "gap");
        Path file = dir.resolve("gap.ndjson");
        Files.writeString(file, "unchanged", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CassetteUpdate.write(withGap, Map.of(), file))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the cassette has gaps (3 messages");
        assertThat(Files.readString(file)).isEqualTo("unchanged");
    }
}
