package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * A JSON answer: gathered whole (up to the JSON limit), passed through the chain as one message,
 * and written with its head when the chain lets it through. Nothing reaches the client before
 * that, so a fault may still answer in its place, change its status or content type, or hold it.
 * A body that outgrows the limit, or would pass the proxy's ceiling on bytes held for clients,
 * goes on raw, uninspected.
 */
final class JsonResponseBody implements ResponseBody {

    private static final Logger log = LoggerFactory.getLogger(JsonResponseBody.class);

    private final ResponseOutput out;
    /** The upstream's Content-Length, or -1. */
    private final long declaredLength;
    /** The body gathered so far; emptied when it goes into the chain or out raw. */
    private final BodyGatherer gathered;
    /**
     * Bytes a fault made that are no message (noise, or the answer corrupted): a JSON body carries
     * one message, so they lead it, as if the server had printed them, or are the body when no
     * message follows (see {@link #onRouteEnd}).
     */
    private CompositeByteBuf prefix;
    /** The answer went to the client. */
    private boolean written;

    /**
     * @param declaredLength the upstream's Content-Length, or -1 when it sent none (it sizes the
     *                       gathering buffer, and says whether a body relayed raw is chunked)
     */
    JsonResponseBody(ResponseOutput out, long declaredLength) {
        this.out = out;
        this.declaredLength = declaredLength;
        this.gathered = new BodyGatherer(out.alloc(), declaredLength);
        out.bodyProgress(false);
    }

    @Override
    public ResponseBody onContent(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        ByteBuf bytes = content.content();
        long size = gathered.readableBytes() + bytes.readableBytes();
        if (size > out.config().settings.maxJsonResponseBody()) {
            log.info("{}: JSON response over {} bytes: relayed without interception", out.label(),
                    out.config().settings.maxJsonResponseBody());
            return goRaw(content);
        }
        if (!out.reserve(gathered.capacityNeeded(bytes, last))) {
            log.info("{}: the proxy holds as many bytes of bodies as it may: JSON response relayed without interception",
                    out.label());
            return goRaw(content);
        }
        try {
            gathered.add(bytes, last);
        } finally {
            content.release();
        }
        out.bodyProgress(last);
        if (last) {
            ByteBuf body = gathered.take();
            Envelope envelope = HttpMessages.sniffer().sniff(body);
            Frame frame = Frame.original(body, body.readableBytes(), envelope, Direction.SERVER_TO_CLIENT,
                    out.chain().session().nextSequence(Direction.SERVER_TO_CLIENT));
            out.process(List.of(frame));
            if (!written) {
                out.endAfterHeld(); // only when the answer did not go at once
            }
        }
        return this;
    }

    /** Too big to hold: the head and what was gathered go now, the rest as it comes. */
    private ResponseBody goRaw(HttpContent content) {
        HttpResponse clientHead = out.clientHead();
        HttpUtil.setTransferEncodingChunked(clientHead, declaredLength < 0);
        out.writeHead(clientHead);
        if (!gathered.isEmpty()) {
            out.writeContent(new DefaultHttpContent(gathered.take()));
        }
        ResponseBody raw = new RawResponseBody(out);
        return raw.onContent(content);
    }

    @Override
    public void deliver(Frame frame) {
        if (written) {
            frame.release(); // the exchange discards what comes after its end; this is a second answer
            return;
        }
        if (!frame.isOriginal() && !HttpMessages.isMessage(frame)) {
            prefix = HttpMessages.appendLine(out.alloc(), prefix, frame);
            return;
        }
        ByteBuf body = frame.content().retainedSlice();
        frame.release();
        if (prefix != null) {
            body = prefix.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'\n'})).addComponent(true, body);
            prefix = null;
        }
        write(body);
    }

    /** Writes the answer with this body and the upstream's head made ready; the exchange is complete. */
    private void write(ByteBuf body) {
        written = true;
        HttpResponse clientHead = out.clientHead();
        FullHttpResponse full = new DefaultFullHttpResponse(clientHead.protocolVersion(), clientHead.status(), body,
                clientHead.headers(), EmptyHttpHeaders.INSTANCE);
        // The upstream's length stands unless a fault changed the answer (or it sent none).
        if (body.readableBytes() != declaredLength || !full.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            full.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        }
        out.writeWhole(full);
    }

    /**
     * The answer's frame has left the chain, or was dropped, or became something else: what a
     * fault made of it that is no message is the body now; an upstream a fault closed after its
     * answer came, with the answer dropped, is a 502; a dropped answer leaves the client waiting,
     * as a lost answer does.
     */
    @Override
    public void onRouteEnd() {
        if (written) {
            return;
        }
        if (prefix != null) {
            ByteBuf body = prefix;
            prefix = null;
            write(body);
        } else if (out.upstreamCutByFault()) {
            out.answerUpstreamCut();
        }
    }

    @Override
    public boolean carriesOneMessage() {
        return true;
    }

    @Override
    public void release() {
        gathered.release();
        if (prefix != null) {
            prefix.release();
            prefix = null;
        }
    }
}
