package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.Direction;

import java.lang.reflect.Constructor;
import java.util.List;
import java.util.Objects;

/**
 * Assertions on a {@link JournalSnapshot}, read like a sentence:
 * {@code journal.verify().client().sent(toolCall("search")).times(2)}. A failed one throws an
 * {@link AssertionError} (opentest4j's {@code AssertionFailedError}, with expected and actual,
 * when it is on the class path) whose message says what was expected, what the journal holds
 * instead, the relevant entries one per line, and whether entries were dropped for capacity.
 */
public final class JournalVerification {

    /** How many entries a failure message lists at most; it says how many it left out. */
    static final int MAX_LISTED = 20;

    private final JournalSnapshot snapshot;

    JournalVerification(JournalSnapshot snapshot) {
        this.snapshot = Objects.requireNonNull(snapshot, "snapshot");
    }

    /** Assertions on what the MCP client sent (and how it behaved). */
    public ClientVerification client() {
        return new ClientVerification(snapshot);
    }

    /** Assertions on what the MCP server sent. */
    public SenderVerification server() {
        return new SenderVerification(snapshot, Direction.SERVER_TO_CLIENT, "the server");
    }

    /** The snapshot the assertions read. */
    public JournalSnapshot snapshot() {
        return snapshot;
    }

    /**
     * Throws the failure: {@code expected}, {@code actual}, then {@code relevant} one per line
     * under {@code heading}, then the snapshot's summary.
     */
    static AssertionError failure(JournalSnapshot snapshot, String expected, String actual, String heading,
                                  List<JournalEntry> relevant) {
        StringBuilder message = new StringBuilder(256);
        message.append("Expected ").append(expected).append(",\nbut ").append(actual).append('.');
        if (heading != null) {
            message.append('\n').append(heading).append(relevant.isEmpty() ? ": none" : " (" + relevant.size() + "):");
            for (int i = 0; i < Math.min(relevant.size(), MAX_LISTED); i++) {
                message.append("\n  ").append(relevant.get(i));
            }
            if (relevant.size() > MAX_LISTED) {
                message.append("\n  ... and ").append(relevant.size() - MAX_LISTED).append(" more");
            }
        }
        message.append('\n').append(snapshot.summary());
        return assertionError(message.toString(), expected, actual);
    }

    private static final Constructor<? extends AssertionError> RICH = richConstructor();

    @SuppressWarnings("unchecked")
    private static Constructor<? extends AssertionError> richConstructor() {
        try {
            Class<?> type = Class.forName("org.opentest4j.AssertionFailedError", false,
                    JournalVerification.class.getClassLoader());
            return (Constructor<? extends AssertionError>) type.getConstructor(String.class, Object.class, Object.class);
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            return null; // not on the class path: a plain AssertionError says the same
        }
    }

    private static AssertionError assertionError(String message, String expected, String actual) {
        if (RICH != null) {
            try {
                return RICH.newInstance(message, expected, actual);
            } catch (ReflectiveOperationException | RuntimeException e) {
                // fall through to the plain one
            }
        }
        return new AssertionError(message);
    }
}
