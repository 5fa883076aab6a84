package dev.mcpchaos.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * An allocator that remembers every buffer it hands out, so that a test can assert, right after
 * the code under test is done, that each one was released: a leak shows at once and on the input
 * that made it, not after a garbage collection (a fuzzer runs millions of inputs between two).
 * Netty's leak detector does not track these buffers, which keeps a fuzzing run fast; what it
 * would find, an unreleased buffer, {@link #assertAllReleased} finds without it.
 *
 * <p>Not thread-safe: for single-threaded codecs and {@code EmbeddedChannel}s.
 */
public final class TrackingAllocator extends AbstractByteBufAllocator {

    /**
     * With {@code -Dtracking.allocator.stacks=true}, where each buffer was allocated goes into the
     * failure message: to see who holds a buffer a fuzzer found unreleased.
     */
    private static final boolean STACKS = Boolean.getBoolean("tracking.allocator.stacks");

    private final List<ByteBuf> allocated = new ArrayList<>();
    private final List<Throwable> allocatedAt = new ArrayList<>();

    public TrackingAllocator() {
        super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    private ByteBuf track(ByteBuf buf) {
        allocated.add(buf);
        if (STACKS) {
            allocatedAt.add(new Throwable("allocated here"));
        }
        return buf;
    }

    /** How many buffers were handed out since the last {@link #assertAllReleased}. */
    public int allocations() {
        return allocated.size();
    }

    /**
     * Asserts that every buffer handed out since the last call has a reference count of 0, then
     * forgets them.
     *
     * @param what the input or step, for the failure message
     * @throws AssertionError naming how many buffers are still held and their sizes
     */
    public void assertAllReleased(String what) {
        List<String> held = new ArrayList<>();
        Throwable firstAt = null;
        for (int i = 0; i < allocated.size(); i++) {
            ByteBuf buf = allocated.get(i);
            if (buf.refCnt() != 0) {
                held.add(buf.refCnt() + "x " + buf.capacity() + " B (" + buf.readableBytes() + " readable)");
                if (firstAt == null && STACKS) {
                    firstAt = allocatedAt.get(i);
                }
            }
        }
        allocated.clear();
        allocatedAt.clear();
        if (!held.isEmpty()) {
            AssertionError error = new AssertionError(held.size() + " buffer(s) not released after " + what + ": "
                    + held + (STACKS ? "" : " (-Dtracking.allocator.stacks=true shows where the first was allocated)"));
            if (firstAt != null) {
                error.initCause(firstAt);
            }
            throw error;
        }
    }
}
