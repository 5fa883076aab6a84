package dev.mcpchaos.server.metrics;

import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleSet;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** The panic switch and each rule's on/off state as gauges, following every change of the engine's rules. */
class RulesGaugesTest {

    private static final String RULES = "rules:\n"
            + "  - {name: slow, fault: {type: latency, latency: 10ms}}\n"
            + "  - {name: lossy, enabled: false, fault: {type: drop}}\n";

    @Test
    void theGaugesFollowTheRulesAndThePanicSwitch() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ProxyMetrics metrics = new ProxyMetrics(registry);
        RuleEngine engine = RuleEngine.builder(RuleSet.parse(RULES, "test")).seed(1)
                .rulesListener(metrics.rulesListener()).build();
        metrics.rulesListener().rulesChanged("start", engine.ruleSet(), engine.faultsEnabled());

        assertThat(faultsEnabled(registry)).isEqualTo(1.0);
        assertThat(rules(registry)).isEqualTo(Map.of("slow", 1.0, "lossy", 0.0));

        engine.faultsEnabled(false, "panic");
        assertThat(faultsEnabled(registry)).isEqualTo(0.0);
        assertThat(rules(registry)).as("the rules stay as they are").isEqualTo(Map.of("slow", 1.0, "lossy", 0.0));

        engine.faultsEnabled(true, "calm");
        engine.update("lossy on, slow gone", set -> set.without("slow", "test")
                .patch("lossy", "{\"enabled\": true}", "test"));
        assertThat(faultsEnabled(registry)).isEqualTo(1.0);
        assertThat(rules(registry)).as("a removed rule loses its series").isEqualTo(Map.of("lossy", 1.0));

        engine.reset("before each test");
        assertThat(rules(registry)).as("back to the starting rules").isEqualTo(Map.of("slow", 1.0, "lossy", 0.0));
    }

    private static double faultsEnabled(SimpleMeterRegistry registry) {
        return registry.get(ProxyMetrics.FAULTS_ENABLED).gauge().value();
    }

    private static Map<String, Double> rules(SimpleMeterRegistry registry) {
        Map<String, Double> byRule = new TreeMap<>();
        for (Gauge gauge : registry.find(ProxyMetrics.RULES_ENABLED).gauges()) {
            byRule.put(gauge.getId().getTag("rule"), gauge.value());
        }
        return byRule;
    }
}
