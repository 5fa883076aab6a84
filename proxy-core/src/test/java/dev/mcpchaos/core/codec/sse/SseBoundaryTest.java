package dev.mcpchaos.core.codec.sse;

import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SseBoundary}: a stream is cut at every fragment size and relayed unframed for its first
 * chunks; framing then begins wherever the boundary says, which must be exactly where the
 * {@link SseFramer}, framing the whole stream, ends an event: the first such place at or after
 * the switch. The events framed from there are those of the whole stream from there.
 */
class SseBoundaryTest {

    /** Every line end the spec allows, blank lines in a row, comments, a "\r" split from its "\n". */
    private static final String MIXED = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n"
            + ": keep-alive\n\n"
            + "data: a\r\n\r\n"
            + "data: b\r\r"
            + "data: c\n\r\n"
            + "data: x\ndata: y\n\n\n\n"
            + "retry: 5\r\n\n"
            + "data: z\r\r\n"
            + "id: 2\rdata: w\r\n\r"
            + "data: last\n\n";

    @Test
    void framingBeginsWhereTheFramerEndsAnEventWhereverTheStreamIsCut() {
        assertSwitchesAtEventEnds(MIXED);
        assertSwitchesAtEventEnds("data: " + "x".repeat(300) + "\n\n" + "data: y\r\n\r\n");
        assertSwitchesAtEventEnds("\n\n\r\r\r\n\r\ndata: after blank lines\n\n");
    }

    @Test
    void passedLooksOnlyAtTheChunksTrailingLineEnds() {
        SseBoundary boundary = new SseBoundary();
        assertThat(boundary.atEventStart()).isTrue();
        pass(boundary, "data: one\n");
        assertThat(boundary.atEventStart()).isFalse();
        pass(boundary, "\n");
        assertThat(boundary.atEventStart()).isTrue();
        pass(boundary, "data: two\r");
        assertThat(boundary.atEventStart()).isFalse();
        pass(boundary, "\r");
        // A "\n" may still follow as part of the blank line's line end: not known yet.
        assertThat(boundary.atEventStart()).isFalse();
        ByteBuf next = ascii("\ndata: three\n\n");
        assertThat(boundary.eventStart(next)).isEqualTo(1);
        next.release();
    }

    @Test
    void eventStartIsMinusOneWhileTheEventInProgressDoesNotEnd() {
        SseBoundary boundary = new SseBoundary();
        pass(boundary, "data: {\"a\":");
        ByteBuf middle = ascii("1}\ndata: more");
        assertThat(boundary.eventStart(middle)).isEqualTo(-1);
        ByteBuf end = ascii("\n\ndata: next\n\n");
        assertThat(boundary.eventStart(end)).isEqualTo(2);
        assertThat(middle.readerIndex()).isZero();
        middle.release();
        end.release();
    }

    private static void assertSwitchesAtEventEnds(String stream) {
        byte[] bytes = stream.getBytes(StandardCharsets.ISO_8859_1);
        List<String> events = frame(bytes, 0);
        TreeSet<Integer> ends = new TreeSet<>();
        ends.add(0);
        int offset = 0;
        for (String event : events) {
            offset += event.length();
            ends.add(offset);
        }
        assertThat(offset).as("the framer keeps every byte").isEqualTo(bytes.length);
        for (int size : Fragments.sizes(bytes.length)) {
            for (int relayed = 0; relayed * size < bytes.length; relayed++) {
                SseBoundary boundary = new SseBoundary();
                int at = 0;
                for (int i = 0; i < relayed; i++) {
                    boundary.passed(chunk(bytes, at, size));
                    at += size;
                }
                String context = "size " + size + ", relayed " + at;
                if (ends.contains(at) && (at == 0 || bytes[at - 1] != '\r')) {
                    assertThat(boundary.atEventStart()).as(context).isTrue();
                }
                if (boundary.atEventStart()) {
                    assertThat(ends).as(context).contains(at);
                }
                int switched = -1;
                while (at < bytes.length) {
                    ByteBuf chunk = chunk(bytes, at, size);
                    int start = boundary.eventStart(chunk);
                    int chunkLength = chunk.readableBytes();
                    int from = chunk.readerIndex();
                    chunk.release();
                    if (start >= 0) {
                        switched = at + start - from;
                        break;
                    }
                    at += chunkLength;
                }
                Integer expected = ends.ceiling(relayed * size);
                assertThat(switched).as(context).isEqualTo(expected);
                List<String> after = new ArrayList<>();
                int end = 0;
                for (String event : events) {
                    end += event.length();
                    if (end > switched) {
                        after.add(event);
                    }
                }
                assertThat(frame(bytes, switched)).as(context).isEqualTo(after);
            }
        }
    }

    /** The raw bytes of each event the framer finds in {@code bytes} from {@code from} (ISO-8859-1). */
    private static List<String> frame(byte[] bytes, int from) {
        List<String> raws = new ArrayList<>();
        SseFramer framer = new SseFramer(ByteBufAllocator.DEFAULT);
        SseFramer.Listener listener = new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                raws.add(event.raw().toString(StandardCharsets.ISO_8859_1));
                event.release();
            }

            @Override
            public void onOversizedEvent(long size) {
                throw new AssertionError("no event is over the limit");
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                raws.add(tail.toString(StandardCharsets.ISO_8859_1));
                tail.release();
            }
        };
        framer.feed(Unpooled.wrappedBuffer(bytes, from, bytes.length - from), listener);
        framer.finish(listener);
        return raws;
    }

    /** Up to {@code size} bytes from {@code at}, behind a reader index that is not 0. */
    private static ByteBuf chunk(byte[] bytes, int at, int size) {
        int length = Math.min(size, bytes.length - at);
        ByteBuf chunk = Fragments.UNTRACKED.heapBuffer(length + 3);
        chunk.writeBytes(new byte[] {'x', 'y', 'z'}).writeBytes(bytes, at, length).skipBytes(3);
        return chunk;
    }

    private static void pass(SseBoundary boundary, String text) {
        ByteBuf chunk = ascii(text);
        boundary.passed(chunk);
        chunk.release();
    }

    private static ByteBuf ascii(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
    }
}
