package dev.mcpchaos.rules.journal;

import java.util.Objects;
import java.util.function.Predicate;

/**
 * Which journal entries an assertion is about, with words for its failure message: made by
 * {@link Messages} ({@code toolCall("search")}, {@code dropped(...)}), combined with
 * {@link #and}.
 */
public final class MessagePattern implements Predicate<JournalEntry> {

    private final String description;
    private final Predicate<? super JournalEntry> test;

    /**
     * @param description what it matches, as a failure message says it ({@code tools/call of search})
     * @param test which entries it matches
     */
    public MessagePattern(String description, Predicate<? super JournalEntry> test) {
        this.description = Objects.requireNonNull(description, "description");
        this.test = Objects.requireNonNull(test, "test");
    }

    @Override
    public boolean test(JournalEntry entry) {
        return test.test(entry);
    }

    /** Entries this and {@code other} both match. */
    public MessagePattern and(MessagePattern other) {
        Objects.requireNonNull(other, "other");
        return new MessagePattern(description + " and " + other.description, e -> test(e) && other.test(e));
    }

    /** Entries this or {@code other} matches. */
    public MessagePattern or(MessagePattern other) {
        Objects.requireNonNull(other, "other");
        return new MessagePattern(description + " or " + other.description, e -> test(e) || other.test(e));
    }

    /** Entries this pattern does not match. */
    @Override
    public MessagePattern negate() {
        return new MessagePattern("not (" + description + ")", e -> !test(e));
    }

    /** Entries of this pattern in session {@code session}. */
    public MessagePattern inSession(String session) {
        Objects.requireNonNull(session, "session");
        return new MessagePattern(description + " in session " + session, e -> test(e) && e.session().equals(session));
    }

    /** The same entries, described with other words. */
    public MessagePattern describedAs(String words) {
        return new MessagePattern(words, test);
    }

    /** What it matches, in words. */
    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return description;
    }
}
