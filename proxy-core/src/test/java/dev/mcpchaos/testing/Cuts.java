package dev.mcpchaos.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ways to cut one fuzzer input into chunks, all derived from the input itself, so that a crashing
 * input replays the same cuts: the whole input, one byte at a time, and a few irregular cuts
 * (chunks of 1 to 17 bytes, then of up to a few hundred) drawn from a generator seeded with the
 * input's hash. {@link Fragments} tries every size for a unit test; a fuzzer runs too many inputs
 * for that, and gets its variety from the inputs instead.
 */
public final class Cuts {

    /** Inputs up to this size are also fed one byte at a time. */
    private static final int BYTEWISE_UP_TO = 4096;

    private Cuts() {
    }

    /** The cuts of {@code input}: each a list of non-empty chunks that join to the input. */
    public static List<List<byte[]>> of(byte[] input) {
        List<List<byte[]>> cuts = new ArrayList<>();
        cuts.add(input.length == 0 ? List.of() : List.of(input));
        if (input.length <= 1) {
            return cuts;
        }
        if (input.length <= BYTEWISE_UP_TO) {
            cuts.add(Fragments.split(input, 1));
        }
        SplittableRandom random = new SplittableRandom(Arrays.hashCode(input));
        cuts.add(irregular(input, random, 17));
        cuts.add(irregular(input, random, 300));
        return cuts;
    }

    /** A seed for choices other than the cut (a limit, a buffer layout), from the input. */
    public static long seed(byte[] input) {
        return Arrays.hashCode(input) * 0x9E3779B97F4A7C15L;
    }

    private static List<byte[]> irregular(byte[] input, SplittableRandom random, int maxChunk) {
        List<byte[]> chunks = new ArrayList<>();
        int start = 0;
        while (start < input.length) {
            int end = Math.min(input.length, start + 1 + random.nextInt(maxChunk));
            chunks.add(Arrays.copyOfRange(input, start, end));
            start = end;
        }
        return chunks;
    }
}
