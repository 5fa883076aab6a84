package dev.mcpchaos.server;

import dev.mcpchaos.rules.RuleSet;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The chaos settings: checked when set, through either builder, with the value and what was expected. */
class ChaosSettingsTest {

    private static final URI UPSTREAM = URI.create("http://127.0.0.1:3001/mcp");

    @Test
    void badValuesAreRefusedWhenSetNamingTheValue() {
        HttpProxyBuilder http = McpChaosProxy.http(UPSTREAM);
        assertThatThrownBy(() -> http.journal(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("journal capacity: -1 (expected: >= 1, or 0 for off)");
        assertThatThrownBy(() -> http.controlToken(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("control token: '' (expected: a secret that is not empty)");
        McpChaosProxy.StdioBuilder stdio = McpChaosProxy.stdio(List.of("true"));
        assertThatThrownBy(() -> stdio.controlHeadTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("control head timeout: PT0S (expected: > 0)");
        assertThatThrownBy(() -> stdio.controlBodyTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("control body timeout: PT-1S (expected: > 0)");
        assertThat(http.settings.journalCapacity).as("a refused value leaves the default").isEqualTo(
                dev.mcpchaos.rules.journal.JournalRing.DEFAULT_CAPACITY);
    }

    @Test
    void theSeedSourceSaysWhereTheSeedCameFrom() {
        ChaosSettings settings = new ChaosSettings();
        assertThat(settings.seedSource()).isEqualTo("generated");
        settings.rules = RuleSet.of("seeded", 7, List.of());
        assertThat(settings.seedSource()).isEqualTo("file");
        settings.seed = 42L;
        assertThat(settings.seedSource()).isEqualTo("given");
        settings.seedSource = "env:POD_NAME";
        assertThat(settings.seedSource()).isEqualTo("env:POD_NAME");
    }
}
