package dev.mcpchaos.rules.fault;

import java.util.Objects;

/**
 * A fault parameter (or a rule field) with a value that is not allowed. The message reads
 * {@code field: given (expected: what is allowed)}, such as
 * {@code latency: '-5ms' (expected: a duration >= 0, such as 250ms)}; the rule file loader puts
 * the file and the rule in front of it.
 */
public final class InvalidParameterException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String field;
    private final String given;
    private final String expected;

    /**
     * @param field the parameter's name, or a path inside it such as {@code patch[1].op}
     * @param given the value as given ({@code 'text'} quoted, numbers bare), or {@code missing}
     * @param expected what would have been accepted
     */
    public InvalidParameterException(String field, String given, String expected) {
        super(field + ": " + given + " (expected: " + expected + ')');
        this.field = Objects.requireNonNull(field, "field");
        this.given = Objects.requireNonNull(given, "given");
        this.expected = Objects.requireNonNull(expected, "expected");
    }

    /** Throws unless {@code condition} holds; for the validation in config records. */
    public static void check(boolean condition, String field, Object given, String expected) {
        if (!condition) {
            throw new InvalidParameterException(field, String.valueOf(given), expected);
        }
    }

    /** The parameter's name or path, relative to the fault (or the rule). */
    public String field() {
        return field;
    }

    /** The value as given, formatted for the message. */
    public String given() {
        return given;
    }

    /** What would have been accepted. */
    public String expected() {
        return expected;
    }

    /** The same complaint about a field inside {@code parent}: {@code parent.field}. */
    public InvalidParameterException under(String parent) {
        return new InvalidParameterException(parent + '.' + field, given, expected);
    }
}
