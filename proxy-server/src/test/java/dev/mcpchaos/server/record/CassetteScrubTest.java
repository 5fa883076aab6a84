package dev.mcpchaos.server.record;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Secrets recognised after the lines that hold them were written: the recorder's last pass over a
 * cassette ({@link CassetteScrub}), and the import's first pass over a transcript.
 */
class CassetteScrubTest {

    @TempDir
    Path dir;

    @Test
    void aSecretIsReplacedInStringsOnlyAsTheWriterEscapedItAndNeverInANumberOrAPlaceholder() throws IOException {
        Path file = dir.resolve("c.ndjson");
        String before = "{\"type\":\"message\",\"seq\":12345678,\"message\":{\"id\":12345678,\"text\":\"a 12345678 b\","
                + "\"k\":\"<redacted:12345678>\",\"q\":\"say \\\"ab\\\"cd3fgh\\\" twice: ab\\\"cd3fgh\"}}\n";
        Files.writeString(file, before);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        int replaced = CassetteScrub.scrub(file, List.of("12345678", "ab\"cd3fgh"),
                secret -> secret.equals("12345678") ? "<redacted:2>" : "<redacted:3>");
        assertThat(replaced).isEqualTo(3);
        assertThat(Files.readString(file)).isEqualTo("{\"type\":\"message\",\"seq\":12345678,\"message\":{"
                + "\"id\":12345678,\"text\":\"a <redacted:2> b\",\"k\":\"<redacted:12345678>\","
                + "\"q\":\"say \\\"<redacted:3>\\\" twice: <redacted:3>\"}}\n");
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(file); // no temporary file left
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r-----");
    }

    @Test
    void aCassetteWithoutTheSecretIsLeftAsItWas() throws IOException {
        Path file = dir.resolve("c.ndjson");
        String text = "{\"type\":\"message\",\"seq\":0,\"message\":{\"text\":\"nothing here\"}}\n";
        Files.writeString(file, text);
        assertThat(CassetteScrub.scrub(file, List.of("Zq8c0ffee42"), secret -> {
            throw new AssertionError("no placeholder is needed: " + secret);
        })).isZero();
        assertThat(Files.readString(file)).isEqualTo(text);
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(file);
        }
    }

    @Test
    void aCassetteThatIsNoRegularFileIsRefusedAsItIs() {
        assertThatThrownBy(() -> CassetteScrub.scrub(Path.of("/dev/null"), List.of("Zq8c0ffee42"), s -> "<redacted:1>"))
                .isInstanceOf(IOException.class).hasMessage("not a regular file, so it cannot be rewritten");
    }

    @Test
    void anImportRedactsASecretInTheLinesBeforeTheOneThatGivesItAway() throws IOException {
        String key = "Zq8c0ffee-4242";
        String transcript = "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"message\":\"remember " + key + "\"}}}\n"
                + "< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"remember " + key
                + "\"}]}}\n"
                + "> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"login\","
                + "\"arguments\":{\"password\":\"" + key + "\"}}}\n";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TranscriptImport.Result result = TranscriptImport.convert(new StringReader(transcript), "t.log", out,
                Recording.toFile(dir.resolve("unused")), Instant.EPOCH);
        String cassette = out.toString(StandardCharsets.UTF_8);
        assertThat(cassette).doesNotContain(key).contains("remember <redacted:1>", "\"password\":\"<redacted:1>\"");
        assertThat(result.secrets()).isEqualTo(1);
    }
}
