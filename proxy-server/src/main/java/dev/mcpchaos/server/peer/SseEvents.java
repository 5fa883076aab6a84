package dev.mcpchaos.server.peer;

import dev.mcpchaos.core.codec.sse.SseEvent;
import dev.mcpchaos.core.codec.sse.SseFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;

/**
 * The data of the events of a {@code text/event-stream} body, one event at a time, read by the
 * proxy's own {@link SseFramer}, so that the offline tools read SSE as the proxy does (WHATWG
 * "event stream interpretation": several {@code data} lines joined with {@code \n}, any line end,
 * comments and events without data skipped). An event the stream ends inside is not dispatched,
 * as the spec says.
 */
final class SseEvents implements AutoCloseable {

    private final InputStream in;
    private final SseFramer framer = new SseFramer(UnpooledByteBufAllocator.DEFAULT);
    private final ArrayDeque<String> ready = new ArrayDeque<>();
    private final byte[] chunk = new byte[8192];
    private boolean ended;

    private final SseFramer.Listener listener = new SseFramer.Listener() {
        @Override
        public void onEvent(SseEvent event) {
            try {
                if (event.isDispatched()) { // a priming event (empty data), a comment: nothing to read
                    ready.add(event.data().toString(StandardCharsets.UTF_8));
                }
            } finally {
                event.release();
            }
        }

        @Override
        public void onOversizedEvent(long size) {
            // over 16 MiB: no answer an offline tool waits for; its request ends unanswered
        }

        @Override
        public void onUnterminatedTail(ByteBuf tail) {
            tail.release(); // an event the stream ended inside is never dispatched
        }
    };

    /** @param in the body; read as far as needed, never closed here */
    SseEvents(InputStream in) {
        this.in = Objects.requireNonNull(in, "in");
    }

    /** The data of the next event that has some, or null at the end of the stream. */
    String next() throws IOException {
        while (ready.isEmpty() && !ended) {
            int n = in.read(chunk);
            if (n < 0) {
                ended = true;
                framer.finish(listener);
            } else if (n > 0) {
                framer.feed(Unpooled.wrappedBuffer(Arrays.copyOf(chunk, n)), listener);
            }
        }
        return ready.poll();
    }

    /** Lets go of an event the framer was still gathering (a read that failed or timed out). */
    @Override
    public void close() {
        framer.close();
    }
}
