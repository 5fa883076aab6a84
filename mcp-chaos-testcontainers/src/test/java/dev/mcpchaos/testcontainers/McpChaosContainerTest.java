package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What the container is configured with, before anything runs: no Docker engine needed. */
class McpChaosContainerTest {

    private static McpChaosContainer container() {
        return new McpChaosContainer("mcp-chaos:test").withUpstream("http://127.0.0.1:3001/mcp");
    }

    @Test
    void hostNetworkingListensOnLoopbackOnTheChosenPortsWithoutAToken() {
        McpChaosContainer chaos = container().withNetworkMode("host").withListenPort(18080).withControlPort(19090);
        chaos.configure();
        assertThat(chaos.getEnvMap())
                .containsEntry("MCP_CHAOS_UPSTREAM", "http://127.0.0.1:3001/mcp")
                .containsEntry("MCP_CHAOS_LISTEN", "127.0.0.1:18080")
                .containsEntry("MCP_CHAOS_CONTROL", "127.0.0.1:19090")
                .containsEntry("MCP_CHAOS_METRICS_LISTEN", "off")
                .doesNotContainKey("MCP_CHAOS_CONTROL_TOKEN");
        assertThat(chaos.getExposedPorts()).isEmpty();
        assertThat(chaos.getMcpUrl()).isEqualTo(URI.create("http://127.0.0.1:18080/mcp"));
        assertThat(chaos.getControlUrl()).isEqualTo(URI.create("http://127.0.0.1:19090"));
        assertThat(chaos.getControlToken()).isNull();
    }

    @Test
    void aBridgeNetworkListensOnAllInterfacesWithAGeneratedTokenAndTheAlias() {
        McpChaosContainer chaos = container().withNetworkAliases("chaos");
        chaos.configure();
        assertThat(chaos.getEnvMap())
                .containsEntry("MCP_CHAOS_LISTEN", "0.0.0.0:8080")
                .containsEntry("MCP_CHAOS_CONTROL", "0.0.0.0:9090")
                .containsEntry("MCP_CHAOS_CONTROL_TOKEN", chaos.getControlToken());
        assertThat(chaos.getControlToken()).isNotBlank();
        assertThat(chaos.getExposedPorts()).containsExactlyInAnyOrder(8080, 9090);
        assertThat(chaos.getNetworkMcpUrl()).isEqualTo(URI.create("http://chaos:8080/mcp"));
    }

    @Test
    void aGivenTokenIsKept() {
        McpChaosContainer chaos = container().withControlToken("s3cret");
        chaos.configure();
        assertThat(chaos.getEnvMap()).containsEntry("MCP_CHAOS_CONTROL_TOKEN", "s3cret");
    }

    @Test
    void rulesAndSeedBecomeTheImagesVariablesAndACopiedFile() {
        McpChaosContainer fromText = container().withRules("rules: []\n").withSeed(42);
        assertThat(fromText.getEnvMap())
                .containsEntry("MCP_CHAOS_RULES", "/tmp/mcp-chaos-rules/rules.yaml")
                .containsEntry("MCP_CHAOS_SEED", "42");
        // That the file arrives and the proxy loads it: McpChaosContainerIT.rulesFromAStringAndFromAFileReachTheProxy.

        McpChaosContainer fromResource = container().withRulesFromClasspath("rules/slow-echo.yaml");
        assertThat(fromResource.getEnvMap()).containsEntry("MCP_CHAOS_RULES", "/tmp/mcp-chaos-rules/rules.yaml");
    }

    @Test
    void badValuesAreRefusedNamingTheValue() {
        assertThatThrownBy(() -> container().withUpstream("ftp://127.0.0.1/mcp"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("upstream: 'ftp://127.0.0.1/mcp' (expected: an http:// or https:// URL with a host,"
                        + " such as http://127.0.0.1:3001/mcp)");
        assertThatThrownBy(() -> container().withListenPort(0))
                .hasMessage("listen port: 0 (expected: 1 to 65535)");
        assertThatThrownBy(() -> container().withControlToken(" "))
                .hasMessage("control token: ' ' (expected: a non-blank string)");
        assertThatThrownBy(() -> container().withRulesFromClasspath("rules/none.yaml"))
                .hasMessage("rules: no classpath resource 'rules/none.yaml'");
        assertThatThrownBy(() -> container().withRulesFromFile(Path.of("/nonexistent/rules.yaml")))
                .hasMessage("rules: cannot read /nonexistent/rules.yaml");
        assertThatThrownBy(() -> new McpChaosContainer("mcp-chaos:test").configure())
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("McpChaosContainer: no upstream (expected: withUpstream(url) before start)");
        assertThatThrownBy(() -> container().withNetworkMode("host").getNetworkMcpUrl())
                .isInstanceOf(IllegalStateException.class);
        // Testcontainers' own tc-... alias is not one to hand out.
        assertThatThrownBy(() -> container().getNetworkMcpUrl())
                .hasMessageStartingWith("McpChaosContainer: no network alias");
    }
}
