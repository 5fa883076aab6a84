package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.codec.sse.SseEvent;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;

/**
 * What the SSE faults ({@code sse_retry}, {@code resume_gap}, {@code resume_repeat},
 * {@code get_stream_drop}, {@code priming_drop}) need to know of the stream a message travels on, read from the HTTP
 * request of its exchange.
 */
final class SseStreams {

    private SseStreams() {
    }

    /** The {@code Last-Event-ID} the stream was resumed after, or null when it is not a resumed stream. */
    static String resumedAfter(Frame frame) {
        return frame.requestHeader(SseEvent.LAST_EVENT_ID_HEADER);
    }

    /** Whether the message travels on a stream the client opened with GET (the standalone stream, or a resumed one). */
    static boolean onGetStream(Frame frame) {
        return frame.route() instanceof HeaderSource source && "GET".equalsIgnoreCase(source.requestMethod());
    }

    /**
     * Whether {@code frame} is a server's message on an SSE stream: the reason to give
     * {@link FaultContext#nothingToDo} when it is not, or null when it is.
     */
    static String notAnSseEvent(FaultContext ctx, Frame frame) {
        if (frame.direction() != dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT) {
            return "it is the client's message: only the server's travel as SSE events";
        }
        if (ctx.connection().carriesOneMessage(frame)) {
            return "it travels in an HTTP body that carries one message (a JSON answer), not an SSE stream";
        }
        return null;
    }
}
