package dev.mcpchaos.core.codec.sse;

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
 * Coverage-guided fuzzing of {@link SseFramer} and {@link SseEvent} (Jazzer; see
 * docs/fuzzing.md). Each input is an SSE stream, framed with the default limit and with a small
 * one drawn from the input, cut every way of {@link Cuts}, in every buffer layout, both handed
 * over ({@link SseFramer#feed}) and lent ({@link SseFramer#lend}). Properties:
 * <ul>
 *   <li>the events (raw bytes, data, type, id, retry, comment-only), oversized reports and the
 *       unterminated tail are those of {@link #model}, a direct reading of the WHATWG "event
 *       stream interpretation" over the whole input, however the stream was cut: so the raw
 *       bytes, tail included, are the stream byte for byte when nothing is over the limit;</li>
 *   <li>{@link SseFramer#lastEventId()} is the model's;</li>
 *   <li>the data's array view, where the framer gives one, holds the data;</li>
 *   <li>every buffer is released once the events are; no exception; the framer is reusable
 *       after {@link SseFramer#finish}.</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code SseFramerFuzzTestInputs/}.
 */
class SseFramerFuzzTest {

    /** An event: every string is ISO-8859-1 (byte for byte) except type and id, decoded as UTF-8. */
    record Event(String raw, String data, String eventType, String id, Long retry, boolean commentOnly) {
    }

    record Oversized(long size) {
    }

    record Tail(String bytes) {
    }

    @DictionaryEntries({"data:", "data: ", "event:", "event: message", "id:", "id: ", "retry:", "retry: ", ":", "\\x0D\\x0A", "\\x0D\\x0A\\x0D\\x0A", "\\x0A\\x0A", "\\x0D\\x0D", "\ufeff"})
    @FuzzTest
    void framesLikeTheSpec(byte[] input) {
        long seed = Cuts.seed(input);
        int smallLimit = 1 + (int) Math.floorMod(seed, 80L);
        for (int limit : new int[] {SseFramer.DEFAULT_MAX_EVENT_SIZE, smallLimit}) {
            Model expected = model(input, limit);
            for (List<byte[]> chunks : Cuts.of(input)) {
                for (boolean lend : new boolean[] {false, true}) {
                    TrackingAllocator alloc = new TrackingAllocator();
                    SseFramer framer = new SseFramer(limit, alloc);
                    String what = "limit " + limit + ", " + chunks.size() + " chunks, " + (lend ? "lent" : "handed over");
                    assertThat(frame(framer, alloc, chunks, lend, seed)).as(what).isEqualTo(expected.events());
                    assertThat(framer.lastEventId()).as("last event id, " + what).isEqualTo(expected.lastEventId());
                    alloc.assertAllReleased(what);
                    if (!lend) {
                        assertThat(frame(framer, alloc, chunks, false, seed)).as("again after finish: " + what)
                                .isEqualTo(expected.events());
                        alloc.assertAllReleased("again after finish: " + what);
                    }
                }
            }
        }
    }

    private static List<Object> frame(SseFramer framer, TrackingAllocator alloc, List<byte[]> chunks, boolean lend,
                                      long seed) {
        List<Object> events = new ArrayList<>();
        SseFramer.Listener listener = new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                try {
                    // The last event before finish() is handed over even when lending: finish does not lend.
                    if (!lend) {
                        assertThat(event.isLent()).as("a handed-over event is lent").isFalse();
                    }
                    events.add(view(event));
                } finally {
                    if (!event.isLent()) {
                        event.release();
                    }
                }
            }

            @Override
            public void onOversizedEvent(long size) {
                events.add(new Oversized(size));
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                try {
                    events.add(new Tail(tail.toString(StandardCharsets.ISO_8859_1)));
                } finally {
                    tail.release();
                }
            }
        };
        for (int i = 0; i < chunks.size(); i++) {
            ByteBuf chunk = Fragments.buffer(alloc, chunks.get(i), (int) (seed >>> (i % 60)) + i);
            if (lend) {
                framer.lend(chunk, listener);
            } else {
                framer.feed(chunk, listener);
            }
        }
        framer.finish(listener);
        return events;
    }

    private static Event view(SseEvent event) {
        String data = event.hasData() ? event.data().toString(StandardCharsets.ISO_8859_1) : null;
        assertThat(event.dataLength()).as("data length").isEqualTo(data == null ? 0 : data.length());
        byte[] array = event.dataArray();
        if (array != null) {
            String fromArray = new String(array, event.dataArrayOffset(), event.dataLength(), StandardCharsets.ISO_8859_1);
            assertThat(fromArray).as("the data's array view").isEqualTo(data == null ? "" : data);
        }
        return new Event(event.raw().toString(StandardCharsets.ISO_8859_1), data, event.eventType(), event.id(),
                event.retry(), event.isCommentOnly());
    }

    /** What the framer must find: the events, oversized reports and tail, in order, and the last id. */
    record Model(List<Object> events, String lastEventId) {
    }

    /**
     * The stream read as the spec reads it, over the whole input at once: lines end at
     * {@code \r\n}, {@code \n} or {@code \r}; a blank line ends an event; one leading BOM is
     * skipped; an event (or the tail) of more than {@code limit} bytes is reported by its size.
     */
    static Model model(byte[] input, int limit) {
        String s = new String(input, StandardCharsets.ISO_8859_1);
        int n = s.length();
        List<Object> events = new ArrayList<>();
        String lastId = null;
        int eventStart = 0;
        int p = s.startsWith("\u00ef\u00bb\u00bf") ? 3 : 0;
        EventState state = new EventState();
        while (true) {
            int lineEnd = p;
            while (lineEnd < n && s.charAt(lineEnd) != '\r' && s.charAt(lineEnd) != '\n') {
                lineEnd++;
            }
            if (lineEnd == n) {
                break;
            }
            int next = s.charAt(lineEnd) == '\r' && lineEnd + 1 < n && s.charAt(lineEnd + 1) == '\n'
                    ? lineEnd + 2 : lineEnd + 1;
            if (lineEnd == p) {
                int size = next - eventStart;
                if (size > limit) {
                    events.add(new Oversized(size));
                } else {
                    Event event = state.event(s.substring(eventStart, next));
                    if (event.id() != null) {
                        lastId = event.id();
                    }
                    events.add(event);
                }
                state = new EventState();
                eventStart = next;
            } else {
                state.line(s.substring(p, lineEnd));
            }
            p = next;
        }
        if (eventStart < n) {
            int size = n - eventStart;
            events.add(size > limit ? new Oversized(size) : new Tail(s.substring(eventStart)));
        }
        return new Model(events, lastId);
    }

    /** The fields of the event being read (strings ISO-8859-1, byte for byte). */
    private static final class EventState {
        private StringBuilder data;
        private String eventType;
        private String id;
        private Long retry;
        private boolean comment;
        private boolean field;

        void line(String line) {
            if (line.charAt(0) == ':') {
                comment = true;
                return;
            }
            field = true;
            int colon = line.indexOf(':');
            String name = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (name) {
                case "data":
                    data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                    break;
                case "event":
                    eventType = value;
                    break;
                case "id":
                    if (value.indexOf('\0') < 0) {
                        id = value;
                    }
                    break;
                case "retry":
                    if (value.matches("[0-9]+")) {
                        try {
                            retry = Long.parseLong(value);
                        } catch (NumberFormatException tooBig) {
                            // ignored, as a value that is not a number is
                        }
                    }
                    break;
                default:
                    break;
            }
        }

        Event event(String raw) {
            return new Event(raw, data == null ? null : data.toString(), utf8(eventType), utf8(id), retry,
                    comment && !field);
        }

        private static String utf8(String iso) {
            return iso == null ? null : new String(iso.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        }
    }
}
