package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedactorTest {

    private static final String TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

    private static JsonNode json(String text) throws IOException {
        return Cassette.JSON.readTree(text);
    }

    @Test
    void theSameSecretGetsTheSamePlaceholderEverywhereAndAnotherOneAnother() throws IOException {
        Redactor redactor = new Redactor(Set.of(), List.of(), List.of());
        List<Map.Entry<String, String>> headers = redactor.headers(List.of(Map.entry("Authorization", "Bearer " + TOKEN),
                Map.entry("Cookie", "sid=42"), Map.entry("Set-Cookie", "sid=42"), Map.entry("Accept", "*/*")));
        assertThat(headers).containsExactly(Map.entry("Authorization", "Bearer <redacted:1>"),
                Map.entry("Cookie", "<redacted:2>"), Map.entry("Set-Cookie", "<redacted:2>"), Map.entry("Accept", "*/*"));
        JsonNode message = redactor.message(json("{\"params\":{\"arguments\":{\"text\":\"use " + TOKEN
                + " now\",\"api_key\":\"k-1\",\"pin\":1234,\"access_token\":5678}}}"));
        assertThat(message.toString()).isEqualTo("{\"params\":{\"arguments\":{\"text\":\"use <redacted:1> now\","
                + "\"api_key\":\"<redacted:3>\",\"pin\":1234,\"access_token\":\"<redacted:4>\"}}}");
        assertThat(redactor.secretsSeen()).isEqualTo(4);
    }

    @Test
    void pathsEnvironmentValuesAndConfiguredHeadersAreRedactedWhateverTheyLookLike() throws IOException {
        Redactor redactor = new Redactor(Set.of("X-Tenant"), List.of(RedactPath.parse("/params/arguments/note"),
                RedactPath.parse("result.**.secret"), RedactPath.parse("params.items.*.v")),
                List.of("plain-env-value", "plain"));
        assertThat(redactor.headers(List.of(Map.entry("x-tenant", "acme")))).containsExactly(
                Map.entry("x-tenant", "<redacted:1>"));
        JsonNode message = redactor.message(json("{\"params\":{\"arguments\":{\"note\":\"hello\",\"other\":\"hello\"},"
                + "\"items\":[{\"v\":1},{\"v\":{\"deep\":true}}],\"say\":\"it is plain-env-value, plain\"},"
                + "\"result\":{\"a\":[{\"secret\":\"s\"}],\"secret\":\"t\"}}"));
        assertThat(message.toString()).isEqualTo("{\"params\":{\"arguments\":{\"note\":\"<redacted:2>\","
                + "\"other\":\"hello\"},\"items\":[{\"v\":\"<redacted:3>\"},{\"v\":\"<redacted:4>\"}],"
                + "\"say\":\"it is <redacted:5>, <redacted:6>\"},"
                + "\"result\":{\"a\":[{\"secret\":\"<redacted:7>\"}],\"secret\":\"<redacted:8>\"}}");
        // Text that is not JSON: the same placeholders.
        assertThat(redactor.text("broken {\"x\": \"plain-env-value")).isEqualTo("broken {\"x\": \"<redacted:5>");
    }

    @Test
    void progressTokensAndOrdinaryTextStay() throws IOException {
        Redactor redactor = new Redactor(Set.of(), List.of(), List.of());
        String text = "{\"params\":{\"_meta\":{\"progressToken\":\"p-1\"},\"name\":\"echo\",\"arguments\":"
                + "{\"message\":\"Basic usage of the token bucket\"}}}";
        assertThat(redactor.message(json(text)).toString()).isEqualTo(text);
        assertThat(redactor.secretsSeen()).isZero();
    }

    @Test
    void aPathThatIsNeitherAPointerNorAGlobIsNamed() {
        assertThatThrownBy(() -> RedactPath.parse("params..x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("redact path: 'params..x' (expected: a JSON pointer such as /params/arguments/token, "
                        + "or a dotted glob such as params.arguments.* or result.**.token)");
        assertThatThrownBy(() -> RedactPath.parse("/")).hasMessageStartingWith("redact path: '/'");
        assertThat(RedactPath.parse("/a~1b/*").matches(List.of("a/b", "*"))).isTrue();
        assertThat(RedactPath.parse("/a~1b/*").matches(List.of("a/b", "c"))).as("a pointer's * is a name").isFalse();
        assertThat(RedactPath.parse("**.token").matches(List.of("token"))).isTrue();
        assertThat(RedactPath.parse("a.*").matches(List.of("a"))).isFalse();
    }
}
