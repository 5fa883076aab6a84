package dev.mcpchaos.core.codec.line;

import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LineFramer}: every input is fed at every fragment size and must frame identically;
 * every buffer the framer hands out is released here (the leak check runs after each test).
 */
class LineFramerTest {

    /** The framer's allocator (for lines split across chunks): leak-tracked. */
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    /**
     * The input chunks' allocator: not leak-tracked, because at the paranoid level tracking costs
     * a stack trace per buffer access, and these tests make tens of thousands of chunks. Instead
     * each run checks that the framer released every chunk (reference count 0).
     */
    private static final ByteBufAllocator CHUNKS = Fragments.UNTRACKED;
    private static final int SMALL_LIMIT = 64;

    /** What the framer reported. */
    sealed interface Event permits Line, Oversized {
    }

    /** A line: its bytes with delimiter (ISO-8859-1, so every byte maps to one char) and content length. */
    record Line(String bytes, int contentLength) implements Event {
        static Line of(String text, int contentLength) {
            return new Line(text, contentLength);
        }
    }

    /** A discarded over-limit line and the length reported for it. */
    record Oversized(long length) implements Event {
    }

    // ---------------------------------------------------------------- plain framing

    @Test
    void splitsLinesAndKeepsEachDelimiter() {
        List<Event> events = frameAtEverySize("{\"a\":1}\nbb\n\nccc\n", true);
        assertThat(events).containsExactly(
                Line.of("{\"a\":1}\n", 7),
                Line.of("bb\n", 2),
                Line.of("\n", 0),
                Line.of("ccc\n", 3));
    }

    @Test
    void toleratesCrLfAndLeavesItInTheWireBytes() {
        List<Event> events = frameAtEverySize("a\r\nbb\r\n\r\nc\n", true);
        assertThat(events).containsExactly(
                Line.of("a\r\n", 1),
                Line.of("bb\r\n", 2),
                Line.of("\r\n", 0),
                Line.of("c\n", 1));
    }

    @Test
    void onlyACarriageReturnRightBeforeTheNewlineIsDelimiter() {
        // A lone \r inside a line, or two of them before \n: only the last belongs to the delimiter.
        List<Event> events = frameAtEverySize("a\rb\nx\r\r\n\r\r\n", true);
        assertThat(events).containsExactly(
                Line.of("a\rb\n", 3),
                Line.of("x\r\r\n", 2),
                Line.of("\r\r\n", 1));
    }

    @Test
    void whitespaceOnlyLinesAreLines() {
        List<Event> events = frameAtEverySize("  \t \n \r\n", true);
        assertThat(events).containsExactly(Line.of("  \t \n", 4), Line.of(" \r\n", 1));
    }

    @Test
    void finishPassesOnAnUnterminatedLastLine() {
        assertThat(frameAtEverySize("a\nlast", true)).containsExactly(Line.of("a\n", 1), Line.of("last", 4));
        // Without finish the last line is still waiting for its newline.
        assertThat(frameAtEverySize("a\nlast", false)).containsExactly(Line.of("a\n", 1));
        // No delimiter: a trailing \r is part of the content.
        assertThat(frameAtEverySize("x\r", true)).containsExactly(Line.of("x\r", 2));
    }

    @Test
    void finishWithNothingPendingReportsNothing() {
        assertThat(frameAtEverySize("a\n", true)).containsExactly(Line.of("a\n", 1));
        assertThat(frame(new LineFramer(ALLOC), List.of(), true)).isEmpty();
    }

