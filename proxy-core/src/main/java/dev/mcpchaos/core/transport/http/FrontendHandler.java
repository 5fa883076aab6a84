package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.ByteProcessor;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One client connection. Serves its requests one at a time (pipelined requests wait their turn),
 * each as an {@link Exchange}, over one upstream connection of its own that lives as long as the
 * client's and is on the same event loop (the HexDumpProxy shape): a streaming response holds it
 * until it ends, and when the upstream connection goes away the client's is closed. When the
 * client's goes away, its upstream connection is closed too, unless it was idle and healthy: then
 * it goes to the proxy's {@link UpstreamPool}, and a later client connection on the same loop
 * takes it instead of connecting.
 *
 * <p>The client connection is read while an exchange is in progress, so a client that goes away
 * mid-stream is noticed at once and its upstream stream closed; pipelined requests wait their
 * turn, and past {@value #MAX_WAITING} waiting pieces reading pauses. The upstream connection is
 * not read while the client connection is not writable.
 *
 * <p>Deadlines (see {@code docs/limits.md}): a request head must end within the head timeout of
 * its first byte, a body within the body timeout of its head and at no less than the minimum
 * rate after its first second: else 408, in the request's turn among pipelined ones, and the
 * connection closes. Between requests the connection closes after the idle timeout, which only a
 * finished exchange starts over; a connection that stays unwritable for the send timeout closes.
 * A request the decoder refuses, anywhere in it, is answered 400 and the connection closes; a
 * body answered 413 before it ended is read and thrown away first (up to
 * {@value LingeringClose#MAX_DISCARDED_BODY} bytes, while it keeps coming), so the client is not reset.
 */
final class FrontendHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(FrontendHandler.class);

    private final HttpProxyConfig config;
    private final HttpSessions sessions;
    private final BufferBudget buffers;
    /** Whether the proxy is draining: every answer then closes its connection. */
    private final BooleanSupplier proxyDraining;
    private final UpstreamLink.Factory upstreams;
    private ChannelHandlerContext ctx;
    /** The upstream side of this connection, made when the handler is added. */
    private UpstreamLink upstream;
    private Exchange current;
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    /** Pipelined HTTP objects held before the connection stops being read. */
    private static final int MAX_WAITING = 64;

    /** The response and response body timeouts of this connection's exchanges; made when the handler is added. */
    private ResponseTimer responseTimer;
    /** The connection closed: what the decoder still hands on from its last read is released. */
    private boolean inactive;

    /**
     * When the connection began or last ended an exchange (on the loop's ticker): between
     * requests, it is idle, and closed, once the idle timeout has passed since. What the client
     * sends does not move it: bytes of a next request start that request's head deadline.
     */
    private long lastActive;

    /** A body is held to the minimum rate from its second second on: its first packets may take a while. */
    private static final long RATE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Stands in {@link #waiting} for a pipelined request that missed its deadline: its turn answers 408. */
    private static final Object TIMED_OUT = new Object();

    /** What the decoder is in the middle of reading: nothing, a request head, or a request's body. */
    private enum Reading { BETWEEN, HEAD, BODY }

    private Reading reading = Reading.BETWEEN;
    /** When the head or body being read began, or when reading resumed after the proxy paused it. */
    private long readingSince;
    /** Body bytes read since {@link #readingSince}. */
    private long readingBodyBytes;
    /** The request whose body is being read (its head has come, its end not yet); null otherwise. */
    private HttpRequest readingRequest;
    /** {@link #readingRequest} waits in {@link #waiting} (pipelined) rather than being the current exchange's. */
    private boolean readingQueued;
    /** The method of the current exchange is POST: it answers nothing before its body is whole. */
    private boolean currentPost;
    /**
     * The current exchange's request is HTTP/1.0 and asked for keep-alive: its response must say
     * {@code Connection: keep-alive}, or the client takes it as the connection's last.
     */
    private boolean currentHttp10KeepAlive;
    /** The proxy stopped reading (pipelined requests wait): the client's head and body clocks stand still. */
    private boolean readPaused;
    /**
     * The connection's last answer is written or queued (a 400, a 408): nothing more it reads is
     * served, and only the send deadline still applies.
     */
    private boolean closing;
    /** {@link #closeAfterWrites} was called: the close follows the last write. */
    private boolean closeArmed;
    /** The 408 queued in {@link #waiting}: its HTTP version and its message. */
    private HttpVersion timedOutVersion = HttpVersion.HTTP_1_1;
    private String timedOutMessage;
    /** A refused body being read and thrown away before the connection closes (413). */
    private final LingeringClose lingering = new LingeringClose();
    /** The connection is not writable (the client does not take what is written), since {@link #unwritableSince}. */
    private boolean unwritable;
    private long unwritableSince;

    /**
     * The client deadlines (request head, request body and its rate, idle, send) share one
     * timer task per connection, as the response timeout does: it is due no later than the
     * earliest deadline in force, wakes, acts or sleeps on to the next. A request that comes
     * whole in one read never touches it; a phase that spans reads moves it only earlier.
     */
    private ScheduledFuture<?> deadlineTimer;
    private long deadlineTimerDue;

    /** The front end of a connection of {@code proxy}: its settings, sessions, buffers, drain and upstream connections. */
    FrontendHandler(HttpProxy proxy) {
        this(proxy.config(), proxy.sessions(), proxy.buffers(), proxy::draining, proxy::openUpstream);
    }

    /**
     * A front end with the parts given: what a test drives on an {@code EmbeddedChannel}, with an
     * upstream of its own ({@code upstreams}) in place of a server.
     */
    FrontendHandler(HttpProxyConfig config, HttpSessions sessions, BufferBudget buffers, BooleanSupplier draining,
                    UpstreamLink.Factory upstreams) {
        this.config = config;
        this.sessions = sessions;
        this.buffers = buffers;
        this.proxyDraining = draining;
        this.upstreams = upstreams;
    }

    HttpSessions sessions() {
        return sessions;
    }

    BufferBudget buffers() {
        return buffers;
    }

    UpstreamLink upstream() {
        return upstream;
    }

    ResponseTimer responseTimer() {
        return responseTimer;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.upstream = upstreams.open(ctx.channel(), new UpstreamListener());
        this.responseTimer = new ResponseTimer(ctx, () -> unwritable);
    }

    /** The handler to put before the HTTP codec: it sees the bytes the client sends, before they are decoded. */
    ChannelHandler readWatch() {
        return new ReadWatch();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        lastActive = ticker();
        armDeadlines(lastActive);
        super.channelActive(ctx);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (reading != Reading.BETWEEN) {
            // A head or a body that did not come whole in this read: its deadline is in force.
            armDeadlines(ticker());
        }
        super.channelReadComplete(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (inactive || !ctx.channel().isActive()) {
            // Decoded from the read that closed the connection (a request answered with a close,
            // and one pipelined behind it), before or after channelInactive has run: nothing of
            // it is served or held (fuzzing finding F6).
            ReferenceCountUtil.release(msg);
            return;
        }
        track(msg);
        if (closing) {
            ReferenceCountUtil.release(msg); // the connection's last answer is on its way
            return;
        }
        if (lingering.active()) {
            if (lingering.discard(msg, ticker())) {
                closing = true;
                ctx.close();
            }
            return;
        }
        if (current != null && current.requestComplete() || !waiting.isEmpty()) {
            waiting.add(msg); // a pipelined request: its turn comes when the current one is answered
            if (msg == readingRequest) {
                readingQueued = true;
            }
            if (msg instanceof HttpObject && ((HttpObject) msg).decoderResult().isFailure()) {
                closing = true; // answered 400 in its turn; nothing after it is read
                pauseReading();
            } else if (waiting.size() >= MAX_WAITING) {
                pauseReading(); // enough queued: read on once they are served
            }
            return;
        }
        handle(msg);
    }

    /** Follows what the decoder has read of the client's requests, for their deadlines. */
    private void track(Object msg) {
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

    private void handle(Object msg) {
        if (msg == TIMED_OUT) {
            answerTimedOut(timedOutVersion, timedOutMessage);
            return;
        }
        if (msg instanceof HttpObject && ((HttpObject) msg).decoderResult().isFailure()) {
            Throwable cause = ((HttpObject) msg).decoderResult().cause();
            ReferenceCountUtil.release(msg);
            rejectMalformed(cause);
            return;
        }
        if (msg == readingRequest) {
            readingQueued = false; // its turn came while its body is still coming
        }
        if (msg instanceof HttpRequest && !isHttp1(((HttpRequest) msg).protocolVersion())) {
            HttpVersion version = ((HttpRequest) msg).protocolVersion();
            ReferenceCountUtil.release(msg);
            rejectMalformed(new UnsupportedVersionException(version));
            return;
        }
        if (msg instanceof HttpRequest) {
            HttpRequest request = (HttpRequest) msg;
            currentPost = HttpMethod.POST.equals(request.method());
            // Read before the exchange takes the hop-by-hop headers off the request.
            currentHttp10KeepAlive = request.protocolVersion() == HttpVersion.HTTP_1_0 && HttpUtil.isKeepAlive(request);
            current = new Exchange(this, ctx.channel(), request, config, sessions);
            current.onRequestHead();
        }
        if (msg instanceof HttpContent) {
            HttpContent content = (HttpContent) msg;
            if (current == null || current.isDone() && current.requestComplete()) {
                content.release();
                return;
            }
            current.onRequestContent(content);
        } else if (!(msg instanceof HttpRequest)) {
            ReferenceCountUtil.release(msg);
        }
    }

    /**
     * The decoder refused the request: its line, its headers or its chunked body. Answered 400
     * (431, 414 for what was too long) and the connection closed; a request whose body broke
     * off is dropped, so nothing of it reaches the upstream as a whole request.
     */
    private void rejectMalformed(Throwable cause) {
        closing = true;
        if (!ctx.channel().isActive()) {
            // The client left mid-request: the decoder says so with a failure ("Connection closed
            // before received headers"); nobody is there to answer.
            log.debug("client {} left in the middle of a request: {}", ctx.channel().remoteAddress(), cause.getMessage());
            return;
        }
        pauseReading();
        Exchange exchange = current;
        if (exchange != null) {
            current = null;
            boolean answered = !currentPost || exchange.isDone();
            exchange.abort();
            if (upstream.busy()) {
                upstream.close(); // a body streamed upstream (not a POST's) must not end there as if whole
            }
            if (answered) {
                // Not a POST: its response may have begun, and nothing can follow it.
                log.info("malformed HTTP request body from {}: {}: closing the connection",
                        ctx.channel().remoteAddress(), cause.getMessage());
                ctx.close();
                return;
            }
        }
        HttpResponseStatus status = cause instanceof UnsupportedVersionException
                ? HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED
                : cause instanceof TooLongHttpHeaderException
                ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                : cause instanceof TooLongFrameException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                : HttpResponseStatus.BAD_REQUEST;
        if (cause instanceof TooLongHttpHeaderException) {
            config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.HEADER_SIZE,
                    Direction.CLIENT_TO_SERVER, -1);
        }
        log.info("malformed HTTP request from {}: {}: answered {}", ctx.channel().remoteAddress(), cause.getMessage(),
                status.code());
        FullHttpResponse response = HttpMessages.jsonRpcError(ctx.alloc(), HttpVersion.HTTP_1_1, status, null,
                "mcp-chaos: malformed HTTP request: " + cause.getMessage());
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /**
     * HTTP/1.0 and 1.1 are served; a request line of another version (HTTP/2.0 in HTTP/1
     * framing, HTTP/1.2) is answered 505 in HTTP/1.1 and never forwarded (RFC 9110 15.6.6): an
     * answer in the request's version would claim a protocol the proxy does not speak (fuzzing
     * finding F1).
     */
    private static boolean isHttp1(HttpVersion version) {
        return version.majorVersion() == 1 && version.minorVersion() <= 1;
    }

    /** A request line whose HTTP version the proxy does not serve. */
    private static final class UnsupportedVersionException extends Exception {
        private static final long serialVersionUID = 1L;

        UnsupportedVersionException(HttpVersion version) {
            super("HTTP version " + version.text() + " (expected: HTTP/1.1 or HTTP/1.0)", null, false, false);
        }
    }

    /**
     * A drain begins (on this connection's loop): an idle connection is closed now, a busy one
     * is kept until its exchange is over. Returns whether it has an exchange in flight.
     */
    boolean beginDrain() {
        if (!ctx.channel().isActive()) {
            return false;
        }
        if (betweenRequests()) {
            ctx.close();
            return false;
        }
        return true;
    }

    /** The drain's deadline passed with this connection still busy: end its exchange as well as can be. */
    HttpProxy.DrainOutcome endForDrain() {
        if (!ctx.channel().isActive()) {
            return HttpProxy.DrainOutcome.FINISHED;
        }
        Exchange exchange = current;
        HttpProxy.DrainOutcome outcome = exchange != null ? exchange.endForDrain() : HttpProxy.DrainOutcome.CUT;
        closing = true;
        if (ctx.channel().isActive() && outcome == HttpProxy.DrainOutcome.CUT) {
            closeAfterWrites(); // what was let through before the cut still goes
        }
        return outcome;
    }

    /** The exchange is answered: serve the next request, or close. */
    void exchangeDone(Exchange exchange, boolean keepAlive) {
        if (exchange != current) {
            return;
        }
        keepAlive &= !proxyDraining.getAsBoolean(); // draining: every connection closes after its answer
        current = null;
        lastActive = ticker();
        if (exchange.leftUpstreamIdle()) {
            upstream.idleAgain();
        }
        if (!keepAlive) {
            if (reading == Reading.BODY && !readingQueued && !closing) {
                // Answered before its body was all read (a 413): read the rest and throw it away,
                // then close. Closed at once, the unread bytes would make the client's system
                // reset the connection, and a client that sends its whole body before reading
                // would get the reset instead of the answer (RFC 9112 9.6).
                long now = ticker();
                lingering.begin(now);
                ctx.flush();
                armDeadlines(now);
                return;
            }
            ctx.channel().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        while (!waiting.isEmpty() && (current == null || !current.requestComplete()) && ctx.channel().isActive()) {
            handle(waiting.poll());
        }
        if (waiting.size() < MAX_WAITING && readPaused && !closing) {
            resumeReading();
        }
        if (current == null) {
            armDeadlines(lastActive); // between requests: the idle deadline
        }
    }

    private void pauseReading() {
        if (!readPaused) {
            readPaused = true;
            ctx.channel().config().setAutoRead(false);
        }
    }

    private void resumeReading() {
        readPaused = false;
        if (reading != Reading.BETWEEN) {
            // The clocks of a head or body stood still while the proxy did not read: they start over.
            readingSince = ticker();
            readingBodyBytes = 0;
        }
        ctx.channel().config().setAutoRead(true);
        ctx.read();
        armDeadlines(ticker());
    }

    // ---- client deadlines ---------------------------------------------------------------------------

    private long ticker() {
        return ctx.executor().ticker().nanoTime();
    }

    private static long nanos(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** When the body being read falls under the minimum rate, given what it brought so far. */
    private long rateDue(long rate) {
        return readingSince + RATE_GRACE_NANOS + (long) (readingBodyBytes * 1_000_000_000.0 / rate);
    }

    private boolean betweenRequests() {
        return reading == Reading.BETWEEN && current == null && waiting.isEmpty() && !lingering.active() && !closing;
    }

    /** Nanoseconds from {@code now} to the earliest deadline in force (<= 0: passed); Long.MAX_VALUE: none. */
    private long untilNextDeadline(long now) {
        long delay = Long.MAX_VALUE;
        if (unwritable && config.settings.sendTimeoutMillis > 0) {
            delay = Math.min(delay, unwritableSince + nanos(config.settings.sendTimeoutMillis) - now);
        }
        if (!closing && !readPaused) {
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
        if (betweenRequests() && config.settings.idleTimeoutMillis > 0) {
            delay = Math.min(delay, lastActive + nanos(config.settings.idleTimeoutMillis) - now);
        }
        if (lingering.active()) {
            delay = Math.min(delay, lingering.idleDeadline() - now);
        }
        return delay;
    }

    /** Makes sure the deadline task wakes by the earliest deadline in force. Cheap when it already does. */
    private void armDeadlines(long now) {
        long delay = untilNextDeadline(now);
        if (delay == Long.MAX_VALUE || !ctx.channel().isActive()) {
            return;
        }
        delay = Math.max(0, delay);
        long due = now + delay;
        if (deadlineTimer != null) {
            if (deadlineTimerDue - due <= 0) {
                return; // it wakes in time, and then sleeps on to whatever is due
            }
            deadlineTimer.cancel(false);
        }
        deadlineTimerDue = due;
        deadlineTimer = ctx.executor().schedule(this::checkDeadlines, delay, TimeUnit.NANOSECONDS);
    }

    private void checkDeadlines() {
        deadlineTimer = null;
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
        if (!closing && !readPaused) {
            if (reading == Reading.HEAD && config.settings.requestHeadTimeoutMillis > 0
                    && now - (readingSince + nanos(config.settings.requestHeadTimeoutMillis)) >= 0) {
                headTimedOut(config.settings.requestHeadTimeoutMillis);
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
        if (betweenRequests() && config.settings.idleTimeoutMillis > 0
                && now - (lastActive + nanos(config.settings.idleTimeoutMillis)) >= 0) {
            timedOut(TransportObserver.ClientDeadline.IDLE);
            log.debug("closing idle connection from {}", ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        armDeadlines(now);
    }

    private void timedOut(TransportObserver.ClientDeadline deadline) {
        config.observer.clientTimedOut(TransportKind.HTTP, deadline);
    }

    private void headTimedOut(long timeoutMillis) {
        timedOut(TransportObserver.ClientDeadline.HEAD);
        String message = "mcp-chaos: the request head did not end within " + timeoutMillis + " ms of its first byte";
        log.info("client {}: {}: answered 408", ctx.channel().remoteAddress(), message.substring(11));
        reading = Reading.BETWEEN;
        if (current == null && waiting.isEmpty()) {
            answerTimedOut(HttpVersion.HTTP_1_1, message);
        } else {
            queueTimedOut(HttpVersion.HTTP_1_1, message); // pipelined behind an exchange in progress
        }
    }

    private void bodyTimedOut(String why) {
        timedOut(TransportObserver.ClientDeadline.BODY);
        HttpRequest request = readingRequest;
        String message = "mcp-chaos: " + why;
        reading = Reading.BETWEEN;
        readingRequest = null;
        if (lingering.active()) {
            log.info("client {}: {} while a refused body was thrown away: closing the connection",
                    ctx.channel().remoteAddress(), why);
            ctx.close();
            return;
        }
        String name = request.method() + " " + request.uri();
        if (readingQueued) {
            // Pipelined: what came of it is dropped, and its turn answers 408.
            while (!waiting.isEmpty()) {
                Object last = waiting.pollLast();
                ReferenceCountUtil.release(last);
                if (last == request) {
                    break;
                }
            }
            log.info("client {}: {} {}: answered 408 in its turn", ctx.channel().remoteAddress(), name, why);
            queueTimedOut(request.protocolVersion(), message);
        } else if (current != null && currentPost && !current.isDone()) {
            // A POST goes upstream only once its body is whole: nothing of it left the proxy.
            Exchange exchange = current;
            current = null;
            exchange.abort();
            log.info("client {}: {} {}: answered 408", ctx.channel().remoteAddress(), name, why);
            answerTimedOut(request.protocolVersion(), message);
        } else {
            // Its body streamed upstream, or it was answered already: nothing can follow.
            log.info("client {}: {} {}: closing the connection", ctx.channel().remoteAddress(), name, why);
            ctx.close();
        }
    }

    private void queueTimedOut(HttpVersion version, String message) {
        closing = true;
        pauseReading();
        timedOutVersion = version;
        timedOutMessage = message;
        waiting.add(TIMED_OUT);
    }

    /** Answers 408 with a JSON-RPC error (no id: the request's message never came whole) and closes. */
    private void answerTimedOut(HttpVersion version, String message) {
        closing = true;
        pauseReading();
        FullHttpResponse response = HttpMessages.jsonRpcError(ctx.alloc(), version, HttpResponseStatus.REQUEST_TIMEOUT,
                null, message);
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /** Closes the client's connection (a disconnect fault), after what was written to it before. */
    void closeClient() {
        closeAfterWrites();
    }

    /**
     * Closes the client's connection once everything written to it before has gone to the socket:
     * a cut stream or a disconnect fault ends after what was let through, as its event says. A
     * close right after the write would lose it where the write has not reached the socket yet:
     * on io_uring it is only submitted with the event loop's next batch, and on any transport it
     * waits while the socket's buffer is full. A client that takes nothing of it within the send
     * timeout is closed anyway.
     */
    void closeAfterWrites() {
        closing = true;
        Channel channel = ctx.channel();
        if (!channel.isOpen() || closeArmed) {
            return;
        }
        closeArmed = true;
        // An empty buffer passes the HTTP encoder untouched, and completes after the writes before it.
        ChannelFuture written = channel.writeAndFlush(Unpooled.EMPTY_BUFFER);
        written.addListener(ChannelFutureListener.CLOSE);
        if (!written.isDone()) {
            ScheduledFuture<?> deadline = ctx.executor().schedule(() -> {
                channel.close();
            }, config.settings.sendTimeoutMillis, TimeUnit.MILLISECONDS);
            channel.closeFuture().addListener(closed -> deadline.cancel(false));
        }
    }

    /** What an exchange writes to the client: a response head to an HTTP/1.0 keep-alive request says it stays open. */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse && proxyDraining.getAsBoolean()) {
            // Draining: the connection closes after this answer, and the client is told so.
            ((HttpResponse) msg).headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (currentHttp10KeepAlive && msg instanceof HttpResponse) {
            HttpHeaders headers = ((HttpResponse) msg).headers();
            if (!headers.contains(HttpHeaderNames.CONNECTION)) {
                headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        boolean writable = ctx.channel().isWritable();
        // Read the upstream only as fast as the client drains.
        upstream.clientWritable(writable);
        if (!writable && !unwritable) {
            unwritable = true;
            unwritableSince = ticker();
            armDeadlines(unwritableSince); // the send deadline
        } else if (writable) {
            unwritable = false;
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        inactive = true;
        responseTimer.cancel();
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
            deadlineTimer = null;
        }
        // The upstream first: a client that left must not leave its upstream stream open. Then,
        // whatever that did, the exchange and what waits let go of their buffers (fuzzing
        // finding F7: closing an upstream channel whose registration had failed threw, and the
        // body of the exchange in progress was never released).
        try {
            upstream.release(current != null);
        } finally {
            try {
                if (current != null) {
                    current.abort();
                    current = null;
                }
            } finally {
                for (Object msg = waiting.poll(); msg != null; msg = waiting.poll()) {
                    ReferenceCountUtil.release(msg);
                }
                super.channelInactive(ctx);
            }
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (isOutOfMemory(cause)) {
            // Closing the connection lets go of everything it holds (channelInactive): the proxy
            // goes on serving the others, and the operator learns why this one was cut.
            log.error("out of memory serving the client connection {} ({} bytes of bodies held, ceiling {}): closing it",
                    ctx.channel().remoteAddress(), buffers.held(), buffers.limit(), cause);
        } else {
            log.debug("client connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        }
        ctx.close();
    }

    /** Whether {@code cause} is, or was caused by, the heap or direct memory running out. */
    static boolean isOutOfMemory(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sees the client's bytes before the HTTP codec: the first byte of a request head (not a
     * CR or LF, which may come between requests, RFC 9112 2.2) starts the head's deadline.
     */
    private final class ReadWatch extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (reading == Reading.BETWEEN && !closing && !lingering.active() && msg instanceof ByteBuf
                    && ((ByteBuf) msg).forEachByte(ByteProcessor.FIND_NON_CRLF) >= 0) {
                startReading(Reading.HEAD);
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** What the upstream connection says goes to the exchange in progress; with none, it is thrown away. */
    private final class UpstreamListener implements UpstreamLink.Listener {
        @Override
        public void onUpstreamMessage(Object msg) {
            if (current == null) {
                ReferenceCountUtil.release(msg);
                return;
            }
            current.onUpstream(msg);
        }

        @Override
        public void onUpstreamError(Throwable cause) {
            if (current != null) {
                current.onUpstreamUnreachable(cause);
            }
        }

        @Override
        public void onUpstreamClosed() {
            if (current != null) {
                current.onUpstreamClosed();
            }
        }
    }
}
