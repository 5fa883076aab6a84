package dev.mcpchaos.core.codec.line;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
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
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LineFrameDecoder} in a Netty pipeline ({@link EmbeddedChannel}): bytes in, sniffed
 * {@link Frame}s out, at every fragment size; every frame is released here.
 */
class LineFrameDecoderTest {

    /** The framer's allocator (for lines split across reads): leak-tracked. */
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    /**
     * The reads' allocator: not leak-tracked, because at the paranoid level tracking costs a stack
     * trace per buffer access and these tests make tens of thousands of reads. Each run checks
     * instead that every read buffer ended released.
     */
    private static final ByteBufAllocator READS = Fragments.UNTRACKED;
    private static final Envelope MALFORMED = Envelope.malformed("(any reason)");

    /** What a test needs to know of a frame, with value equality. */
    record FrameView(String wire, int contentLength, String content, Envelope envelope, Direction direction,
                     long sequence, boolean original) {
    }

    /** A frame and the decoder's counters, after the input ended. */
    record Decoded(List<FrameView> frames, long oversizedLines, long frameCount) {
    }

    @Test
    void decodesEveryKindOfLineAndPassesTheBytesOnUnchanged() {
        String[] lines = {
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n",
            "\n",
            "  \t \r\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\u691c\u7d22 \ud83d\udd0d\"}]}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"nope\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"trunc\"\n",
            "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"5\",\"method\":\"ping\"}",   // unterminated: passed on at the end
        };
        byte[] input = String.join("", lines).getBytes(StandardCharsets.UTF_8);
        Decoded decoded = Fragments.assertSameAtEverySize(input, chunks -> decode(LineFramer.DEFAULT_MAX_LINE_LENGTH, chunks));

        assertThat(decoded.oversizedLines()).isZero();
        assertThat(decoded.frameCount()).isEqualTo(lines.length);
        List<FrameView> frames = decoded.frames();
        assertThat(frames).extracting(FrameView::wire).containsExactly(iso(lines));
        assertThat(frames).extracting(FrameView::sequence).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
        assertThat(frames).allSatisfy(frame -> {
            assertThat(frame.direction()).isEqualTo(Direction.CLIENT_TO_SERVER);
            assertThat(frame.original()).isTrue();
            // The content is the wire without its delimiter.
            assertThat(frame.wire()).startsWith(frame.content());
            assertThat(frame.wire().substring(frame.contentLength())).isIn("", "\n", "\r\n");
        });
        assertThat(frames).extracting(frame -> frame.envelope().kind()).containsExactly(
                MessageKind.REQUEST, MessageKind.NOTIFICATION, MessageKind.BLANK, MessageKind.BLANK,
                MessageKind.RESPONSE, MessageKind.ERROR, MessageKind.MALFORMED, MessageKind.BATCH,
                MessageKind.REQUEST);
        assertThat(frames.get(0).envelope().toolName()).isEqualTo("search");
        assertThat(frames.get(8).envelope().id()).isEqualTo("5");
        assertThat(frames.get(7).envelope().batch()).extracting(Envelope::kind)
                .containsExactly(MessageKind.REQUEST, MessageKind.NOTIFICATION);

        // Bytes out == bytes in.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frames.forEach(frame -> out.writeBytes(frame.wire().getBytes(StandardCharsets.ISO_8859_1)));
        assertThat(out.toByteArray()).isEqualTo(input);
    }

