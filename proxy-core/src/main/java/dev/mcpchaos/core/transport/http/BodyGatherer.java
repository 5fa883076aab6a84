package dev.mcpchaos.core.transport.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;

/**
 * A body gathered whole from the pieces it comes in, in heap blocks of at most
 * {@value #MAX_BLOCK} bytes, for the proxy's {@link BufferBudget} to count what it really holds.
 *
 * <p>Why blocks and not one buffer that grows: a growing buffer holds up to twice the bytes it
 * has (the budget counted only the bytes), copies everything at each step, and past a few MiB
 * needs ever larger contiguous arrays, which a small heap under a flood of large bodies cannot
 * always find (the OutOfMemoryError {@code AdversarialIT} found in 2 of 7 runs). Blocks are never
 * copied again once filled, and what the budget reserves ({@link #capacityNeeded}) is exactly the
 * capacity {@link #add} then allocates.
 *
 * <p>A body that comes whole in one piece is kept as it came (the decoder's piece, retained),
 * with no copy, unless that piece pins a much larger buffer (a request held by a latency fault
 * would then hold all of it). Not thread-safe: one exchange, on its event loop.
 */
final class BodyGatherer {

    /** The largest block: well under the size at which a JVM treats an array as humongous. */
    static final int MAX_BLOCK = 64 * 1024;
    private static final int FIRST_BLOCK = 4096;

    private final ByteBufAllocator alloc;
    /** The Content-Length the sender declared, or -1: it sizes the blocks, never more than what came. */
    private final long declared;
    /** The one piece kept as it came, or the block being filled. */
    private ByteBuf tail;
    /** Filled blocks, oldest first; null while there is at most one. */
    private CompositeByteBuf filled;
    private long readable;

    /**
     * @param declared the sender's Content-Length, or -1 when it sent none
     */
    BodyGatherer(ByteBufAllocator alloc, long declared) {
        this.alloc = alloc;
        this.declared = declared;
    }

    /** The bytes gathered so far. */
    long readableBytes() {
        return readable;
    }

    /** Whether nothing is gathered. */
    boolean isEmpty() {
        return readable == 0;
    }

    /**
     * The bytes of new capacity {@link #add} of {@code piece} will allocate (or, for a piece kept
     * as it came, hold): what to reserve of the budget before adding it. 0 when it fits.
     */
    long capacityNeeded(ByteBuf piece, boolean last) {
        int size = piece.readableBytes();
        if (keepsAsItCame(piece, last)) {
            return size;
        }
        int room = tail == null ? 0 : tail.writableBytes();
        long needed = 0;
        long gathered = readable + room; // the capacity so far: every block before the last is full
        long left = size - (long) room;
        while (left > 0) {
            int block = nextBlock(gathered, left);
            needed += block;
            gathered += block;
            left -= block;
        }
        return needed;
    }

    /** Adds {@code piece} (not taking ownership), allocating what {@link #capacityNeeded} said. */
    void add(ByteBuf piece, boolean last) {
        if (keepsAsItCame(piece, last)) {
            tail = piece.retain();
            readable = tail.readableBytes();
            return;
        }
        int index = piece.readerIndex();
        int end = piece.writerIndex();
        while (index < end) {
            if (tail == null || tail.writableBytes() == 0) {
                startBlock(end - index);
            }
            int n = Math.min(end - index, tail.writableBytes());
            tail.writeBytes(piece, index, n);
            index += n;
            readable += n;
        }
    }

    /**
     * Hands over what is gathered as one buffer (a block, or a composite of them) and leaves the
     * gatherer empty; {@link Unpooled#EMPTY_BUFFER} when nothing was.
     */
    ByteBuf take() {
        ByteBuf body;
        if (filled != null) {
            if (tail.isReadable()) {
                filled.addComponent(true, tail);
            } else {
                tail.release();
            }
            body = filled;
        } else {
            body = tail != null ? tail : Unpooled.EMPTY_BUFFER;
        }
        filled = null;
        tail = null;
        readable = 0;
        return body;
    }

    /** Lets go of what is gathered. */
    void release() {
        take().release();
    }

    private boolean keepsAsItCame(ByteBuf piece, boolean last) {
        if (!last || readable != 0 || tail != null) {
            return false;
        }
        ByteBuf parent = piece.unwrap();
        return parent == null || parent.capacity() <= 2L * piece.readableBytes() + 8192;
    }

    private void startBlock(long left) {
        int capacity = nextBlock(readable, left);
        if (tail != null) {
            if (filled == null) {
                filled = alloc.compositeHeapBuffer(Integer.MAX_VALUE);
            }
            filled.addComponent(true, tail);
        }
        tail = alloc.heapBuffer(capacity, capacity);
    }

    /**
     * The next block's capacity, with {@code gathered} bytes of capacity before it and
     * {@code left} bytes of the current piece still to place: sized by what came, not by what was
     * declared (a client that declares a large body and sends a few bytes must not make the proxy
     * hold a large block), and no larger than the declared rest, so that a body whose length is
     * known ends in a block that fits it.
     */
    private int nextBlock(long gathered, long left) {
        // Each block at least as large as all before it (few blocks for a large body), from 4 KiB.
        long size = Math.max(left, Math.min(Math.max(gathered, FIRST_BLOCK), MAX_BLOCK));
        if (declared > gathered) {
            size = Math.min(size, Math.max(declared - gathered, left));
        }
        return (int) Math.min(MAX_BLOCK, size);
    }
}
