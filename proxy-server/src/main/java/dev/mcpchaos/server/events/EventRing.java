package dev.mcpchaos.server.events;

import java.util.ArrayList;
import java.util.List;

/**
 * The most recent events, as the JSON lines the event log writes, for {@code GET /events?since=N}.
 * Bounded: when full, the oldest event goes. Thread-safe.
 */
public final class EventRing {

    /** How many events the control endpoint keeps by default. */
    public static final int DEFAULT_CAPACITY = 1000;

    private final long[] sequences;
    private final String[] lines;
    private int next;
    private int size;

    /** @param capacity how many events to keep, >= 1 */
    public EventRing(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1)");
        }
        sequences = new long[capacity];
        lines = new String[capacity];
    }

    /**
     * A page of events after a sequence number.
     *
     * @param events the JSON lines, oldest first
     * @param last the sequence number of the newest event returned, or the {@code since} asked
     *             for when there was none: the {@code since} to ask with next
     * @param missed how many events after {@code since} were pushed out of the ring before they
     *               could be read
     */
    public record Page(List<String> events, long last, long missed) {
    }

    synchronized void add(long sequence, String line) {
        sequences[next] = sequence;
        lines[next] = line;
        next = (next + 1) % lines.length;
        size = Math.min(size + 1, lines.length);
    }

    /** Up to {@code max} events with a sequence number above {@code since}, oldest first. */
    public synchronized Page since(long since, int max) {
        List<String> page = new ArrayList<>(Math.min(max, size));
        long last = since;
        long missed = 0;
        int oldest = (next - size + lines.length) % lines.length;
        if (size > 0 && sequences[oldest] > since + 1) {
            missed = sequences[oldest] - since - 1;
        }
        for (int i = 0; i < size && page.size() < max; i++) {
            int at = (oldest + i) % lines.length;
            if (sequences[at] > since) {
                page.add(lines[at]);
                last = sequences[at];
            }
        }
        return new Page(page, last, missed);
    }
}
