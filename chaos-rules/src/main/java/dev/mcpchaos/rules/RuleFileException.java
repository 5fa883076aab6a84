package dev.mcpchaos.rules;

import java.util.Objects;

/**
 * A rule file that cannot be used: unreadable, not YAML/JSON, or with a value that is not
 * allowed. The message names the file, the rule, the field, what was given and what was
 * expected, such as
 * {@code rules.yaml: rule 'slow-search': fault.latency: '-5ms' (expected: a duration >= 0, such as 250ms)}.
 */
public final class RuleFileException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String source;
    private final String rule;
    private final String problem;

    /**
     * @param source the file's name as the user gave it, such as {@code rules.yaml}
     * @param rule the rule's name (or {@code rules[3]} when it has none), or null for the file as a whole
     * @param problem what is wrong, such as {@code fault.latency: '-5ms' (expected: ...)}
     */
    public RuleFileException(String source, String rule, String problem) {
        super(source + ": " + (rule != null ? rule + ": " : "") + problem);
        this.source = Objects.requireNonNull(source, "source");
        this.rule = rule;
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    /** The file, as named by the user. */
    public String source() {
        return source;
    }

    /** {@code rule 'name'} or {@code rules[3]}, or null when the problem is not in a rule. */
    public String rule() {
        return rule;
    }

    /** What is wrong, without the file and rule. */
    public String problem() {
        return problem;
    }
}
