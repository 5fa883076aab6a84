package dev.mcpchaos.server.record;

import java.util.List;
import java.util.Map;

/**
 * The HTTP exchange a recorded message travelled on: the request it came in or the response it
 * went out with. Headers are written on the first line of an exchange in each direction only (the
 * request's with the client's message, the response's with the first message of the answer), so
 * an SSE answer of many events does not repeat them; they are redacted before they are written.
 *
 * @param exchange        the exchange's number within the cassette, from 1: the lines of one SSE
 *                        answer share it
 * @param method          the request's method ({@code POST}, {@code GET}, {@code DELETE})
 * @param uri             the request's target, path and query
 * @param status          the response's status, or 0 on a client's message (no response yet)
 * @param contentType     the response's {@code Content-Type}, or null
 * @param sseId           the SSE event's {@code id} field, or null (not SSE, or no id)
 * @param sseEvent        the SSE event's {@code event} field, or null (not SSE, or the default type)
 * @param sse             whether the message came as an SSE event
 * @param requestHeaders  the request's headers, in order, or null when not written on this line
 * @param responseHeaders the response's headers, in order, or null when not written on this line
 */
public record HttpExchange(int exchange, String method, String uri, int status, String contentType,
                           boolean sse, String sseId, String sseEvent,
                           List<Map.Entry<String, String>> requestHeaders,
                           List<Map.Entry<String, String>> responseHeaders) {
}
