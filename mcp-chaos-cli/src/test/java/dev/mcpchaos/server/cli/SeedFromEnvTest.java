package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.HttpProxyBuilder;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** --seed-from-env: a documented, stable hash of the variable's value; --seed wins; a missing variable is refused. */
class SeedFromEnvTest {

    @Test
    void theSeedIsTheDocumentedHashOfTheValue() {
        // echo $(( 0x$(printf %s mcp-chaos-0 | sha256sum | cut -c1-16) & 0x7fffffffffffffff )), as docs/cli.md says
        assertThat(SeedHash.of("mcp-chaos-0")).isEqualTo(5737476478906193195L);
        assertThat(SeedHash.of("mcp-chaos-0")).isEqualTo(SeedHash.of(new String("mcp-chaos-0")));
        assertThat(SeedHash.of("mcp-chaos-1")).isNotEqualTo(SeedHash.of("mcp-chaos-0"));
        assertThat(SeedHash.of("")).isNotNegative();
        // A name whose digest starts with a set top bit still gives a seed >= 0.
        assertThat(SeedHash.of("pod-7")).isNotNegative();
    }

    @Test
    void aMissingOrEmptyVariableIsRefusedNamingIt() {
        assertThatThrownBy(() -> ChaosOptions.seedFromEnvironment("POD_NAME", null))
                .isInstanceOf(OptionValueException.class)
                .hasMessage("--seed-from-env: the environment variable POD_NAME is not set (expected: a variable with "
                        + "a value, such as POD_NAME set from the pod's metadata.name, or --seed N)");
        assertThatThrownBy(() -> ChaosOptions.seedFromEnvironment("POD_NAME", ""))
                .hasMessageContaining("POD_NAME is empty");
        assertThat(ChaosOptions.seedFromEnvironment("POD_NAME", "mcp-chaos-0")).isEqualTo(5737476478906193195L);
    }

    @Test
    void theSeedAndItsSourceAreOnStatus() throws Exception {
        String variable = "PATH"; // set in every test JVM
        assertThat(System.getenv(variable)).isNotEmpty();
        assertThat(status("--seed-from-env", variable))
                .contains("\"seed\":" + SeedHash.of(System.getenv(variable)) + ",")
                .contains("\"seed_source\":\"env:PATH\"");
        assertThat(status("--seed-from-env", variable, "--seed", "42"))
                .as("--seed wins").contains("\"seed\":42,").contains("\"seed_source\":\"given\"");
        assertThat(status()).contains("\"seed_source\":\"generated\"");
        assertThatThrownBy(() -> status("--seed-from-env", "MCP_CHAOS_TEST_NO_SUCH_VARIABLE"))
                .isInstanceOf(OptionValueException.class)
                .hasMessageContaining("MCP_CHAOS_TEST_NO_SUCH_VARIABLE is not set");
    }

    private static String status(String... extra) throws Exception {
        HttpCommand command = new HttpCommand();
        String[] base = {"--quiet", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--upstream",
            "http://127.0.0.1:1/mcp"};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        new CommandLine(command).parseArgs(args);
        try (HttpProxyBuilder.RunningHttp proxy = command.start(null)) {
            HttpResponse<String> status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + proxy.controlAddress().getPort() + "/status"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(status.statusCode()).isEqualTo(200);
            return status.body();
        }
    }
}
