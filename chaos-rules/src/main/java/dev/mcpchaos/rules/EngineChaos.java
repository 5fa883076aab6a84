package dev.mcpchaos.rules;

import java.nio.file.Path;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/** {@link Chaos} over an in-process {@link RuleEngine}; see {@link RuleEngine#chaos()}. */
final class EngineChaos implements Chaos {

    private final RuleEngine engine;

    EngineChaos(RuleEngine engine) {
        this.engine = engine;
    }

    @Override
    public RuleHandle add(RuleDraft rule) {
        Objects.requireNonNull(rule, "rule");
        return add(rule.toRule());
    }

    @Override
    public RuleHandle add(String ruleText) {
        Objects.requireNonNull(ruleText, "ruleText");
        return add(RuleSet.parseRule(ruleText, "chaos().add"));
    }

    private RuleHandle add(Rule rule) {
        String cause = "chaos().add(" + rule.name() + ")";
        engine.update(cause, old -> old.with(rule, cause));
        return new RuleHandle(this, rule.name());
    }

    @Override
    public void load(String ruleFileText) {
        Objects.requireNonNull(ruleFileText, "ruleFileText");
        RuleSet rules = RuleSet.parse(ruleFileText, "chaos().load");
        engine.replace(rules, "chaos().load");
    }

    @Override
    public void load(Path ruleFile) {
        RuleSet rules = RuleSet.load(ruleFile);
        engine.replace(rules, "chaos().load(" + ruleFile + ")");
    }

    @Override
    public RuleHandle rule(String name) {
        Objects.requireNonNull(name, "name");
        if (engine.ruleSet().rule(name).isEmpty()) {
            throw new NoSuchElementException("rule '" + name + "': no rule has this name");
        }
        return new RuleHandle(this, name);
    }

    @Override
    public List<RuleStats> rules() {
        return engine.stats();
    }

    @Override
    public void remove(String name) {
        Objects.requireNonNull(name, "name");
        String cause = "chaos().remove(" + name + ")";
        engine.update(cause, old -> old.without(name, cause));
    }

    @Override
    public void enabled(String name, boolean enabled) {
        Objects.requireNonNull(name, "name");
        String cause = "chaos()." + (enabled ? "enable" : "disable") + "(" + name + ")";
        engine.update(cause, old -> old.patch(name, "{\"enabled\": " + enabled + "}", cause + ".json"));
    }

    @Override
    public void faultsOff() {
        engine.faultsEnabled(false, "chaos().faultsOff()");
    }

    @Override
    public void faultsOn() {
        engine.faultsEnabled(true, "chaos().faultsOn()");
    }

    @Override
    public boolean faultsEnabled() {
        return engine.faultsEnabled();
    }

    @Override
    public void reset() {
        engine.reset("chaos().reset()");
    }

    @Override
    public String toString() {
        return "Chaos(" + engine + ')';
    }
}
