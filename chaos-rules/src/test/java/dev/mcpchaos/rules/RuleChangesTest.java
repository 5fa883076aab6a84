package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Changing the rules of a running engine: atomic, validated, and kind to messages in flight. */
class RuleChangesTest {

    private static final String DROP_SEARCH = """
            rules:
              - name: drop-search
                match: {tool: search}
                fault: {type: drop}
            """;

    @Test
    void aReplacementAppliesFromTheNextMessage() {
        try (ChainHarness h = ChainHarness.of(DROP_SEARCH, 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.engine.replace(RuleSet.parse("""
                    rules:
                      - name: drop-fetch
                        match: {tool: fetch}
                        fault: {type: drop}
                    """, "PUT /rules"), "PUT /rules");
            h.fromClient(Msg.call(2, "search"));
            h.fromClient(Msg.call(3, "fetch"));

            assertThat(h.toServer()).containsExactly(Msg.call(2, "search"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("drop-search", "drop-fetch");
            assertThat(h.engine.ruleSet().rules()).extracting(Rule::name).containsExactly("drop-fetch");
        }
    }

    @Test
    void theEngineInspectsWhileARuleMayPickOrAFaultHoldsAMessage() {
        String slow = """
                rules:
                  - name: slow
                    match: {tool: search}
                    fault: {type: latency, latency: 500ms}
                """;
        try (ChainHarness h = ChainHarness.of(slow, 1)) {
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.SERVER_TO_CLIENT))
                    .as("a rule on requests counts for both directions").isTrue();
            h.fromClient(Msg.call(1, "search"));
            h.engine.replace(RuleSet.parse("rules: []", "PUT /rules"), "PUT /rules");
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.CLIENT_TO_SERVER))
                    .as("no rules, but a message still held").isTrue();
            h.advanceMillis(600);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.CLIENT_TO_SERVER)).isFalse();
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.SERVER_TO_CLIENT)).isFalse();
            h.engine.replace(RuleSet.parse(slow, "PUT /rules"), "PUT /rules");
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.CLIENT_TO_SERVER)).isTrue();
            h.engine.faultsEnabled(false, "panic");
            assertThat(h.engine.inspects(TransportKind.STDIO, Direction.CLIENT_TO_SERVER))
                    .as("faults off: no rule may pick").isFalse();
        }
    }

    @Test
    void aMessageHeldByAFaultFinishesWithTheRulesItMet() {
        String yaml = """
                rules:
                  - name: slow
                    match: {tool: search}
                    fault: {type: latency, latency: 500ms}
                  - name: drop-after-slow
                    match: {tool: search}
                    fault: {type: drop}
                """;
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.advanceMillis(100);
            h.engine.update("test", rules -> rules.without("drop-after-slow", "test"));
            h.advanceMillis(500);
            h.fromClient(Msg.call(2, "search"));
            h.advanceMillis(600);

            // #1 was in the latency when the drop rule went: it still meets it. #2 does not.
            assertThat(h.toServer()).containsExactly(Msg.call(2, "search"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("slow", "drop-after-slow", "slow");
        }
    }

    @Test
    void anUnchangedRuleKeepsItsCountersAndAChangedOneStartsAfresh() {
        String yaml = """
                rules:
                  - name: twice
                    match: {tool: a}
                    times: 2
                    fault: {type: drop}
                  - name: once
                    match: {tool: b}
                    times: 1
                    fault: {type: drop}
                """;
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.call(1, "a"));
            h.fromClient(Msg.call(2, "b"));
            // Re-reading the same file (a hot reload of an unrelated edit) changes nothing.
            h.engine.replace(RuleSet.parse(yaml, "again.yaml"), "reload");
            h.fromClient(Msg.call(3, "a"));
            h.fromClient(Msg.call(4, "a"));
            h.fromClient(Msg.call(5, "b"));
            // Changing 'once' (times 1 -> 1 again, but now with a probability) starts it afresh.
            h.engine.update("PATCH", rules -> rules.patch("once", "{probability: 1.0}", "PATCH"));
            h.fromClient(Msg.call(6, "b"));

            assertThat(h.toServer()).containsExactly(Msg.call(4, "a"), Msg.call(5, "b"));
            assertThat(h.engine.stats()).extracting(RuleStats::name, RuleStats::matched, RuleStats::injected)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("twice", 3L, 2L),
                            org.assertj.core.groups.Tuple.tuple("once", 1L, 1L));
        }
    }

    @Test
    void thePanicSwitchStopsEveryFaultAndTurnsThemBackOn() {
        List<String> changes = new ArrayList<>();
        RuleSet rules = RuleSet.parse(DROP_SEARCH, "r.yaml");
        try (ChainHarness h = new ChainHarness(rules, 1, TransportKind.STDIO,
                b -> b.rulesListener((cause, set, on) -> changes.add(cause + ":" + on)))) {
            assertThat(h.engine.faultsEnabled(false, "POST /faults/disable")).isTrue();
            assertThat(h.engine.faultsEnabled(false, "again")).isFalse();
            h.fromClient(Msg.call(1, "search"));
            assertThat(h.engine.faultsEnabled()).isFalse();
            h.engine.faultsEnabled(true, "POST /faults/enable");
            h.fromClient(Msg.call(2, "search"));

            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            assertThat(changes).containsExactly("POST /faults/disable:false", "POST /faults/enable:true");
            assertThat(h.engine.ruleSet().rules()).hasSize(1); // the rules stay while faults are off
        }
    }

    @Test
    void anInvalidChangeIsRefusedAndTheOldRulesStay() {
        try (ChainHarness h = ChainHarness.of(DROP_SEARCH, 1)) {
            assertThatThrownBy(() -> h.engine.update("PATCH",
                    rules -> rules.patch("drop-search", "{probability: 2}", "PATCH /rules/drop-search")))
                    .isInstanceOf(RuleFileException.class)
                    .hasMessage("PATCH /rules/drop-search: rule 'drop-search': probability: 2.0 "
                            + "(expected: a number from 0 to 1, such as 0.3)");
            // An HTTP-only fault on a stdio engine: refused with the reason.
            Rule httpOnly = RuleSet.parseRule("{name: teapot, fault: {type: http_status, status: 418}}", "POST /rules");
            assertThatThrownBy(() -> h.engine.update("POST", rules -> rules.with(httpOnly, "POST /rules")))
                    .isInstanceOf(RuleFileException.class)
                    .hasMessageContaining("rule 'teapot': http_status: only applies to the http transport");
            assertThatThrownBy(() -> h.engine.update("DELETE", rules -> rules.without("nope", "DELETE")))
                    .isInstanceOf(NoSuchElementException.class).hasMessage("rule 'nope': no rule has this name");
            assertThatThrownBy(() -> h.engine.update("POST", rules -> rules.with(
                    RuleSet.parseRule("{name: drop-search, fault: {type: drop}}", "POST /rules"), "POST /rules")))
                    .isInstanceOf(RuleFileException.class).hasMessageContaining("name: 'drop-search'");

            h.fromClient(Msg.call(1, "search"));
            assertThat(h.toServer()).isEmpty();
            assertThat(h.engine.ruleSet().rules()).extracting(Rule::name).containsExactly("drop-search");
        }
    }

    @Test
    void aPatchMergesIntoTheRuleAsWritten() {
        RuleSet rules = RuleSet.parse("""
                rules:
                  - name: slow
                    match: {method: tools/call, tool: search}
                    probability: 0.5
                    fault: {type: latency, latency: 200ms}
                """, "r.yaml");
        RuleSet patched = rules.patch("slow", "{\"match\": {\"tool\": null}, \"fault\": {\"latency\": \"1s\"}, "
                + "\"probability\": null, \"enabled\": false}", "PATCH.json");

        assertThat(patched.toJson()).isEqualTo("{\"rules\":[{\"name\":\"slow\",\"match\":{\"method\":\"tools/call\"},"
                + "\"fault\":{\"type\":\"latency\",\"latency\":\"1s\"},\"enabled\":false}]}");
        Rule slow = patched.rule("slow").orElseThrow();
        assertThat(slow.enabled()).isFalse();
        assertThat(slow.probability()).isEqualTo(1.0);
        assertThatThrownBy(() -> rules.patch("slow", "{name: quick}", "PATCH"))
                .hasMessageContaining("name: 'quick' (expected: the rule's own name or none");
        assertThatThrownBy(() -> rules.patch("slow", "{colour: red}", "PATCH"))
                .hasMessageContaining("colour: unknown key");
        assertThatThrownBy(() -> rules.patch("slow", "[1]", "PATCH"))
                .hasMessageContaining("top level: [1] (expected: a mapping of the rule's keys to change");
    }

    @Test
    void aRuleBuiltInCodeCanOnlyBeSwitchedOnAndOff() {
        RuleSet rules = RuleSet.of("code", List.of(Rule.builder("coded",
                dev.mcpchaos.rules.fault.FaultRegistry.create("drop", dev.mcpchaos.rules.fault.FaultParams.of(java.util.Map.of())))
                .build()));
        assertThat(rules.patch("coded", "{enabled: false}", "PATCH").rule("coded").orElseThrow().enabled()).isFalse();
        assertThatThrownBy(() -> rules.patch("coded", "{probability: 0.5}", "PATCH"))
                .hasMessageContaining("the rule was built in code");
        assertThat(rules.toJson()).contains("\"name\":\"coded\"", "\"fault\":{\"type\":\"drop\"}",
                "\"built_in_code\":true");
    }

    @Test
    void aRuleAddedToAnEngineWithoutRulesApplies() {
        try (ChainHarness h = new ChainHarness(RuleSet.of("no rules", List.of()), 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.engine.update("POST /rules", rules -> rules.with(RuleSet.parseRule(
                    "name: drop-search\nmatch: {direction: client_to_server, tool: search}\nfault: {type: drop}\n",
                    "POST /rules"), "POST /rules"));
            h.fromClient(Msg.call(2, "search"));

            assertThat(h.toServer()).containsExactly(Msg.call(1, "search"));
            assertThat(h.engine.stats()).extracting(RuleStats::injected).containsExactly(1L);
        }
    }
}
