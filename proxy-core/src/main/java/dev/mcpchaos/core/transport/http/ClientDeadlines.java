package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ByteProcessor;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * The client deadlines of one client connection (see {@code docs/limits.md}): a request head
 * must end within the head timeout of its first byte, a body within the body timeout of its head
 * and at no less than the minimum rate after its first second; between requests the connection
 * closes after the idle timeout, which only a finished exchange starts over; a connection that
 * stays unwritable for the send timeout closes, and so does a refused body's
 * {@link LingeringClose} that stops coming.
 *
 * <p>It follows what the decoder reads ({@link #track}, and {@link #readWatch} for the first byte
 * of a head) and decides when a deadline passed; what the connection does about a head or a body
 * that missed its deadline (a 408 now or in its pipelined turn, or a close) is its
 * {@link FrontendHandler}'s. All deadlines share one timer task per connection, as the response
 * timeout does: it is due no later than the earliest deadline in force, wakes, acts or sleeps on
 * to the next. A request that comes whole in one read never touches it; a phase that spans reads
 * moves it only earlier. On the connection's event loop.
 */
final class ClientDeadlines {

    private static final Logger log = LoggerFactory.getLogger(FrontendHandler.class);

    /** A body is held to the minimum rate from its second second on: its first packets may take a while. */
    private static final long RATE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What the decoder is in the middle of reading: nothing, a request head, or a request's body. */
    private enum Reading { BETWEEN, HEAD, BODY }

    private final FrontendHandler frontend;
    private final HttpProxyConfig config;
    private final LingeringClose lingering;
    private ChannelHandlerContext ctx;

    private Reading reading = Reading.BETWEEN;
    /** When the head or body being read began, or when reading resumed after the proxy paused it. */
    private long readingSince;
    /** Body bytes read since {@link #readingSince}. */
    private long readingBodyBytes;
    /** The request whose body is being read (its head has come, its end not yet); null otherwise. */
    private HttpRequest readingRequest;
    /** {@link #readingRequest} waits in the front end's queue (pipelined) rather than being the current exchange's. */
    private boolean readingQueued;
    /**
     * When the connection began or last ended an exchange (on the loop's ticker): between
     * requests, it is idle, and closed, once the idle timeout has passed since. What the client
     * sends does not move it: bytes of a next request start that request's head deadline.
     */
    private long lastActive;
    /** The connection is not writable (the client does not take what is written), since {@link #unwritableSince}. */
    private boolean unwritable;
    private long unwritableSince;

    private ScheduledFuture<?> timer;
    private long timerDue;

    ClientDeadlines(FrontendHandler frontend, HttpProxyConfig config, LingeringClose lingering) {
        this.frontend = frontend;
        this.config = config;
        this.lingering = lingering;
    }

    /** The connection's context, once its front end is added. */
    void attach(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** The handler to put before the HTTP codec: it sees the bytes the client sends, before they are decoded. */
    ChannelHandler readWatch() {
        return new ReadWatch();
    }

    /** The loop's ticker, which every deadline is measured on. */
    long ticker() {
        return ctx.executor().ticker().nanoTime();
    }

    private static long nanos(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    // ---- what the front end tells it ----------------------------------------------------------------

    /** The connection opened: it is idle until a request's first byte. */
    void connected() {
        lastActive = ticker();
        arm(lastActive);
    }

    /** A read is over: a head or a body that did not come whole in it has its deadline in force. */
    void readComplete() {
        if (reading != Reading.BETWEEN) {
            arm(ticker());
        }
    }

    /** Follows what the decoder has read of the client's requests, for their deadlines. */
    void track(Object msg) {
        if (msg instanceof HttpRequest) {
            readingRequest = (HttpRequest) msg;
            readingQueued = false;
            startReading(Reading.BODY);
        }
        if (msg instanceof HttpContent) {
            readingBodyBytes += ((HttpContent) msg).content().readableBytes();
            if (msg instanceof LastHttpContent) {
                reading = Reading.BETWEEN;
                readingRequest = null;
                readingQueued = false;
            }
        }
    }

    private void startReading(Reading phase) {
        reading = phase;
        readingSince = ticker();
        readingBodyBytes = 0;
    }

    /** {@code msg} went into the front end's queue (true) or got its turn (false): a body still coming is pipelined or current. */
    void queued(Object msg, boolean queued) {
        if (msg == readingRequest) {
            readingQueued = queued;
        }
    }

    /** Whether the decoder is in the middle of a request: a head or a body half read. */
    boolean midRequest() {
        return reading != Reading.BETWEEN;
    }

    /** Whether the body of a request that is not waiting its pipelined turn is still coming (a 413 must linger). */
    boolean readingCurrentBody() {
        return reading == Reading.BODY && !readingQueued;
    }

    /** An exchange ended: the idle deadline starts over from now. Returns the time, for {@link #arm}. */
    long exchangeEnded() {
        lastActive = ticker();
        return lastActive;
    }

    /** Between requests: the idle deadline, from the last exchange's end. */
    void armIdle() {
        arm(lastActive);
    }

    /** The proxy reads again: the clocks of a head or body stood still while it did not, and start over. */
    void restartClocks() {
        if (reading != Reading.BETWEEN) {
            readingSince = ticker();
            readingBodyBytes = 0;
        }
    }

    /** The connection became writable or stopped being so: the send deadline runs while it is not. */
    void writable(boolean writable) {
        if (!writable && !unwritable) {
            unwritable = true;
            unwritableSince = ticker();
            arm(unwritableSince);
        } else if (writable) {
            unwritable = false;
        }
    }

    /** Whether the client does not take what is written (the response timer waits on while so). */
    boolean unwritable() {
        return unwritable;
    }

    /** The connection closed. */
    void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    // ---- the timer ------------------------------------------------------------------------------------

    /** When the body being read falls under the minimum rate, given what it brought so far. */
    private long rateDue(long rate) {
        return readingSince + RATE_GRACE_NANOS + (long) (readingBodyBytes * 1_000_000_000.0 / rate);
    }

    /** Nanoseconds from {@code now} to the earliest deadline in force (<= 0: passed); Long.MAX_VALUE: none. */
    private long untilNextDeadline(long now) {
        long delay = Long.MAX_VALUE;
        if (unwritable && config.settings.sendTimeoutMillis > 0) {
            delay = Math.min(delay, unwritableSince + nanos(config.settings.sendTimeoutMillis) - now);
        }
        if (frontend.readsRequests()) {
            if (reading == Reading.HEAD && config.settings.requestHeadTimeoutMillis > 0) {
                delay = Math.min(delay, readingSince + nanos(config.settings.requestHeadTimeoutMillis) - now);
            } else if (reading == Reading.BODY) {
                if (config.settings.requestBodyTimeoutMillis > 0) {
                    delay = Math.min(delay, readingSince + nanos(config.settings.requestBodyTimeoutMillis) - now);
                }
                if (config.settings.minRequestBodyRate() > 0) {
                    delay = Math.min(delay, rateDue(config.settings.minRequestBodyRate()) - now);
                }
            }
        }
        if (frontend.betweenRequests() && config.settings.idleTimeoutMillis > 0) {
            delay = Math.min(delay, lastActive + nanos(config.settings.idleTimeoutMillis) - now);
        }
        if (lingering.active()) {
            delay = Math.min(delay, lingering.idleDeadline() - now);
        }
        return delay;
    }

    /** Makes sure the deadline task wakes by the earliest deadline in force. Cheap when it already does. */
    void arm(long now) {
        long delay = untilNextDeadline(now);
        if (delay == Long.MAX_VALUE || !ctx.channel().isActive()) {
            return;
        }
        delay = Math.max(0, delay);
        long due = now + delay;
        if (timer != null) {
            if (timerDue - due <= 0) {
                return; // it wakes in time, and then sleeps on to whatever is due
            }
            timer.cancel(false);
        }
        timerDue = due;
        timer = ctx.executor().schedule(this::check, delay, TimeUnit.NANOSECONDS);
    }

    private void check() {
        timer = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        long now = ticker();
        if (unwritable && config.settings.sendTimeoutMillis > 0
                && now - (unwritableSince + nanos(config.settings.sendTimeoutMillis)) >= 0) {
            timedOut(TransportObserver.ClientDeadline.SEND);
            log.info("client {} took nothing written to it for {} ms: closing the connection",
                    ctx.channel().remoteAddress(), config.settings.sendTimeoutMillis);
            ctx.close();
            return;
        }
        if (lingering.active() && now - lingering.idleDeadline() >= 0) {
            log.debug("client {} sent nothing more of a refused body for {} ms: closing the connection",
                    ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(LingeringClose.IDLE_NANOS));
            ctx.close();
            return;
        }
        if (frontend.readsRequests()) {
            if (reading == Reading.HEAD && config.settings.requestHeadTimeoutMillis > 0
                    && now - (readingSince + nanos(config.settings.requestHeadTimeoutMillis)) >= 0) {
                timedOut(TransportObserver.ClientDeadline.HEAD);
                reading = Reading.BETWEEN;
                frontend.headTimedOut(config.settings.requestHeadTimeoutMillis);
                return;
            }
            if (reading == Reading.BODY) {
                if (config.settings.requestBodyTimeoutMillis > 0
                        && now - (readingSince + nanos(config.settings.requestBodyTimeoutMillis)) >= 0) {
                    bodyTimedOut("the request body did not end within " + config.settings.requestBodyTimeoutMillis + " ms");
                    return;
                }
                if (config.settings.minRequestBodyRate() > 0 && now - rateDue(config.settings.minRequestBodyRate()) >= 0) {
                    bodyTimedOut("the request body came slower than " + config.settings.minRequestBodyRate() + " bytes/s ("
                            + readingBodyBytes + " bytes in " + TimeUnit.NANOSECONDS.toMillis(now - readingSince)
                            + " ms)");
                    return;
                }
            }
        }
        if (frontend.betweenRequests() && config.settings.idleTimeoutMillis > 0
                && now - (lastActive + nanos(config.settings.idleTimeoutMillis)) >= 0) {
            timedOut(TransportObserver.ClientDeadline.IDLE);
            log.debug("closing idle connection from {}", ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        arm(now);
    }

    private void bodyTimedOut(String why) {
        timedOut(TransportObserver.ClientDeadline.BODY);
        HttpRequest request = readingRequest;
        reading = Reading.BETWEEN;
        readingRequest = null;
        frontend.bodyTimedOut(request, readingQueued, why);
    }

    private void timedOut(TransportObserver.ClientDeadline deadline) {
        config.observer.clientTimedOut(TransportKind.HTTP, deadline);
    }

    /**
     * Sees the client's bytes before the HTTP codec: the first byte of a request head (not a
     * CR or LF, which may come between requests, RFC 9112 2.2) starts the head's deadline.
     */
    private final class ReadWatch extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (reading == Reading.BETWEEN && !frontend.closing() && !lingering.active() && msg instanceof ByteBuf
                    && ((ByteBuf) msg).forEachByte(ByteProcessor.FIND_NON_CRLF) >= 0) {
                startReading(Reading.HEAD);
            }
            ctx.fireChannelRead(msg);
        }
    }
}
