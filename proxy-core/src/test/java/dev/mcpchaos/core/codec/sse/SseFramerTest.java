package dev.mcpchaos.core.codec.sse;

import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SseFramer}: every input is fed at every fragment size (mixing heap, direct and offset
 * buffers) and must frame identically; every event, data buffer and tail is released here (the
 * leak check runs after each test).
 */
class SseFramerTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final int SMALL_LIMIT = 64;

    /** What the framer reported. */
    sealed interface Out permits Ev, Oversized, Tail {
    }

    /**
     * An event. {@code raw} and {@code data} hold bytes as ISO-8859-1 (one char per byte), so the
     * comparison is byte-exact; build expectations with {@link #ev}.
     */
    record Ev(String raw, String data, String eventType, String id, Long retry, boolean commentOnly) implements Out {
    }

    /** A discarded over-limit event and its reported size. */
    record Oversized(long size) implements Out {
    }

    /** The bytes of an unterminated event at the end of the stream (ISO-8859-1). */
    record Tail(String raw) implements Out {
    }

    /** An event from UTF-8 text; {@code data} null for an event without a data field. */
    static Ev ev(String raw, String data, String eventType, String id, Long retry, boolean commentOnly) {
        return new Ev(iso(raw), data == null ? null : iso(data), eventType, id, retry, commentOnly);
    }

    static Ev data(String raw, String data) {
        return ev(raw, data, null, null, null, false);
    }

    static Ev noData(String raw) {
        return ev(raw, null, null, null, null, false);
    }

    static Tail tail(String raw) {
        return new Tail(iso(raw));
    }

    // ---------------------------------------------------------------- the MCP stream

    @Test
    void findsTheFirstLineEndAtEveryPositionAndAlignment() {
        java.util.Random random = new java.util.Random(42);
        byte[] noise = {'a', ' ', (byte) 0x8d, (byte) 0x8a, 0x0c, 0x0e, 0x09, 0x0b, (byte) 0xff, 0x00, 0x01};
        for (int round = 0; round < 2000; round++) {
            byte[] a = new byte[1 + random.nextInt(40)];
            for (int i = 0; i < a.length; i++) {
                a[i] = noise[random.nextInt(noise.length)];
            }
            int ends = random.nextInt(3);
            for (int i = 0; i < ends; i++) {
                a[random.nextInt(a.length)] = random.nextBoolean() ? (byte) '\r' : (byte) '\n';
            }
            int from = random.nextInt(a.length);
            int to = from + random.nextInt(a.length - from + 1);
            int expected = -1;
            for (int i = from; i < to && expected < 0; i++) {
                if (a[i] == '\r' || a[i] == '\n') {
                    expected = i;
                }
            }
            assertThat(SseFramer.indexOfLineEnd(a, from, to)).as("%s [%d, %d)", java.util.Arrays.toString(a), from, to)
                    .isEqualTo(expected);
        }
    }

    @Test
    void framesAnMcpStreamEventByEvent() {
        String response = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
        String notification = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}";
        String input = "id: abc\ndata: \n\n"
                + ": keep-alive\n\n"
                + "event: message\ndata: " + notification + "\n\n"
                + "id: 1\nevent: message\ndata: " + response + "\n\n";
        assertThat(frameAtEverySize(input, true)).containsExactly(
                ev("id: abc\ndata: \n\n", "", null, "abc", null, false),
                ev(": keep-alive\n\n", null, null, null, null, true),
                ev("event: message\ndata: " + notification + "\n\n", notification, "message", null, null, false),
                ev("id: 1\nevent: message\ndata: " + response + "\n\n", response, "message", "1", null, false));
    }

    @Test
    void primingEventHasEmptyDataAndIsNotDispatched() {
        List<SseEvent> events = collect(new SseFramer(ALLOC), "id: abc\ndata: \n\n");
        try {
            SseEvent priming = events.get(0);
            assertThat(priming.hasData()).isTrue();
            assertThat(priming.data().readableBytes()).isZero();
            assertThat(priming.isDispatched()).isFalse();
            assertThat(priming.id()).isEqualTo("abc");
            assertThat(priming.isCommentOnly()).isFalse();
        } finally {
            events.forEach(SseEvent::release);
        }
    }

    @Test
    void commentsAreEventsOfTheirOwn() {
        assertThat(frameAtEverySize(": keep-alive\n\n:\n: two\n\n", true)).containsExactly(
                ev(": keep-alive\n\n", null, null, null, null, true),
                ev(":\n: two\n\n", null, null, null, null, true));
        // A comment inside an event does not make it comment-only.
        assertThat(frameAtEverySize(": hi\ndata: x\n\n", true)).containsExactly(
                ev(": hi\ndata: x\n\n", "x", null, null, null, false));
    }

    @Test
    void joinsSeveralDataLinesWithNewlines() {
        assertThat(frameAtEverySize("data: a\ndata: b\ndata:\ndata:  c\ndata: \n\n", true)).containsExactly(
                data("data: a\ndata: b\ndata:\ndata:  c\ndata: \n\n", "a\nb\n\n c\n"));
        assertThat(frameAtEverySize("data: {\ndata:   \"a\": 1\ndata: }\n\n", true)).containsExactly(
                data("data: {\ndata:   \"a\": 1\ndata: }\n\n", "{\n  \"a\": 1\n}"));
    }

    @Test
    void keepsJsonEscapesInData() {
        String json = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"text\":\"line1\\nline2\\r\\n\\\"q\\\"\"}}";
        assertThat(frameAtEverySize("data: " + json + "\n\n", true)).containsExactly(data("data: " + json + "\n\n", json));
    }

    @Test
    void unicodeSplitAcrossChunksIsUntouched() {
        String json = "{\"text\":\"\u00e9\u2603\ud83d\ude00 \u3042\"}";
        String input = "event: caf\u00e9\nid: \u2603\ndata: " + json + "\n\n";
        assertThat(frameAtEverySize(input, true)).containsExactly(
                ev(input, json, "caf\u00e9", "\u2603", null, false));
    }

    // ---------------------------------------------------------------- line ends

    @Test
    void acceptsCrLfAndKeepsItInTheRawBytes() {
        assertThat(frameAtEverySize("id: 1\r\ndata: a\r\n\r\n: c\r\n\r\n", true)).containsExactly(
                ev("id: 1\r\ndata: a\r\n\r\n", "a", null, "1", null, false),
                ev(": c\r\n\r\n", null, null, null, null, true));
    }

    @Test
    void crLfIsOneLineEndEvenWhenSplitAcrossChunks() {
        // Were "\r" and "\n" two line ends, "data: a\r\n" would end the event at once.
        for (String input : new String[] {"data: a\r\n\r\n", "data: a\r\ndata: b\r\n\r\n"}) {
            List<byte[]> chunks = new ArrayList<>();
            byte[] bytes = bytes(input);
            for (int cut = 1; cut < bytes.length; cut++) {
                chunks.clear();
                chunks.add(Arrays.copyOfRange(bytes, 0, cut));
                chunks.add(Arrays.copyOfRange(bytes, cut, bytes.length));
                List<Out> out = frame(new SseFramer(ALLOC), chunks, false);
                assertThat(out).as("%s cut at %d", input.replace("\r", "\\r").replace("\n", "\\n"), cut)
                        .containsExactly(data(input, input.contains("b") ? "a\nb" : "a"));
            }
        }
    }

    @Test
    void acceptsBareCarriageReturns() {
        assertThat(frameAtEverySize("data: a\rdata: b\r\rid: 7\r\r", true)).containsExactly(
                data("data: a\rdata: b\r\r", "a\nb"),
                ev("id: 7\r\r", null, null, "7", null, false));
    }

    @Test
    void eventEndedByABareCrAtTheEndOfTheInputWaitsForTheNextByte() {
        // The next byte might be the '\n' of a "\r\n": the event is held until it is known.
        assertThat(frameAtEverySize("data: a\r\rdata: b\r\r", false)).containsExactly(data("data: a\r\r", "a"));
        assertThat(frameAtEverySize("data: a\r\rdata: b\r\r", true))
                .containsExactly(data("data: a\r\r", "a"), data("data: b\r\r", "b"));
    }

    @Test
    void mixedLineEnds() {
        assertThat(frameAtEverySize("data: a\r\ndata: b\rdata: c\n\r\n\r\r\n\n", true)).containsExactly(
                data("data: a\r\ndata: b\rdata: c\n\r\n", "a\nb\nc"),
                noData("\r"),
                noData("\r\n"),
                noData("\n"));
    }

    @Test
    void extraBlankLinesAreEmptyEvents() {
        assertThat(frameAtEverySize("\n\ndata: x\n\n\n", true)).containsExactly(
                noData("\n"), noData("\n"), data("data: x\n\n", "x"), noData("\n"));
    }

    // ---------------------------------------------------------------- fields

    @Test
    void stripsOnlyOneSpaceAfterTheColon() {
        assertThat(frameAtEverySize("data:x\n\ndata:  x\n\ndata:\tx\n\n", true)).containsExactly(
                data("data:x\n\n", "x"), data("data:  x\n\n", " x"), data("data:\tx\n\n", "\tx"));
    }

    @Test
    void aFieldWithoutColonHasAnEmptyValue() {
        assertThat(frameAtEverySize("data\ndata\n\nid\n\nevent\n\n", true)).containsExactly(
                data("data\ndata\n\n", "\n"),
                ev("id\n\n", null, null, "", null, false),
                ev("event\n\n", null, "", null, null, false));
    }

    @Test
    void parsesRetryAndIgnoresInvalidValues() {
        assertThat(frameAtEverySize("retry: 3000\n\n", true)).containsExactly(ev("retry: 3000\n\n", null, null, null, 3000L, false));
        assertThat(frameAtEverySize("retry:250\nretry: 1x\n\n", true))
                .containsExactly(ev("retry:250\nretry: 1x\n\n", null, null, null, 250L, false));
        for (String invalid : new String[] {"retry: \n\n", "retry: -1\n\n", "retry: 1.5\n\n", "retry:  5\n\n",
                "retry: 99999999999999999999\n\n", "retry: 3000 \n\n"}) {
            assertThat(frameAtEverySize(invalid, true)).as(invalid).containsExactly(noData(invalid));
        }
        assertThat(frameAtEverySize("retry: 9223372036854775807\n\n", true))
                .containsExactly(ev("retry: 9223372036854775807\n\n", null, null, null, Long.MAX_VALUE, false));
    }

    @Test
    void theLastEventAndIdFieldsWinAndAnIdWithNulIsIgnored() {
        assertThat(frameAtEverySize("event: a\nevent: b\nid: 1\nid: 2\nid: x\u0000y\ndata: d\n\n", true)).containsExactly(
                ev("event: a\nevent: b\nid: 1\nid: 2\nid: x\u0000y\ndata: d\n\n", "d", "b", "2", null, false));
        assertThat(frameAtEverySize("id: \u0000\n\n", true)).containsExactly(noData("id: \u0000\n\n"));
    }

    @Test
    void ignoresUnknownFieldsButKeepsTheirBytes() {
        assertThat(frameAtEverySize("foo: bar\nDATA: no\nData: no\ndata : no\ndat: no\ndata: yes\n\nx\n\n", true))
                .containsExactly(
                        data("foo: bar\nDATA: no\nData: no\ndata : no\ndat: no\ndata: yes\n\n", "yes"),
                        noData("x\n\n"));
    }

    @Test
    void eventTypeDefaultsToMessage() {
        List<SseEvent> events = collect(new SseFramer(ALLOC), "data: a\n\nevent:\ndata: b\n\nevent: endpoint\ndata: /m\n\n");
        try {
            assertThat(events).extracting(SseEvent::eventType).containsExactly(null, "", "endpoint");
            assertThat(events).extracting(SseEvent::type).containsExactly("message", "message", "endpoint");
            assertThat(events).extracting(SseEvent::isMessageType).containsExactly(true, true, false);
            assertThat(events).extracting(SseEvent::isDispatched).containsExactly(true, true, true);
        } finally {
            events.forEach(SseEvent::release);
        }
    }

    // ---------------------------------------------------------------- BOM

    @Test
    void skipsOneLeadingBomButKeepsItsBytes() {
        assertThat(frameAtEverySize("\ufeffdata: x\n\n\ufeffdata: y\n\n", true)).containsExactly(
                data("\ufeffdata: x\n\n", "x"),
                noData("\ufeffdata: y\n\n")); // a second BOM is not skipped: the field is unknown
        assertThat(frameAtEverySize("\ufeff\ndata: y\n\n", true)).containsExactly(noData("\ufeff\n"), data("data: y\n\n", "y"));
        assertThat(frameAtEverySize("\ufeff: hi\n\n", true)).containsExactly(ev("\ufeff: hi\n\n", null, null, null, null, true));
    }

    @Test
    void aBrokenBomIsFieldText() {
        byte[] input = {(byte) 0xEF, (byte) 0xBB, 'd', 'a', 't', 'a', ':', ' ', 'x', '\n', '\n'};
        List<Out> out = Fragments.assertSameAtEverySize(input, chunks -> frame(new SseFramer(ALLOC), chunks, true));
        assertThat(out).containsExactly(new Ev(new String(input, StandardCharsets.ISO_8859_1), null, null, null, null, false));
    }

    @Test
    void detectsTheBomAgainAfterFinish() {
        SseFramer framer = new SseFramer(ALLOC);
        List<Out> out = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes("\ufeffdata: a\n\n")), recorder(out));
        framer.finish(recorder(out));
        framer.feed(Unpooled.copiedBuffer(bytes("\ufeffdata: b\n\n")), recorder(out));
        framer.finish(recorder(out));
        assertThat(out).containsExactly(data("\ufeffdata: a\n\n", "a"), data("\ufeffdata: b\n\n", "b"));
    }

    // ---------------------------------------------------------------- end of stream

    @Test
    void finishHandsOnAnUnterminatedTail() {
        assertThat(frameAtEverySize("data: a\n\ndata: partial", true)).containsExactly(data("data: a\n\n", "a"), tail("data: partial"));
        assertThat(frameAtEverySize("data: a\n\nid: 1\ndata: b\n", true)).containsExactly(data("data: a\n\n", "a"), tail("id: 1\ndata: b\n"));
        assertThat(frameAtEverySize("data: a\n\ndata: b\r", true)).containsExactly(data("data: a\n\n", "a"), tail("data: b\r"));
        assertThat(frameAtEverySize("data: a\n\ndata: b\r\n", true)).containsExactly(data("data: a\n\n", "a"), tail("data: b\r\n"));
        // Without finish, the partial event is still waiting for its blank line.
        assertThat(frameAtEverySize("data: a\n\ndata: partial", false)).containsExactly(data("data: a\n\n", "a"));
    }

    @Test
    void finishWithNothingPendingReportsNothing() {
        assertThat(frameAtEverySize("data: a\n\n", true)).containsExactly(data("data: a\n\n", "a"));
        assertThat(frame(new SseFramer(ALLOC), List.of(), true)).isEmpty();
    }

    @Test
    void bytesOutEqualBytesIn() {
        String input = "\ufeffretry: 3000\r\n\r\n"
                + "id: abc\ndata: \n\n"
                + ": keep-alive\n\n"
                + "\n"
                + "event: message\rdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\u00e9\u2603\ud83d\ude00\"}}\r\r"
                + "foo: bar\ndata: [1,\ndata: 2]\r\n\r\n"
                + "id: x\u0000\nevent: ping\n\n"
                + "data: unterminated \u00fc\n";
        byte[] bytes = bytes(input);
        List<Out> out = Fragments.assertSameAtEverySize(bytes, chunks -> frame(new SseFramer(ALLOC), chunks, true));
        assertThat(out).hasSize(8);
        assertThat(out.get(7)).isInstanceOf(Tail.class);
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (Out o : out) {
            String raw = o instanceof Ev ? ((Ev) o).raw() : ((Tail) o).raw();
            joined.writeBytes(raw.getBytes(StandardCharsets.ISO_8859_1));
        }
        assertThat(joined.toByteArray()).isEqualTo(bytes);
    }

    @Test
    void framesBinaryAndInvalidUtf8Untouched() {
        byte[] input = {'d', 'a', 't', 'a', ':', ' ', (byte) 0xFF, (byte) 0xC3, '(', 0, '\n', '\n', (byte) 0xE2, ':', '\n', '\n'};
        List<Out> out = Fragments.assertSameAtEverySize(input, chunks -> frame(new SseFramer(ALLOC), chunks, true));
        assertThat(out).containsExactly(
                new Ev(new String(input, 0, 12, StandardCharsets.ISO_8859_1),
                        new String(input, 6, 4, StandardCharsets.ISO_8859_1), null, null, null, false),
                new Ev(new String(input, 12, 4, StandardCharsets.ISO_8859_1), null, null, null, null, false));
    }

    // ---------------------------------------------------------------- the limit

    @Test
    void defaultLimitIs16MiB() {
        assertThat(new SseFramer(ALLOC).maxEventSize()).isEqualTo(16 * 1024 * 1024)
                .isEqualTo(SseFramer.DEFAULT_MAX_EVENT_SIZE);
    }

    @Test
    void rejectsALimitOutOfRange() {
        assertThatThrownBy(() -> new SseFramer(0, ALLOC)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxEventSize: 0 (expected: 1.." + SseFramer.MAX_EVENT_SIZE_LIMIT + ")");
        assertThatThrownBy(() -> new SseFramer(-1, ALLOC)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SseFramer(Integer.MAX_VALUE, ALLOC)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SseFramer(1, null)).isInstanceOf(NullPointerException.class).hasMessage("alloc");
        assertThat(new SseFramer(1, ALLOC).maxEventSize()).isEqualTo(1);
    }

    @Test
    void anEventOverTheLimitIsDiscardedAndTheNextOneStillFramed() {
        String big = "data: {\"id\":1,\"result\":\"" + "y".repeat(100) + "\"}\n\n";
        assertThat(frameSmallLimit(big + "data: next\n\n", true))
                .containsExactly(new Oversized(big.length()), data("data: next\n\n", "next"));
        // Several lines, several data lines (a data copy under way), CRLF line ends.
        // Three data lines fit (their joined copy is under way), the fourth goes over.
        String multi = "id: 1\r\n" + ("data: " + "a".repeat(10) + "\r\n").repeat(4) + "\r\n";
        assertThat(frameSmallLimit(": x\n\n" + multi + "data: next\n\n", true)).containsExactly(
                ev(": x\n\n", null, null, null, null, true), new Oversized(multi.length()), data("data: next\n\n", "next"));
    }

    @Test
    void limitBoundaryWithEverySizeAroundIt() {
        // Events of limit-2 .. limit+2 bytes, LF and CRLF, one after the other in one stream.
        StringBuilder input = new StringBuilder();
        List<Out> expected = new ArrayList<>();
        for (int size = SMALL_LIMIT - 2; size <= SMALL_LIMIT + 2; size++) {
            for (String eol : new String[] {"\n", "\r\n", "\r"}) {
                int valueLength = size - "data: ".length() - 2 * eol.length();
                String value = String.valueOf((char) ('a' + size % 26)).repeat(valueLength);
                String event = "data: " + value + eol + eol;
                input.append(event);
                expected.add(size <= SMALL_LIMIT ? data(event, value) : new Oversized(size));
            }
        }
        assertThat(frameSmallLimit(input.toString(), true)).containsExactlyElementsOf(expected);
    }

    @Test
    void theLfOfTheLastCrLfCanBeTheByteOverTheLimit() {
        String value = "v".repeat(SMALL_LIMIT - "data: ".length() - 3); // "\r\n\r" fits, the last "\n" does not
        String over = "data: " + value + "\r\n\r\n";
        String at = "data: " + value + "\n\n";
        assertThat(over).hasSize(SMALL_LIMIT + 1);
        assertThat(frameSmallLimit(over + at, true)).containsExactly(new Oversized(SMALL_LIMIT + 1), data(at, value));
    }

    @Test
    void anUnterminatedEventOverTheLimitIsReportedByFinish() {
        String partial = "data: " + "z".repeat(SMALL_LIMIT);
        assertThat(frameSmallLimit("data: a\n\n" + partial, true))
                .containsExactly(data("data: a\n\n", "a"), new Oversized(partial.length()));
        assertThat(frameSmallLimit("data: a\n\n" + partial, false)).containsExactly(data("data: a\n\n", "a"));
    }

    @Test
    void limitOfOneByte() {
        List<Out> out = Fragments.assertSameAtEverySize(bytes("\n\ndata: x\n\n\r\n"),
                chunks -> frame(new SseFramer(1, ALLOC), chunks, true));
        assertThat(out).containsExactly(noData("\n"), noData("\n"), new Oversized(9), new Oversized(2));
    }

    @Test
    void aTwentyMegabyteEventUnderARaisedLimit() {
        int size = 20 * 1024 * 1024;
        String head = "id: big\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"blob\":\"";
        String tail = "\"}}\n\n";
        byte[] input = new byte[size + "data: next\n\n".length()];
        byte[] headBytes = bytes(head);
        byte[] tailBytes = bytes(tail);
        System.arraycopy(headBytes, 0, input, 0, headBytes.length);
        int blobEnd = size - tailBytes.length;
        for (int i = headBytes.length; i < blobEnd; i++) {
            input[i] = (byte) ('a' + i % 26);
        }
        System.arraycopy(tailBytes, 0, input, blobEnd, tailBytes.length);
        System.arraycopy(bytes("data: next\n\n"), 0, input, size, "data: next\n\n".length());

        List<String> out = Fragments.assertSameAtSizes(input, new int[] {65_536, 65_537, 8191, 1_000_003},
                chunks -> digests(new SseFramer(32 * 1024 * 1024, ALLOC), chunks));
        String dataDigest = sha256(input, "id: big\nevent: message\ndata: ".length(), size - 2);
        assertThat(out).containsExactly(
                "event " + size + " B " + sha256(input, 0, size) + " data " + dataDigest + " id=big event=message",
                "event 12 B " + sha256(bytes("data: next\n\n"), 0, 12) + " data "
                        + sha256(bytes("next"), 0, 4) + " id=null event=null");

        // The same stream under the default limit: the big event is dropped, the next one kept.
        List<String> limited = Fragments.assertSameAtSizes(input, new int[] {65_536, 1_000_003},
                chunks -> digests(new SseFramer(ALLOC), chunks));
        assertThat(limited).containsExactly("oversized " + size,
                "event 12 B " + sha256(bytes("data: next\n\n"), 0, 12) + " data "
                        + sha256(bytes("next"), 0, 4) + " id=null event=null");
    }

    // ---------------------------------------------------------------- buffers and state

    @Test
    void singleLineDataIsASliceOfTheRawBytesNotACopy() {
        for (int cut : new int[] {0, 3, 12}) {
            SseFramer framer = new SseFramer(ALLOC);
            List<SseEvent> events = new ArrayList<>();
            byte[] input = bytes("id: 1\ndata: {\"a\":1}\n\n");
            if (cut > 0) {
                framer.feed(Unpooled.wrappedBuffer(input, 0, cut), collector(events));
            }
            framer.feed(Unpooled.wrappedBuffer(input, cut, input.length - cut), collector(events));
            SseEvent event = events.get(0);
            try {
                assertThat(event.data().toString(StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
                // Same memory: a change to the raw bytes shows through the data.
                event.raw().setByte(event.raw().readerIndex() + 12, '[');
                assertThat(event.data().getByte(event.data().readerIndex())).as("cut %d", cut).isEqualTo((byte) '[');
            } finally {
                event.release();
            }
            assertThat(event.refCnt()).isZero();
        }
    }

    @Test
    void anEventWholeInOneChunkIsARetainedSliceOfIt() {
        ByteBuf chunk = Unpooled.buffer(32).writeBytes(bytes("data: a\n\ndata: b\n\n"));
        List<SseEvent> events = new ArrayList<>();
        new SseFramer(ALLOC).feed(chunk, collector(events));
        try {
            assertThat(events).hasSize(2);
            assertThat(chunk.refCnt()).isEqualTo(2); // the framer released its reference; each event holds one
            chunk.setByte(6, 'A');
            assertThat(events.get(0).data().toString(StandardCharsets.US_ASCII)).isEqualTo("A");
        } finally {
            events.forEach(SseEvent::release);
        }
        assertThat(chunk.refCnt()).isZero();
    }

    @Test
    void multiLineDataIsReleasedWithTheEvent() {
        List<SseEvent> events = collect(new SseFramer(ALLOC), "data: a\ndata: b\n\n");
        SseEvent event = events.get(0);
        ByteBuf data = event.data();
        assertThat(data.toString(StandardCharsets.US_ASCII)).isEqualTo("a\nb");
        event.release();
        assertThat(data.refCnt()).isZero();
        assertThat(event.raw().refCnt()).isZero();
    }

    @Test
    void releasesEveryChunkEvenWhenTheListenerThrows() {
        ByteBuf chunk = Unpooled.buffer(16).writeBytes(bytes("data: a\n\ndata: b\n\n"));
        SseFramer framer = new SseFramer(ALLOC);
        assertThatThrownBy(() -> framer.feed(chunk, new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                event.release(); // ownership passed to us: release before failing
                throw new IllegalStateException("listener failure");
            }

            @Override
            public void onOversizedEvent(long size) {
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                tail.release();
            }
        })).hasMessage("listener failure");
        assertThat(chunk.refCnt()).isZero();
        framer.close();
    }

    @Test
    void closeReleasesAPartialEvent() {
        SseFramer framer = new SseFramer(ALLOC);
        List<Out> out = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes("data: a\ndata: b\ndata: no blank line yet")), recorder(out));
        framer.close(); // the leak check after this test fails if the partial event was not released
        framer.finish(recorder(out));
        assertThat(out).isEmpty();
    }

    @Test
    void closeForgetsAnEventBeingDiscarded() {
        SseFramer framer = new SseFramer(8, ALLOC);
        List<Out> out = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes("data: too long without end")), recorder(out));
        framer.close();
        framer.feed(Unpooled.copiedBuffer(bytes("data:\n\n")), recorder(out));
        assertThat(out).containsExactly(data("data:\n\n", ""));
    }

    @Test
    void keepsFramingAfterFinishAndRemembersTheLastEventId() {
        SseFramer framer = new SseFramer(ALLOC);
        List<Out> out = new ArrayList<>();
        assertThat(framer.lastEventId()).isNull();
        framer.feed(Unpooled.copiedBuffer(bytes("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c")), recorder(out));
        assertThat(framer.lastEventId()).isEqualTo("1");
        framer.finish(recorder(out));
        assertThat(framer.lastEventId()).isEqualTo("1"); // the unterminated event's id does not count
        framer.feed(Unpooled.copiedBuffer(bytes("id\ndata: d\n\n")), recorder(out));
        assertThat(framer.lastEventId()).isEmpty();
        assertThat(out).containsExactly(
                ev("id: 1\ndata: a\n\n", "a", null, "1", null, false),
                data("data: b\n\n", "b"),
                tail("id: 2\ndata: c"),
                ev("id\ndata: d\n\n", "d", null, "", null, false));
    }

    @Test
    void emptyChunksChangeNothing() {
        SseFramer framer = new SseFramer(ALLOC);
        List<Out> out = new ArrayList<>();
        framer.feed(Unpooled.buffer(0), recorder(out));
        framer.feed(Unpooled.copiedBuffer(bytes("data: a\r")), recorder(out));
        framer.feed(Unpooled.buffer(0), recorder(out));
        framer.feed(Unpooled.copiedBuffer(bytes("\n\r")), recorder(out));
        framer.feed(Unpooled.buffer(0), recorder(out));
        framer.feed(Unpooled.copiedBuffer(bytes("\n")), recorder(out));
        assertThat(out).containsExactly(data("data: a\r\n\r\n", "a"));
    }

    @Test
    void rejectsNullArguments() {
        SseFramer framer = new SseFramer(ALLOC);
        assertThatThrownBy(() -> framer.feed(null, recorder(new ArrayList<>()))).isInstanceOf(NullPointerException.class)
                .hasMessage("chunk");
        ByteBuf chunk = Unpooled.copiedBuffer(bytes("x"));
        assertThatThrownBy(() -> framer.feed(chunk, null)).isInstanceOf(NullPointerException.class).hasMessage("listener");
        assertThat(chunk.refCnt()).isZero(); // ownership was taken all the same
        assertThatThrownBy(() -> framer.finish(null)).isInstanceOf(NullPointerException.class).hasMessage("listener");
    }

    // ---------------------------------------------------------------- helpers

    private static List<Out> frameAtEverySize(String input, boolean finish) {
        return Fragments.assertSameAtEverySize(bytes(input), chunks -> frame(new SseFramer(ALLOC), chunks, finish));
    }

    private static List<Out> frameSmallLimit(String input, boolean finish) {
        return Fragments.assertSameAtEverySize(bytes(input),
                chunks -> frame(new SseFramer(SMALL_LIMIT, ALLOC), chunks, finish));
    }

    /** Feeds the chunks (cycling buffer layouts), optionally finishes, and closes the framer. */
    static List<Out> frame(SseFramer framer, List<byte[]> chunks, boolean finish) {
        List<Out> out = new ArrayList<>();
        SseFramer.Listener listener = recorder(out);
        try {
            for (int i = 0; i < chunks.size(); i++) {
                framer.feed(Fragments.buffer(ALLOC, chunks.get(i), i), listener);
            }
            if (finish) {
                framer.finish(listener);
            }
        } finally {
            framer.close();
        }
        return out;
    }

    /** A listener that records what it is given and releases it. */
    static SseFramer.Listener recorder(List<Out> out) {
        return new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                try {
                    assertThat(event.refCnt()).isEqualTo(1);
                    ByteBuf data = event.data();
                    out.add(new Ev(event.raw().toString(StandardCharsets.ISO_8859_1),
                            data == null ? null : data.toString(StandardCharsets.ISO_8859_1),
                            event.eventType(), event.id(), event.retry(), event.isCommentOnly()));
                } finally {
                    event.release();
                }
            }

            @Override
            public void onOversizedEvent(long size) {
                out.add(new Oversized(size));
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                try {
                    out.add(new Tail(tail.toString(StandardCharsets.ISO_8859_1)));
                } finally {
                    tail.release();
                }
            }
        };
    }

    /** A listener that keeps the events (the caller releases them); nothing else is expected. */
    private static SseFramer.Listener collector(List<SseEvent> events) {
        return new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                events.add(event);
            }

            @Override
            public void onOversizedEvent(long size) {
                throw new AssertionError("no oversized event expected, got one of " + size + " bytes");
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                tail.release();
                throw new AssertionError("no unterminated tail expected");
            }
        };
    }

    /** Frames a stream and describes each event by sizes and SHA-256 digests, for inputs too big to compare as text. */
    private static List<String> digests(SseFramer framer, List<byte[]> chunks) {
        List<String> out = new ArrayList<>();
        SseFramer.Listener listener = new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                try {
                    out.add("event " + event.raw().readableBytes() + " B " + sha256(event.raw()) + " data "
                            + sha256(event.data()) + " id=" + event.id() + " event=" + event.eventType());
                } finally {
                    event.release();
                }
            }

            @Override
            public void onOversizedEvent(long size) {
                out.add("oversized " + size);
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                out.add("tail " + tail.readableBytes());
                tail.release();
            }
        };
        try {
            for (int i = 0; i < chunks.size(); i++) {
                framer.feed(Fragments.buffer(ALLOC, chunks.get(i), i), listener);
            }
            framer.finish(listener);
        } finally {
            framer.close();
        }
        return out;
    }

    /** Feeds the whole input as one chunk and returns the events, which the caller releases. */
    private static List<SseEvent> collect(SseFramer framer, String input) {
        List<SseEvent> events = new ArrayList<>();
        framer.feed(Unpooled.copiedBuffer(bytes(input)), collector(events));
        framer.close();
        return events;
    }

    private static String sha256(ByteBuf buf) {
        byte[] bytes = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), bytes);
        return sha256(bytes, 0, bytes.length);
    }

    private static String sha256(byte[] bytes, int from, int to) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(bytes, from, to - from);
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static String iso(String utf8Text) {
        return new String(bytes(utf8Text), StandardCharsets.ISO_8859_1);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
