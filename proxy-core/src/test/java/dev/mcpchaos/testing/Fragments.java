package dev.mcpchaos.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Feeds the same input to a streaming parser cut into fragments of every size, and checks that
 * the result never depends on where the input was cut. A parser that reads bytes as they arrive
 * from a socket or a pipe sees arbitrary boundaries: inside a UTF-8 sequence, between {@code \r}
 * and {@code \n}, inside a string escape. Trying every size (1, 2, 3, ... bytes) puts a boundary
 * at every position of the input, with every distance to the next one.
 *
 * <p>Usage:
 * <pre>{@code
 * List<Event> events = Fragments.assertSameAtEverySize(input, chunks -> decode(chunks));
 * assertThat(events).containsExactly(...);
 * }</pre>
 * The decode function gets the input as a list of chunks and returns a value with a meaningful
 * {@code equals} (a list of records, an envelope). It must start from a fresh parser each call.
 */
public final class Fragments {

    /** Inputs up to this many bytes are cut at every fragment size from 1 to their length. */
    public static final int EVERY_SIZE_UP_TO = 2048;

    /** Longer inputs: every size from 1 to this, then the sizes in {@link #sizes(int)}. */
    public static final int SMALL_SIZES_UP_TO = 64;

    /**
     * An allocator whose buffers Netty's leak detector does not track, for input chunks. At the
     * paranoid level every access to a tracked buffer records a stack trace, which makes a test
     * that cuts an input every way (tens of thousands of chunks) take many seconds. Check instead
     * that the code under test released each chunk: keep them and assert {@code refCnt() == 0}
     * at the end of the run. Buffers the code under test allocates itself stay tracked.
     */
    public static final ByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(false, true);

    private static final byte[] PREFIX_JUNK = {'\n', '{', '"'};
    private static final byte[] SUFFIX_JUNK = {'"', '}', '\r', '\n', (byte) 0xFF};

    private Fragments() {
    }

    /** Decodes one input, given as consecutive chunks. */
    @FunctionalInterface
    public interface Decoder<R> {
        /** @param chunks the input, in order, never empty chunks */
        R decode(List<byte[]> chunks) throws Exception;
    }

    /** Decodes a sequence of inputs (messages) with one parser, each given as chunks. */
    @FunctionalInterface
    public interface SequenceDecoder<R> {
        /** @param inputs for each input, in order, its chunks (no chunks for an empty input) */
        R decode(List<List<byte[]>> inputs) throws Exception;
    }

    /**
     * The fragment sizes tried for an input of {@code length} bytes: all of 1..length when
     * {@code length <= } {@value #EVERY_SIZE_UP_TO}; otherwise 1..{@value #SMALL_SIZES_UP_TO}
     * plus a few larger sizes, odd and even, and the whole input.
     */
    public static int[] sizes(int length) {
        if (length <= EVERY_SIZE_UP_TO) {
            int[] sizes = new int[length];
            Arrays.setAll(sizes, i -> i + 1);
            return sizes;
        }
        TreeSet<Integer> sizes = new TreeSet<>();
        for (int size = 1; size <= SMALL_SIZES_UP_TO; size++) {
            sizes.add(size);
        }
        for (int size : new int[] {127, 128, 1000, 4095, 4096, 8191, 8192, 8193, 65_536, 65_537,
                length / 3, length / 2, length - 1, length}) {
            if (size >= 1 && size <= length) {
                sizes.add(size);
            }
        }
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Cuts {@code input} into chunks of {@code size} bytes; the last one may be shorter. */
    public static List<byte[]> split(byte[] input, int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size: " + size);
        }
        List<byte[]> chunks = new ArrayList<>((input.length + size - 1) / size);
        for (int start = 0; start < input.length; start += size) {
            chunks.add(Arrays.copyOfRange(input, start, Math.min(input.length, start + size)));
        }
        return chunks;
    }

