package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

import java.util.concurrent.TimeUnit;

/**
 * The rest of a body answered before it was all read (a 413), read and thrown away before its
 * connection closes: closed at once, the unread bytes would make the client's system reset the
 * connection, and a client that sends its whole body before reading would get the reset instead
 * of the answer (RFC 9112 9.6). It ends at the body's end, past {@value #MAX_DISCARDED_BODY}
 * bytes, or when nothing came for {@link #IDLE_NANOS} (nginx's {@code lingering_close}). The
 * {@link FrontendHandler} closes the connection then. On the connection's event loop.
 */
final class LingeringClose {

    /** Bytes of a refused body read and thrown away at most before its connection closes. */
    static final int MAX_DISCARDED_BODY = 64 * 1024 * 1024;

    /**
     * How long a refused body may bring nothing before its connection is closed: a client that
     * sends before it reads keeps sending, one that waits for the answer has it (nginx's
     * {@code lingering_timeout} is 5 s).
     */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private boolean active;
    private long discarded;
    /** When the refused body last brought something, on the loop's ticker. */
    private long lastRead;

    /** Whether a refused body is being thrown away. */
    boolean active() {
        return active;
    }

    /** Begins throwing the rest of the body away, at {@code now}. */
    void begin(long now) {
        active = true;
        lastRead = now;
    }

    /** Throws {@code msg} away (releases it); true when the lingering is over and the connection is to close. */
    boolean discard(Object msg, long now) {
        lastRead = now;
        if (msg instanceof HttpContent) {
            discarded += ((HttpContent) msg).content().readableBytes();
        }
        boolean end = !(msg instanceof HttpContent) || msg instanceof LastHttpContent
                || ((HttpObject) msg).decoderResult().isFailure() || discarded > MAX_DISCARDED_BODY;
        ReferenceCountUtil.release(msg);
        if (end) {
            active = false;
        }
        return end;
    }

    /** When the connection closes for want of more of the body, on the loop's ticker (only while {@link #active}). */
    long idleDeadline() {
        return lastRead + IDLE_NANOS;
    }
}