    @Test
    void oversizedLinesAreCountedAndDecodingGoesOn() {
        String longLine = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"" + "x".repeat(100) + "\"}";
        String input = "{\"id\":1,\"method\":\"a\"}\n" + longLine + "\r\n" + "{\"id\":2,\"method\":\"b\"}\n" + longLine;
        // Capture the decoder's warnings (two per run, hundreds of runs) instead of printing them.
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        Logger logger = (Logger) LoggerFactory.getLogger(LineFrameDecoder.class);
        warnings.start();
        logger.addAppender(warnings);
        logger.setAdditive(false);
        Decoded decoded;
        try {
            decoded = Fragments.assertSameAtEverySize(bytes(input), chunks -> decode(64, chunks));
        } finally {
            logger.detachAppender(warnings);
            logger.setAdditive(true);
        }
        assertThat(warnings.list).isNotEmpty().allSatisfy(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getFormattedMessage())
                    .isEqualTo("c->s: discarded a line of " + longLine.length()
                            + " bytes, over the limit of 64 bytes; relaying goes on");
        });
        assertThat(decoded.oversizedLines()).isEqualTo(2);
        assertThat(decoded.frameCount()).isEqualTo(2);
        assertThat(decoded.frames()).extracting(frame -> frame.envelope().method()).containsExactly("a", "b");
        // Numbering counts frames, not discarded lines.
        assertThat(decoded.frames()).extracting(FrameView::sequence).containsExactly(0L, 1L);
    }

    @Test
    void twentyMegabyteLineUnderAThirtyTwoMebibyteLimitPassesWhole() throws Exception {
        String text = "0123456789abcdef\u00e9".repeat(20_000_000 / 18);
        byte[] line = ("{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
                + text + "\"}],\"isError\":false}}\n").getBytes(StandardCharsets.UTF_8);
        byte[] next = bytes("{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"ping\"}\n");
        byte[] input = concat(line, next);
        assertThat(line.length).isGreaterThan(20_000_000);

        // 64 KiB reads (a pipe's) and a few odd sizes; not every size, for a 20 MB input.
        int[] sizes = {65_536, 1_000_003};
        List<String> summaries = Fragments.assertSameAtSizes(input, sizes, chunks -> {
            EmbeddedChannel channel = channel(32 * 1024 * 1024);
            LineFrameDecoder decoder = decoder(channel); // closing the channel removes it from the pipeline
            List<String> summary = new ArrayList<>();
            try {
                for (int i = 0; i < chunks.size(); i++) {
                    channel.writeInbound(Fragments.buffer(READS, chunks.get(i), i));
                    summarize(channel, summary, line);
                }
                channel.finish();
                summarize(channel, summary, line);
                assertThat(decoder.oversizedLines()).isZero();
            } finally {
                channel.finishAndReleaseAll();
            }
            return summary;
        });
        assertThat(summaries).containsExactly(
                "RESPONSE id=42 wire=" + line.length + " whole=true",
                "REQUEST id=43 ping wire=" + next.length + " whole=false");
    }

    @Test
    void passesOnAnUnterminatedLastLineWhenTheChannelCloses() {
        EmbeddedChannel channel = channel(LineFramer.DEFAULT_MAX_LINE_LENGTH);
        channel.writeInbound(Unpooled.copiedBuffer(bytes("{\"id\":1,\"method\":\"a\"}\n{\"id\":2,")));
        List<FrameView> frames = readFrames(channel);
        assertThat(frames).hasSize(1);
        channel.writeInbound(Unpooled.copiedBuffer(bytes("\"method\":\"b\"}")));
        assertThat(readFrames(channel)).isEmpty();
        assertThat(channel.finish()).isTrue();
        frames = readFrames(channel);
        assertThat(frames).singleElement().satisfies(frame -> {
            assertThat(frame.wire()).isEqualTo("{\"id\":2,\"method\":\"b\"}");
            assertThat(frame.envelope()).isEqualTo(Envelope.ofObject(null, true, 2L, "b", null, false, false));
            assertThat(frame.sequence()).isEqualTo(1);
        });
    }

    @Test
    void otherMessagesPassThrough() {
        EmbeddedChannel channel = channel(LineFramer.DEFAULT_MAX_LINE_LENGTH);
        Object other = "not a buffer";
        channel.writeInbound(other);
        Object passed = channel.readInbound();
        assertThat(passed).isSameAs(other);
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void removingTheHandlerReleasesAPartialLine() {
        EmbeddedChannel channel = channel(LineFramer.DEFAULT_MAX_LINE_LENGTH);
        // Several chunks, so that the framer gathers the partial line into a buffer of its own.
        channel.writeInbound(Fragments.buffer(ALLOC, bytes("{\"id\":1,"), 0));
        channel.writeInbound(Fragments.buffer(ALLOC, bytes("\"method\""), 1));
        channel.pipeline().remove(LineFrameDecoder.class);
        // The leak check after this test fails if the partial line was not released.
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void serverToClientFramesCarryTheirDirection() {
        EmbeddedChannel channel = new EmbeddedChannel(
                new LineFrameDecoder(Direction.SERVER_TO_CLIENT, new LineFramer(ALLOC)));
        channel.writeInbound(Unpooled.copiedBuffer(bytes("{\"id\":1,\"result\":{}}\n")));
        assertThat(readFrames(channel)).singleElement()
                .satisfies(frame -> assertThat(frame.direction()).isEqualTo(Direction.SERVER_TO_CLIENT));
        assertThat(decoder(channel).direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void decodeAndFinishWithoutAPipeline() {
        // The stdio transport's pumps use decode/finish directly.
        LineFrameDecoder decoder = new LineFrameDecoder(Direction.CLIENT_TO_SERVER, new LineFramer(ALLOC));
        List<FrameView> frames = new ArrayList<>();
        LineFrameDecoder.FrameConsumer out = frame -> frames.add(view(frame));
        decoder.decode(Unpooled.copiedBuffer(bytes("{\"id\":1,\"method\":\"a\"}\r\n{\"id\"")), out);
        decoder.decode(Unpooled.copiedBuffer(bytes(":2,\"method\":\"b\"}")), out);
        decoder.finish(out);
        assertThat(frames).extracting(FrameView::wire)
                .containsExactly("{\"id\":1,\"method\":\"a\"}\r\n", "{\"id\":2,\"method\":\"b\"}");
        assertThat(frames).extracting(FrameView::contentLength).containsExactly(21, 21);
        assertThat(decoder.frames()).isEqualTo(2);
    }

    @Test
    void aLineWholeInOneReadIsASliceOfTheReadBuffer() {
        ByteBuf read = Unpooled.buffer(64).writeBytes(bytes("{\"id\":1,\"method\":\"a\"}\n{\"id\":2,\"method\":\"b\"}\n"));
        LineFrameDecoder decoder = new LineFrameDecoder(Direction.CLIENT_TO_SERVER, new LineFramer(ALLOC));
        List<Frame> frames = new ArrayList<>();
        decoder.decode(read, frames::add);
        try {
            assertThat(frames).hasSize(2);
            assertThat(read.refCnt()).as("one reference per frame, the decoder's released").isEqualTo(2);
            assertThat(frames.get(1).content().toString(StandardCharsets.UTF_8)).isEqualTo("{\"id\":2,\"method\":\"b\"}");
        } finally {
            frames.forEach(Frame::release);
        }
        assertThat(read.refCnt()).isZero();
    }

    // ---------------------------------------------------------------- helpers

    private static EmbeddedChannel channel(int maxLineLength) {
        return new EmbeddedChannel(new LineFrameDecoder(Direction.CLIENT_TO_SERVER, new LineFramer(maxLineLength, ALLOC)));
    }

    /** The decoder in the pipeline; closing the channel removes it, so get it before. */
    private static LineFrameDecoder decoder(EmbeddedChannel channel) {
        return channel.pipeline().get(LineFrameDecoder.class);
    }

    /**
     * Writes the chunks (cycling buffer layouts), closes the channel, and collects the frames
     * (releasing each); then checks that every read buffer was released.
     */
    private static Decoded decode(int maxLineLength, List<byte[]> chunks) {
        EmbeddedChannel channel = channel(maxLineLength);
        LineFrameDecoder decoder = decoder(channel);
        List<FrameView> frames = new ArrayList<>();
        List<ByteBuf> reads = new ArrayList<>();
        try {
            for (int i = 0; i < chunks.size(); i++) {
                ByteBuf read = Fragments.buffer(READS, chunks.get(i), i);
                reads.add(read);
                channel.writeInbound(read);
                frames.addAll(readFrames(channel));
            }
            channel.finish();
            frames.addAll(readFrames(channel));
        } finally {
            channel.finishAndReleaseAll();
        }
        assertThat(reads).as("read buffers still referenced").allMatch(read -> read.refCnt() == 0);
        return new Decoded(frames, decoder.oversizedLines(), decoder.frames());
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
            Envelope envelope = frame.envelope().kind() == MessageKind.MALFORMED ? MALFORMED : frame.envelope();
            return new FrameView(frame.wire().toString(StandardCharsets.ISO_8859_1), frame.contentLength(),
                    frame.content().toString(StandardCharsets.ISO_8859_1), envelope, frame.direction(),
                    frame.sequence(), frame.isOriginal());
        } finally {
            frame.release();
        }
    }

    /**
     * For the 20 MB line: a short summary per frame (no 20 MB strings in assertion messages),
     * saying whether its bytes are exactly the big line's.
     */
    private static void summarize(EmbeddedChannel channel, List<String> summary, byte[] bigLine) {
        Object message;
        while ((message = channel.readInbound()) != null) {
            Frame frame = (Frame) message;
            try {
                // One bulk copy: a leak-tracked buffer records a stack trace on every access at
                // the paranoid level, so comparing it byte by byte would take minutes.
                byte[] wire = ByteBufUtil.getBytes(frame.wire());
                summary.add(frame.envelope() + " wire=" + wire.length + " whole=" + Arrays.equals(wire, bigLine));
            } finally {
                frame.release();
            }
        }
    }

    private static String[] iso(String[] lines) {
        return Arrays.stream(lines)
                .map(line -> new String(bytes(line), StandardCharsets.ISO_8859_1))
                .toArray(String[]::new);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
