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
     * Whether {@code frame} is a server's message on an SSE stream; when it is not, the fault has
     * nothing to do, and this says why ({@link FaultContext#nothingToDo}, which hands the frame on).
     */
    static boolean onSseEvent(FaultContext ctx, Frame frame) {
        String reason = null;
        if (frame.direction() != dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT) {
            reason = "it is the client's message: only the server's travel as SSE events";
        } else if (ctx.connection().carriesOneMessage(frame)) {
            reason = "it travels in an HTTP body that carries one message (a JSON answer), not an SSE stream";
        }
        if (reason != null) {
            ctx.nothingToDo(frame, reason);
            return false;
        }
        return true;
    }
}
