package dev.mcpchaos.rules.fault;

import java.util.Objects;

/**
 * One parameter a fault type declares: its key in a rule file's {@code fault:} mapping and its
 * default as the rule reference ({@code docs/rules.md}) writes it, which a guard test compares
 * with that page's table.
 *
 * @param name the key, such as {@code jitter}
 * @param defaultValue the default as documented, without markup: {@code required}, {@code 0s},
 *                     {@code none}; empty when the parameter has none and is not required on its
 *                     own (it is one of a choice, such as {@code truncate}'s {@code at})
 */
public record FaultParameter(String name, String defaultValue) {

    /** The default of a parameter that must be given. */
    public static final String REQUIRED = "required";

    public FaultParameter {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(defaultValue, "defaultValue");
        if (name.isEmpty() || name.equals("type")) {
            throw new IllegalArgumentException("name: '" + name + "' (expected: a key other than type)");
        }
    }

    /** A parameter that must be given. */
    public static FaultParameter required(String name) {
        return new FaultParameter(name, REQUIRED);
    }

    /** A parameter with this documented default, such as {@code 0s}. */
    public static FaultParameter optional(String name, String defaultValue) {
        return new FaultParameter(name, defaultValue);
    }

    /** Whether a rule must give it. */
    public boolean isRequired() {
        return REQUIRED.equals(defaultValue);
    }
}
