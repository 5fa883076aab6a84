package dev.mcpchaos.server.cli;

import dev.mcpchaos.rules.RuleSet;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mcp-chaos demo} says where its seed came from as the rule engine decides it. */
class DemoCommandTest {

    private static final String RULE = "rules:\n  - {name: lost, fault: {type: drop}}\n";

    @Test
    void theSeedIsGivenFromTheProfileOrGeneratedInThatOrder() {
        RuleSet withoutSeed = RuleSet.parse(RULE, "p.yaml");
        RuleSet withSeed = RuleSet.parse("seed: 3\n" + RULE, "p.yaml");
        assertThat(DemoCommand.seedOrigin(7L, withSeed)).isEqualTo("given");
        assertThat(DemoCommand.seedOrigin(null, withSeed)).isEqualTo("from the profile");
        assertThat(DemoCommand.seedOrigin(null, withoutSeed)).isEqualTo("generated");
    }
}
