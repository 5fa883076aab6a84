package dev.mcpchaos.rules.journal;

import java.util.List;
import java.util.function.Predicate;

/**
 * What passed through a proxy, message by message: read it ({@link #entries()},
 * {@link #filter}), assert on it ({@link #verify()}), or {@link #clear()} it between tests.
 *
 * <pre>{@code
 * Journal journal = proxy.journal();
 * journal.verify().client().sent(Messages.toolCall("search")).times(2);
 * journal.verify().client().retriedAfter(Messages.dropped(Messages.toolCall("search"))).withSameArguments();
 * }</pre>
 *
 * <p>A journal is bounded: past its capacity the oldest entries are dropped and counted
 * ({@link JournalSnapshot#evicted()}), and a failing assertion says so. The embedded proxy's
 * journal is in memory ({@link JournalRing}); a container's is read over the control API.
 */
public interface Journal {

    /** Everything the journal holds now, at one moment. */
    JournalSnapshot snapshot();

    /** Forgets every entry held (numbering goes on, so {@code since} stays meaningful). */
    void clear();

    /** The entries held now, oldest first. */
    default List<JournalEntry> entries() {
        return snapshot().entries();
    }

    /** The entries held now that {@code test} accepts, oldest first (a {@link MessagePattern} is one). */
    default List<JournalEntry> filter(Predicate<? super JournalEntry> test) {
        return snapshot().filter(test);
    }

    /** Assertions on what the journal holds now (a snapshot taken at this call). */
    default JournalVerification verify() {
        return snapshot().verify();
    }
}
