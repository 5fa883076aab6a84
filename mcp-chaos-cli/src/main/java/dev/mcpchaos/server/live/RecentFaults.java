package dev.mcpchaos.server.live;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.FaultListener;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The last few injected faults, for the live view. {@link #onFault} runs on the proxy's event
 * loops, so it takes no lock and allocates nothing: it claims a slot of a fixed ring with one
 * atomic increment and stores the event there. A reader may see a slot that is being overwritten
 * at the same time; it then shows the newer event, which is all a live view needs.
 */
final class RecentFaults implements FaultListener {

    private final AtomicReferenceArray<FaultEvent> slots;
    private final AtomicLong written = new AtomicLong();

    /** @param capacity how many events to keep, >= 1 */
    RecentFaults(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1)");
        }
        slots = new AtomicReferenceArray<>(capacity);
    }

    @Override
    public void onFault(FaultEvent event) {
        long n = written.getAndIncrement();
        slots.set((int) (n % slots.length()), event);
    }

    /** The events kept, oldest first (by the engine's sequence number). */
    List<FaultEvent> latest() {
        List<FaultEvent> events = new ArrayList<>(slots.length());
        for (int i = 0; i < slots.length(); i++) {
            FaultEvent event = slots.get(i);
            if (event != null) {
                events.add(event);
            }
        }
        events.sort(Comparator.comparingLong(FaultEvent::sequence));
        return events;
    }
}
