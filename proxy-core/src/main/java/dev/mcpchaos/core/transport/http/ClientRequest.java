package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The request side of an {@link Exchange}: the head as the client sent it (for
 * {@link dev.mcpchaos.core.frame.HeaderSource}), a POST body as it is read and held, bytes a fault
 * put before the message, and the forms the request goes upstream in. It decides nothing: the
 * exchange moves its {@link State} and answers what it refuses. On the client connection's
 * event loop, but for the header reads.
 *
 * <p>This is where a byte-level relay of heads (#36) would keep the request head's bytes and
 * edit them in place (hop-by-hop headers, Host, Content-Length) instead of Netty header objects.
 */
final class ClientRequest {

    /**
     * Where the request stands. It only moves forward; a GET goes
     * {@code RECEIVING -> RELAYING -> SENT}, a POST {@code RECEIVING -> RECEIVED -> SENT}.
     */
    enum State {
        /** The head came; nothing has gone upstream (a POST's body is being read and held). */
        RECEIVING,
        /** The head went upstream and the body follows as it comes (GET, DELETE, ...): not all read yet. */
        RELAYING,
        /** Read whole (or refused) and not sent: a POST body in the chain, or a request answered here. */
        RECEIVED,
        /** Read whole and gone upstream (or on its way). */
        SENT;

        /** Whether the request (its head at least) went upstream. */
        boolean forwarded() {
            return this == RELAYING || this == SENT;
        }

        /** Whether the client has sent all of it (or it was refused, and the rest is not read for it). */
        boolean complete() {
            return this == RECEIVED || this == SENT;
        }
    }

    /** What a piece of a POST body did ({@link #gather}). */
    enum Gathered {
        /** Held; more is to come. */
        MORE,
        /** Held; the body is whole ({@link #takeBody}). */
        WHOLE,
        /** Over the request body limit ({@link #sizeSeen}): nothing more is held. */
        TOO_LARGE,
        /** The proxy's ceiling on held bytes is reached: nothing more is held. */
        OVER_BUDGET
    }

    final HttpRequest head;
    /** The request head as it came, read once (see {@link HeadFacts}). */
    final HeadFacts facts;
    final boolean post;
    private final HttpProxyConfig config;
    private final BufferBudget buffers;
    private final ByteBufAllocator alloc;

    private State state = State.RECEIVING;
    /** The body: the piece it came in, when it came whole, else gathered in blocks. */
    private BodyGatherer body;
    /** The body's size as far as read, when it broke the limit. */
    private long sizeSeen;
    /** What the body holds of the proxy's {@link BufferBudget}, until it goes upstream. */
    private long reserved;
    /**
     * The request's headers travel upstream in the request's own header object, changed in
     * place (no copy); the ones removed or replaced on the way (hop-by-hop, Host,
     * Content-Length) are kept here, as the client sent them, for {@link #header}.
     */
    private HttpHeaders clientOnlyHeaders;
    /** The head went upstream (or is on its way) and its headers are the upstream's now. */
    private boolean headSent;
    /** Bytes a fault made before (or instead of) the request's message, for the POST body. */
    private CompositeByteBuf prefix;

    ClientRequest(HttpRequest head, HttpProxyConfig config, BufferBudget buffers, ByteBufAllocator alloc) {
        this.head = head;
        this.facts = HeadFacts.of(head.headers());
        this.post = HttpMethod.POST.equals(head.method());
        this.config = config;
        this.buffers = buffers;
        this.alloc = alloc;
    }

    State state() {
        return state;
    }

    /** Moves the request forward; a move back is a bug in the exchange. */
    void moveTo(State next) {
        if (next.compareTo(state) < 0) {
            throw new IllegalStateException(this + ": " + state + " -> " + next);
        }
        state = next;
    }

    // ---- the body --------------------------------------------------------------------------------------

    /** Holds a piece of a POST body within the limit and the proxy's ceiling; takes {@code content}. */
    Gathered gather(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        try {
            ByteBuf bytes = content.content();
            long size = (body == null ? 0L : body.readableBytes()) + bytes.readableBytes();
            if (size > config.settings.maxRequestBody()) {
                sizeSeen = size;
                return Gathered.TOO_LARGE;
            }
            if (body == null) {
                body = new BodyGatherer(alloc, facts.length);
            }
            long needed = body.capacityNeeded(bytes, last);
            if (!buffers.tryReserve(needed, reserved + needed)) {
                return Gathered.OVER_BUDGET;
            }
            reserved += needed;
            body.add(bytes, last);
        } finally {
            content.release();
        }
        return last ? Gathered.WHOLE : Gathered.MORE;
    }

    /** The body's size as far as read when it broke the limit ({@link Gathered#TOO_LARGE}). */
    long sizeSeen() {
        return sizeSeen;
    }

    /** The whole body (empty when none came); the caller owns it. */
    ByteBuf takeBody() {
        ByteBuf whole = body != null ? body.take() : Unpooled.EMPTY_BUFFER;
        body = null;
        return whole;
    }

    /** Bytes a fault made that are no message: they lead the body; takes {@code frame}. */
    void addPrefix(Frame frame) {
        prefix = HttpMessages.appendLine(alloc, prefix, frame);
    }

    /** {@code message} with what a fault put before it, if anything. */
    ByteBuf withPrefix(ByteBuf message) {
        if (prefix == null) {
            return message;
        }
        ByteBuf whole = prefix.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'})).addComponent(true, message);
        prefix = null;
        return whole;
    }

    /** What a fault put in place of the message, when no message came; null when nothing. The caller owns it. */
    ByteBuf takePrefix() {
        ByteBuf alone = prefix;
        prefix = null;
        return alone;
    }

    // ---- upstream ---------------------------------------------------------------------------------------

    /** The request to send upstream, in the client's header object, changed in place. */
    FullHttpRequest full(ByteBuf content) {
        HttpHeaders headers = head.headers();
        prepareHeaders(headers);
        // The length as the client sent it, unless a fault changed the body (or there was none).
        if (facts.length != content.readableBytes()) {
            if (facts.lengthGiven) {
                keepClientHeader(HttpHeaderNames.CONTENT_LENGTH, headers.getAll(HttpHeaderNames.CONTENT_LENGTH));
            }
            headers.setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        }
        return new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri(), content, headers,
                EmptyHttpHeaders.INSTANCE);
    }

    /** A duplicate of the request, with headers of its own: the original's may still be on their way. */
    FullHttpRequest shadow(ByteBuf content) {
        FullHttpRequest request = new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri(), content,
                head.headers().copy(), EmptyHttpHeaders.INSTANCE);
        HttpMessages.removeHopByHop(request.headers());
        if (config.settings.rewriteHost()) {
            request.headers().set(HttpHeaderNames.HOST, config.upstreamHostHeader);
        }
        request.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return request;
    }

    /** A head with no body to intercept (GET, DELETE, ...), made ready for upstream in place. */
    HttpRequest headForUpstream() {
        boolean chunked = facts.transferEncoding && HttpUtil.isTransferEncodingChunked(head);
        prepareHeaders(head.headers());
        if (chunked) {
            HttpUtil.setTransferEncodingChunked(head, true);
        }
        return head;
    }

    /** Removes hop-by-hop headers and rewrites Host if asked, keeping what the client sent. Once. */
    private void prepareHeaders(HttpHeaders headers) {
        if (headSent) {
            return;
        }
        headSent = true;
        clientOnlyHeaders = HttpMessages.removeHopByHop(headers, clientOnlyHeaders, true, facts.hopByHop);
        if (config.settings.rewriteHost()) {
            keepClientHeader(HttpHeaderNames.HOST, headers.getAll(HttpHeaderNames.HOST));
            headers.set(HttpHeaderNames.HOST, config.upstreamHostHeader);
        }
    }

    private void keepClientHeader(CharSequence name, List<String> values) {
        if (values.isEmpty()) {
            return;
        }
        if (clientOnlyHeaders == null) {
            clientOnlyHeaders = new DefaultHttpHeaders();
        }
        if (!clientOnlyHeaders.contains(name)) {
            clientOnlyHeaders.add(name, values);
        }
    }

    // ---- as the client sent it ----------------------------------------------------------------------------

    /** A request header as the client sent it, even one the proxy removed or replaced upstream. */
    String header(String name) {
        if (clientOnlyHeaders != null) {
            String value = clientOnlyHeaders.get(name);
            if (value != null) {
                return value;
            }
        }
        return head.headers().get(name);
    }

    /** As the client sent them: those the proxy replaced upstream come from {@code clientOnlyHeaders}. */
    List<Map.Entry<String, String>> headers() {
        List<Map.Entry<String, String>> all = new ArrayList<>();
        HttpHeaders replaced = clientOnlyHeaders;
        if (replaced != null) {
            all.addAll(replaced.entries());
        }
        for (Map.Entry<String, String> header : head.headers().entries()) {
            if (replaced == null || !replaced.contains(header.getKey())) {
                all.add(header);
            }
        }
        return all;
    }

    // ---- letting go ---------------------------------------------------------------------------------------

    /** The body went upstream (the upstream connection's outbound buffer holds it now), or is gone. */
    void releaseReservation() {
        buffers.release(reserved);
        reserved = 0;
    }

    /** Lets go of the body held and its reservation. */
    void releaseBody() {
        if (body != null) {
            body.release();
            body = null;
        }
        releaseReservation();
    }

    /** Lets go of everything held: the body, its reservation, a fault's prefix. Harmless twice. */
    void release() {
        releaseBody();
        if (prefix != null) {
            prefix.release();
            prefix = null;
        }
    }

    @Override
    public String toString() {
        return head.method() + " " + head.uri();
    }
}
