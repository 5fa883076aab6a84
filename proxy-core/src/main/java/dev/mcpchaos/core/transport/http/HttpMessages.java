package dev.mcpchaos.core.transport.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Header rules and the proxy's own error answers. */
final class HttpMessages {

    /** JSON-RPC error code the proxy uses for its own transport errors (implementation-defined range). */
    static final int PROXY_ERROR_CODE = -32000;

    /** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and never pass a proxy. */
    private static final List<AsciiString> HOP_BY_HOP = List.of(
            HttpHeaderNames.CONNECTION, HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.PROXY_CONNECTION,
            HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.UPGRADE, HttpHeaderNames.PROXY_AUTHENTICATE, HttpHeaderNames.PROXY_AUTHORIZATION);

    static final AsciiString MCP_SESSION_ID = AsciiString.cached("mcp-session-id");

    private HttpMessages() {
    }

    /**
     * Removes hop-by-hop headers, including those the Connection header names. With {@code keep},
     * the removed headers are also added to {@code kept} (made when first needed), which is
     * returned; headers {@code kept} already holds are not added again.
     */
    static HttpHeaders removeHopByHop(HttpHeaders headers, HttpHeaders kept, boolean keep) {
        return removeHopByHop(headers, kept, keep, HeadFacts.of(headers).hopByHop);
    }

    /**
     * As {@link #removeHopByHop(HttpHeaders, HttpHeaders, boolean)}, for a head whose scan for
     * hop-by-hop headers was {@code found} (see {@link HeadFacts}): most heads have none, or a
     * {@code Connection: keep-alive} or {@code close} that names no other header, and looking
     * each of the nine names up hashed and searched the table nine times for nothing.
     */
    static HttpHeaders removeHopByHop(HttpHeaders headers, HttpHeaders kept, boolean keep, HeadFacts.HopByHop found) {
        switch (found) {
            case NONE:
                return kept;
            case CONNECTION_ONLY:
                kept = keep(kept, keep, headers, HttpHeaderNames.CONNECTION);
                headers.remove(HttpHeaderNames.CONNECTION);
                return kept;
            default:
                break;
        }
        if (headers.contains(HttpHeaderNames.CONNECTION)) {
            for (String connection : headers.getAll(HttpHeaderNames.CONNECTION)) {
                for (String token : connection.split(",")) {
                    String name = token.trim();
                    if (!name.isEmpty() && headers.contains(name)) {
                        kept = keep(kept, keep, headers, name);
                        headers.remove(name);
                    }
                }
            }
        }
        for (AsciiString name : HOP_BY_HOP) {
            if (headers.contains(name)) {
                kept = keep(kept, keep, headers, name);
                headers.remove(name);
            }
        }
        return kept;
    }

    /** Removes hop-by-hop headers, including those the Connection header names. */
    static void removeHopByHop(HttpHeaders headers) {
        removeHopByHop(headers, null, false);
    }

    private static HttpHeaders keep(HttpHeaders kept, boolean keep, HttpHeaders headers, CharSequence name) {
        if (!keep) {
            return kept;
        }
        List<String> values = headers.getAll(name);
        if (kept == null) {
            kept = new DefaultHttpHeaders();
        }
        if (!kept.contains(name)) {
            kept.add(name, values);
        }
        return kept;
    }

    /**
     * A response with a JSON-RPC error body, for failures of the proxy itself (upstream down,
     * body too large). The id is the request's, when known, so the client can match it.
     */
    static FullHttpResponse jsonRpcError(ByteBufAllocator alloc, HttpVersion version, HttpResponseStatus status,
                                         Object id, String message) {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + idJson(id) + ",\"error\":{\"code\":" + PROXY_ERROR_CODE
                + ",\"message\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(message)) + "\"}}";
        ByteBuf content = alloc.buffer(body.length()).writeBytes(body.getBytes(StandardCharsets.UTF_8));
        FullHttpResponse response = new DefaultFullHttpResponse(version, status, content);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return response;
    }

    /** The id as JSON: a number stays a number, a string is quoted, anything else is null. */
    static String idJson(Object id) {
        if (id instanceof Long || id instanceof BigDecimal) {
            return id.toString();
        }
        if (id instanceof String) {
            return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString((String) id)) + "\"";
        }
        return "null";
    }

    /**
     * The {@code sessionId} query parameter of a URI or path ({@code /message?sessionId=abc}), as
     * the legacy HTTP+SSE transport names its sessions; null when there is none.
     */
    static String legacySessionId(String uri) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return null;
        }
        int end = uri.indexOf('#', query);
        for (String pair : uri.substring(query + 1, end < 0 ? uri.length() : end).split("&")) {
            if (pair.startsWith("sessionId=") && pair.length() > "sessionId=".length()) {
                try {
                    return java.net.URLDecoder.decode(pair.substring("sessionId=".length()), StandardCharsets.UTF_8);
                } catch (IllegalArgumentException e) {
                    return null; // a malformed escape: not a session id the proxy can use
                }
            }
        }
        return null;
    }

    /** Whether a {@code Content-Type} (null: none) is an SSE stream's. */
    static boolean isEventStream(String type) {
        return type != null && type.regionMatches(true, 0, "text/event-stream", 0, 17);
    }

    /** Whether a {@code Content-Type} (null: none) is JSON's. */
    static boolean isJson(String type) {
        return type != null && type.regionMatches(true, 0, "application/json", 0, 16);
    }

    /** One sniffer per event loop for whole bodies: it keeps caches worth keeping, and costs to make. */
    private static final FastThreadLocal<EnvelopeSniffer> SNIFFERS = new FastThreadLocal<>() {
        @Override
        protected EnvelopeSniffer initialValue() {
            return new EnvelopeSniffer();
        }
    };

    /** This event loop's sniffer for whole bodies. */
    static EnvelopeSniffer sniffer() {
        return SNIFFERS.get();
    }

    /** Adds a frame's content to {@code lines} (one line each, newline-separated); takes the frame. */
    static CompositeByteBuf appendLine(ByteBufAllocator alloc, CompositeByteBuf lines, Frame frame) {
        if (lines == null) {
            lines = alloc.compositeBuffer();
        } else {
            lines.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'}));
        }
        lines.addComponent(true, frame.content().retainedSlice());
        frame.release();
        return lines;
    }

    /** Whether a frame is a JSON-RPC message (a request, notification, response, error or batch), not bytes of another kind. */
    static boolean isMessage(Frame frame) {
        switch (frame.envelope().kind()) {
            case REQUEST:
            case NOTIFICATION:
            case RESPONSE:
            case ERROR:
            case BATCH:
                return true;
            default:
                return false;
        }
    }
}
