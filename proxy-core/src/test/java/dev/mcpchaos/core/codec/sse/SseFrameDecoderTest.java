package dev.mcpchaos.core.codec.sse;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SseFrameDecoder} in a Netty pipeline ({@link EmbeddedChannel}): an SSE body in, one
 * original {@link Frame} per event out, at every fragment size; every frame is released here.
 */
class SseFrameDecoderTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final Envelope MALFORMED = Envelope.malformed("(any reason)");

    /** What a test needs to know of a frame, with value equality. */
    record FrameView(String wire, String content, Envelope envelope, Direction direction, long sequence, boolean original) {
    }

    /** The frames and the decoder's counters, after the input ended. */
    record Decoded(List<FrameView> frames, long oversizedEvents, long unterminatedTails, long frameCount) {
    }

    @Test
    void decodesAnMcpStreamAndPassesEveryByteOn() {
        String request = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":{\"name\":\"x\"}}";
        String notification = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}";
        String response = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                + "\"text\":\"\u691c\u7d22 \ud83d\udd0d\\nline 2\"}]}}";
        String[] events = {
            "id: abc\ndata: \n\n",                                              // priming event
            ": keep-alive\n\n",
            "retry: 3000\n\n",
            "event: message\ndata: " + notification + "\n\n",
            "id: 1\r\nevent: message\r\ndata: " + request + "\r\n\r\n",
            "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\":\"s1\",\ndata:  \"result\":{}}\n\n", // pretty-printed
            "\n",                                                              // a stray blank line
            "event: endpoint\ndata: /messages?sessionId=1\n\n",                // not a message event
            "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\"\n\n",              // malformed
            "unknown: field\rdata:" + response + "\r\r",
            "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,",                    // unterminated at the end
        };
        byte[] input = bytes(String.join("", events));
        Decoded decoded = Fragments.assertSameAtEverySize(input, chunks -> decode(SseFramer.DEFAULT_MAX_EVENT_SIZE, chunks));

        assertThat(decoded.oversizedEvents()).isZero();
        assertThat(decoded.unterminatedTails()).isEqualTo(1);
        assertThat(decoded.frameCount()).isEqualTo(events.length);
        List<FrameView> frames = decoded.frames();
        assertThat(frames).extracting(FrameView::wire).containsExactly(iso(events));
        assertThat(frames).extracting(FrameView::sequence).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(frames).allSatisfy(frame -> {
            assertThat(frame.direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
            assertThat(frame.original()).isTrue();
        });
        assertThat(frames).extracting(FrameView::envelope).containsExactly(
                Envelope.blank(),
                Envelope.blank(),
                Envelope.blank(),
                sniff(notification),
                sniff(request),
                sniff("{\"jsonrpc\":\"2.0\",\n \"id\":\"s1\",\n \"result\":{}}"),
                Envelope.blank(),
                Envelope.blank(),
                MALFORMED,
                sniff(response),
                Envelope.blank());
        assertThat(frames).extracting(FrameView::content).containsExactly(iso(new String[] {
            "", "", "", notification, request, "{\"jsonrpc\":\"2.0\",\n \"id\":\"s1\",\n \"result\":{}}", "", "/messages?sessionId=1",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\"", response, ""}));
        assertThat(frames.get(3).envelope().kind()).isEqualTo(MessageKind.NOTIFICATION);
        assertThat(frames.get(4).envelope().kind()).isEqualTo(MessageKind.REQUEST);
        assertThat(frames.get(5).envelope().id()).isEqualTo("s1");
        assertThat(frames.get(9).envelope().kind()).isEqualTo(MessageKind.RESPONSE);

        // Bytes out == bytes in.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frames.forEach(frame -> out.writeBytes(frame.wire().getBytes(StandardCharsets.ISO_8859_1)));
        assertThat(out.toByteArray()).isEqualTo(input);
    }

    @Test
    void lentFramesAreTheFramesDecodeMakesAndKeepNothingOfTheChunk() {
        String[] events = {
            "id: abc\ndata: \n\n",
            ": keep-alive\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
            "id: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\r\n",
            "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\":\"s1\",\ndata:  \"result\":{}}\n\n", // joined data
            "event: endpoint\ndata: /messages\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\"\r\r",                  // malformed, bare CR
            "data: {\"jsonrpc\":\"2.0\",\"id\":3,",                                   // unterminated
        };
        byte[] input = bytes(String.join("", events));
        Decoded owned = decode(SseFramer.DEFAULT_MAX_EVENT_SIZE, List.of(input));
        Decoded lent = Fragments.assertSameAtEverySize(input,
                chunks -> decodeLending(SseFramer.DEFAULT_MAX_EVENT_SIZE, chunks));
        assertThat(lent).isEqualTo(owned);
        assertThat(lent.frames()).extracting(FrameView::wire).containsExactly(iso(events));
    }

    @Test
    void lentFramesOfOversizedEventsAreCountedAsDecodeCountsThem() {
        String big = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"" + "x".repeat(100) + "\"}\n\n";
        byte[] input = bytes("data: {\"id\":1,\"method\":\"a\"}\n\n" + big + "data: {\"id\":2,\"method\":\"b\"}\n\n" + big);
        Decoded lent = Fragments.assertSameAtEverySize(input, chunks -> decodeLending(64, chunks));
        assertThat(lent).isEqualTo(decode(64, List.of(input)));
        assertThat(lent.oversizedEvents()).isEqualTo(2);
    }

    @Test
    void oversizedEventsAreCountedAndDecodingGoesOn() {
        String big = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"" + "x".repeat(100) + "\"}\n\n";
        String input = "data: {\"id\":1,\"method\":\"a\"}\n\n" + big + "data: {\"id\":2,\"method\":\"b\"}\r\n\r\n" + big;
        Decoded decoded = Fragments.assertSameAtEverySize(bytes(input), chunks -> decode(64, chunks));
        assertThat(decoded.oversizedEvents()).isEqualTo(2);
        assertThat(decoded.unterminatedTails()).isZero();
        assertThat(decoded.frameCount()).isEqualTo(2);
        assertThat(decoded.frames()).extracting(frame -> frame.envelope().method()).containsExactly("a", "b");
        // Numbering counts frames, not discarded events.
        assertThat(decoded.frames()).extracting(FrameView::sequence).containsExactly(0L, 1L);
    }

    @Test
    void twentyMegabyteEventUnderAThirtyTwoMebibyteLimitPassesWhole() {
        String text = "0123456789abcdef\u00e9".repeat(20_000_000 / 18);
        byte[] event = bytes("id: 42\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"content\":"
                + "[{\"type\":\"text\",\"text\":\"" + text + "\"}],\"isError\":false}}\n\n");
        byte[] next = bytes("data: {\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"ping\"}\n\n");
        byte[] input = new byte[event.length + next.length];
        System.arraycopy(event, 0, input, 0, event.length);
        System.arraycopy(next, 0, input, event.length, next.length);
        assertThat(event.length).isGreaterThan(20_000_000);
        CRC32 crc = new CRC32();
        crc.update(event);

        // 64 KiB reads and a few odd sizes; not every size, for a 20 MB input.
        int[] sizes = {65_536, 4093, 65_537, 1_000_003};
        List<String> summaries = Fragments.assertSameAtSizes(input, sizes, chunks -> {
            EmbeddedChannel channel = channel(32 * 1024 * 1024);
            SseFrameDecoder decoder = decoder(channel);
            List<String> summary = new ArrayList<>();
            try {
                for (int i = 0; i < chunks.size(); i++) {
                    channel.writeInbound(Fragments.buffer(ALLOC, chunks.get(i), i));
                    summarize(channel, summary, crc.getValue());
                }
                channel.finish();
                summarize(channel, summary, crc.getValue());
                assertThat(decoder.oversizedEvents()).isZero();
            } finally {
                channel.finishAndReleaseAll();
            }
            return summary;
        });
        assertThat(summaries).containsExactly(
                "RESPONSE id=42 wire=" + event.length + " whole=true",
                "REQUEST id=43 ping wire=" + next.length + " whole=false");
    }

    @Test
    void passesOnAnUnterminatedTailAsABlankFrameWhenTheChannelCloses() {
        EmbeddedChannel channel = channel(SseFramer.DEFAULT_MAX_EVENT_SIZE);
        SseFrameDecoder decoder = decoder(channel);
        channel.writeInbound(Unpooled.copiedBuffer(bytes("data: {\"id\":1,\"method\":\"a\"}\n\nid: 9\ndata: {\"id\":2,")));
        assertThat(readFrames(channel)).hasSize(1);
        channel.writeInbound(Unpooled.copiedBuffer(bytes("\"method\":\"b\"}\n")));
        assertThat(readFrames(channel)).isEmpty();
        assertThat(channel.finish()).isTrue();
        assertThat(readFrames(channel)).singleElement().satisfies(frame -> {
            assertThat(frame.wire()).isEqualTo("id: 9\ndata: {\"id\":2,\"method\":\"b\"}\n");
            // The spec does not dispatch it, so no rule should take it for a message.
            assertThat(frame.envelope()).isEqualTo(Envelope.blank());
            assertThat(frame.sequence()).isEqualTo(1);
            assertThat(frame.original()).isTrue();
        });
        assertThat(decoder.unterminatedTails()).isEqualTo(1);
        assertThat(decoder.frames()).isEqualTo(2);
    }

    @Test
    void otherMessagesPassThrough() {
        EmbeddedChannel channel = channel(SseFramer.DEFAULT_MAX_EVENT_SIZE);
        Object other = "not a buffer";
        channel.writeInbound(other);
        Object read = channel.readInbound();
        assertThat(read).isSameAs(other);
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void removingTheHandlerReleasesAPartialEvent() {
        EmbeddedChannel channel = channel(SseFramer.DEFAULT_MAX_EVENT_SIZE);
        // Several chunks and data lines, so that the framer gathers the event and copies its data.
        channel.writeInbound(Fragments.buffer(ALLOC, bytes("data: {\"id\":1,\ndata: "), 0));
        channel.writeInbound(Fragments.buffer(ALLOC, bytes("\"method\"\ndata: "), 1));
        channel.pipeline().remove(SseFrameDecoder.class);
        // The leak check after this test fails if the partial event was not released.
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void takesSequenceNumbersFromTheGivenSupplier() {
        AtomicLong session = new AtomicLong(100);
        SseFrameDecoder decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(ALLOC),
                session::getAndIncrement);
        List<FrameView> frames = new ArrayList<>();
        decoder.decode(Unpooled.copiedBuffer(bytes(": hi\n\ndata: {\"id\":1,\"result\":{}}\n\n")), frame -> frames.add(view(frame)));
        decoder.finish(frame -> frames.add(view(frame)));
        assertThat(frames).extracting(FrameView::sequence).containsExactly(100L, 101L);
        assertThat(decoder.frames()).isEqualTo(2);
        assertThat(session.get()).isEqualTo(102);
    }

    @Test
    void decodeAndFinishWithoutAPipeline() {
        SseFrameDecoder decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(ALLOC));
        List<FrameView> frames = new ArrayList<>();
        SseFrameDecoder.FrameConsumer out = frame -> frames.add(view(frame));
        decoder.decode(Unpooled.copiedBuffer(bytes("id: e1\ndata: {\"id\":1,\"method\":\"a\"}\r\n\r")), out);
        assertThat(frames).isEmpty(); // the '\n' of the blank line's "\r\n" may still come
        decoder.decode(Unpooled.copiedBuffer(bytes("\ndata: {\"id\":2,")), out);
        decoder.finish(out);
        assertThat(frames).extracting(FrameView::wire)
                .containsExactly("id: e1\ndata: {\"id\":1,\"method\":\"a\"}\r\n\r\n", "data: {\"id\":2,");
        assertThat(frames).extracting(frame -> frame.envelope().kind()).containsExactly(MessageKind.REQUEST, MessageKind.BLANK);
        assertThat(decoder.lastEventId()).isEqualTo("e1");
        assertThat(decoder.direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
        assertThat(decoder.frames()).isEqualTo(2);
        assertThat(decoder.unterminatedTails()).isEqualTo(1);
    }

    @Test
    void anEventWholeInOneReadIsASliceOfTheReadBuffer() {
        ByteBuf read = Unpooled.buffer(64).writeBytes(bytes("data: {\"id\":1,\"method\":\"a\"}\n\n: ka\n\n"));
        SseFrameDecoder decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(ALLOC));
        List<Frame> frames = new ArrayList<>();
        decoder.decode(read, frames::add);
        try {
            assertThat(frames).hasSize(2);
            // Wire bytes and content of the data event, wire bytes of the comment; the decoder's released.
            assertThat(read.refCnt()).isEqualTo(3);
            assertThat(frames.get(0).content().toString(StandardCharsets.UTF_8)).isEqualTo("{\"id\":1,\"method\":\"a\"}");
            read.setByte(0, 'D');
            assertThat(frames.get(0).wire().toString(StandardCharsets.UTF_8)).startsWith("Data: ");
        } finally {
            frames.forEach(Frame::release);
        }
        assertThat(read.refCnt()).isZero();
    }

    @Test
    void rejectsNullArguments() {
        assertThatThrownBy(() -> new SseFrameDecoder(null, new SseFramer(ALLOC))).hasMessage("direction");
        assertThatThrownBy(() -> new SseFrameDecoder(Direction.SERVER_TO_CLIENT, null)).hasMessage("framer");
        assertThatThrownBy(() -> new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(ALLOC), null))
                .hasMessage("sequences");
    }

    // ---------------------------------------------------------------- helpers

    private static EmbeddedChannel channel(int maxEventSize) {
        return new EmbeddedChannel(new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(maxEventSize, ALLOC)));
    }

    /** The decoder in the pipeline; closing the channel removes it, so get it before. */
    private static SseFrameDecoder decoder(EmbeddedChannel channel) {
        return channel.pipeline().get(SseFrameDecoder.class);
    }

    /** Writes the chunks (cycling buffer layouts), closes the channel, and collects the frames. */
    private static Decoded decode(int maxEventSize, List<byte[]> chunks) {
        EmbeddedChannel channel = channel(maxEventSize);
        SseFrameDecoder decoder = decoder(channel);
        List<FrameView> frames = new ArrayList<>();
        try {
            for (int i = 0; i < chunks.size(); i++) {
                channel.writeInbound(Fragments.buffer(ALLOC, chunks.get(i), i));
                frames.addAll(readFrames(channel));
            }
            channel.finish();
            frames.addAll(readFrames(channel));
        } finally {
            channel.finishAndReleaseAll();
        }
        return new Decoded(frames, decoder.oversizedEvents(), decoder.unterminatedTails(), decoder.frames());
    }

    /**
     * Decodes the chunks with {@link SseFrameDecoder#decodeLent}, every third with
     * {@link SseFrameDecoder#decode} (one decoder may mix both), then finishes. Checks that each
     * lent frame is lent and never released, and that no chunk is kept once decoded.
     */
    private static Decoded decodeLending(int maxEventSize, List<byte[]> chunks) {
        SseFrameDecoder decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(maxEventSize, ALLOC));
        List<FrameView> frames = new ArrayList<>();
        for (int i = 0; i < chunks.size(); i++) {
            ByteBuf chunk = Fragments.buffer(ALLOC, chunks.get(i), i);
            if (i % 3 == 2) {
                decoder.decode(chunk, frame -> frames.add(view(frame)));
            } else {
                decoder.decodeLent(chunk, frame -> {
                    assertThat(frame.isLent()).isTrue();
                    frames.add(lentView(frame));
                });
            }
            assertThat(chunk.refCnt()).as("chunk %d kept", i).isZero();
        }
        decoder.finish(frame -> frames.add(view(frame)));
        return new Decoded(frames, decoder.oversizedEvents(), decoder.unterminatedTails(), decoder.frames());
    }

    /** Copies what the test needs out of a lent frame, which stays its lender's. */
    private static FrameView lentView(Frame frame) {
        Envelope envelope = frame.envelope().kind() == MessageKind.MALFORMED ? MALFORMED : frame.envelope();
        FrameView view = new FrameView(frame.wire().toString(StandardCharsets.ISO_8859_1),
                frame.content().toString(StandardCharsets.ISO_8859_1), envelope, frame.direction(),
                frame.sequence(), frame.isOriginal());
        assertThat(frame.refCnt()).isEqualTo(1);
        return view;
    }

    private static List<FrameView> readFrames(EmbeddedChannel channel) {
        List<FrameView> frames = new ArrayList<>();
        Object message;
        while ((message = channel.readInbound()) != null) {
            assertThat(message).isInstanceOf(Frame.class);
            frames.add(view((Frame) message));
        }
        return frames;
    }

    /** Copies what the test needs out of the frame, then releases it. */
    private static FrameView view(Frame frame) {
        try {
            // Malformed reasons come from the JSON parser and are not what these tests are about.
            Envelope envelope = frame.envelope().kind() == MessageKind.MALFORMED ? MALFORMED : frame.envelope();
            return new FrameView(frame.wire().toString(StandardCharsets.ISO_8859_1),
                    frame.content().toString(StandardCharsets.ISO_8859_1), envelope, frame.direction(),
                    frame.sequence(), frame.isOriginal());
        } finally {
            frame.release();
        }
    }

    /** For the 20 MB event: a short summary per frame (no 20 MB strings in assertion messages). */
    private static void summarize(EmbeddedChannel channel, List<String> summary, long bigEventCrc) {
        Object message;
        while ((message = channel.readInbound()) != null) {
            Frame frame = (Frame) message;
            try {
                ByteBuf wire = frame.wire();
                CRC32 crc = new CRC32();
                crc.update(ByteBufUtil.getBytes(wire, wire.readerIndex(), wire.readableBytes(), false));
                summary.add(frame.envelope() + " wire=" + wire.readableBytes() + " whole=" + (crc.getValue() == bigEventCrc));
            } finally {
                frame.release();
            }
        }
    }

    private static Envelope sniff(String json) {
        ByteBuf buf = Unpooled.copiedBuffer(bytes(json));
        try {
            return new EnvelopeSniffer().sniff(buf);
        } finally {
            buf.release();
        }
    }

    private static String[] iso(String[] texts) {
        String[] out = new String[texts.length];
        for (int i = 0; i < texts.length; i++) {
            out[i] = new String(bytes(texts[i]), StandardCharsets.ISO_8859_1);
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
