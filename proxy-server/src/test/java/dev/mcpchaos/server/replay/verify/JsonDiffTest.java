package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.mcpchaos.server.record.RedactPath;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class JsonDiffTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static JsonNode json(String text) throws Exception {
        return JSON.readTree(text);
    }

    private static List<String> diff(List<String> ignore, String recorded, String live) throws Exception {
        return new JsonDiff(ignore.stream().map(RedactPath::parse).toList()).diff(json(recorded), json(live))
                .stream().map(Object::toString).toList();
    }

    @Test
    void equalMessagesHaveNoDifferenceAndNumbersCompareByValue() throws Exception {
        assertThat(diff(List.of(), "{\"id\":1,\"result\":{\"a\":[1,2.0]}}", "{\"result\":{\"a\":[1.0,2]},\"id\":1}"))
                .isEmpty();
    }

    @Test
    void addedRemovedAndChangedPathsAreNamedInDocumentOrder() throws Exception {
        assertThat(diff(List.of(), "{\"result\":{\"a\":1,\"b\":[\"x\",\"y\"],\"c\":true}}",
                "{\"result\":{\"a\":2,\"b\":[\"x\"],\"d/e\":null,\"c\":true}}"))
                .containsExactly("~/result/a", "-/result/b/1", "+/result/d~1e");
    }

    @Test
    void ignoredPathsByPointerAndGlobAreNotCompared() throws Exception {
        String recorded = "{\"result\":{\"serverInfo\":{\"version\":\"1\"},\"items\":[{\"at\":1,\"v\":1},{\"at\":2,\"v\":2}]}}";
        String live = "{\"result\":{\"serverInfo\":{\"version\":\"2\"},\"items\":[{\"at\":5,\"v\":1},{\"at\":6,\"v\":3}]}}";
        assertThat(diff(List.of(), recorded, live)).containsExactly("~/result/serverInfo/version",
                "~/result/items/0/at", "~/result/items/1/at", "~/result/items/1/v");
        assertThat(diff(List.of("/result/serverInfo/version", "result.items.*.at"), recorded, live))
                .containsExactly("~/result/items/1/v");
    }

    @Test
    void aRedactionPlaceholderMatchesAnyLiveValueButNotAMissingOne() throws Exception {
        assertThat(diff(List.of(), "{\"t\":\"Bearer <redacted:3>\",\"u\":\"<redacted:1>\"}",
                "{\"t\":\"Bearer abc\",\"u\":{\"deep\":1}}")).isEmpty();
        assertThat(diff(List.of(), "{\"t\":\"<redacted:1>\"}", "{}")).containsExactly("-/t");
    }

    @Test
    void aMissingCassetteOrServerIsExitTwo(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assertThat(new VerifyCli(List.of(dir.resolve("none.ndjson"), Path.of("x")), List.of(), null).run())
                .isEqualTo(2);
        Path cassette = dir.resolve("c.ndjson");
        Files.writeString(cassette, "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
                + "\"transport\":\"stdio\",\"recordedAt\":\"2026-01-01T00:00:00Z\",\"recorder\":\"t\"}\n"
                + "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\","
                + "\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}}\n");
        assertThat(new VerifyCli(List.of(cassette, dir.resolve("no-such-server")), List.of(), null).run())
                .isEqualTo(2);
        assertThat(new VerifyCli(List.of(cassette), List.of(), null).run()).isEqualTo(2);
        assertThat(new VerifyCli(List.of(cassette, Path.of("true")), List.of("a..b"), null).run()).isEqualTo(2);
    }
}
