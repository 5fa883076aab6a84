package dev.mcpchaos.core.transport.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The ceiling on the bytes the proxy holds for all its clients at once: POST bodies being read
 * (or held in the chain by a fault) and JSON answers being gathered. Each holder reserves what
 * it is about to hold and gives it back when it lets go. Past the ceiling a new request body is
 * answered 503 and a JSON answer goes on uninspected, so the proxy degrades under a flood of
 * large or slow bodies instead of running out of memory. Safe across event loops.
 *
 * <p>The last sixteenth of the ceiling is kept for small holders (at most {@value #SMALL_HOLDER}
 * bytes each, the size of nearly every MCP call and answer): a flood of large bodies fills at
 * most the rest, so it cannot starve the small calls of the well-behaved clients beside it.
 */
final class BufferBudget {

    /** The most a holder may hold in all and still count as small, in bytes. */
    static final long SMALL_HOLDER = 16 * 1024;

    private final long limit;
    /** The ceiling for holders larger than {@link #SMALL_HOLDER}. */
    private final long largeLimit;
    private final AtomicLong held = new AtomicLong();

    /** @param limit the most bytes held at once, {@code > 0} */
    BufferBudget(long limit) {
        this.limit = limit;
        this.largeLimit = limit - limit / 16;
    }

    /**
     * Reserves {@code bytes} for a holder that will then hold {@code holderTotal} bytes in all
     * (these included), if they fit under the ceiling for a holder of that size; false (nothing
     * reserved) otherwise.
     */
    boolean tryReserve(long bytes, long holderTotal) {
        long ceiling = holderTotal <= SMALL_HOLDER ? limit : largeLimit;
        while (true) {
            long now = held.get();
            long next = now + bytes;
            if (next > ceiling) {
                return false;
            }
            if (held.compareAndSet(now, next)) {
                return true;
            }
        }
    }

    /** Gives back {@code bytes} reserved before. */
    void release(long bytes) {
        if (bytes > 0) {
            held.addAndGet(-bytes);
        }
    }

    /** The bytes held now. */
    long held() {
        return held.get();
    }

    /** The ceiling. */
    long limit() {
        return limit;
    }
}
