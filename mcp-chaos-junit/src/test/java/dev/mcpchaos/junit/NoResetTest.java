package dev.mcpchaos.junit;

import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.rules.Rules;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code resetBeforeEach = false}: the next test meets the rule the test before added, and the class's seed. */
@McpChaosTest(demo = McpChaosTest.Demo.HTTP, resetBeforeEach = false, seed = 9)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NoResetTest {

    @Test
    @Order(1)
    void addsARule(ChaosProxy proxy) {
        proxy.chaos().add(Rules.drop("kept").onTool("nothing-calls-this"));
        proxy.chaos().faultsOff();
    }

    @Test
    @Order(2)
    void findsItStillThere(ChaosProxy proxy) {
        assertThat(proxy.chaos().rules()).extracting(RuleStats::name).containsExactly("kept");
        assertThat(proxy.chaos().faultsEnabled()).isFalse();
        assertThat(proxy.seed()).isEqualTo(9);
    }
}