    @Test
    void bytesOutEqualBytesIn() {
        String input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
                + "\n"
                + "   \n"
                + "not json at all \u00e9\u3042\ud83d\ude00\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                + "\r\r\n"
                + "unterminated \u00fc";
        byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
        List<Event> events = Fragments.assertSameAtEverySize(bytes, chunks -> frame(new LineFramer(ALLOC), chunks, true));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Event event : events) {
            assertThat(event).isInstanceOf(Line.class);
            out.writeBytes(((Line) event).bytes().getBytes(StandardCharsets.ISO_8859_1));
        }
        assertThat(out.toByteArray()).isEqualTo(bytes);
        assertThat(events).hasSize(7);
    }

    @Test
    void framesBinaryAndInvalidUtf8BytesUntouched() {
        byte[] bytes = {(byte) 0xFF, (byte) 0xC3, '(', 0, '\n', (byte) 0xE2, (byte) 0x82, '\n'};
        List<Event> events = Fragments.assertSameAtEverySize(bytes, chunks -> frame(new LineFramer(ALLOC), chunks, true));
        assertThat(events).containsExactly(
                new Line(new String(bytes, 0, 5, StandardCharsets.ISO_8859_1), 4),
                new Line(new String(bytes, 5, 3, StandardCharsets.ISO_8859_1), 2));
    }

    // ---------------------------------------------------------------- the limit

    @Test
    void defaultLimitIs16MiB() {
        assertThat(new LineFramer(ALLOC).maxLineLength()).isEqualTo(16 * 1024 * 1024)
                .isEqualTo(LineFramer.DEFAULT_MAX_LINE_LENGTH);
    }

    @Test
    void rejectsANonPositiveLimit() {
        assertThatThrownBy(() -> new LineFramer(0, ALLOC)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LineFramer(-1, ALLOC)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LineFramer(1, null)).isInstanceOf(NullPointerException.class);
        assertThat(new LineFramer(1, ALLOC).maxLineLength()).isEqualTo(1);
    }

    @Test
    void lineExactlyAtTheLimitPasses() {
        String atLimit = "x".repeat(SMALL_LIMIT);
        assertThat(frameSmallLimit(atLimit + "\n" + "next\n", true))
                .containsExactly(Line.of(atLimit + "\n", SMALL_LIMIT), Line.of("next\n", 4));
        // The \r of a CRLF delimiter does not count towards the limit.
        assertThat(frameSmallLimit(atLimit + "\r\n" + "next\r\n", true))
                .containsExactly(Line.of(atLimit + "\r\n", SMALL_LIMIT), Line.of("next\r\n", 4));
    }

    @Test
    void lineOneOverTheLimitIsDiscardedAndTheNextLineStillFramed() {
        String overLimit = "x".repeat(SMALL_LIMIT + 1);
        assertThat(frameSmallLimit(overLimit + "\n" + "next\n", true))
                .containsExactly(new Oversized(SMALL_LIMIT + 1), Line.of("next\n", 4));
    }

    @Test
    void crLfLineOneOverTheLimitReportsItsLengthWithoutTheDelimiter() {
        // The reported length excludes the delimiter, \r included, however the line was cut.
        String overLimit = "x".repeat(SMALL_LIMIT + 1);
        assertThat(frameSmallLimit(overLimit + "\r\n" + "next\r\n", true))
                .containsExactly(new Oversized(SMALL_LIMIT + 1), Line.of("next\r\n", 4));
    }

    @Test
    void muchLongerLinesAreDiscardedAndCounted() {
        String longLine = "{\"id\":1,\"result\":\"" + "y".repeat(200) + "\"}";
        String input = "first\n" + longLine + "\n" + longLine + "\r\n" + "{\"id\":2}\n";
        assertThat(frameSmallLimit(input, true)).containsExactly(
                Line.of("first\n", 5),
                new Oversized(longLine.length()),
                new Oversized(longLine.length()),
                Line.of("{\"id\":2}\n", 8));
    }

    @Test
    void unterminatedLastLineAtTheLimitIsPassedOn() {
        String atLimit = "z".repeat(SMALL_LIMIT);
        assertThat(frameSmallLimit("a\n" + atLimit, true)).containsExactly(Line.of("a\n", 1), Line.of(atLimit, SMALL_LIMIT));
    }

    @Test
    void unterminatedLastLineOverTheLimitIsReportedByFinish() {
        // limit + 1 is the boundary case: the framer keeps one byte of slack for a '\r'.
        for (int length : new int[] {SMALL_LIMIT + 1, SMALL_LIMIT + 2, 3 * SMALL_LIMIT}) {
            String over = "z".repeat(length);
            assertThat(frameSmallLimit("a\n" + over, true)).as("length %d", length)
                    .containsExactly(Line.of("a\n", 1), new Oversized(length));
            assertThat(frameSmallLimit("a\n" + over, false)).as("length %d, no finish", length)
                    .containsExactly(Line.of("a\n", 1));
        }
    }

    @Test
    void limitBoundaryWithEveryLengthAroundIt() {
        // Lines of limit-2 .. limit+3 bytes, LF and CRLF, one after the other in one stream. A
        // limit of 16 keeps the stream short enough to cut at every size.
        int limit = 16;
        StringBuilder input = new StringBuilder();
        List<Event> expected = new ArrayList<>();
        for (int length = limit - 2; length <= limit + 3; length++) {
            for (String delimiter : new String[] {"\n", "\r\n"}) {
                String content = String.valueOf((char) ('a' + length % 26)).repeat(length);
                input.append(content).append(delimiter);
                expected.add(length <= limit ? Line.of(content + delimiter, length) : new Oversized(length));
            }
        }
        List<Event> events = Fragments.assertSameAtEverySize(bytes(input.toString()),
                chunks -> frame(new LineFramer(limit, ALLOC), chunks, true));
        assertThat(events).containsExactlyElementsOf(expected);
    }

    @Test
    void limitOfOneByte() {
        List<Event> events = Fragments.assertSameAtEverySize(bytes("a\nbb\n\nc\r\nxy\r\n"),
                chunks -> frame(new LineFramer(1, ALLOC), chunks, true));
        assertThat(events).containsExactly(
                Line.of("a\n", 1), new Oversized(2), Line.of("\n", 0), Line.of("c\r\n", 1), new Oversized(2));
    }

    // ---------------------------------------------------------------- buffers

    @Test
    void aLineWholeInOneChunkIsARetainedSliceNotACopy() {
        ByteBuf chunk = Unpooled.buffer(16).writeBytes(bytes("ab\ncd\n"));
        List<ByteBuf> lines = new ArrayList<>();
        new LineFramer(ALLOC).feed(chunk, new LineFramer.Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                lines.add(line);
            }

            @Override
            public void onOversizedLine(long length) {
                throw new AssertionError("no oversized line expected");
            }
        });
        try {
            assertThat(lines).hasSize(2);
            // The framer released its reference to the chunk; each line holds one.
            assertThat(chunk.refCnt()).isEqualTo(2);
            // Same memory: a change to the chunk shows through the line.
            chunk.setByte(0, 'A');
            assertThat(lines.get(0).toString(StandardCharsets.US_ASCII)).isEqualTo("Ab\n");
        } finally {
            lines.forEach(ByteBuf::release);
        }
        assertThat(chunk.refCnt()).isZero();
    }

    @Test
    void releasesEveryChunkEvenWhenTheListenerThrows() {
        ByteBuf chunk = Unpooled.buffer(16).writeBytes(bytes("ab\ncd\n"));
        LineFramer framer = new LineFramer(ALLOC);
        assertThatThrownBy(() -> framer.feed(chunk, new LineFramer.Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                line.release(); // ownership passed to us: release before failing
                throw new IllegalStateException("listener failure");
            }

            @Override
            public void onOversizedLine(long length) {
            }
        })).hasMessage("listener failure");
        assertThat(chunk.refCnt()).isZero();
    }

    @Test
    void closeReleasesAPartialLine() {
        LineFramer framer = new LineFramer(ALLOC);
        List<Event> events = new ArrayList<>();
        framer.feed(Fragments.buffer(CHUNKS, bytes("no newline yet"), 0), recorder(events));
        framer.close(); // the leak check after this test fails if the partial line was not released
        framer.finish(recorder(events));
        assertThat(events).isEmpty();
    }

    @Test
    void closeForgetsALineBeingDiscarded() {
        LineFramer framer = new LineFramer(4, ALLOC);
        List<Event> events = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes("too long without end")), recorder(events));
        framer.close();
        framer.feed(Unpooled.copiedBuffer(bytes("ok\n")), recorder(events));
        assertThat(events).containsExactly(Line.of("ok\n", 2));
    }

    @Test
    void keepsFramingAfterFinish() {
        LineFramer framer = new LineFramer(ALLOC);
        List<Event> events = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes("a\nb")), recorder(events));
        framer.finish(recorder(events));
        framer.feed(Unpooled.copiedBuffer(bytes("c\nd")), recorder(events));
        framer.finish(recorder(events));
        assertThat(events).containsExactly(Line.of("a\n", 1), Line.of("b", 1), Line.of("c\n", 1), Line.of("d", 1));
    }

    @Test
    void emptyChunksChangeNothing() {
        LineFramer framer = new LineFramer(ALLOC);
        List<Event> events = new ArrayList<>();
        framer.feed(Unpooled.buffer(0), recorder(events));
        framer.feed(Unpooled.copiedBuffer(bytes("a")), recorder(events));
        framer.feed(Unpooled.buffer(0), recorder(events));
        framer.feed(Unpooled.copiedBuffer(bytes("\n")), recorder(events));
        assertThat(events).containsExactly(Line.of("a\n", 1));
    }

    // ---------------------------------------------------------------- runs of lines

    @Test
    void runsCarryWhatLinesCarryAtEveryCutAndLimit() {
        // Runs (feedRuns), lines (feed), and the two taking turns chunk by chunk, must hand on the
        // same bytes and report the same over-limit lines, whatever the chunks and the limit.
        StringBuilder input = new StringBuilder();
        for (int length = 0; length <= 20; length += 3) {
            String content = String.valueOf((char) ('a' + length)).repeat(length);
            input.append(content).append(length % 2 == 0 ? "\n" : "\r\n");
        }
        input.append("\n\n{\"jsonrpc\":\"2.0\"}\nunterminated");
        for (int limit : new int[] {1, 5, 16, 64, LineFramer.DEFAULT_MAX_LINE_LENGTH}) {
            byte[] bytes = bytes(input.toString());
            List<Event> byLines = Fragments.assertSameAtEverySize(bytes,
                    chunks -> merged(frameMixed(new LineFramer(limit, ALLOC), chunks, i -> false)));
            List<Event> byRuns = Fragments.assertSameAtEverySize(bytes,
                    chunks -> merged(frameMixed(new LineFramer(limit, ALLOC), chunks, i -> true)));
            List<Event> byTurns = Fragments.assertSameAtEverySize(bytes,
                    chunks -> merged(frameMixed(new LineFramer(limit, ALLOC), chunks, i -> i % 2 == 0)));
            assertThat(byRuns).as("limit %d", limit).isEqualTo(byLines);
            assertThat(byTurns).as("limit %d", limit).isEqualTo(byLines);
            assertThat(byLines).as("limit %d: something over it reported", limit)
                    .hasAtLeastOneElementOfType(limit < 20 ? Oversized.class : Line.class);
        }
    }

    @Test
    void aChunkOfWholeLinesIsOneRunSlicedFromIt() {
        LineFramer framer = new LineFramer(ALLOC);
        ByteBuf chunk = Unpooled.copiedBuffer(bytes("a\nbb\r\n\ncc"));
        List<ByteBuf> runs = new ArrayList<>();
        framer.feedRuns(chunk, new LineFramer.RunListener() {
            @Override
            public void onRun(ByteBuf lines) {
                runs.add(lines);
            }

            @Override
            public void onOversizedLine(long length) {
                throw new AssertionError("nothing is over the limit");
            }
        });
        try {
            assertThat(runs).singleElement().satisfies(run -> {
                assertThat(run.toString(StandardCharsets.ISO_8859_1)).isEqualTo("a\nbb\r\n\n");
                assertThat(run.unwrap()).isSameAs(chunk);
            });
        } finally {
            runs.forEach(ByteBuf::release);
            framer.close();
        }
        assertThat(chunk.refCnt()).isZero();
    }

    /**
     * Feeds the chunks, by runs where {@code byRuns} says so and by lines elsewhere, finishes and
     * closes; checks every chunk was released and every run ends a line. Runs are recorded as
     * lines (content length -1).
     */
    private static List<Event> frameMixed(LineFramer framer, List<byte[]> chunks, IntPredicate byRuns) {
        List<Event> events = new ArrayList<>();
        List<ByteBuf> fed = new ArrayList<>();
        LineFramer.Listener lines = recorder(events);
        LineFramer.RunListener runs = new LineFramer.RunListener() {
            @Override
            public void onRun(ByteBuf run) {
                try {
                    assertThat(run.getByte(run.writerIndex() - 1)).as("a run ends a line").isEqualTo((byte) '\n');
                    events.add(new Line(run.toString(StandardCharsets.ISO_8859_1), -1));
                } finally {
                    run.release();
                }
            }

            @Override
            public void onOversizedLine(long length) {
                events.add(new Oversized(length));
            }
        };
        try {
            for (int i = 0; i < chunks.size(); i++) {
                ByteBuf chunk = Fragments.buffer(CHUNKS, chunks.get(i), i);
                fed.add(chunk);
                if (byRuns.test(i)) {
                    framer.feedRuns(chunk, runs);
                } else {
                    framer.feed(chunk, lines);
                }
            }
            framer.finish(lines);
        } finally {
            framer.close();
        }
        assertThat(fed).as("chunks still referenced after framing").allMatch(chunk -> chunk.refCnt() == 0);
        return events;
    }

    /** The bytes handed on between two over-limit reports, joined: what a relay would write. */
    private static List<Event> merged(List<Event> events) {
        List<Event> merged = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (Event event : events) {
            if (event instanceof Line line) {
                text.append(line.bytes());
            } else {
                if (text.length() > 0) {
                    merged.add(new Line(text.toString(), -1));
                    text.setLength(0);
                }
                merged.add(event);
            }
        }
        if (text.length() > 0) {
            merged.add(new Line(text.toString(), -1));
        }
        return merged;
    }

    // ---------------------------------------------------------------- helpers

    private static List<Event> frameAtEverySize(String input, boolean finish) {
        return Fragments.assertSameAtEverySize(bytes(input), chunks -> frame(new LineFramer(ALLOC), chunks, finish));
    }

    private static List<Event> frameSmallLimit(String input, boolean finish) {
        return Fragments.assertSameAtEverySize(bytes(input),
                chunks -> frame(new LineFramer(SMALL_LIMIT, ALLOC), chunks, finish));
    }

    /**
     * Feeds the chunks (cycling buffer layouts), optionally finishes, and closes the framer; then
     * checks that every chunk was released (lines are released as they are recorded).
     */
    static List<Event> frame(LineFramer framer, List<byte[]> chunks, boolean finish) {
        List<Event> events = new ArrayList<>();
        List<ByteBuf> fed = new ArrayList<>();
        LineFramer.Listener listener = recorder(events);
        try {
            for (int i = 0; i < chunks.size(); i++) {
                ByteBuf chunk = Fragments.buffer(CHUNKS, chunks.get(i), i);
                fed.add(chunk);
                framer.feed(chunk, listener);
            }
            if (finish) {
                framer.finish(listener);
            }
        } finally {
            framer.close();
        }
        assertThat(fed).as("chunks still referenced after framing").allMatch(chunk -> chunk.refCnt() == 0);
        return events;
    }

    /** A listener that records events and releases each line it is given. */
    static LineFramer.Listener recorder(List<Event> events) {
        return new LineFramer.Listener() {
            @Override
            public void onLine(ByteBuf line, int contentLength) {
                try {
                    assertThat(contentLength).isBetween(0, line.readableBytes());
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
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
