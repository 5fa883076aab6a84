package dev.mcpchaos.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The helper itself: that it really cuts everywhere, and really fails on a cut-dependent result. */
class FragmentsTest {

    private static final ByteBufAllocator ALLOC = Fragments.UNTRACKED;

    @Test
    void smallInputsAreCutAtEverySize() {
        assertThat(Fragments.sizes(0)).isEmpty();
        assertThat(Fragments.sizes(5)).containsExactly(1, 2, 3, 4, 5);
        assertThat(Fragments.sizes(Fragments.EVERY_SIZE_UP_TO))
                .containsExactly(IntStream.rangeClosed(1, Fragments.EVERY_SIZE_UP_TO).toArray());
    }

    @Test
    void largeInputsAreCutAtSmallSizesAndAFewLargeOnes() {
        int length = 100_000;
        int[] sizes = Fragments.sizes(length);
        assertThat(sizes).contains(IntStream.rangeClosed(1, Fragments.SMALL_SIZES_UP_TO).toArray());
        assertThat(sizes).contains(8191, 8192, 65_536, length / 3, length / 2, length - 1, length);
        assertThat(sizes).isSorted().doesNotHaveDuplicates();
        assertThat(sizes[0]).isEqualTo(1);
        assertThat(sizes[sizes.length - 1]).isEqualTo(length);
        assertThat(sizes.length).isLessThan(100);
    }

    @Test
    void splitCoversTheInputInOrder() {
        byte[] input = "0123456789".getBytes(StandardCharsets.US_ASCII);
        List<byte[]> chunks = Fragments.split(input, 3);
        assertThat(chunks).extracting(chunk -> new String(chunk, StandardCharsets.US_ASCII))
                .containsExactly("012", "345", "678", "9");
        assertThat(Fragments.split(input, 10)).singleElement().isEqualTo(input);
        assertThat(Fragments.split(new byte[0], 4)).isEmpty();
        assertThatThrownBy(() -> Fragments.split(input, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyBufferLayoutHoldsExactlyTheBytes() {
        byte[] bytes = "{\"a\":\"\u00e9\"}".getBytes(StandardCharsets.UTF_8);
        for (int variant = 0; variant < 8; variant++) {
            ByteBuf buf = Fragments.buffer(ALLOC, bytes, variant);
            try {
                byte[] readable = new byte[buf.readableBytes()];
                buf.getBytes(buf.readerIndex(), readable);
                assertThat(readable).as("variant %d", variant).isEqualTo(bytes);
                assertThat(buf.isDirect()).as("variant %d", variant).isEqualTo((variant & 1) != 0);
                // The junk layouts have bytes before the reader index and after the writer index.
                boolean junk = (variant & 2) != 0;
                assertThat(buf.readerIndex() > 0).as("variant %d", variant).isEqualTo(junk);
                assertThat(buf.capacity() > buf.writerIndex()).as("variant %d", variant).isEqualTo(junk);
            } finally {
                buf.release();
            }
        }
    }

    @Test
    void aResultThatDependsOnTheCutFails() {
        byte[] input = "abc".getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> Fragments.assertSameAtEverySize(input, List::size))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("fragments of 1 bytes");
        // The same decoder passes when only the whole input is tried.
        Integer whole = Fragments.assertSameAtSizes(input, new int[] {3}, List::size);
        assertThat(whole).isEqualTo(1);
    }

    @Test
    void aDecoderFailureNamesTheCut() {
        byte[] input = "abcd".getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> Fragments.assertSameAtEverySize(input, chunks -> {
            if (chunks.size() == 2) {
                throw new IllegalStateException("boom");
            }
            return "ok";
        })).isInstanceOf(AssertionError.class)
                .hasMessageContaining("fragments of 2 bytes")
                .hasRootCauseMessage("boom");
    }

    @Test
    void everyCutReassemblesToTheInput() {
        byte[] input = "line one\r\nline two\n\u00e9\ud83d\ude00".getBytes(StandardCharsets.UTF_8);
        List<Integer> seenSizes = new ArrayList<>();
        byte[] out = Fragments.assertSameAtEverySize(input, chunks -> {
            seenSizes.add(chunks.get(0).length);
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            chunks.forEach(joined::writeBytes);
            return new String(joined.toByteArray(), StandardCharsets.ISO_8859_1);
        }).getBytes(StandardCharsets.ISO_8859_1);
        assertThat(out).isEqualTo(input);
        // The whole input first, then each size once.
        assertThat(seenSizes).hasSize(input.length + 1);
    }

    @Test
    void sequencesAreCutAtTheSameSize() {
        List<byte[]> inputs = List.of("ab".getBytes(StandardCharsets.US_ASCII), new byte[0],
                "cdefg".getBytes(StandardCharsets.US_ASCII));
        List<String> result = Fragments.assertSameAtEverySize(inputs, cut -> {
            List<String> joined = new ArrayList<>();
            for (List<byte[]> chunks : cut) {
                StringBuilder sb = new StringBuilder();
                chunks.forEach(chunk -> sb.append(new String(chunk, StandardCharsets.US_ASCII)));
                joined.add(sb.toString());
            }
            return joined;
        });
        assertThat(result).containsExactly("ab", "", "cdefg");
    }
}
