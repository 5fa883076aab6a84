package dev.mcpchaos.junit;

import dev.mcpchaos.server.replay.OnExhausted;
import dev.mcpchaos.server.replay.Timing;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The replay's own settings in a test, as {@code mcp-chaos replay} has them: what to answer once
 * a request's recordings are used up, the recorded timing, and bad values refused.
 */
class ReplayOptionsTest {

    @RegisterExtension
    McpChaosExtension proxy = McpChaosExtension.replayHttp("/cassettes/demo.ndjson").onExhausted(OnExhausted.ERROR);

    @Test
    void onExhaustedErrorAnswersTheSecondRepeatWithAnErrorWhereTheDefaultAnswersItAgain() {
        try (McpSyncClient client = Clients.http(proxy.proxy().mcpUrl())) {
            assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
            assertThatThrownBy(() -> Clients.echo(client, "hi")).isInstanceOf(McpError.class)
                    .hasMessageContaining("no recording left for tools/call");
        }
        assertThat(proxy.proxy().unmatchedRequests()).isEqualTo(1);

        // the twin, declared with the default: the same repeat answered as recorded, twice
        EngineExecutionResults twin = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(RepeatsAnsweredAgain.class)).execute();
        twin.testEvents().assertStatistics(stats -> stats.started(1).succeeded(1).failed(0));
    }

    @Test
    void recordedTimingHoldsEachAnswerAsLongAsTheServerTook() {
        EngineExecutionResults run = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(RecordedTiming.class)).execute();
        run.testEvents().assertStatistics(stats -> stats.started(1).succeeded(1).failed(0));
    }

    @Test
    void replaySettingsAreRefusedWhereTheyMeanNothingAndABadTimingIsNamed() {
        assertThatThrownBy(() -> McpChaosExtension.demoHttp().onExhausted(OnExhausted.ERROR))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("onExhausted: only for a replayed server (expected: McpChaosExtension.replayHttp(...) or "
                        + ".replayStdio(...) first)");
        assertThatThrownBy(() -> McpChaosExtension.demoStdio().timing(Timing.RECORDED))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("timing: only for a replayed server");
        EngineExecutionResults bad = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(BadTiming.class)).execute();
        assertThat(bad.containerEvents().failed().list()).singleElement().satisfies(event ->
                assertThat(event.getPayload(org.junit.platform.engine.TestExecutionResult.class).orElseThrow()
                        .getThrowable().orElseThrow())
                        .hasMessageContaining("@McpChaosTest(replayTiming = \"sometimes\") on "
                                + BadTiming.class.getName()));
    }

    /** Only run by the tests above (a nested class without @Nested is not discovered). */
    @McpChaosTest(replay = "/cassettes/demo.ndjson")
    static class RepeatsAnsweredAgain {
        @Test
        void theLastRecordingAgain(ChaosProxy proxy) {
            try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
                assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
                assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
            }
            assertThat(proxy.unmatchedRequests()).isZero();
        }
    }

    /** The cassette's echo answer came about 624 ms after its request. */
    @McpChaosTest(replay = "/cassettes/demo.ndjson", replayTiming = "recorded", replayOnExhausted = OnExhausted.LAST)
    static class RecordedTiming {
        @Test
        void theEchoAnswerWaits(ChaosProxy proxy) {
            try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
                long start = System.nanoTime();
                assertThat(Clients.text(Clients.echo(client, "hi"))).isEqualTo("hi");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(550));
            }
        }
    }

    @McpChaosTest(replay = "/cassettes/demo.ndjson", replayTiming = "sometimes")
    static class BadTiming {
        @Test
        void neverRuns() {
            throw new AssertionError("the class should not have started");
        }
    }
}
