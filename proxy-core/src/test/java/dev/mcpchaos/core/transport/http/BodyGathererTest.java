package dev.mcpchaos.core.transport.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.buffer.AbstractByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The budget's view of a gathered body is the capacity it really holds: the sum of what
 * {@link BodyGatherer#capacityNeeded} announced equals what the allocator handed out, for every
 * piece size, declared or not; no block is larger than {@link BodyGatherer#MAX_BLOCK}, so a large
 * body never needs a large contiguous array; and the bytes come out as they went in.
 */
class BodyGathererTest {

    /** Counts the heap capacity it hands out; unpooled, so that what is held is counted to the byte. */
    private static final class CountingAllocator extends AbstractByteBufAllocator {
        final List<Integer> blocks = new ArrayList<>();
        final List<ByteBuf> handedOut = new ArrayList<>();

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            blocks.add(initialCapacity);
            ByteBuf buf = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
            handedOut.add(buf);
            return buf;
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            throw new AssertionError("a body is gathered on the heap");
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }

        long allocated() {
            return blocks.stream().mapToLong(Integer::longValue).sum();
        }
    }

    private static byte[] body(int size) {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        return bytes;
    }

    /** Feeds {@code bytes} in pieces of {@code pieceSize}, each a slice of a buffer as large as it; the reservations made. */
    private static long feed(BodyGatherer gatherer, byte[] bytes, int pieceSize) {
        long reserved = 0;
        for (int at = 0; at < bytes.length; at += pieceSize) {
            int n = Math.min(pieceSize, bytes.length - at);
            ByteBuf piece = Unpooled.wrappedBuffer(bytes, at, n);
            boolean last = at + n == bytes.length;
            long needed = gatherer.capacityNeeded(piece, last);
            reserved += needed;
            gatherer.add(piece, last);
            piece.release();
        }
        return reserved;
    }

    @ParameterizedTest(name = "{0} bytes in pieces of {1}, declared: {2}")
    @CsvSource({
            "100, 1, true", "100, 1, false", "5000, 1, false", "5000, 7, true",
            "70000, 3, true", "70000, 3, false", "70000, 4096, true", "70000, 4097, false",
            "300000, 65536, true", "300000, 65536, false", "300000, 1000, true", "300000, 65535, false",
            "1048576, 65536, true", "1048576, 16384, false", "65536, 65535, true"})
    void reservesExactlyWhatItAllocatesAndGivesBackTheBytes(int size, int pieceSize, boolean declared) {
        CountingAllocator alloc = new CountingAllocator();
        BodyGatherer gatherer = new BodyGatherer(alloc, declared ? size : -1);
        byte[] bytes = body(size);

        long reserved = feed(gatherer, bytes, pieceSize);

        assertThat(gatherer.readableBytes()).isEqualTo(size);
        assertThat(reserved).as("reserved against allocated").isEqualTo(alloc.allocated());
        assertThat(alloc.blocks).allSatisfy(block -> assertThat(block).isLessThanOrEqualTo(BodyGatherer.MAX_BLOCK));
        if (declared) {
            assertThat(alloc.allocated()).as("a declared body's blocks fit it").isEqualTo(size);
        } else {
            assertThat(alloc.allocated() - size).as("slack").isLessThan(BodyGatherer.MAX_BLOCK)
                    .isLessThanOrEqualTo(Math.max(4096L, size));
        }
        // Few blocks even for a body that trickles in a byte at a time: they grow with what came.
        assertThat(alloc.blocks.size()).isLessThanOrEqualTo(6 + size / BodyGatherer.MAX_BLOCK);
        ByteBuf taken = gatherer.take();
        assertThat(ByteBufUtil.getBytes(taken)).isEqualTo(bytes);
        assertThat(gatherer.isEmpty()).isTrue();
        assertThat(taken.release()).isTrue();
    }

    @Test
    void aBodyThatCameWholeIsKeptAsItCameAndCountedAsItsBytes() {
        CountingAllocator alloc = new CountingAllocator();
        BodyGatherer gatherer = new BodyGatherer(alloc, 5);
        ByteBuf read = Unpooled.copiedBuffer("xx{\"a\"}yy".getBytes());
        ByteBuf piece = read.slice(2, 5);

        assertThat(gatherer.capacityNeeded(piece, true)).isEqualTo(5);
        gatherer.add(piece, true);
        read.release(); // what the decoder does with its content once handed on

        ByteBuf taken = gatherer.take();
        assertThat(taken).as("no copy").isSameAs(piece);
        assertThat(alloc.blocks).isEmpty();
        assertThat(taken.toString(java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("{\"a\"}");
        assertThat(taken.release()).isTrue();
    }

    @Test
    void aWholePieceThatPinsAMuchLargerBufferIsCopied() {
        CountingAllocator alloc = new CountingAllocator();
        BodyGatherer gatherer = new BodyGatherer(alloc, 10);
        ByteBuf read = Unpooled.buffer(64 * 1024).writeBytes(new byte[64 * 1024]);
        ByteBuf piece = read.slice(0, 10);

        assertThat(gatherer.capacityNeeded(piece, true)).isEqualTo(10);
        gatherer.add(piece, true);
        read.release();

        assertThat(alloc.blocks).containsExactly(10);
        ByteBuf taken = gatherer.take();
        assertThat(taken.readableBytes()).isEqualTo(10);
        assertThat(taken.release()).isTrue();
    }

    /** A client that declares 16 MiB and sends 100 bytes makes the proxy hold 4 KiB, not 16 MiB. */
    @Test
    void aLargeDeclaredLengthAllocatesByWhatCame() {
        CountingAllocator alloc = new CountingAllocator();
        BodyGatherer gatherer = new BodyGatherer(alloc, 16 << 20);
        ByteBuf piece = Unpooled.wrappedBuffer(new byte[100]);

        assertThat(gatherer.capacityNeeded(piece, false)).isEqualTo(4096);
        gatherer.add(piece, false);

        assertThat(alloc.blocks).containsExactly(4096);
        gatherer.release();
        assertThat(gatherer.isEmpty()).isTrue();
    }

    @Test
    void releaseLetsGoOfEveryBlockAndTakeThenGivesNothing() {
        CountingAllocator alloc = new CountingAllocator();
        BodyGatherer gatherer = new BodyGatherer(alloc, -1);
        feed(gatherer, body(200_000), 50_000);
        assertThat(alloc.handedOut).hasSizeGreaterThan(1).allSatisfy(block -> assertThat(block.refCnt()).isOne());

        gatherer.release();

        assertThat(alloc.handedOut).allSatisfy(block -> assertThat(block.refCnt()).isZero());
        assertThat(gatherer.take()).isSameAs(Unpooled.EMPTY_BUFFER);
    }
}
