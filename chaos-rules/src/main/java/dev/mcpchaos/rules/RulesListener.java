package dev.mcpchaos.rules;

/** Told about every change of an engine's rules or of its panic switch, after it took effect. */
@FunctionalInterface
public interface RulesListener {

    /**
     * @param cause what made the change, such as {@code PUT /rules} or {@code rules.yaml changed}
     * @param rules the rules now in force
     * @param faultsEnabled whether faults are on (the panic switch)
     */
    void rulesChanged(String cause, RuleSet rules, boolean faultsEnabled);
}
