package dev.mcpchaos.junit;

import dev.mcpchaos.rules.Rules;
import io.modelcontextprotocol.client.McpSyncClient;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * A test that fails on purpose, run through the JUnit Platform: its failure keeps its own message
 * and carries the seed with how to repeat it, printed on stderr too; {@code -Dmcpchaos.seed}
 * repeats it with that seed.
 */
class SeedOnFailureTest {

    /** Fails on purpose; only run by the tests below (a nested class without @Nested is not discovered). */
    @McpChaosTest(demo = McpChaosTest.Demo.HTTP)
    static class FailsOnPurpose {
        static long seenSeed;

        @Test
        void theAnswerIsNotWhatTheTestExpects(ChaosProxy proxy) {
            seenSeed = proxy.seed();
            proxy.chaos().add(Rules.toolError("broken", "tool broke").onTool("echo").onResponses());
            try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
                assertThat(Clients.echo(client, "hi").isError()).as("echo succeeded").isFalse();
            }
        }
    }

    private static final String TEST_ID = "[engine:junit-jupiter]/[class:" + FailsOnPurpose.class.getName()
            + "]/[method:theAnswerIsNotWhatTheTestExpects(" + ChaosProxy.class.getName() + ")]";

    @Test
    void aFailedTestCarriesItsSeedAndHowToRepeatIt() {
        long seed = McpChaosExtension.seedFor(TEST_ID);
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        EngineExecutionResults results = runCapturingStderr(stderr, null);

        List<Event> failed = results.testEvents().failed().list();
        assertThat(failed).hasSize(1);
        Throwable failure = failed.get(0).getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow().getThrowable().orElseThrow();
        assertThat(failure).isInstanceOf(AssertionError.class).hasMessageContaining("[echo succeeded]")
                .hasMessageContaining("Expecting value to be false but was true");
        String note = "mcp-chaos: theAnswerIsNotWhatTheTestExpects(ChaosProxy) failed with seed " + seed
                + "; to repeat it with the same chaos: -Dmcpchaos.seed=" + seed + " (or @McpChaosTest(seed = "
                + seed + "L), McpChaosExtension....seed(" + seed + "L))";
        assertThat(failure.getSuppressed()).extracting(Throwable::getMessage).containsExactly(note);
        assertThat(stderr.toString(StandardCharsets.UTF_8)).contains(note);
        assertThat(FailsOnPurpose.seenSeed).isEqualTo(seed);
    }

    @Test
    void theSeedPropertyRepeatsARunWithTheSeedGiven() {
        EngineExecutionResults results = runCapturingStderr(new ByteArrayOutputStream(), "12345");
        assertThat(results.testEvents().failed().count()).isEqualTo(1);
        assertThat(FailsOnPurpose.seenSeed).isEqualTo(12345L);
        Throwable failure = results.testEvents().failed().list().get(0)
                .getPayload(org.junit.platform.engine.TestExecutionResult.class).orElseThrow().getThrowable()
                .orElseThrow();
        assertThat(failure.getSuppressed()[0]).hasMessageContaining("failed with seed 12345;");
    }

    @Test
    void aPassingTestPrintsNothing() {
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        EngineExecutionResults results;
        PrintStream old = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(DemoHttpDeclarativeTest.class))
                    .execute();
        } finally {
            System.setErr(old);
        }
        assertThat(results.testEvents().succeeded().count()).isEqualTo(3);
        assertThat(stderr.toString(StandardCharsets.UTF_8)).doesNotContain("failed with seed");
    }

    private static EngineExecutionResults runCapturingStderr(ByteArrayOutputStream stderr, String seedProperty) {
        PrintStream old = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            EngineTestKit.Builder run = EngineTestKit.engine("junit-jupiter").selectors(selectClass(FailsOnPurpose.class));
            if (seedProperty != null) {
                run.configurationParameter(McpChaosExtension.SEED_PROPERTY, seedProperty);
            }
            return run.execute();
        } finally {
            System.setErr(old);
        }
    }
}
