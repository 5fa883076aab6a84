package dev.mcpchaos.core.transport.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The ceiling on the bytes the proxy holds for all its clients at once: POST bodies being read
 * (or held in the chain by a fault) and JSON answers being gathered. Each holder reserves what
 * it is about to hold and gives it back when it lets go. Past the ceiling a new request body is
 * answered 503 and a JSON answer goes on uninspected, so the proxy degrades under a flood of
 * large or slow bodies instead of running out of memory. Safe across event loops.
 */
final class BufferBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    /** @param limit the most bytes held at once, {@code > 0} */
    BufferBudget(long limit) {
        this.limit = limit;
    }

    /** Reserves {@code bytes} if they fit under the ceiling; false (nothing reserved) otherwise. */
    boolean tryReserve(long bytes) {
        while (true) {
            long now = held.get();
            long next = now + bytes;
            if (next > limit) {
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
