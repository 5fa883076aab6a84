package dev.mcpchaos.rules.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The in-memory journal: a ring of at most {@code capacity} entries, the oldest dropped (and
 * counted) when a new one comes. Thread-safe; each call takes one short lock. A recorder
 * {@link #add}s an entry when a message arrives and {@link #update}s it as rules act on it and
 * when it leaves.
 */
public final class JournalRing implements Journal {

    /** The capacity the builders use unless told otherwise. */
    public static final int DEFAULT_CAPACITY = 10_000;

    private final JournalEntry[] slots;
    private long next = 1;
    /** The sequence number of the oldest entry held; {@code next} when none is. */
    private long oldest = 1;
    private long evicted;

    /**
     * @param capacity how many entries to keep, at least 1
     * @throws IllegalArgumentException when {@code capacity} is below 1
     */
    public JournalRing(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("journal capacity: " + capacity + " (expected: >= 1)");
        }
        slots = new JournalEntry[capacity];
    }

    /** How many entries it keeps at most. */
    public int capacity() {
        return slots.length;
    }

    /**
     * Adds an entry, numbered here (its own {@code sequence} is ignored).
     *
     * @return the entry's sequence number
     */
    public long add(JournalEntry entry) {
        Objects.requireNonNull(entry, "entry");
        synchronized (this) {
            long sequence = next++;
            if (sequence - oldest >= slots.length) {
                oldest++;
                evicted++;
            }
            slots[index(sequence)] = entry.withSequence(sequence);
            return sequence;
        }
    }

    /**
     * Changes the entry numbered {@code sequence}, if it is still held.
     *
     * @return whether it was
     */
    public boolean update(long sequence, UnaryOperator<JournalEntry> change) {
        synchronized (this) {
            if (sequence < oldest || sequence >= next) {
                return false;
            }
            int i = index(sequence);
            slots[i] = Objects.requireNonNull(change.apply(slots[i]), "changed entry");
            return true;
        }
    }

    /**
     * Changes the newest entry held that {@code match} accepts, looking back from the newest, under
     * the ring's lock: no snapshot copied to find it, and no entry added between finding and changing.
     *
     * @return whether an entry matched
     */
    public boolean updateNewest(Predicate<JournalEntry> match, UnaryOperator<JournalEntry> change) {
        synchronized (this) {
            for (long s = next - 1; s >= oldest; s--) {
                int i = index(s);
                if (match.test(slots[i])) {
                    slots[i] = Objects.requireNonNull(change.apply(slots[i]), "changed entry");
                    return true;
                }
            }
            return false;
        }
    }

    @Override
    public JournalSnapshot snapshot() {
        return since(0);
    }

    /** The entries numbered above {@code sequence}, oldest first, with the ring's counts. */
    public JournalSnapshot since(long sequence) {
        synchronized (this) {
            long from = Math.max(oldest, sequence + 1);
            List<JournalEntry> entries = new ArrayList<>((int) Math.max(0, next - from));
            for (long s = from; s < next; s++) {
                entries.add(slots[index(s)]);
            }
            return new JournalSnapshot(entries, slots.length, evicted, next);
        }
    }

    @Override
    public void clear() {
        synchronized (this) {
            for (long s = oldest; s < next; s++) {
                slots[index(s)] = null;
            }
            oldest = next;
            evicted = 0;
        }
    }

    private int index(long sequence) {
        return (int) (sequence % slots.length);
    }

    @Override
    public String toString() {
        synchronized (this) {
            return "JournalRing(" + (next - oldest) + " of " + slots.length + ", " + evicted + " evicted)";
        }
    }
}
