package dev.mcpchaos.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.mcpchaos.server.drill.Era;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.opentest4j.TestAbortedException;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@link McpChaosDrill} in the 2026-07-28 era ({@code .era(Era.STATELESS)}): the MCP Java SDK
 * 2.2.0 {@code modern} client, which speaks that revision only (no initialize; the version in each
 * request's {@code _meta}), drilled in this JVM against the dual-era demo server. What its
 * scorecard shows, and what this test holds it to: it passes {@code answer-lost},
 * {@code error-vs-iserror} and {@code input-required-loop} (it answers the rounds under new ids
 * with the {@code requestState} echoed, and stops by a bound of its own); it fails
 * {@code version-negotiation} at SHOULD, aborted by default (after a {@code -32022} whose
 * {@code supported} lists 2025-11-25 only, its next request names 2026-07-28 again: it speaks no
 * other and does not fall back to {@code initialize}), as {@code DrillRealClientsIT} found running
 * it as a command; and {@code session-404}, a scenario of the 2025 era's sessions, does not apply.
 */
class McpChaosDrillModernClientTest {

    /**
     * An application on the modern client: list the tools, call {@code slow} (with progress) and
     * {@code echo}, list again; each request bounded by the client's own 2.5 s, a failed step
     * caught and the next one taken (as a resilient application goes on), none sent again.
     */
    static void modernClient(URI mcpUrl) {
        McpSyncClient client = McpClient.sync(HttpClientMcpTransport.builder(mcpUrl).build())
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-drill-junit-modern", "1.0.0").build())
                .callTimeout(Duration.ofMillis(2500))
                .build();
        step(() -> client.listTools().list());
        step(() -> client.tool("slow").arguments(Map.of("ms", 50)).progress(progress -> { }).call());
        step(() -> client.tool("echo").arguments(Map.of("text", "drill")).call());
        step(() -> client.listTools().list());
    }

    private static void step(Callable<?> call) {
        try {
            call.call();
        } catch (Exception e) {
            // A failed request: reported by the application, and the next step taken.
        }
    }

    /** Only run by the test below (a nested class without @Nested is not discovered). */
    static class ModernClientIn2026 {
        @TestFactory
        Stream<DynamicTest> drill() {
            return McpChaosDrill.of((scenario, mcpUrl) -> modernClient(mcpUrl)).era(Era.STATELESS)
                    .scenarios("answer-lost", "error-vs-iserror", "input-required-loop", "version-negotiation",
                            "session-404")
                    .timeout(Duration.ofSeconds(30)).seed(42).dynamicTests();
        }
    }

    @Test
    void theModernClientIn2026PassesWhatItDoesRightAndItsFailedShouldIsAbortedWithTheReason() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(ModernClientIn2026.class)).execute();
        List<String> succeeded = names(results.testEvents().succeeded().stream());
        List<String> aborted = names(results.testEvents().aborted().stream());
        String why = results.testEvents().aborted().stream().map(e -> e.getTestDescriptor().getDisplayName() + ": "
                + e.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                        .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable)
                        .map(Throwable::getMessage).orElse("")).toList().toString();
        assertThat(succeeded).as(why).containsExactly("answer-lost [SHOULD]", "error-vs-iserror [SHOULD]",
                "input-required-loop [SHOULD]");
        assertThat(aborted).as(why).containsExactly("version-negotiation [SHOULD]", "session-404 [MUST]");
        assertThat(results.testEvents().failed().count()).as(why).isZero();
        Throwable versionNegotiation = abortedCause(results, "version-negotiation [SHOULD]");
        assertThat(versionNegotiation).isInstanceOf(TestAbortedException.class)
                .hasMessageStartingWith("version-negotiation (SHOULD): fail: ");
        assertThat(abortedCause(results, "session-404 [MUST]")).hasMessageContaining("not applicable")
                .hasMessageContaining("this run is http in the 2026 era");
    }

    private static List<String> names(Stream<Event> events) {
        return events.map(e -> e.getTestDescriptor().getDisplayName()).toList();
    }

    private static Throwable abortedCause(EngineExecutionResults results, String name) {
        return results.testEvents().aborted().stream().filter(e -> e.getTestDescriptor().getDisplayName().equals(name))
                .findFirst().orElseThrow()
                .getPayload(org.junit.platform.engine.TestExecutionResult.class).orElseThrow().getThrowable()
                .orElseThrow();
    }
}
