package dev.mcpchaos.server.redact;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link SecretRedactor}: secret-named values and token-like values go; the rest stays as it was. */
class SecretRedactorTest {

    private static final String R = SecretRedactor.REDACTED;

    // ---------------------------------------------------------------- secret-named keys

    @Test
    void secretNamedJsonStringsAndNumbersAreRedacted() {
        assertThat(SecretRedactor.redact("{\"name\":\"x\",\"arguments\":{\"api_key\":\"k1\",\"Password\" : 1234,"
                + "\"accessToken\":\"a\\\"b\",\"limit\":5}}"))
                .isEqualTo("{\"name\":\"x\",\"arguments\":{\"api_key\":\"" + R + "\",\"Password\" : " + R + ","
                        + "\"accessToken\":\"" + R + "\",\"limit\":5}}");
        assertThat(SecretRedactor.redact("{\"headers\":{\"Authorization\":\"Bearer abc\",\"Cookie\":\"sid=1; b=2\","
                + "\"X-Api-Key\":\"k\",\"Content-Type\":\"application/json\"}}"))
                .isEqualTo("{\"headers\":{\"Authorization\":\"Bearer " + R + "\",\"Cookie\":\"" + R + "\","
                        + "\"X-Api-Key\":\"" + R + "\",\"Content-Type\":\"application/json\"}}");
    }

    @Test
    void secretNames() {
        for (String name : new String[] {"authorization", "Proxy-Authorization", "cookie", "Set-Cookie", "token",
            "access_token", "refresh_token", "id_token", "session-token", "api_key", "apikey", "api-key", "apiKey",
            "x-api-key", "secret", "client_secret", "clientSecret", "password", "new_password", "passwd", "pwd", "PWD",
            "db_pwd", "MYSQL_PWD", "user-pwd", "userPwd",
            "private_key", "privateKey", "aws_secret_access_key", "secret_key", "passphrase", "credentials", "auth"}) {
            assertThat(SecretRedactor.isSecretName(name)).as(name).isTrue();
        }
        for (String name : new String[] {"progressToken", "max_tokens", "tokens", "key", "sort_key", "name",
            "author", "tokenizer", "token_type", "cursor", "nextCursor", "description", "OLDPWD", "PWD_DIR", "cwd",
            "dbpwd"}) {
            assertThat(SecretRedactor.isSecretName(name)).as(name).isFalse();
        }
    }

    @Test
    void pwdIsTheWorkingDirectoryWhenItsValueIsAPathAndAPasswordOtherwise() {
        // The shell's PWD and OLDPWD, as an environment dump shows them: paths, no secrets.
        String env = "{\"PWD\": \"/home/me/app\", \"OLDPWD\": \"/home/me\", \"pwd\": \"C:\\\\work\", "
                + "\"cwd\": \"~/app\"}";
        assertThat(SecretRedactor.redact(env)).isEqualTo(env);
        assertThat(SecretRedactor.redact("PWD=/home/me/app\nOLDPWD=/home/me\nPWD_DIR=x"))
                .isEqualTo("PWD=/home/me/app\nOLDPWD=/home/me\nPWD_DIR=x");
        assertThat(SecretRedactor.redact("{\"out\":\"{\\\"PWD\\\":\\\"/srv\\\"}\"}"))
                .isEqualTo("{\"out\":\"{\\\"PWD\\\":\\\"/srv\\\"}\"}");
        // The twins: pwd as short for password, whose value is no path.
        assertThat(SecretRedactor.redact("Server=db;Uid=sa;PWD=Xy7secret;")).isEqualTo("Server=db;Uid=sa;PWD=" + R + ";");
        assertThat(SecretRedactor.redact("{\"user\":\"sa\",\"pwd\":\"hunter2\",\"MYSQL_PWD\":\"s3\",\"dbPwd\":42}"))
                .isEqualTo("{\"user\":\"sa\",\"pwd\":\"" + R + "\",\"MYSQL_PWD\":\"" + R + "\",\"dbPwd\":" + R + "}");
        assertThat(SecretRedactor.isSecret("PWD", "/home/me")).isFalse();
        assertThat(SecretRedactor.isSecret("PWD", "hunter2")).isTrue();
        assertThat(SecretRedactor.isSecret("password", "/looks/like/a/path")).as("only pwd is ambiguous").isTrue();
    }

    @Test
    void aSecretThatAPassBeforeReplacedIsGivenToThePlaceholderFunctionAsItsPlaceholder() {
        // The recorder replaces known values first, then asks for a secret-named member's value:
        // it must be able to give "<p1>" back for "<p1>", not make a second placeholder.
        List<String> asked = new ArrayList<>();
        String out = SecretRedactor.redact("{\"API_TOKEN\": \"<p1>\"} Authorization: Bearer <p1>", found -> {
            asked.add(found);
            return found;
        });
        assertThat(out).isEqualTo("{\"API_TOKEN\": \"<p1>\"} Authorization: Bearer <p1>");
        // The header-like text is not read as "Authorization: <Bearer>" when the token is a placeholder already.
        assertThat(asked).containsExactly("<p1>");
    }

    @Test
    void aSecretIsDistinctiveEnoughToBeLookedForEverywhereWhenLongAndRandomLooking() {
        for (String secret : new String[] {"hunter2hunter2", "Zq8c0ffee", "abcDefghij", "dGVzdA=="}) {
            assertThat(SecretRedactor.isDistinctive(secret)).as(secret).isTrue();
        }
        for (String secret : new String[] {"undefined", "changeme", "password", "k-1", "hunter2", "[redacted]",
            "correct horse battery staple"}) {
            assertThat(SecretRedactor.isDistinctive(secret)).as(secret).isFalse();
        }
    }

