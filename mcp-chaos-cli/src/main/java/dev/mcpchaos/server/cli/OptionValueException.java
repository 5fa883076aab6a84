package dev.mcpchaos.server.cli;

/**
 * A value given to an option that cannot be used, found when the command runs (a directory that
 * does not exist, a URL of the wrong kind). {@link Main} prints its message as one line, which
 * names the option, the value and what was expected, and exits with {@link #EXIT_CODE}; the usage
 * is not printed, since the option was written correctly and only its value is wrong.
 */
final class OptionValueException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The exit code, as for picocli's usage errors and a refused rule file: nothing was started. */
    static final int EXIT_CODE = 2;

    /**
     * The exit code for a command that failed with {@code e}: {@link #EXIT_CODE} for a value that
     * cannot be used, 1 for the rest. The one rule for picocli's handler and {@link FastStart}.
     */
    static int exitCodeOf(Exception e) {
        return e instanceof OptionValueException ? EXIT_CODE : 1;
    }

    /** @param message such as {@code --cwd: '/nonexistent' does not exist (expected: ...)} */
    OptionValueException(String message) {
        super(message, null, false, false); // the message says all; a stack trace would not help the user
    }
}
