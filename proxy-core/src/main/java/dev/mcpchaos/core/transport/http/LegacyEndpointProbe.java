package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.codec.sse.SseFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Looks at the start of a GET stream with no session for the legacy HTTP+SSE transport's
 * {@code endpoint} event ({@code data: /message?sessionId=...}), which names the session the
 * client then POSTs to. Gives up after the first event, or 4 KiB without one.
 */
final class LegacyEndpointProbe {

    /** How far into a stream the endpoint event is looked for. */
    static final int LIMIT = 4096;

    private final SseFrameDecoder decoder;
    private long seen;
    private boolean over;

    LegacyEndpointProbe(ByteBufAllocator alloc) {
        decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(LIMIT, alloc), () -> 0L);
    }

    /**
     * Looks at the next piece of the stream; does not take ownership. Returns the session its
     * endpoint event names, once, or null.
     */
    String look(ByteBuf bytes) {
        if (over) {
            return null;
        }
        List<Frame> frames = new ArrayList<>(1);
        decoder.decode(bytes.retain(), frames::add);
        String named = null;
        boolean decided = false;
        for (Frame frame : frames) {
            try {
                if (!decided && frame.contentLength() > 0) {
                    decided = true;
                    Object framing = frame.framing();
                    if (framing instanceof SseFields && "endpoint".equals(((SseFields) framing).eventType())) {
                        named = HttpMessages.legacySessionId(frame.content().toString(StandardCharsets.UTF_8));
                    }
                }
            } finally {
                frame.release();
            }
        }
        seen += bytes.readableBytes();
        if (decided || seen > LIMIT) {
            release();
        }
        return named;
    }

    /** Whether the probe has decided (or given up): it looks at nothing more. */
    boolean over() {
        return over;
    }

    /** Lets go of what the decoder holds; harmless twice. */
    void release() {
        if (!over) {
            over = true;
            decoder.finish(Frame::release);
        }
    }
}
