package dev.mcpchaos.core.codec.line;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.mcpchaos.testing.Cuts;
import dev.mcpchaos.testing.Fragments;
import dev.mcpchaos.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of {@link LineFramer} (Jazzer; see docs/fuzzing.md). Each input is a
 * byte stream, framed with the default limit and with a small one drawn from the input (so that
 * oversized lines, and cuts inside them, are common), cut every way of {@link Cuts}, in chunks of
 * every buffer layout of {@link Fragments#buffer}, through {@link LineFramer#feed},
 * {@link LineFramer#feedRuns} and the two taking turns. Properties:
 * <ul>
 *   <li>the lines (bytes and content length) and oversized reports are those of a plain model of
 *       the stream ({@link #model}), however it was cut and fed: so the lines, put back
 *       together with the discarded ones, are the input byte for byte;</li>
 *   <li>a run of {@code feedRuns} is whole lines, each ending with {@code \n};</li>
 *   <li>every buffer, chunks and the framer's own, is released once the lines are;</li>
 *   <li>no exception; a framer is reusable after {@link LineFramer#finish}.</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code LineFramerFuzzTestInputs/}.
 */
class LineFramerFuzzTest {

    /** A line as handed on: its bytes (ISO-8859-1, so byte for byte) and content length. */
    record Line(String bytes, int contentLength) {
    }

    /** A line over the limit, discarded. */
    record Oversized(long length) {
    }

    @DictionaryEntries({"\\x0D\\x0A", "\\x0A", "\\x0D", "\\x0D\\x0D\\x0A"})
    @FuzzTest
    void framesLikeTheModel(byte[] input) {
        long seed = Cuts.seed(input);
        int smallLimit = 1 + (int) Math.floorMod(seed, 40L);
        for (int limit : new int[] {LineFramer.DEFAULT_MAX_LINE_LENGTH, smallLimit}) {
            List<Object> expected = model(input, limit);
            for (List<byte[]> chunks : Cuts.of(input)) {
                for (int mode = 0; mode < 3; mode++) {
                    TrackingAllocator alloc = new TrackingAllocator();
                    LineFramer framer = new LineFramer(limit, alloc);
                    List<Object> events = frame(framer, alloc, chunks, mode, seed);
                    String what = "limit " + limit + ", " + chunks.size() + " chunks, mode " + mode;
                    assertThat(events).as(what).isEqualTo(expected);
                    alloc.assertAllReleased(what);
                    if (mode == 0) {
                        // Reusable after finish: the same stream again gives the same lines.
                        List<Object> again = frame(framer, alloc, chunks, mode, seed);
                        assertThat(again).as("again after finish: " + what).isEqualTo(expected);
                        alloc.assertAllReleased("again after finish: " + what);
                    }
                }
            }
        }
    }

    /**
     * Feeds the chunks: mode 0 with {@code feed}, 1 with {@code feedRuns}, 2 each chunk one way
     * or the other as the seed says; then {@code finish}.
     */
    private static List<Object> frame(LineFramer framer, TrackingAllocator alloc, List<byte[]> chunks, int mode,
                                       long seed) {
        List<Object> events = new ArrayList<>();
        LineFramer.Listener lines = new LineFramer.Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                try {
                    events.add(new Line(line.toString(StandardCharsets.ISO_8859_1), contentLength));
                } finally {
                    line.release();
                }
            }

            @Override
            public void onOversizedLine(long length) {
                events.add(new Oversized(length));
            }
        };
        LineFramer.RunListener runs = new LineFramer.RunListener() {
            @Override
            public void onRun(ByteBuf run) {
                try {
                    String bytes = run.toString(StandardCharsets.ISO_8859_1);
                    assertThat(bytes).as("a run").isNotEmpty().endsWith("\n");
                    int start = 0;
                    for (int lf = bytes.indexOf('\n'); lf >= 0; lf = bytes.indexOf('\n', start)) {
                        events.add(line(bytes.substring(start, lf + 1)));
                        start = lf + 1;
                    }
                } finally {
                    run.release();
                }
            }

            @Override
            public void onOversizedLine(long length) {
                events.add(new Oversized(length));
            }
        };
        for (int i = 0; i < chunks.size(); i++) {
            ByteBuf chunk = Fragments.buffer(alloc, chunks.get(i), (int) (seed >>> (i % 60)) + i);
            boolean byRuns = mode == 1 || (mode == 2 && ((seed >>> (i % 64)) & 1) != 0);
            if (byRuns) {
                framer.feedRuns(chunk, runs);
            } else {
                framer.feed(chunk, lines);
            }
        }
        framer.finish(lines);
        return events;
    }

    /** What the framer must find in {@code input}: lines split at each {@code \n}, by the limit. */
    static List<Object> model(byte[] input, int limit) {
        String stream = new String(input, StandardCharsets.ISO_8859_1);
        List<Object> events = new ArrayList<>();
        int start = 0;
        for (int lf = stream.indexOf('\n'); lf >= 0; lf = stream.indexOf('\n', start)) {
            Line line = line(stream.substring(start, lf + 1));
            events.add(line.contentLength() > limit ? new Oversized(line.contentLength()) : line);
            start = lf + 1;
        }
        if (start < stream.length()) {
            // No newline: a '\r' at the end is content.
            int length = stream.length() - start;
            events.add(length > limit ? new Oversized(length) : new Line(stream.substring(start), length));
        }
        return events;
    }

    /** A terminated line: its content excludes the {@code \n} and a {@code \r} before it. */
    private static Line line(String bytes) {
        int content = bytes.length() - 1;
        if (content > 0 && bytes.charAt(content - 1) == '\r') {
            content--;
        }
        return new Line(bytes, content);
    }
}