    @Test
    void nonStringValuesOfSecretNamesAndMcpProgressTokensStay() {
        String text = "{\"_meta\":{\"progressToken\":\"abc-123\"},\"has_password\":true,\"token\":null,"
                + "\"credentials\":{\"user\":\"me\"}}";
        assertThat(SecretRedactor.redact(text)).isEqualTo(text);
    }

    @Test
    void jsonInsideAJsonStringIsRedactedToo() {
        String text = "{\"body\":\"{\\\"user\\\":\\\"me\\\",\\\"password\\\":\\\"hun\\\\\\\"ter2\\\",\\\"n\\\":1}\"}";
        assertThat(SecretRedactor.redact(text))
                .isEqualTo("{\"body\":\"{\\\"user\\\":\\\"me\\\",\\\"password\\\":\\\"" + R + "\\\",\\\"n\\\":1}\"}");
    }

    @Test
    void headerAndQueryLikeTextIsRedacted() {
        assertThat(SecretRedactor.redact("{\"cmd\":\"curl -H 'Authorization: Bearer abc' -H 'Accept: */*' "
                + "https://h/x?access_token=t0k&page=2\"}"))
                .isEqualTo("{\"cmd\":\"curl -H 'Authorization: Bearer " + R + "' -H 'Accept: */*' https://h/x?access_token="
                        + R + "&page=2\"}");
        assertThat(SecretRedactor.redact("GET / HTTP/1.1\r\nCookie: sid=abc; theme=dark\r\nHost: h"))
                .isEqualTo("GET / HTTP/1.1\r\nCookie: " + R + "\r\nHost: h");
        assertThat(SecretRedactor.redact("{\"url\":\"https://admin:hunter2@db.internal:5432/app\"}"))
                .isEqualTo("{\"url\":\"https://admin:" + R + "@db.internal:5432/app\"}");
    }

    // ---------------------------------------------------------------- token-like values anywhere

    @Test
    void tokenLikeValuesAreRedactedWherever() {
        String jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assertThat(SecretRedactor.redact("{\"note\":\"use " + jwt + " now\"}"))
                .isEqualTo("{\"note\":\"use " + R + " now\"}");
        assertThat(SecretRedactor.redact("{\"note\":\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}"))
                .isEqualTo("{\"note\":\"" + R + "\"}");
        assertThat(SecretRedactor.redact("a sk-live-abcdef123456 b")).isEqualTo("a " + R + " b");
        assertThat(SecretRedactor.redact("line1\\nxoxb-1234567890-abcdefghij end")).isEqualTo("line1\\n" + R + " end");
        assertThat(SecretRedactor.redact("[\"gho_16C7e42F292c6912E7710c838347Ae178B4a\","
                + "\"github_pat_11ABCDEFG0123456789_abcdefghijklmnop\",\"AKIAIOSFODNN7EXAMPLE\","
                + "\"AIzaSyA-1234567890abcdefghijklmnopqrstu\",\"glpat-abcdefghij0123456789\","
                + "\"sk_live_4eC39HqLyjWDarjtT1zdp7dc\",\"xoxp-1-2-3-abcdef\"]"))
                .isEqualTo("[\"" + R + "\",\"" + R + "\",\"" + R + "\",\"" + R + "\",\"" + R + "\",\"" + R + "\",\""
                        + R + "\"]");
        assertThat(SecretRedactor.redact("{\"h\":\"Bearer s3cr3t-token-value\",\"b\":\"basic dXNlcjpwYXNz\"}"))
                .isEqualTo("{\"h\":\"Bearer " + R + "\",\"b\":\"basic " + R + "\"}");
        assertThat(SecretRedactor.redact("{\"key\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE "
                + "KEY-----\",\"n\":1}")).isEqualTo("{\"key\":\"" + R + "\",\"n\":1}");
    }

    @Test
    void proseAndLookalikesStay() {
        String text = "{\"description\":\"Basic arithmetic. Bearer tokens are explained; the task-runner and "
                + "sk-learn-compatible-models work; risk-assessment; AKIA is a prefix\",\"max_tokens\":100,"
                + "\"progressToken\":42,\"sort_key\":\"name\"}";
        assertThat(SecretRedactor.redact(text)).isEqualTo(text);
        assertThat(SecretRedactor.redact("")).isEmpty();
        assertThat(SecretRedactor.redact(null)).isNull();
    }

    // ---------------------------------------------------------------- cut-off text

    @Test
    void aValueCutOffByTheEndOfTheTextIsRedactedToTheEnd() {
        assertThat(SecretRedactor.redact("{\"arguments\":{\"api_key\":\"abcdef")).isEqualTo("{\"arguments\":{\"api_key\":\"" + R + "\"");
        assertThat(SecretRedactor.redact("{\"token\":\"ab\\")).isEqualTo("{\"token\":\"" + R + "\"");
        assertThat(SecretRedactor.redact("{\"b\":\"{\\\"token\\\":\\\"abc")).isEqualTo("{\"b\":\"{\\\"token\\\":\\\"" + R + "\\\"");
        assertThat(SecretRedactor.redact("x -----BEGIN PRIVATE KEY-----\\nMIIE")).isEqualTo("x " + R);
    }

    @Test
    void aLongValueDoesNotOverflowTheStack() {
        String escapes = "\\\"".repeat(200_000);
        assertThat(SecretRedactor.redact("{\"password\":\"" + escapes + "\",\"n\":1}"))
                .isEqualTo("{\"password\":\"" + R + "\",\"n\":1}");
        String plain = "{\"note\":\"" + escapes + "\"}";
        assertThat(SecretRedactor.redact(plain)).isEqualTo(plain);
    }
}
