package dev.mcpchaos.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.mcpchaos.server.drill.Level;
import dev.mcpchaos.server.drill.Outcome;
import dev.mcpchaos.server.drill.Scorecard;
import dev.mcpchaos.server.drill.Verdict;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.EventConditions;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@link McpChaosDrill}: the MCP Java SDK client (the build's mcp-sdk.version, 2.2.0) drilled over HTTP, one dynamic test per
 * scenario, and the scorecard's verdicts as test results (a failed MUST fails, the rest that did
 * not pass is aborted, never passed).
 */
class McpChaosDrillTest {

    /** Each request's own timeout: short, as the scenarios expect (late-answer's answer comes 3 s late). */
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1500);

    /**
     * The Java SDK client, used as a resilient client uses it: a read (tools/list) that fails is
     * sent again, as a new request, up to three times; a write (tools/call) that fails is reported
     * and not sent again, then it reads back; {@code resend} false makes it a client that never
     * sends a read again (nor reads back).
     */
    static void sdkClient(URI mcpUrl, boolean resend) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + mcpUrl.getHost() + ":" + mcpUrl.getPort()).endpoint(mcpUrl.getPath()).build();
        McpSyncClient client = McpClient.sync(transport).requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(Duration.ofSeconds(10))
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-drill-test", "1.0").build()).build();
        try {
            client.initialize();
            read(client, resend ? 3 : 1);
            try {
                client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("text", "drill")).build());
            } catch (RuntimeException e) {
                // A write that failed: its outcome is unknown, and it is not sent again.
            }
            if (resend) {
                read(client, 3);
            }
        } finally {
            client.close();
        }
    }

    private static void read(McpSyncClient client, int attempts) {
        for (int attempt = 1; attempt <= attempts; attempt++) {
            try {
                client.listTools();
                return;
            } catch (RuntimeException e) {
                // Timed out or failed: a read is safe to send again, under a new id.
            }
        }
    }

    /** The SDK client on three scenarios: each dynamic test passes (it runs in this suite, as a user's would). */
    @TestFactory
    Stream<DynamicTest> theJavaSdkClientUnderTheDrill() {
        return McpChaosDrill.of((scenario, mcpUrl) -> sdkClient(mcpUrl, true))
                .scenarios("answer-lost", "request-dropped", "error-vs-iserror")
                .timeout(Duration.ofSeconds(20)).seed(42).dynamicTests();
    }

    /** Only run by the test below (a nested class without @Nested is not discovered). */
    static class FlawedClients {
        @TestFactory
        Stream<DynamicTest> drill() {
            return McpChaosDrill.of((scenario, mcpUrl) -> {
                if (scenario.equals("late-answer")) {
                    fallsOverAfterGivingUp(mcpUrl);
                } else if (!scenario.equals("priming-missing")) {
                    sdkClient(mcpUrl, false);
                }
            }).scenarios("request-dropped", "late-answer", "server-crash", "priming-missing")
                    .timeout(Duration.ofSeconds(20)).seed(42).dynamicTests();
        }
    }

    /** Gives up on tools/list after its timeout, before the late answer comes, and throws: a client that falls over. */
    static void fallsOverAfterGivingUp(URI mcpUrl) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + mcpUrl.getHost() + ":" + mcpUrl.getPort()).endpoint(mcpUrl.getPath()).build();
        McpSyncClient client = McpClient.sync(transport).requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(Duration.ofSeconds(10))
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-drill-test", "1.0").build()).build();
        try {
            client.initialize();
            client.listTools();
        } catch (RuntimeException e) {
            throw new IllegalStateException("gave up on tools/list and fell over", e);
        } finally {
            client.close();
        }
    }

    @Test
    void aFailedMustFailsItsTestAndWhatWasNotPutToTheTestIsAbortedNeverPassed() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(FlawedClients.class)).execute();
        // late-answer: gave up, then fell over before the answer came (MUST) -> failed;
        // request-dropped: never sent again (SHOULD) -> aborted; server-crash: stdio only -> not
        // applicable; priming-missing: this client calls nothing, so its fault never fires (not exercised).
        results.testEvents().assertStatistics(stats -> stats.started(4).succeeded(0).failed(1).aborted(3));
        results.testEvents().failed().assertThatEvents().haveExactly(1,
                EventConditions.displayName("late-answer [MUST]"));
        assertThat(results.testEvents().aborted().stream()
                .map(e -> e.getTestDescriptor().getDisplayName()).toList())
                .containsExactly("request-dropped [SHOULD]", "server-crash [SHOULD]", "priming-missing [SHOULD]");
    }

    private static Scorecard card(Level level, Outcome outcome) {
        return new Scorecard(1, List.of(new Verdict("x", level, outcome, "the reason", List.of("#3 evidence"), 0,
                Duration.ZERO)));
    }

    @Test
    void verdictsBecomeTestResults() {
        assertThatCode(() -> McpChaosDrill.assertVerdict(card(Level.MUST, Outcome.PASS), false))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> McpChaosDrill.assertVerdict(card(Level.MUST, Outcome.FAIL), false))
                .isInstanceOf(AssertionFailedError.class).hasMessage("x (MUST) failed: the reason\nthe journal:\n"
                        + "  #3 evidence");
        assertThatThrownBy(() -> McpChaosDrill.assertVerdict(card(Level.SHOULD, Outcome.FAIL), false))
                .isInstanceOf(TestAbortedException.class).hasMessageStartingWith("x (SHOULD): fail: the reason");
        assertThatThrownBy(() -> McpChaosDrill.assertVerdict(card(Level.SHOULD, Outcome.FAIL), true))
                .isInstanceOf(AssertionFailedError.class);
        for (Outcome other : List.of(Outcome.NOT_APPLICABLE, Outcome.NOT_EXERCISED, Outcome.NOT_BUILT)) {
            assertThatThrownBy(() -> McpChaosDrill.assertVerdict(card(Level.MUST, other), true)).as(other.name())
                    .isInstanceOf(TestAbortedException.class).hasMessageContaining(other.label());
        }
        assertThatThrownBy(() -> McpChaosDrill.of((s, u) -> { }).scenarios("nope"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("scenario: 'nope'");
    }
}
