package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedactorTest {

    private static final String TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

    private static JsonNode json(String text) throws IOException {
        return dev.mcpchaos.server.internal.JsonTrees.read(text);
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
    void aKnownValueUnderASecretLookingNameKeepsItsPlaceholderAndAnySchemeStaysOutOfIt() throws IOException {
        // API_TOKEN's value, replaced as a known value first, is then the value of a member named like
        // a secret: it must keep its placeholder, not get a second one (issue #34).
        Redactor redactor = new Redactor(Set.of(), List.of(), List.of("v4lue-Of-the-token"));
        assertThat(redactor.headers(List.of(Map.entry("Authorization", "Bearer v4lue-Of-the-token"))))
                .containsExactly(Map.entry("Authorization", "Bearer <redacted:1>"));
        JsonNode message = redactor.message(json("{\"params\":{\"arguments\":{\"api_token\":\"v4lue-Of-the-token\","
                + "\"headers\":{\"authorization\":\"Bearer v4lue-Of-the-token\"}}},\"result\":{\"content\":[{\"text\":"
                + "\"{\\n  \\\"API_TOKEN\\\": \\\"v4lue-Of-the-token\\\",\\n  \\\"PWD\\\": \\\"/srv/app\\\"\\n}\"}]}}"));
        assertThat(message.toString()).isEqualTo("{\"params\":{\"arguments\":{\"api_token\":\"<redacted:1>\","
                + "\"headers\":{\"authorization\":\"Bearer <redacted:1>\"}}},\"result\":{\"content\":[{\"text\":"
                + "\"{\\n  \\\"API_TOKEN\\\": \\\"<redacted:1>\\\",\\n  \\\"PWD\\\": \\\"/srv/app\\\"\\n}\"}]}}");
        assertThat(redactor.secretsSeen()).isEqualTo(1);
    }

    @Test
    void aKnownValueAsShortAsADigitLeavesThePlaceholdersAlone() throws IOException {
        Redactor redactor = new Redactor(Set.of(), List.of(), List.of("Zq8abcdefgh", "1"));
        assertThat(redactor.message(json("{\"a\":\"Zq8abcdefgh then 1\"}")).toString())
                .isEqualTo("{\"a\":\"<redacted:1> then <redacted:2>\"}");
    }

    @Test
    void aDistinctiveSecretRecognisedOnceIsRedactedWhereverItStandsAfterwardsInEveryCassetteOfTheRecording()
            throws IOException {
        KnownSecrets known = new KnownSecrets(List.of());
        Redactor first = new Redactor(Set.of(), List.of(), known, 0);
        // In its own message, before the member that gives it away, too.
        assertThat(first.message(json("{\"note\":\"key Zq8-c0ffee-42\",\"api_key\":\"Zq8-c0ffee-42\"}")).toString())
                .isEqualTo("{\"note\":\"key <redacted:1>\",\"api_key\":\"<redacted:1>\"}");
        assertThat(first.message(json("{\"text\":\"Echo: Zq8-c0ffee-42!\"}")).toString())
                .isEqualTo("{\"text\":\"Echo: <redacted:1>!\"}");
        assertThat(first.text("raw Zq8-c0ffee-42")).isEqualTo("raw <redacted:1>");
        // Another session's cassette of the same recording: its own numbering, the same secret gone.
        Redactor second = new Redactor(Set.of(), List.of(), known, 0);
        assertThat(second.message(json("{\"id\":1,\"x\":\"-> Zq8-c0ffee-42\"}")).toString())
                .isEqualTo("{\"id\":1,\"x\":\"-> <redacted:1>\"}");
        // A bearer token in a header is one too.
        assertThat(second.headers(List.of(Map.entry("Authorization", "Bearer eyJhbGciOi.x9Yz"))))
                .containsExactly(Map.entry("Authorization", "Bearer <redacted:2>"));
        assertThat(second.message(json("{\"t\":\"token eyJhbGciOi.x9Yz\"}")).toString())
                .isEqualTo("{\"t\":\"token <redacted:2>\"}");
    }

    @Test
    void aSecretThatLooksLikeAWordIsRedactedOnlyWhereItIsRecognisedAndAnEmptyOneNowhere() throws IOException {
        Redactor redactor = new Redactor(Set.of(), List.of(), List.of());
        assertThat(redactor.message(json("{\"password\":\"undefined\",\"token\":\"\"}")).toString())
                .isEqualTo("{\"password\":\"<redacted:1>\",\"token\":\"\"}");
        // The twin: searching for "undefined" everywhere would blank the word out of every message.
        assertThat(redactor.message(json("{\"text\":\"x is undefined\"}")).toString())
                .isEqualTo("{\"text\":\"x is undefined\"}");
        assertThat(redactor.secretsSeen()).isEqualTo(1);
    }

    @Test
    void redactEnvLooksInTheServersVariablesAndInTheEnvironmentAndRedactsBothValues() {
        Recording recording = Recording.toFile(Path.of("unused")).redactEnv("API_TOKEN").redactEnv("ONLY_HERE")
                .redactEnv("NOWHERE").environment(Map.of("API_TOKEN", "proxy-value", "ONLY_HERE", "here"));
        Map<String, String> server = Map.of("API_TOKEN", "server-value", "NOWHERE", "");
        assertThat(recording.secretValues(server)).containsExactly("server-value", "proxy-value", "here");
        assertThat(recording.unsetVariables(server)).containsExactly("NOWHERE");
        assertThat(recording.unsetVariables(Map.of("NOWHERE", "set"))).isEmpty();
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
