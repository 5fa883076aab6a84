package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.Direction;

import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/** Assertions on what one side (the client or the server) sent through the proxy. */
public class SenderVerification {

    final JournalSnapshot snapshot;
    final Direction direction;
    /** {@code the client} or {@code the server}, for messages. */
    final String who;

    SenderVerification(JournalSnapshot snapshot, Direction direction, String who) {
        this.snapshot = snapshot;
        this.direction = direction;
        this.who = who;
    }

    /** The messages of {@code pattern} this side sent, to count: {@code sent(toolCall("search")).times(2)}. */
    public Count sent(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new Count(snapshot, who + " to send " + pattern.description(), who + " sent it",
                snapshot.filter(e -> e.direction() == direction && pattern.test(e)));
    }

    /** The messages this side sent, oldest first. */
    List<JournalEntry> sentByThisSide() {
        return snapshot.filter(e -> e.direction() == direction);
    }

    /** A count of matching entries, to assert on. Each assertion returns the entries it counted. */
    public static final class Count {
        private final JournalSnapshot snapshot;
        private final String expectation;
        /** What happened, in words, for a count: {@code the client sent it 3 times}. */
        private final IntFunction<String> actual;
        private final List<JournalEntry> matched;
        private final String heading;
        /** What a failure lists under {@link #heading}: the matches, or those with their context. */
        private final List<JournalEntry> listed;

        Count(JournalSnapshot snapshot, String expectation, String subject, List<JournalEntry> matched) {
            this(snapshot, expectation, n -> subject + " " + (n == 0 ? "never" : times(n, "")), matched,
                    "Matching entries", matched);
        }

        Count(JournalSnapshot snapshot, String expectation, IntFunction<String> actual, List<JournalEntry> matched,
              String heading, List<JournalEntry> listed) {
            this.snapshot = snapshot;
            this.expectation = expectation;
            this.actual = actual;
            this.matched = List.copyOf(matched);
            this.heading = heading;
            this.listed = List.copyOf(listed);
        }

        /** Exactly {@code n} times. */
        public List<JournalEntry> times(int n) {
            requireCount(n);
            return check(matched.size() == n, "exactly " + times(n, ""));
        }

        /** Exactly once. */
        public List<JournalEntry> once() {
            return times(1);
        }

        /** At least {@code n} times. */
        public List<JournalEntry> atLeast(int n) {
            requireCount(n);
            return check(matched.size() >= n, "at least " + times(n, ""));
        }

        /** At most {@code n} times. */
        public List<JournalEntry> atMost(int n) {
            requireCount(n);
            return check(matched.size() <= n, "at most " + times(n, ""));
        }

        /** Not at all. */
        public List<JournalEntry> never() {
            return check(matched.isEmpty(), "never");
        }

        /** The entries counted, without asserting anything. */
        public List<JournalEntry> entries() {
            return matched;
        }

        private List<JournalEntry> check(boolean ok, String howOften) {
            if (!ok) {
                throw JournalVerification.failure(snapshot, expectation + " " + howOften, actual.apply(matched.size()),
                        heading, listed);
            }
            return matched;
        }

        static String times(int n, String suffix) {
            return (n == 1 ? "once" : n + " times") + suffix;
        }

        private static void requireCount(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("count: " + n + " (expected: >= 0)");
            }
        }
    }
}
