package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The same seed and the same traffic give the same faults; another seed gives others. */
class ReproducibilityTest {

    private static final String RULES = String.join("\n",
            "rules:",
            "  - name: flaky-search",
            "    match: {tool: 'search*'}",
            "    probability: 0.3",
            "    fault: {type: error, code: -32000, message: flaky}",
            "  - name: jittery",
            "    match: {direction: server_to_client, kind: response}",
            "    probability: 0.5",
            "    fault: {type: latency, latency: 200ms, jitter: 150ms, distribution: normal}",
            "  - name: garbage",
            "    match: {method: tools/list}",
            "    probability: 0.4",
            "    fault: {type: corrupt, mode: garbage}",
            "  - name: shuffled-progress",
            "    match: {method: notifications/progress}",
            "    fault: {type: reorder, window: 3}",
            "  - name: sometimes-twice",
            "    match: {kind: notification}",
            "    after: 5",
            "    times: 4",
            "    probability: 0.5",
            "    fault: {type: duplicate}",
            "");

    /** What a run produced: the fault events (times included: virtual time) and the bytes each way. */
    private record Run(List<String> events, String toServer, String toClient) {
    }

    private static Run run(long seed) {
        try (ChainHarness h = ChainHarness.of(RULES, seed)) {
            for (int i = 0; i < 60; i++) {
                h.fromClient(Msg.call(i, i % 2 == 0 ? "search_docs" : "fetch"));
                h.fromClient(Msg.request(1000 + i, "tools/list"));
                h.advanceMillis(20);
                h.fromServer("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":" + i
                        + "}}");
                h.fromServer(Msg.textResult(i, "result " + i));
                h.fromServer(Msg.result(1000 + i, "{\"tools\":[]}"));
                h.advanceMillis(30);
            }
            h.advanceMillis(5000);
            return new Run(h.events.stream().map(FaultEvent::toString).toList(),
                    h.stream(Direction.CLIENT_TO_SERVER),
                    h.stream(Direction.SERVER_TO_CLIENT));
        }
    }

    @Test
    void theSameSeedGivesTheSameFaults() {
        Run first = run(20240601);
        Run second = run(20240601);

        assertThat(first.events()).hasSizeGreaterThan(50);
        assertThat(first.events()).extracting(e -> e.replaceAll(".* rule '([^']+)'.*", "$1"))
                .contains("flaky-search", "jittery", "garbage", "shuffled-progress", "sometimes-twice");
        assertThat(second.events()).isEqualTo(first.events());
        assertThat(second.toServer()).isEqualTo(first.toServer());
        assertThat(second.toClient()).isEqualTo(first.toClient());
    }

    @Test
    void anotherSeedGivesOtherFaults() {
        Run first = run(1);
        Run other = run(2);
        assertThat(other.events()).isNotEqualTo(first.events());
        assertThat(other.toClient()).isNotEqualTo(first.toClient());
    }

    @Test
    void theSeedGivenBeatsTheFilesWhichBeatsAGeneratedOne() {
        RuleSet withSeed = RuleSet.parse("seed: 11\nrules: []\n", "s.yaml");
        RuleSet withoutSeed = RuleSet.parse("rules: []\n", "s.yaml");
        assertThat(RuleEngine.builder(withSeed).seed(5).build().seed()).isEqualTo(5);
        assertThat(RuleEngine.builder(withSeed).build().seed()).isEqualTo(11);
        long generated = RuleEngine.builder(withoutSeed).build().seed();
        assertThat(generated).isNotNegative();
        assertThat(RuleEngine.builder(withoutSeed).build().seed()).isNotEqualTo(generated);
    }

    @Test
    void aRulesDrawsDoNotDependOnTheOtherRules() {
        // The same rule alone, or after another probabilistic rule, decides the same way.
        String alone = "rules:\n  - name: flaky\n    match: {method: ping}\n    probability: 0.5\n    fault: {type: drop}\n";
        String withOther = "rules:\n  - name: other\n    match: {method: ping}\n    probability: 0.5\n"
                + "    fault: {type: noise}\n" + alone.substring("rules:\n".length());
        assertThat(droppedIds(withOther)).isEqualTo(droppedIds(alone));
    }

    private static List<Object> droppedIds(String yaml) {
        try (ChainHarness h = ChainHarness.of(yaml, 99)) {
            for (int i = 0; i < 100; i++) {
                h.fromClient(Msg.request(i, "ping"));
            }
            return h.events.stream().filter(e -> e.rule().equals("flaky")).map(FaultEvent::id).toList();
        }
    }
}
