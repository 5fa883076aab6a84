package dev.mcpchaos.rules;

import java.nio.file.Path;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Steers the chaos of a running proxy: one implementation over the in-process rule engine
 * ({@link RuleEngine#chaos()}), one over the control API (the Testcontainers module's
 * {@code McpChaosContainer.chaos()}), with the same behaviour. Every change applies atomically to
 * the next message; rules are checked by the rule file parser, so a bad one is refused with the
 * same message as in a file ({@link RuleFileException}).
 *
 * <pre>{@code
 * RuleHandle slow = chaos.add(Rules.latency("slow", Duration.ofMillis(300)).onTool("search*").onResponses());
 * chaos.add("{name: busy, match: {kind: request}, fault: {type: http_status, status: 503}}");
 * slow.disable();
 * chaos.faultsOff();          // the panic switch
 * chaos.reset();              // before each test: the rules the proxy started with, faults on, counters at 0
 * }</pre>
 */
public interface Chaos {

    /**
     * Adds a rule after the others.
     *
     * @throws RuleFileException when it is not valid, cannot work on this proxy's transport, or
     *                           its name is taken
     */
    default RuleHandle add(RuleDraft rule) {
        return add(rule.toJson());
    }

    /**
     * Adds one rule given as text (YAML or JSON: a mapping with {@code name}, {@code match},
     * {@code fault}, ..., as an item of a rule file's {@code rules} list).
     *
     * @throws RuleFileException when it is not valid, cannot work on this proxy's transport, or
     *                           its name is taken
     */
    RuleHandle add(String ruleText);

    /**
     * Replaces every rule with those of a rule file given as text (YAML or JSON,
     * {@code rules: [...]}; its {@code seed} is ignored, the run keeps its own).
     *
     * @throws RuleFileException when the text is not a valid rule file (the rules in force stay)
     */
    void load(String ruleFileText);

    /**
     * Replaces every rule with those of a rule file (YAML, or JSON for {@code .json}).
     *
     * @throws RuleFileException when the file cannot be read or is not valid (the rules in force stay)
     */
    void load(Path ruleFile);

    /**
     * A handle on the rule named {@code name}.
     *
     * @throws NoSuchElementException when no rule has that name
     */
    RuleHandle rule(String name);

    /** Every rule in force, enabled or not, in order, with its counters. */
    List<RuleStats> rules();

    /**
     * Removes the rule named {@code name}.
     *
     * @throws NoSuchElementException when no rule has that name
     */
    void remove(String name);

    /**
     * Switches the rule named {@code name} on or off; its counters start again from 0.
     *
     * @throws NoSuchElementException when no rule has that name
     */
    void enabled(String name, boolean enabled);

    /** The panic switch: no rule picks any message from the next one on, until {@link #faultsOn()}. */
    void faultsOff();

    /** Turns faults back on after {@link #faultsOff()}. */
    void faultsOn();

    /** Whether faults are on. */
    boolean faultsEnabled();

    /**
     * Back to how the proxy started: its starting rules (rules added since are removed, those
     * removed are back, each enabled as written), faults on, and every rule's counters
     * ({@code after}, {@code times}, matched, injected) at 0. What a test calls before it begins.
     */
    void reset();
}
