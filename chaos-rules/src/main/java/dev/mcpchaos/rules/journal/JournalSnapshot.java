package dev.mcpchaos.rules.journal;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The journal at one moment: its entries, oldest first, and what it could not keep.
 *
 * @param entries the entries held, in sequence order
 * @param capacity how many entries the journal keeps at most
 * @param evicted how many older entries were dropped for capacity since the journal was last cleared
 * @param next the sequence number the next entry will get (so {@code since = next - 1} reads only newer ones)
 */
public record JournalSnapshot(List<JournalEntry> entries, int capacity, long evicted, long next) {

    public JournalSnapshot {
        entries = List.copyOf(Objects.requireNonNull(entries, "entries"));
        if (capacity < 0 || evicted < 0 || next < 1) {
            throw new IllegalArgumentException("journal snapshot: capacity " + capacity + ", evicted " + evicted
                    + ", next " + next + " (expected: >= 0, >= 0, >= 1)");
        }
    }

    /** The entries that {@code test} accepts, in order. */
    public List<JournalEntry> filter(Predicate<? super JournalEntry> test) {
        Objects.requireNonNull(test, "test");
        return entries.stream().filter(test).map(JournalEntry.class::cast).toList();
    }

    /** Assertions on these entries. */
    public JournalVerification verify() {
        return new JournalVerification(this);
    }

    /** One line about what this snapshot holds, for failure messages. */
    String summary() {
        String held = entries.isEmpty() ? "no entries"
                : entries.size() + " entries (#" + entries.get(0).sequence() + "..#"
                        + entries.get(entries.size() - 1).sequence() + ")";
        String lost = evicted == 0 ? "none dropped for capacity"
                : evicted + " older entries dropped for capacity " + capacity + ": counts may be short";
        return "The journal holds " + held + ", " + lost + ".";
    }
}
