package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.server.cli.Main;
import dev.mcpchaos.server.drill.Catalogue;
import dev.mcpchaos.server.drill.Drill;
import dev.mcpchaos.server.drill.Era;
import dev.mcpchaos.server.drill.Scenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * {@code mcp-chaos drill} on a real client: test-peers/drill/client.mjs, on the TypeScript SDK
 * 2.4, passes every scenario the runner has; each twin with one flaw fails its scenarios and
 * passes the rest; two runs with one seed give the same verdicts. (Needs {@code npm ci} in
 * test-peers.)
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class DrillIT {

    /** Every scenario the runner runs by default. */
    private static final List<String> RUNNABLE = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(Drill.TRANSPORT, Drill.ERA)).map(Scenario::name).toList();

    @TempDir
    Path dir;

    private final StringWriter err = new StringWriter();

    /** The scorecard (--report-json) of the last drill. */
    private JsonNode lastCard;

    /** Every scenario the runner runs over stdio by default. */
    private static final List<String> RUNNABLE_OVER_STDIO = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(TransportKind.STDIO, Drill.ERA)).map(Scenario::name).toList();

    /** Runs the drill client with {@code flaw} through the command line; the verdicts by scenario. */
    private Map<String, String> drill(String flaw, String seed) throws Exception {
        return drill(flaw, seed, "http", List.of());
    }

    /**
     * Runs the drill client with {@code flaw} over {@code transport} through the command line, on
     * {@code scenarios} (none: every one the runner has); the verdicts by scenario.
     */
    private Map<String, String> drill(String flaw, String seed, String transport, List<String> scenarios)
            throws Exception {
        return drill(flaw, seed, transport, scenarios, "2025");
    }

    /** {@link #drill(String, String, String, List)} in {@code era}: the drill's {@code --era} and the client's. */
    private Map<String, String> drill(String flaw, String seed, String transport, List<String> scenarios, String era)
            throws Exception {
        return drill(flaw, seed, transport, scenarios, era, List.of());
    }

    /** {@link #drill(String, String, String, List, String)} with {@code options} given to the client too. */
    private Map<String, String> drill(String flaw, String seed, String transport, List<String> scenarios, String era,
                                      List<String> options) throws Exception {
        Path json = dir.resolve(flaw + "-" + seed + "-" + System.nanoTime() + ".json");
        List<String> args = new ArrayList<>(List.of("drill", "--timeout", timeout(flaw, transport), "--seed", seed,
                "--transport", transport, "--report-json", json.toString(), "--era", era));
        scenarios.forEach(name -> args.addAll(List.of("--scenario", name)));
        args.addAll(List.of("--", TestPeers.node().toString(),
                TestPeers.testPeersDir().resolve("drill").resolve("client.mjs").toString()));
        if (!flaw.equals("none")) {
            args.add("--flaw");
            args.add(flaw);
        }
        if (era.equals("2026")) {
            args.addAll(List.of("--era", "2026"));
        }
        args.addAll(options);
        if (transport.equals("stdio")) {
            args.add("--stdio");
        }
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                args.toArray(String[]::new));
        JsonNode card = new ObjectMapper().readTree(json.toFile());
        lastCard = card;
        Map<String, String> verdicts = new LinkedHashMap<>();
        card.get("scenarios").forEach(s -> verdicts.put(s.get("name").asText(), s.get("outcome").asText()));
        assertThat(card.get("exit_code").asInt()).isEqualTo(code);
        return verdicts;
    }

    /**
     * The drill's --timeout, which covers a client's whole run: 10 s over HTTP; over stdio the run
     * includes starting the stdio proxy and the demo server (two JVMs; four in 2026, where the
     * TypeScript SDK probes on a process of its own first), several seconds each on a loaded
     * machine, which is why 10 s stopped well-behaved stdio runs there. A client that ends on its
     * own never waits for it, so 30 s costs nothing; the twins that hang (no-timeout,
     * endless-input) get 12 s, room for the starts and their fault to fire and not much more, as
     * each hang waits it out (a run stopped at the timeout is their failure).
     */
    private static String timeout(String flaw, String transport) {
        if (transport.equals("http")) {
            return "10s";
        }
        return flaw.equals("no-timeout") || flaw.equals("endless-input") ? "12s" : "30s";
    }

    @Test
    void theWellBehavedClientPassesEveryScenarioTheRunnerHas() throws Exception {
        Map<String, String> verdicts = drill("none", "42");
        assertThat(verdicts.keySet()).as(err.toString()).containsExactlyElementsOf(RUNNABLE);
        assertThat(verdicts).as(err.toString()).allSatisfy((name, outcome) -> assertThat(outcome).as(name)
                .isEqualTo("pass"));
        assertThat(RUNNABLE).hasSizeGreaterThanOrEqualTo(16).contains("sse-resume", "retry-field", "get-stream-dropped");
    }

    /**
     * Each twin fails exactly the scenarios of its flaw. The one that never times out fails every
     * scenario in which an answer never comes in a form it can use (lost, or broken so the SDK
     * drops it, or cut before any event id, as in priming-missing), since it waits there for ever;
     * and late-answer does not put it to the test: it
     * waits the 3 s out, so the answer is not late for it (not exercised, never pass).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "naive-retrier; write-answer-dropped; ",
        "no-timeout; answer-lost malformed-event truncated-answer request-dropped priming-missing; late-answer",
        "ignore-retry-after; retry-after-503; ",
        "reuse-id; request-dropped; "})
    void eachTwinFailsExactlyItsScenarios(String flaw, String scenarios, String notExercised) throws Exception {
        Set<String> expected = Set.of(scenarios.split(" "));
        Set<String> untested = notExercised == null ? Set.of() : Set.of(notExercised.split(" "));
        Map<String, String> verdicts = drill(flaw, "42");
        assertThat(verdicts.keySet()).as(err.toString()).containsExactlyElementsOf(RUNNABLE);
        Set<String> failed = new TreeSet<>();
        verdicts.forEach((name, outcome) -> {
            if (outcome.equals("fail")) {
                failed.add(name);
            } else {
                assertThat(outcome).as(name + " of the " + flaw + " twin\n" + err)
                        .isEqualTo(untested.contains(name) ? "not_exercised" : "pass");
            }
        });
        assertThat(failed).as("what the " + flaw + " twin failed\n" + err).isEqualTo(new TreeSet<>(expected));
    }

    /**
     * The SSE twins (#37), each on its scenarios and a neighbour it passes (not every scenario: the
     * well-behaved client and the other twins run those). The one that never resumes fails the cut
     * answer and the dropped GET stream, and passes retry-field (a client that does not reconnect
     * waits as long as it likes) and stream-closed (the call fails, the session goes on); the one
     * that ignores retry: reconnects after the SDK's own second, not the 2.5 s asked. The one that
     * waits for a resumption it has no event id for hangs in priming-missing (stopped at the
     * timeout), and passes sse-resume, where the priming event gave it an id.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "no-resume; sse-resume get-stream-dropped; retry-field stream-closed",
        "ignore-retry; retry-field; sse-resume get-stream-dropped",
        "wait-resume; priming-missing; sse-resume"})
    void eachSseTwinFailsExactlyItsScenarios(String flaw, String fails, String passes) throws Exception {
        Map<String, String> expected = new LinkedHashMap<>();
        List<String> scenarios = new ArrayList<>();
        for (String name : fails.split(" ")) {
            expected.put(name, "fail");
            scenarios.add(name);
        }
        for (String name : passes.split(" ")) {
            expected.put(name, "pass");
            scenarios.add(name);
        }
        Map<String, String> verdicts = drill(flaw, "42", "http", scenarios);
        assertThat(new TreeMap<>(verdicts)).as("the " + flaw + " twin\n" + err).isEqualTo(new TreeMap<>(expected));
    }

    /**
     * Over stdio (the client spawns this build's stdio proxy in front of the demo server): the
     * well-behaved client passes every scenario that applies, out-of-order and server-crash among
     * them.
     */
    @Test
    void overStdioTheWellBehavedClientPassesEveryScenarioThatApplies() throws Exception {
        Map<String, String> verdicts = drill("none", "42", "stdio", List.of());
        assertThat(verdicts.keySet()).as(err.toString()).containsExactlyElementsOf(RUNNABLE_OVER_STDIO)
                .contains("out-of-order", "server-crash").doesNotContain("retry-after-503", "session-404");
        assertThat(verdicts).as(err.toString()).allSatisfy((name, outcome) -> assertThat(outcome).as(name)
                .isEqualTo("pass"));
    }

    /**
     * Over stdio each twin fails exactly its set, on that set and a scenario next to its flaw that
     * it passes (not all twelve: four twins over every stdio scenario take four minutes, two JVMs
     * started per scenario). Retry-After is HTTP's: over stdio its twin has nothing to fail, and
     * its scenario does not apply.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "naive-retrier; write-answer-dropped; error-vs-iserror",
        "no-timeout; answer-lost malformed-event truncated-answer request-dropped; server-crash",
        "reuse-id; request-dropped; answer-lost"})
    void overStdioEachTwinFailsExactlyItsScenarios(String flaw, String fails, String passes) throws Exception {
        List<String> scenarios = new ArrayList<>(List.of(fails.split(" ")));
        scenarios.addAll(List.of(passes.split(" ")));
        Map<String, String> verdicts = drill(flaw, "42", "stdio", scenarios);
        Map<String, String> expected = new LinkedHashMap<>();
        scenarios.forEach(name -> expected.put(name, List.of(fails.split(" ")).contains(name) ? "fail" : "pass"));
        assertThat(verdicts).as("the " + flaw + " twin over stdio\n" + err).isEqualTo(expected);
    }

    @Test
    void overStdioRetryAfterDoesNotApply() throws Exception {
        assertThat(drill("ignore-retry-after", "42", "stdio", List.of("retry-after-503", "stream-closed")))
                .as(err.toString()).containsExactly(Map.entry("retry-after-503", "not_applicable"),
                        Map.entry("stream-closed", "not_applicable"));
    }

    /** Every scenario the runner runs in the 2026-07-28 era (over HTTP): both eras' and the era's own. */
    private static final List<String> RUNNABLE_2026 = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(TransportKind.HTTP, Era.STATELESS)).map(Scenario::name).toList();

    /** The 2026-07-28 era's own scenarios (stateless only), each with the twin that fails it. */
    private static final List<String> OWN_2026 = List.of("listen-cut", "input-required-loop", "header-mismatch",
            "version-negotiation", "discover-unsupported");

    /**
     * In the 2026-07-28 era (the client in its 2026 mode, the demo server serving that revision
     * too): the well-behaved client passes every scenario that applies, both eras' and the era's
     * own, and no scenario of the sessions (session-404) runs.
     */
    @Test
    void in2026TheWellBehavedClientPassesEveryScenarioThatApplies() throws Exception {
        Map<String, String> verdicts = drill("none", "42", "http", List.of(), "2026");
        assertThat(verdicts.keySet()).as(err.toString()).containsExactlyElementsOf(RUNNABLE_2026)
                .containsAll(OWN_2026).doesNotContain("session-404", "out-of-order");
        assertThat(verdicts).as(err.toString()).allSatisfy((name, outcome) -> assertThat(outcome).as(name)
                .isEqualTo("pass"));
    }

    /**
     * In 2026 each twin fails its scenario and passes the next of the era's own (so each of the four
     * is failed by its twin and passed by another). Not all sixteen, nor all four each: a run of
     * the client is two to four seconds on a loaded machine, and the twins' flaws touch nothing the
     * other scenarios do.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "endless-input; input-required-loop; header-mismatch",
        "retry-mismatch; header-mismatch; version-negotiation",
        "retry-version; version-negotiation; discover-unsupported",
        "retry-discover; discover-unsupported; input-required-loop"})
    void in2026EachTwinFailsExactlyItsScenario(String flaw, String fails, String passes) throws Exception {
        Map<String, String> verdicts = drill(flaw, "42", "http", List.of(fails, passes), "2026");
        assertThat(verdicts).as("the " + flaw + " twin in 2026\n" + err)
                .isEqualTo(Map.of(fails, "fail", passes, "pass"));
    }

    /**
     * listen-cut (#37): the twin that listens only once fails it, and passes header-mismatch (its
     * flaw touches no other scenario: it listens in every run, and only listen-cut cuts the stream);
     * the well-behaved client's pass is in the run of every 2026 scenario above.
     */
    @Test
    void in2026TheNoRelistenTwinFailsListenCut() throws Exception {
        Map<String, String> verdicts = drill("no-relisten", "42", "http", List.of("listen-cut", "header-mismatch"),
                "2026");
        assertThat(verdicts).as("the no-relisten twin in 2026\n" + err)
                .isEqualTo(Map.of("listen-cut", "fail", "header-mismatch", "pass"));
    }

    /**
     * In 2026, the broken stream and the closed stream (#37): each twin fails its scenario and
     * passes a neighbour. The client that never re-issues and the one that re-issues under the lost
     * id both fail stream-broken-reissue (the second still goes on, so stream-closed passes); the
     * one whose POSTs ignore the SDK's abort fails close-as-cancel (it went on with the stream
     * open); the reuse-id twin, run in 2026 too, fails request-dropped (at MUST: the id it resends
     * is that of a request still unanswered, though each sessionless request is a session of its
     * own to the journal). Not every scenario: each is a few seconds, close-as-cancel seven.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "no-reissue; stream-broken-reissue; request-dropped",
        "reissue-same-id; stream-broken-reissue; stream-closed",
        "no-cancel; close-as-cancel; stream-broken-reissue",
        "reuse-id; request-dropped; stream-broken-reissue"})
    void in2026EachReissueAndCancelTwinFailsExactlyItsScenario(String flaw, String fails, String passes)
            throws Exception {
        Map<String, String> verdicts = drill(flaw, "42", "http", List.of(fails, passes), "2026");
        assertThat(verdicts).as("the " + flaw + " twin in 2026\n" + err)
                .isEqualTo(Map.of(fails, "fail", passes, "pass"));
    }

    /** Every scenario the runner runs over stdio in the 2026-07-28 era: both eras' and input-required-loop. */
    private static final List<String> RUNNABLE_2026_OVER_STDIO = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(TransportKind.STDIO, Era.STATELESS)).map(Scenario::name).toList();

    /**
     * Over stdio in the 2026-07-28 era (the client in its 2026 mode spawns the stdio proxy in front
     * of the demo server with --dual-era): the well-behaved client passes every scenario that
     * applies, with each message's text in the journal. It probes server/discover in place, on
     * the process it then talks to (the run below probes as the SDK's own transport does).
     */
    @Test
    void overStdioIn2026TheWellBehavedClientPassesEveryScenarioThatApplies() throws Exception {
        Map<String, String> verdicts = drill("none", "42", "stdio", List.of(), "2026");
        assertThat(verdicts.keySet()).as(err.toString()).containsExactlyElementsOf(RUNNABLE_2026_OVER_STDIO)
                .contains("out-of-order", "server-crash", "input-required-loop")
                .doesNotContain("session-404", "header-mismatch", "retry-after-503");
        assertThat(verdicts).as(err.toString()).allSatisfy((name, outcome) -> assertThat(outcome).as(name)
                .isEqualTo("pass"));
        Map<String, List<String>> bySession = sessions(0);
        assertThat(bySession.keySet()).as("one process").containsExactly("stdio");
        assertThat(bySession.get("stdio").get(0)).startsWith("server/discover");
        assertThat(bySession.get("stdio")).anySatisfy(line -> assertThat(line)
                .startsWith("tools/list").contains("\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""));
    }

    /**
     * The TypeScript SDK 2.4's own stdio transport probes server/discover on a process of its own
     * first, then starts the one it talks to: two stdio proxies per run, whose journals the drill
     * grades as one (the probe's session first, then the run's, {@code stdio#2}).
     */
    @Test
    void overStdioIn2026ASiblingProbeProcessIsGradedWithTheRun() throws Exception {
        assertThat(drill("none", "42", "stdio", List.of("answer-lost"), "2026", List.of("--probe", "sibling")))
                .as(err.toString()).isEqualTo(Map.of("answer-lost", "pass"));
        Map<String, List<String>> bySession = sessions(0);
        assertThat(bySession.keySet()).as("the probe's process, then the run's").containsExactly("stdio", "stdio#2");
        assertThat(bySession.get("stdio")).allSatisfy(line -> assertThat(line).startsWith("server/discover"));
        assertThat(bySession.get("stdio#2")).anySatisfy(line -> assertThat(line).startsWith("tools/list")
                .contains("\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""));
    }

    /** The journal of the last drill's scenario {@code index}: each session's messages, method and text, in order. */
    private Map<String, List<String>> sessions(int index) {
        Map<String, List<String>> bySession = new LinkedHashMap<>();
        lastCard.get("scenarios").get(index).get("journal").get("entries").forEach(e -> bySession
                .computeIfAbsent(e.get("session").asText(), k -> new ArrayList<>())
                .add(e.path("method").asText() + " " + e.path("message").asText()));
        return bySession;
    }

    /**
     * Over stdio in 2026, twins on their scenario: the one with no bound on input_required rounds
     * (the era's own scenario, stopped at the timeout), and the one that resends a read under its
     * old id (a MUST failed, exit 1). The well-behaved run above passes both.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {"endless-input; input-required-loop", "reuse-id; request-dropped"})
    void overStdioIn2026EachTwinFailsItsScenario(String flaw, String fails) throws Exception {
        assertThat(drill(flaw, "42", "stdio", List.of(fails), "2026")).as("the " + flaw + " twin over stdio in 2026\n"
                + err).isEqualTo(Map.of(fails, "fail"));
    }

    @Test
    void twoRunsWithOneSeedGiveTheSameScorecard() throws Exception {
        // The reuse-id twin: a scorecard with a MUST failure in it, not only passes.
        Map<String, String> first = drill("reuse-id", "7");
        Map<String, String> second = drill("reuse-id", "7");
        assertThat(first).containsEntry("request-dropped", "fail");
        assertThat(second).as(err.toString()).isEqualTo(first);
    }
}
