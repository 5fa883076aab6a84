package dev.mcpchaos.core.codec.sse;

/**
 * The fields of an SSE event other than its data that a rewritten event must keep: its
 * {@code id} (a client's {@code Last-Event-ID} names it when it resumes) and its {@code event}
 * type. Kept as a frame's {@link dev.mcpchaos.core.frame.Frame#framing() framing} by
 * {@link SseFrameDecoder}, and read by the transport when it encodes a frame a fault made.
 *
 * @param eventType the {@code event} field, or null for the default type
 * @param id the {@code id} field, or null when the event had none
 */
public record SseFields(String eventType, String id) {

    /** The fields of {@code event} worth keeping, or null when it has neither an id nor an event type. */
    static SseFields of(SseEvent event) {
        String type = event.eventType();
        String id = event.id();
        if (id == null && (type == null || type.isEmpty())) {
            return null; // the usual MCP event: nothing to keep, nothing allocated
        }
        return new SseFields(type == null || type.isEmpty() ? null : type, id);
    }
}
