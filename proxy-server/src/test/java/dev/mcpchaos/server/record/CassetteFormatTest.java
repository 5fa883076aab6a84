package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CassetteFormatTest {

    private static JsonNode json(String text) throws IOException {
        return dev.mcpchaos.server.internal.JsonTrees.read(text);
    }

    private static CassetteHeader header() throws IOException {
        return new CassetteHeader(1, "http", "2026-12-02T05:00:00Z", "mcp-chaos test", "2025-06-18",
                json("{\"name\":\"everything\",\"version\":\"1.0\"}"), json("{\"tools\":{}}"),
                json("{\"name\":\"client\",\"version\":\"2\"}"), json("{}"));
    }

    private static String write(CassetteHeader header, List<CassetteEntry> entries) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (CassetteWriter writer = new CassetteWriter(bytes)) {
            writer.writeHeader(header);
            for (CassetteEntry entry : entries) {
                writer.writeEntry(entry);
            }
            writer.writeGap(2, "the recorder's queue was full");
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static List<CassetteEntry> entries() throws IOException {
        HttpExchange post = new HttpExchange(1, "POST", "/mcp", 0, null, false, null, null,
                List.of(Map.entry("content-type", "application/json"), Map.entry("accept", "application/json, text/event-stream")),
                null);
        HttpExchange sse = new HttpExchange(1, "POST", "/mcp", 200, "text/event-stream", true, "ev-7", "message",
                null, List.of(Map.entry("set-cookie", "<redacted:1>"), Map.entry("set-cookie", "b=2")));
        return List.of(
                new CassetteEntry(0, 0, Direction.CLIENT_TO_SERVER, "s1", post,
                        json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"x\":1.0}}"), null),
                new CassetteEntry(1, 12.3456, Direction.SERVER_TO_CLIENT, "s1", sse,
                        json("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"), null),
                new CassetteEntry(2, 13, Direction.SERVER_TO_CLIENT, "s1", null, null, "{\"jsonrpc\":\"2.0\",\"id\":"));
    }

    @Test
    void everyLineWrittenIsValidAgainstTheSchemaAndKeysComeInAFixedOrder() throws IOException {
        String text = write(header(), entries());
        List<String> lines = text.lines().toList();
        assertThat(lines).hasSize(5);
        for (String line : lines) {
            assertThat(CassetteLineSchema.errors(line)).as(line).isEmpty();
        }
        assertThat(lines.get(0)).startsWith("{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
                + "\"transport\":\"http\",\"recordedAt\":\"2026-12-02T05:00:00Z\"");
        assertThat(lines.get(1)).isEqualTo("{\"type\":\"message\",\"seq\":0,\"t\":0.000,\"dir\":\"c2s\",\"session\":\"s1\","
                + "\"http\":{\"exchange\":1,\"method\":\"POST\",\"uri\":\"/mcp\",\"requestHeaders\":[[\"content-type\","
                + "\"application/json\"],[\"accept\",\"application/json, text/event-stream\"]]},"
                + "\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"x\":1.0}}}");
        assertThat(lines.get(2)).contains("\"t\":12.346,", "\"status\":200,\"contentType\":\"text/event-stream\","
                + "\"sse\":{\"id\":\"ev-7\",\"event\":\"message\"}");
        // Malformed traffic records as a string, not as JSON.
        assertThat(lines.get(3)).endsWith("\"raw\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":\"}");
    }

    @Test
    void theSchemaRefusesLinesThatAreNotCassetteLines() {
        assertThat(CassetteLineSchema.errors("{\"type\":\"message\",\"seq\":0,\"t\":0,\"session\":\"s\",\"message\":{}}"))
                .as("no dir").isNotEmpty();
        assertThat(CassetteLineSchema.errors(
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"s\",\"message\":{},\"raw\":\"x\"}"))
                .as("both message and raw").isNotEmpty();
        assertThat(CassetteLineSchema.errors(
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":2,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T05:00:00Z\",\"recorder\":\"x\"}"))
                .as("another version").isNotEmpty();
        assertThat(CassetteLineSchema.errors(
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"s\",\"message\":{}}"))
                .as("the twin that is valid").isEmpty();
    }

    @Test
    void whatIsWrittenReadsBackTheSame() throws IOException {
        String text = write(header(), entries());
        Cassette cassette = Cassette.read(new StringReader(text), "mem");
        assertThat(cassette.header()).isEqualTo(header());
        assertThat(cassette.entries()).hasSize(3);
        assertThat(cassette.droppedMessages()).isEqualTo(2);
        CassetteEntry first = cassette.entries().get(0);
        assertThat(first.method()).isEqualTo("tools/call");
        assertThat(first.message().toString()).contains("\"x\":1.0");
        CassetteEntry answer = cassette.entries().get(1);
        assertThat(answer.http().sseId()).isEqualTo("ev-7");
        assertThat(answer.http().responseHeaders()).extracting(Map.Entry::getValue).containsExactly("<redacted:1>", "b=2");
        assertThat(cassette.entries().get(2).raw()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":");
        // Written again, each line is the same text.
        List<String> again = write(cassette.header(), cassette.entries()).lines().toList();
        assertThat(again).isEqualTo(text.lines().toList());
    }

    @Test
    void badFilesGetAnErrorNamingTheLineAndWhatWasExpected(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("c.ndjson");
        Files.writeString(file, "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"s\",\"message\":{}}\n");
        assertThatThrownBy(() -> Cassette.read(file)).isInstanceOf(CassetteException.class)
                .hasMessage(file + ":1: type 'message' (expected: the first line to be the header, type 'header')");
        String headerLine = write(header(), List.of()).lines().findFirst().orElseThrow();
        Files.writeString(file, headerLine.replace("\"version\":1", "\"version\":9") + "\n");
        assertThatThrownBy(() -> Cassette.read(file)).hasMessageContaining(":1: version 9 (expected: 1");
        Files.writeString(file, headerLine + "\n{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"up\",\"session\":\"s\","
                + "\"message\":{}}\n");
        assertThatThrownBy(() -> Cassette.read(file)).hasMessage(file + ":2: dir 'up' (expected: c2s or s2c)");
        Files.writeString(file, headerLine + "\nnot json\n");
        assertThatThrownBy(() -> Cassette.read(file)).hasMessageStartingWith(file + ":2: not JSON");
    }
}
