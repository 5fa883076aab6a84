package dev.mcpchaos.rules;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.NoSuchElementException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Chaos} over an engine: each call changes what the next message meets, and reset() goes back. */
class EngineChaosTest {

    private static final String START = """
            rules:
              - name: drop-fetch
                match: {tool: fetch}
                fault: {type: drop}
            """;

    @Test
    void anAddedRuleActsUntilRemovedAndTheMessageArrivesAfter() {
        try (ChainHarness h = ChainHarness.of("rules: []", 1)) {
            RuleHandle lose = h.engine.chaos().add(Rules.drop("lose-search").onTool("search").onRequests());
            h.fromClient(Msg.call(1, "search"));
            assertThat(h.toServer()).isEmpty();
            assertThat(lose.injected()).isEqualTo(1);

            lose.remove();
            h.fromClient(Msg.call(2, "search"));
            assertThat(h.toServer()).containsExactly(Msg.call(2, "search"));
            assertThatThrownBy(lose::remove).isInstanceOf(NoSuchElementException.class)
                    .hasMessage("rule 'lose-search': no rule has this name");
        }
    }

    @Test
    void disableEnableAndThePanicSwitch() {
        try (ChainHarness h = ChainHarness.of(START, 1)) {
            Chaos chaos = h.engine.chaos();
            RuleHandle drop = chaos.rule("drop-fetch");
            drop.disable();
            h.fromClient(Msg.call(1, "fetch"));
            drop.enable();
            h.fromClient(Msg.call(2, "fetch"));
            chaos.faultsOff();
            assertThat(chaos.faultsEnabled()).isFalse();
            h.fromClient(Msg.call(3, "fetch"));
            chaos.faultsOn();
            h.fromClient(Msg.call(4, "fetch"));
            assertThat(h.toServer()).containsExactly(Msg.call(1, "fetch"), Msg.call(3, "fetch"));
            assertThat(drop.stats().enabled()).isTrue();
            assertThat(drop.injected()).isEqualTo(2);
        }
    }

    @Test
    void resetGoesBackToTheStartingRulesFaultsOnAndCountersAtZero() {
        try (ChainHarness h = ChainHarness.of(START, 1)) {
            Chaos chaos = h.engine.chaos();
            h.fromClient(Msg.call(1, "fetch"));
            chaos.add("{name: lose-search, match: {tool: search}, fault: {type: drop}}");
            chaos.remove("drop-fetch");
            chaos.faultsOff();

            chaos.reset();

            assertThat(chaos.faultsEnabled()).isTrue();
            assertThat(chaos.rules()).extracting(RuleStats::name).containsExactly("drop-fetch");
            assertThat(chaos.rule("drop-fetch").matched()).isZero();
            h.fromClient(Msg.call(2, "search"));
            h.fromClient(Msg.call(3, "fetch"));
            assertThat(h.toServer()).containsExactly(Msg.call(2, "search"));
        }
    }

    @Test
    void resetStartsTimesAfresh() {
        try (ChainHarness h = ChainHarness.of("""
                rules:
                  - name: once
                    match: {tool: fetch}
                    times: 1
                    fault: {type: drop}
                """, 1)) {
            h.fromClient(Msg.call(1, "fetch"));
            h.fromClient(Msg.call(2, "fetch"));
            h.engine.chaos().reset();
            h.fromClient(Msg.call(3, "fetch"));
            h.fromClient(Msg.call(4, "fetch"));
            assertThat(h.toServer()).containsExactly(Msg.call(2, "fetch"), Msg.call(4, "fetch"));
        }
    }

    @Test
    void loadReplacesEveryRuleFromTextOrAFile() throws Exception {
        try (ChainHarness h = ChainHarness.of(START, 1)) {
            Chaos chaos = h.engine.chaos();
            chaos.load("rules: [{name: a, fault: {type: drop}}, {name: b, fault: {type: drop}}]");
            assertThat(chaos.rules()).extracting(RuleStats::name).containsExactly("a", "b");
            Path file = Files.createTempFile("rules", ".json");
            try {
                Files.writeString(file, "{\"rules\": [{\"name\": \"c\", \"fault\": {\"type\": \"noise\"}}]}");
                chaos.load(file);
            } finally {
                Files.delete(file);
            }
            assertThat(chaos.rules()).extracting(RuleStats::name).containsExactly("c");
            assertThatThrownBy(() -> chaos.load("rules: [{name: x}]")).isInstanceOf(RuleFileException.class)
                    .hasMessageContaining("chaos().load: rule 'x'");
            assertThat(chaos.rules()).extracting(RuleStats::name).containsExactly("c");
        }
    }

    @Test
    void aDraftIsShownAsWrittenAndATakenNameIsRefused() {
        try (ChainHarness h = ChainHarness.of(START, 1)) {
            Chaos chaos = h.engine.chaos();
            chaos.add(Rules.latency("slow", Duration.ofMillis(300)).onTool("search*").onResponses());
            assertThat(h.engine.ruleSet().toJson()).contains("{\"name\":\"slow\",\"match\":{\"tool\":\"search*\","
                    + "\"kind\":\"response\"},\"fault\":{\"type\":\"latency\",\"latency\":\"300ms\"}}")
                    .doesNotContain("built_in_code");
            assertThatThrownBy(() -> chaos.add(Rules.drop("slow"))).isInstanceOf(RuleFileException.class)
                    .hasMessageContaining("name: 'slow' (expected: a name no other rule has)");
        }
    }

    @Test
    void resetWithASeedDrawsAsAnEngineBuiltWithThatSeed() {
        String coinFlip = """
                rules:
                  - name: coin
                    probability: 0.5
                    fault: {type: drop}
                """;
        try (ChainHarness built = ChainHarness.of(coinFlip, 5); ChainHarness reseeded = ChainHarness.of(coinFlip, 1)) {
            for (int i = 0; i < 10; i++) {
                reseeded.fromClient(Msg.call(100 + i, "warm-up"));
            }
            reseeded.engine.reset("test", 5);
            assertThat(reseeded.engine.seed()).isEqualTo(5);
            for (int i = 1; i <= 40; i++) {
                built.fromClient(Msg.call(i, "x"));
                reseeded.fromClient(Msg.call(i, "x"));
            }
            List<String> passed = built.toServer();
            assertThat(passed).hasSizeBetween(5, 35);
            assertThat(reseeded.toServer().stream().filter(line -> !line.contains("warm-up")).toList())
                    .isEqualTo(passed);
        }
    }
}