    /**
     * Decodes {@code input} whole, then cut at every size of {@link #sizes(int)}, and asserts that
     * every result equals the whole-input one.
     *
     * @return the (common) result, for further assertions
     */
    public static <R> R assertSameAtEverySize(byte[] input, Decoder<R> decoder) {
        return assertSameAtSizes(input, sizes(input.length), decoder);
    }

    /**
     * Like {@link #assertSameAtEverySize(byte[], Decoder)} with chosen sizes, for inputs too big to
     * cut every way (a 20 MB line in 64 KiB reads).
     */
    public static <R> R assertSameAtSizes(byte[] input, int[] sizes, Decoder<R> decoder) {
        R whole = decode(decoder, input.length == 0 ? List.of() : List.of(input), "the whole input");
        for (int size : sizes) {
            R cut = decode(decoder, split(input, size), "fragments of " + size + " bytes");
            assertThat(cut).as("result with the input cut into fragments of %d bytes", size).isEqualTo(whole);
        }
        return whole;
    }

    /**
     * Decodes a sequence of inputs through one parser, each input whole, then every input cut at
     * the same size, for every size up to the longest input's (see {@link #sizes(int)}), and
     * asserts that every result equals the whole-inputs one. Checks that state carried from one
     * message to the next does not depend on how the previous one was cut.
     *
     * @return the (common) result
     */
    public static <R> R assertSameAtEverySize(List<byte[]> inputs, SequenceDecoder<R> decoder) {
        int longest = inputs.stream().mapToInt(input -> input.length).max().orElse(0);
        List<List<byte[]>> whole = new ArrayList<>();
        for (byte[] input : inputs) {
            whole.add(input.length == 0 ? List.of() : List.of(input));
        }
        R expected = decodeSequence(decoder, whole, "whole inputs");
        for (int size : sizes(longest)) {
            List<List<byte[]>> cut = new ArrayList<>();
            for (byte[] input : inputs) {
                cut.add(split(input, size));
            }
            R actual = decodeSequence(decoder, cut, "fragments of " + size + " bytes");
            assertThat(actual).as("result with every input cut into fragments of %d bytes", size).isEqualTo(expected);
        }
        return expected;
    }

    /**
     * A buffer holding exactly {@code bytes} as its readable bytes, in one of four layouts chosen
     * by {@code variant}: heap, direct, and each of them with junk bytes before the reader index
     * and after the writer index. A codec that reads outside a buffer's readable bytes, or assumes
     * an array offset of 0, gives different results for different variants. Callers cycle the
     * variant per chunk (pass the chunk's index) to mix layouts within one input.
     *
     * @return a new buffer the caller owns
     */
    public static ByteBuf buffer(ByteBufAllocator alloc, byte[] bytes, int variant) {
        boolean direct = (variant & 1) != 0;
        boolean junk = (variant & 2) != 0;
        int capacity = bytes.length + (junk ? PREFIX_JUNK.length + SUFFIX_JUNK.length : 0);
        ByteBuf buf = direct ? alloc.directBuffer(capacity) : alloc.heapBuffer(capacity);
        if (!junk) {
            return buf.writeBytes(bytes);
        }
        buf.writeBytes(PREFIX_JUNK).writeBytes(bytes).writeBytes(SUFFIX_JUNK);
        return buf.setIndex(PREFIX_JUNK.length, PREFIX_JUNK.length + bytes.length);
    }

    // An exception is wrapped so that the report says which cut made the decoder fail.
    private static <R> R decode(Decoder<R> decoder, List<byte[]> chunks, String cut) {
        try {
            return decoder.decode(chunks);
        } catch (Exception | AssertionError e) {
            throw new AssertionError("decoding failed with " + cut + ": " + e, e);
        }
    }

    private static <R> R decodeSequence(SequenceDecoder<R> decoder, List<List<byte[]>> inputs, String cut) {
        try {
            return decoder.decode(inputs);
        } catch (Exception | AssertionError e) {
            throw new AssertionError("decoding failed with " + cut + ": " + e, e);
        }
    }
}
