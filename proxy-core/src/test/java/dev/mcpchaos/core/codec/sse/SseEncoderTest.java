package dev.mcpchaos.core.codec.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SseEncoder}: exact bytes for the common cases, and a round trip through
 * {@link SseFramer} that gives the content back as a client reads it.
 */
class SseEncoderTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    @Test
    void encodesAMessageEvent() {
        String json = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
        assertThat(encode(json, null, null)).isEqualTo("event: message\ndata: " + json + "\n\n");
        assertThat(encodeDefault(json)).isEqualTo("event: message\ndata: " + json + "\n\n");
    }

    @Test
    void writesIdAndEventType() {
        assertThat(encode("{}", "message", "abc:7")).isEqualTo("id: abc:7\nevent: message\ndata: {}\n\n");
        assertThat(encode("{}", "custom", "")).isEqualTo("id: \nevent: custom\ndata: {}\n\n");
    }

    @Test
    void splitsContentOverSeveralDataLines() {
        assertThat(encode("{\n  \"a\": 1\n}", null, null)).isEqualTo("event: message\ndata: {\ndata:   \"a\": 1\ndata: }\n\n");
        assertThat(encode("a\r\nb\rc\n", null, null)).isEqualTo("event: message\ndata: a\ndata: b\ndata: c\ndata: \n\n");
        assertThat(encode("", null, null)).isEqualTo("event: message\ndata: \n\n");
        assertThat(encode("\n\n", null, null)).isEqualTo("event: message\ndata: \ndata: \ndata: \n\n");
    }

    @Test
    void roundTripsThroughTheFramer() {
        String[] contents = {
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\\nb \u00e9\u2603\ud83d\ude00\"}}",
            "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/message\"\n}\n",
            " leading space and : colon",
            "broken {\"json\"",
            "",
            "\n",
        };
        for (String content : contents) {
            for (String id : new String[] {null, "", "42", "\u2603"}) {
                ByteBuf source = Unpooled.copiedBuffer(bytes(content));
                ByteBuf event;
                try {
                    event = SseEncoder.encode(ALLOC, source.asReadOnly(), null, id);
                } finally {
                    source.release();
                }
                List<SseEvent> events = new ArrayList<>();
                SseFramer framer = new SseFramer(ALLOC);
                framer.feed(event, collector(events));
                framer.finish(collector(events));
                assertThat(events).hasSize(1);
                SseEvent decoded = events.get(0);
                try {
                    assertThat(decoded.data().toString(StandardCharsets.UTF_8)).as("content %s", content).isEqualTo(content);
                    assertThat(decoded.id()).isEqualTo(id);
                    assertThat(decoded.eventType()).isEqualTo("message");
                    assertThat(decoded.isMessageType()).isTrue();
                } finally {
                    decoded.release();
                }
            }
        }
    }

    @Test
    void carriageReturnsComeBackAsNewlines() {
        ByteBuf event = SseEncoder.encode(ALLOC, Unpooled.copiedBuffer(bytes("a\r\nb\rc")));
        List<SseEvent> events = new ArrayList<>();
        new SseFramer(ALLOC).feed(event, collector(events));
        try {
            assertThat(events.get(0).data().toString(StandardCharsets.US_ASCII)).isEqualTo("a\nb\nc");
        } finally {
            events.forEach(SseEvent::release);
        }
    }

    @Test
    void encodedLengthIsExactAndTheContentIsLeftAsItWas() {
        ByteBuf content = Unpooled.copiedBuffer(bytes("xx{\"a\":\r\n1}\u00e9yy"));
        content.setIndex(2, content.writerIndex() - 2);
        try {
            int length = SseEncoder.encodedLength(content, "ev", "\u2603");
            ByteBuf event = SseEncoder.encode(ALLOC, content, "ev", "\u2603");
            try {
                assertThat(event.readableBytes()).isEqualTo(length);
                assertThat(event.toString(StandardCharsets.UTF_8))
                        .isEqualTo("id: \u2603\nevent: ev\ndata: {\"a\":\ndata: 1}\u00e9\n\n");
            } finally {
                event.release();
            }
            assertThat(content.readerIndex()).isEqualTo(2);
            assertThat(content.refCnt()).isEqualTo(1);
        } finally {
            content.release();
        }
    }

    @Test
    void writeAppendsToAGivenBuffer() {
        ByteBuf out = Unpooled.buffer(4).writeBytes(bytes(": x\n\n"));
        ByteBuf content = Unpooled.copiedBuffer(bytes("{}"));
        try {
            SseEncoder.write(out, content, null, "1");
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(": x\n\nid: 1\nevent: message\ndata: {}\n\n");
        } finally {
            out.release();
            content.release();
        }
    }

    @Test
    void rejectsFieldsThatWouldBreakTheEvent() {
        ByteBuf content = Unpooled.copiedBuffer(bytes("{}"));
        try {
            assertThatThrownBy(() -> SseEncoder.encode(ALLOC, content, "a\nb", null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("eventType: \"a\nb\" (expected: no CR or LF)");
            assertThatThrownBy(() -> SseEncoder.encode(ALLOC, content, null, "1\r"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("id: \"1\r\" (expected: no CR, LF or NUL)");
            assertThatThrownBy(() -> SseEncoder.encode(ALLOC, content, null, "a\u0000"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("id: ");
            assertThatThrownBy(() -> SseEncoder.encode(null, content)).isInstanceOf(NullPointerException.class).hasMessage("alloc");
            assertThatThrownBy(() -> SseEncoder.encode(ALLOC, null)).isInstanceOf(NullPointerException.class).hasMessage("content");
            assertThatThrownBy(() -> SseEncoder.write(null, content, null, null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("out");
            assertThat(content.refCnt()).isEqualTo(1);
        } finally {
            content.release();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static String encode(String content, String eventType, String id) {
        ByteBuf buf = Unpooled.copiedBuffer(bytes(content));
        ByteBuf event = SseEncoder.encode(ALLOC, buf, eventType, id);
        try {
            assertThat(event.readableBytes()).isEqualTo(SseEncoder.encodedLength(buf, eventType, id));
            return event.toString(StandardCharsets.UTF_8);
        } finally {
            event.release();
            buf.release();
        }
    }

    private static String encodeDefault(String content) {
        ByteBuf buf = Unpooled.copiedBuffer(bytes(content));
        ByteBuf event = SseEncoder.encode(ALLOC, buf);
        try {
            return event.toString(StandardCharsets.UTF_8);
        } finally {
            event.release();
            buf.release();
        }
    }

    /** Keeps every event (the caller releases them); nothing else is expected. */
    private static SseFramer.Listener collector(List<SseEvent> events) {
        return new SseFramer.Listener() {
            @Override
            public void onEvent(SseEvent event) {
                events.add(event);
            }

            @Override
            public void onOversizedEvent(long size) {
                throw new AssertionError("oversized event: " + size);
            }

            @Override
            public void onUnterminatedTail(ByteBuf tail) {
                tail.release();
                throw new AssertionError("unterminated tail");
            }
        };
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
