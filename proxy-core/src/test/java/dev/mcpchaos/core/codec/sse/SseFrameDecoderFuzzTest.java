package dev.mcpchaos.core.codec.sse;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.testing.Cuts;
import dev.mcpchaos.testing.Fragments;
import dev.mcpchaos.testing.TrackingAllocator;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of {@link SseFrameDecoder} (Jazzer; see docs/fuzzing.md): an SSE
 * stream in, one frame per event out, through {@code decode} and {@code decodeLent} taking turns
 * as the input says, cut every way of {@link Cuts}, in every buffer layout. Properties:
 * <ul>
 *   <li>the frames' wire bytes and content are those of {@link SseFramerFuzzTest#model}'s events
 *       and tail, numbered 0, 1, 2, ...; the oversized and tail counters match;</li>
 *   <li>the envelope of an event a client hands to its {@code message} handler is what a fresh
 *       {@link EnvelopeSniffer} makes of a heap copy of its data (so the decoder's own ways to
 *       it, the framer's array, a direct buffer's copy, a lent view, change nothing); every other
 *       event is BLANK;</li>
 *   <li>every buffer is released; no exception.</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code SseFrameDecoderFuzzTestInputs/}.
 */
class SseFrameDecoderFuzzTest {

    record FrameView(String wire, String content, Envelope envelope, long sequence) {
    }

    record Decoded(List<FrameView> frames, long oversizedEvents, long unterminatedTails, long frameCount) {
    }

    @DictionaryEntries({"data: ", "event: ", "message", "id: ", "retry: ", "\\x0A\\x0A", "\\x0D\\x0A", "{\"jsonrpc\":\"2.0\",", "\"id\":", "\"method\":", "\"params\":{\"name\":", "\"result\":", "\"error\":"})
    @FuzzTest
    void decodesEveryEventAsTheSnifferReadsItsData(byte[] input) {
        long seed = Cuts.seed(input);
        int smallLimit = 1 + (int) Math.floorMod(seed, 120L);
        for (int limit : new int[] {SseFramer.DEFAULT_MAX_EVENT_SIZE, smallLimit}) {
            Decoded expected = expected(input, limit);
            for (List<byte[]> chunks : Cuts.of(input)) {
                TrackingAllocator alloc = new TrackingAllocator();
                String what = "limit " + limit + ", " + chunks.size() + " chunks";
                assertThat(decode(alloc, limit, chunks, seed)).as(what).isEqualTo(expected);
                alloc.assertAllReleased(what);
            }
        }
    }

    private static Decoded decode(TrackingAllocator alloc, int limit, List<byte[]> chunks, long seed) {
        SseFrameDecoder decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(limit, alloc));
        List<FrameView> frames = new ArrayList<>();
        SseFrameDecoder.FrameConsumer out = frame -> {
            try {
                frames.add(view(frame));
            } finally {
                if (!frame.isLent()) {
                    frame.release();
                }
            }
        };
        for (int i = 0; i < chunks.size(); i++) {
            var chunk = Fragments.buffer(alloc, chunks.get(i), (int) (seed >>> (i % 60)) + i);
            if (((seed >>> (i % 64)) & 1) != 0) {
                decoder.decodeLent(chunk, out);
            } else {
                decoder.decode(chunk, out);
            }
        }
        decoder.finish(out);
        return new Decoded(frames, decoder.oversizedEvents(), decoder.unterminatedTails(), decoder.frames());
    }

    private static FrameView view(Frame frame) {
        return new FrameView(frame.wire().toString(StandardCharsets.ISO_8859_1),
                frame.content().toString(StandardCharsets.ISO_8859_1), frame.envelope(), frame.sequence());
    }

    /** The frames the decoder must make, from the framer's model of the stream. */
    private static Decoded expected(byte[] input, int limit) {
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        List<FrameView> frames = new ArrayList<>();
        long oversized = 0;
        long tails = 0;
        for (Object item : SseFramerFuzzTest.model(input, limit).events()) {
            if (item instanceof SseFramerFuzzTest.Event event) {
                String data = event.data() == null ? "" : event.data();
                boolean messageType = event.eventType() == null || event.eventType().isEmpty()
                        || event.eventType().equals(SseEvent.DEFAULT_TYPE);
                Envelope envelope = !data.isEmpty() && messageType
                        ? sniffer.sniff(Unpooled.wrappedBuffer(data.getBytes(StandardCharsets.ISO_8859_1)))
                        : Envelope.blank();
                frames.add(new FrameView(event.raw(), data, envelope, frames.size()));
            } else if (item instanceof SseFramerFuzzTest.Tail tail) {
                frames.add(new FrameView(tail.bytes(), "", Envelope.blank(), frames.size()));
                tails++;
            } else {
                oversized++;
            }
        }
        return new Decoded(frames, oversized, tails, frames.size());
    }
}
