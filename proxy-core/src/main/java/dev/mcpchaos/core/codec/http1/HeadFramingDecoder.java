package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;

import java.util.List;

/**
 * Frames HTTP/1.1 messages with {@link HeadScanner} where it can and with Netty's decoder where it
 * must, one message at a time: a head the scanner accepts becomes a head object over
 * {@link FlatHttpHeaders} and its {@code Content-Length} body; any other message, from its first
 * byte to its end, goes through Netty's decoder, which refuses what it refuses today. After a
 * message Netty's decoder found broken, everything goes through it (it discards the rest, and the
 * proxy answers and closes): a stream that has lost its framing is never read by the scanner; nor
 * one that switched protocols (101) or became a tunnel ({@link #leftHttp}).
 *
 * <p>The objects it hands on are those Netty's decoder hands on: a head, then contents of at most
 * {@code maxChunkSize} bytes, the last a {@link LastHttpContent} (the empty one for no body).
 */
abstract class HeadFramingDecoder extends ByteToMessageDecoder {

    /** Netty's decoder, driven one {@code decode} at a time. */
    interface Fallback {
        void decodeOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception;

        void decodeLastOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception;

        /** Releases what the decoder holds (its scratch buffer), as its removal from a pipeline would. */
        void release(ChannelHandlerContext ctx) throws Exception;
    }

    private enum State { HEAD, BODY, NETTY }

    private final HeadScanner scanner;
    private final int maxChunkSize;
    private Fallback fallback;
    private State state = State.HEAD;
    /** Heads Netty's decoder handed on whose end it has not yet. */
    private int openInNetty;
    /** Netty's decoder found a message broken: it keeps the connection from here on. */
    private boolean broken;
    private long bodyLeft;
    /** How many bytes the last scan that found the head incomplete saw; 0 when there was none. */
    private int incompleteAt;

    HeadFramingDecoder(HeadScanner scanner, int maxChunkSize) {
        this.scanner = scanner;
        this.maxChunkSize = maxChunkSize;
    }

    /** The scanner, for tests. */
    HeadScanner scanner() {
        return scanner;
    }

    /** Netty's decoder for what the scanner defers; made once, on first use. */
    abstract Fallback newFallback();

    /**
     * The head object of what the scanner has just accepted, or null to hand the message to
     * Netty's decoder after all (a response whose request only Netty's rules cover).
     *
     * @return the head, with {@link #bodyLength} set
     */
    abstract HttpMessage newHead(HeadScanner scanner);

    /** The body the head just made has: its {@code Content-Length}, or 0 where the request rules it out. */
    abstract long bodyLength(HeadScanner scanner);

    /**
     * Whether the connection has left HTTP/1.1 (an upgrade, a tunnel): then Netty's decoder, which
     * passes the bytes on as they come, keeps it to the end.
     */
    boolean leftHttp() {
        return false;
    }

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        switch (state) {
            case HEAD -> readHead(ctx, in, out);
            case BODY -> readBody(in, out);
            default -> readWithNetty(ctx, in, out);
        }
    }

    private void readHead(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        int readable = in.readableBytes();
        if (incompleteAt > 0 && readable < scanner.maxHeadSize()
                && in.indexOf(in.readerIndex() + incompleteAt, in.writerIndex(), (byte) '\n') < 0) {
            // No line ended since the last scan found the head incomplete: it still is. Without
            // this a head sent a byte at a time would be scanned (and copied) whole per byte.
            incompleteAt = readable;
            return;
        }
        int length = scanner.scan(in, incompleteAt > 0);
        if (length == HeadScanner.INCOMPLETE) {
            incompleteAt = readable;
            return;
        }
        incompleteAt = 0;
        HttpMessage head = length > 0 ? newHead(scanner) : null;
        if (head == null) {
            state = State.NETTY;
            readWithNetty(ctx, in, out); // now: nothing was read, and the caller stops when nothing is
            return;
        }
        in.skipBytes(length);
        out.add(head);
        bodyLeft = bodyLength(scanner);
        if (bodyLeft == 0) {
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        } else {
            state = State.BODY;
            readBody(in, out);
        }
    }

    private void readBody(ByteBuf in, List<Object> out) {
        int size = (int) Math.min(Math.min(in.readableBytes(), bodyLeft), maxChunkSize);
        if (size == 0) {
            return;
        }
        ByteBuf content = in.readRetainedSlice(size);
        bodyLeft -= size;
        if (bodyLeft == 0) {
            out.add(new DefaultLastHttpContent(content));
            state = State.HEAD;
        } else {
            out.add(new DefaultHttpContent(content));
        }
    }

    private void readWithNetty(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (fallback == null) {
            fallback = newFallback();
        }
        int from = out.size();
        fallback.decodeOnce(ctx, in, out);
        afterNetty(out, from);
    }

    /**
     * Back to the scanner only at the end of a message Netty's decoder read: until it hands on
     * the message's end it may hold bytes it took (a start line read in part, blank lines skipped
     * before it), and the scanner would read what follows them as a message of its own.
     */
    private void afterNetty(List<Object> out, int from) {
        boolean ended = false;
        for (int i = from; i < out.size(); i++) {
            Object o = out.get(i);
            if (o instanceof HttpObject && ((HttpObject) o).decoderResult().isFailure()
                    || o instanceof HttpResponse && ((HttpResponse) o).status().code() == 101) {
                broken = true; // a stream without framing, or one that switched protocols
            }
            if (o instanceof HttpMessage) {
                openInNetty++;
            }
            if (o instanceof LastHttpContent) {
                openInNetty--;
                ended = true;
            }
        }
        if (leftHttp()) {
            broken = true;
        }
        if (ended && !broken && openInNetty == 0) {
            state = State.HEAD;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
        if (fallback != null) {
            Fallback held = fallback;
            fallback = null;
            held.release(ctx);
        }
    }

    @Override
    protected final void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (state == State.HEAD && in.isReadable()) {
            state = State.NETTY; // a head cut short: Netty's decoder says what that is, as it did
        }
        if (state == State.NETTY) {
            if (fallback == null) {
                fallback = newFallback();
            }
            int from = out.size();
            fallback.decodeLastOnce(ctx, in, out);
            afterNetty(out, from);
        }
        // A body cut short (State.BODY) ends without a last content, as with Netty's decoder.
    }
}
