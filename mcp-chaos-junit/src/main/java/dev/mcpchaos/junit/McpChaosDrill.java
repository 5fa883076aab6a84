package dev.mcpchaos.junit;

import dev.mcpchaos.server.drill.Drill;
import dev.mcpchaos.server.drill.Era;
import dev.mcpchaos.server.drill.Level;
import dev.mcpchaos.server.drill.Outcome;
import dev.mcpchaos.server.drill.Scenario;
import dev.mcpchaos.server.drill.Scorecard;
import dev.mcpchaos.server.drill.Verdict;
import org.junit.jupiter.api.DynamicTest;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The drill's catalogue (docs/drill.md) as JUnit 5 dynamic tests: a Java client under test is
 * drilled in this JVM, one dynamic test per scenario, each against the demo server behind a fresh
 * proxy with the scenario's faults, graded from the proxy's journal. The scorecard becomes
 * assertions: a scenario the client fails at the MUST level fails its test; one it passes passes;
 * not applicable, not exercised (the fault never fired), not built, and by default a SHOULD
 * failed, are aborted (skipped, with the verdict's reason), never passed.
 *
 * <pre>{@code
 * class MyClientDrillTest {
 *
 *     @TestFactory
 *     Stream<DynamicTest> drill() {
 *         return McpChaosDrill.of((scenario, mcpUrl) -> {
 *                     try (MyClient client = MyClient.connect(mcpUrl, Duration.ofSeconds(2))) {
 *                         client.listTools();                        // the scenarios expect a read,
 *                         client.callTool("echo", Map.of("text", "hi")); // then a write or two,
 *                         client.listTools();                        // each with a timeout of its own
 *                     }
 *                 })
 *                 .scenarios("answer-lost", "request-dropped", "error-vs-iserror")
 *                 .timeout(Duration.ofSeconds(20))
 *                 .seed(42)
 *                 .dynamicTests();
 *     }
 * }
 * }</pre>
 *
 * <p>The client is called with the scenario's name and the proxy's MCP URL, on a thread of its
 * own; it should catch what a resilient client catches (a timed-out call, an error answer) and go
 * on, and let the rest propagate: a throw is exit code 1 to the graders, which only some
 * scenarios judge ({@code late-answer}). Over HTTP, as {@link Drill#inProcess}; in the 2025 era
 * unless told {@link #era}: a client of the stateless 2026-07-28 revision is drilled with
 * {@code .era(Era.STATELESS)}, against the demo server serving that revision too (a dual-era
 * server) on the scenarios of both eras that apply to HTTP and the era's own.
 */
public final class McpChaosDrill {

    private final Drill drill;
    private boolean failOnShould;

    private McpChaosDrill(Drill.InProcessClient client) {
        this.drill = Drill.inProcess(client);
    }

    /** A drill of {@code client}, called once per scenario with the proxy's MCP URL. */
    public static McpChaosDrill of(Drill.InProcessClient client) {
        return new McpChaosDrill(client);
    }

    /**
     * The era whose scenarios run: {@link Era#SESSIONS} (the 2025 revisions, the default) or
     * {@link Era#STATELESS} (2026-07-28). One era per drill, as a client speaks one revision to a
     * server at a time: a client that speaks both is drilled twice. Call it before
     * {@link #dynamicTests()}, which takes the era's scenarios.
     */
    public McpChaosDrill era(Era era) {
        drill.era(era);
        return this;
    }

    /**
     * The scenarios, by name, in this order; by default every one the catalogue can run over HTTP
     * in the drill's era.
     *
     * @throws IllegalArgumentException for a name the catalogue does not have
     */
    public McpChaosDrill scenarios(String... names) {
        drill.scenarios(List.of(names));
        return this;
    }

    /** How long the client may run per scenario before it is stopped (its thread interrupted); default 30 s. */
    public McpChaosDrill timeout(Duration timeout) {
        drill.timeout(timeout);
        return this;
    }

    /** The seed of the scenarios' rules; default 0. */
    public McpChaosDrill seed(long seed) {
        drill.seed(seed);
        return this;
    }

    /**
     * Whether a failed SHOULD scenario fails its test too; by default it is aborted with the
     * reason, as the drill's exit code only counts a failed MUST.
     */
    public McpChaosDrill failOnShould(boolean fail) {
        this.failOnShould = fail;
        return this;
    }

    /** Where what the client threw goes, one line per scenario that threw; default nowhere. */
    public McpChaosDrill log(Consumer<String> lines) {
        drill.clientOutput(lines);
        return this;
    }

    /** One dynamic test per scenario, named after it; each runs the client when the test runs. */
    public Stream<DynamicTest> dynamicTests() {
        boolean shouldFails = failOnShould; // as it is now: a later call does not change these tests
        List<DynamicTest> tests = new ArrayList<>();
        for (Scenario scenario : drill.selected()) {
            tests.add(DynamicTest.dynamicTest(scenario.name() + " [" + scenario.level() + "]",
                    () -> assertVerdict(drill.run(scenario.name()), shouldFails)));
        }
        return tests.stream();
    }

    /**
     * The verdict of a one-scenario scorecard as a test's end: returns for a pass, throws an
     * {@link AssertionFailedError} for a failed MUST (and a failed SHOULD with {@code failOnShould}),
     * a {@link TestAbortedException} for the rest.
     */
    static void assertVerdict(Scorecard card, boolean failOnShould) {
        Verdict v = card.verdicts().get(0);
        String evidence = v.evidence().isEmpty() ? "" : "\nthe journal:\n  " + String.join("\n  ", v.evidence());
        if (v.outcome() == Outcome.PASS) {
            return;
        }
        if (v.outcome() == Outcome.FAIL && (v.level() == Level.MUST || failOnShould)) {
            throw new AssertionFailedError(v.scenario() + " (" + v.level() + ") failed: " + v.reason() + evidence);
        }
        throw new TestAbortedException(v.scenario() + " (" + v.level() + "): " + v.outcome().label() + ": "
                + v.reason() + evidence);
    }
}
