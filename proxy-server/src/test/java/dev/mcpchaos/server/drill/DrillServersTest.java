package dev.mcpchaos.server.drill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.List;

/** What a scenario needs of a server other than the demo, and the choice of that server. */
class DrillServersTest {

    private static Scenario scenario(String name) {
        return Catalogue.find(name).orElseThrow();
    }

    @Test
    void aScenarioNeedsTheToolsItsRulesFaultACallOf() {
        assertThat(scenario("out-of-order").toolsNeeded()).containsExactly("add");
        assertThat(scenario("write-answer-dropped").toolsNeeded()).containsExactly(Scenario.ANY_TOOL);
        assertThat(scenario("error-vs-iserror").toolsNeeded()).containsExactly(Scenario.ANY_TOOL);
        // tools/list is every server's: nothing needed.
        assertThat(scenario("answer-lost").toolsNeeded()).isEmpty();
        assertThat(scenario("request-dropped").toolsNeeded()).isEmpty();
        assertThat(scenario("sse-resume").toolsNeeded()).as("not built: no rules").isEmpty();
    }

    @Test
    void oneServerAtMostAndOnTheTransportItSpeaks() {
        Drill drill = Drill.builder(List.of("client")).upstream(URI.create("http://127.0.0.1:1/mcp"));
        assertThat(drill.serverDescription()).isEqualTo("the server at http://127.0.0.1:1/mcp");
        assertThatThrownBy(() -> drill.server(List.of("server"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("server: one server only");
        assertThatThrownBy(() -> drill.stdio(List.of("mcp-chaos")).run()).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("upstream: an HTTP server is drilled over http");
        assertThatThrownBy(() -> Drill.builder(List.of("client")).server(List.of("node", "server.js")).run())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("server: a stdio server command is drilled over stdio");
        assertThatThrownBy(() -> Drill.builder(List.of("client")).upstream(URI.create("file:///x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: an http:// or https://");
        assertThat(Drill.builder(List.of("client")).serverDescription()).isEqualTo("the demo server");
    }
}
