package dev.mcpchaos.core.codec.sse;

/**
 * The fields of an SSE event other than its data that a rewritten event must keep: its
 * {@code id} (a client's {@code Last-Event-ID} names it when it resumes) and its {@code event}
 * type, and a {@code retry} a fault gave it. Kept as a frame's
 * {@link dev.mcpchaos.core.frame.Frame#framing() framing} by {@link SseFrameDecoder}, and read by
 * the transport when it encodes a frame a fault made.
 *
 * @param eventType the {@code event} field, or null for the default type
 * @param id the {@code id} field, or null when the event had none
 * @param retry the {@code retry} field in milliseconds, written before the others; null for none.
 *              An original event's own {@code retry} is not kept here: the fault {@code sse_retry}
 *              sets it, and a rewrite of an original event otherwise drops it, as before
 * @param leading the raw bytes of the message-less events with an id (priming events) the
 *                transport held back before this event, the stream's first message, written
 *                before it; null for none. Held only while an interceptor
 *                {@link dev.mcpchaos.core.intercept.FrameInterceptor#holdsLeadingEvents asks for
 *                them}, so that a fault ({@code priming_drop}) can remove them with
 *                {@link #withoutLeading()}. A copy (a few bytes): a frame's release does not
 *                reach its framing
 */
public record SseFields(String eventType, String id, Long retry, byte[] leading) {

    public SseFields {
        if (retry != null && retry < 0) {
            throw new IllegalArgumentException("retry: " + retry + " (expected: >= 0 milliseconds)");
        }
    }

    /** Fields without held events. */
    public SseFields(String eventType, String id, Long retry) {
        this(eventType, id, retry, null);
    }

    /** Fields without a {@code retry} or held events. */
    public SseFields(String eventType, String id) {
        this(eventType, id, null, null);
    }

    /** The fields of {@code event} worth keeping, or null when it has neither an id nor an event type. */
    static SseFields of(SseEvent event) {
        String type = event.eventType();
        String id = event.id();
        if (id == null && (type == null || type.isEmpty())) {
            return null; // the usual MCP event: nothing to keep, nothing allocated
        }
        return new SseFields(type == null || type.isEmpty() ? null : type, id);
    }

    /**
     * The framing of a frame read off an SSE stream ({@code framing}: its
     * {@link dev.mcpchaos.core.frame.Frame#framing()}, null or fields) with its {@code retry} set to
     * {@code retryMillis}: for a fault that asks the client for another reconnection delay.
     */
    public static SseFields withRetry(Object framing, long retryMillis) {
        SseFields fields = framing instanceof SseFields f ? f : new SseFields(null, null);
        return new SseFields(fields.eventType, fields.id, retryMillis, fields.leading);
    }

    /**
     * The framing of a frame ({@code framing}: null or fields) with {@code leading} held before
     * it: for the transport, which holds a stream's priming events back until its first message.
     */
    public static SseFields withLeading(Object framing, byte[] leading) {
        SseFields fields = framing instanceof SseFields f ? f : new SseFields(null, null);
        return new SseFields(fields.eventType, fields.id, fields.retry, leading);
    }

    /** These fields without the events held before the message: what a fault that removes them sets. */
    public SseFields withoutLeading() {
        return new SseFields(eventType, id, retry, null);
    }

    /** Whether events were held before the message (see {@link #leading()}). */
    public boolean hasLeading() {
        return leading != null && leading.length > 0;
    }
}
