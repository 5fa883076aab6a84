package dev.mcpchaos.server.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The stdio host's line framing, fed at every fragment size so that a message split across reads
 * anywhere (even inside {@code \r\n}) frames the same way.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BoundedLineReaderTest {

    private static final int LIMIT = 10;

    @Test
    void framesTheSameLinesAtEveryFragmentSize() throws IOException {
        String input = "one\ntwo\r\n\n0123456789\r\n0123456789X\nlast-is-long-too\nafter\r\nend";
        List<String> expected = List.of("one", "two", "", "0123456789", "<too long>", "<too long>", "after", "end");
        byte[] bytes = input.getBytes(StandardCharsets.UTF_8);

        for (int fragment = 1; fragment <= bytes.length; fragment++) {
            assertThat(readAll(new FragmentingInputStream(bytes, fragment)))
                    .as("fragment size %d", fragment)
                    .isEqualTo(expected);
        }
    }

    @Test
    void emptyInputHasNoLines() throws IOException {
        assertThat(readAll(new ByteArrayInputStream(new byte[0]))).isEmpty();
    }

    @Test
    void aTooLongFinalLineWithoutNewlineIsReportedOnce() throws IOException {
        assertThat(readAll(new ByteArrayInputStream("ok\n0123456789ABCDEF".getBytes(StandardCharsets.UTF_8))))
                .containsExactly("ok", "<too long>");
    }

    @Test
    void onlyOneTrailingCarriageReturnIsDropped() throws IOException {
        assertThat(readAll(new ByteArrayInputStream("a\r\r\n".getBytes(StandardCharsets.UTF_8))))
                .containsExactly("a\r");
    }

    @Test
    void blankMeansJsonWhitespaceOnly() {
        assertThat(new BoundedLineReader.Line(" \t\r".getBytes(StandardCharsets.UTF_8), false).isBlank()).isTrue();
        assertThat(new BoundedLineReader.Line(new byte[0], false).isBlank()).isTrue();
        assertThat(new BoundedLineReader.Line(" x ".getBytes(StandardCharsets.UTF_8), false).isBlank()).isFalse();
    }

    private static List<String> readAll(InputStream in) throws IOException {
        BoundedLineReader reader = new BoundedLineReader(in, LIMIT);
        List<String> lines = new ArrayList<>();
        BoundedLineReader.Line line;
        while ((line = reader.next()) != null) {
            lines.add(line.tooLong() ? "<too long>" : new String(line.bytes(), StandardCharsets.UTF_8));
        }
        return lines;
    }

    /** Hands out at most {@code fragment} bytes per read, like a pipe delivering a message in pieces. */
    private static final class FragmentingInputStream extends InputStream {
        private final byte[] bytes;
        private final int fragment;
        private int position;

        FragmentingInputStream(byte[] bytes, int fragment) {
            this.bytes = bytes;
            this.fragment = fragment;
        }

        @Override
        public int read() {
            return position < bytes.length ? bytes[position++] & 0xff : -1;
        }

        @Override
        public int read(byte[] target, int offset, int length) {
            if (position >= bytes.length) {
                return -1;
            }
            int count = Math.min(Math.min(length, fragment), bytes.length - position);
            System.arraycopy(bytes, position, target, offset, count);
            position += count;
            return count;
        }
    }
}
