package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * turn, and past {@value WaitingRequests#MAX_WAITING} waiting pieces reading pauses. The upstream connection is
 * not read while the client connection is not writable.
 *
 * <p>Its parts: the {@link ClientDeadlines} (request head, body and its rate, idle, send) decide
 * when a deadline passed, and the front end what follows (a head or body too late is answered
 * 408, in the request's turn among pipelined ones, and the connection closes); the
 * {@link WaitingRequests} hold the pipelined requests; the {@link KeepAliveHeader} says what a
 * response's {@code Connection} header must; the {@link ResponseTimer} keeps the exchanges'
 * response deadlines, the {@link LingeringClose} a refused body's. A request the decoder refuses, anywhere in it, is answered 400 and the connection closes; a
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
    /** Pipelined requests waiting their turn. */
    private final WaitingRequests waiting = new WaitingRequests();

    /** The response and response body timeouts of this connection's exchanges; made when the handler is added. */
    private ResponseTimer responseTimer;
    /** The connection closed: what the decoder still hands on from its last read is released. */
    private boolean inactive;

    /** The method of the current exchange is POST: it answers nothing before its body is whole. */
    private boolean currentPost;
    /** What the Connection header of a response says for an HTTP/1.0 keep-alive request or a drain. */
    private final KeepAliveHeader keepAlive;
    /** The proxy stopped reading (pipelined requests wait): the client's head and body clocks stand still. */
    private boolean readPaused;
    /**
     * The connection's last answer is written or queued (a 400, a 408): nothing more it reads is
     * served, and only the send deadline still applies.
     */
    private boolean closing;
    /** {@link #closeAfterWrites} was called: the close follows the last write. */
    private boolean closeArmed;
    /** A refused body being read and thrown away before the connection closes (413). */
    private final LingeringClose lingering = new LingeringClose();
    /** The client deadlines: request head, request body and its rate, idle, send (one timer task). */
    private final ClientDeadlines deadlines;

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
        this.deadlines = new ClientDeadlines(this, config, lingering);
        this.keepAlive = new KeepAliveHeader(draining);
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
        this.deadlines.attach(ctx);
        this.upstream = upstreams.open(ctx.channel(), new UpstreamListener());
        this.responseTimer = new ResponseTimer(ctx, deadlines::unwritable);
    }

    /** The handler to put before the HTTP codec: it sees the bytes the client sends, before they are decoded. */
    ChannelHandler readWatch() {
        return deadlines.readWatch();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        deadlines.connected();
        super.channelActive(ctx);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        deadlines.readComplete();
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
        deadlines.track(msg);
        if (closing) {
            ReferenceCountUtil.release(msg); // the connection's last answer is on its way
            return;
        }
        if (lingering.active()) {
            if (lingering.discard(msg, deadlines.ticker())) {
                closing = true;
                ctx.close();
            }
            return;
        }
        if (current != null && current.requestComplete() || !waiting.isEmpty()) {
            boolean full = waiting.add(msg); // a pipelined request: its turn comes when the current one is answered
            deadlines.queued(msg, true);
            if (msg instanceof HttpObject && ((HttpObject) msg).decoderResult().isFailure()) {
                closing = true; // answered 400 in its turn; nothing after it is read
                pauseReading();
            } else if (full) {
                pauseReading(); // enough queued: read on once they are served
            }
            return;
        }
        handle(msg);
    }

    private void handle(Object msg) {
        if (msg instanceof WaitingRequests.TimedOut timedOut) {
            answerTimedOut(timedOut.version(), timedOut.message());
            return;
        }
        if (msg instanceof HttpObject && ((HttpObject) msg).decoderResult().isFailure()) {
            Throwable cause = ((HttpObject) msg).decoderResult().cause();
            ReferenceCountUtil.release(msg);
            rejectMalformed(cause);
            return;
        }
        deadlines.queued(msg, false); // its turn came, maybe while its body is still coming
        if (msg instanceof HttpRequest && !isHttp1(((HttpRequest) msg).protocolVersion())) {
            HttpVersion version = ((HttpRequest) msg).protocolVersion();
            ReferenceCountUtil.release(msg);
            rejectMalformed(new UnsupportedVersionException(version));
            return;
        }
        if (msg instanceof HttpRequest) {
            HttpRequest request = (HttpRequest) msg;
            currentPost = HttpMethod.POST.equals(request.method());
            keepAlive.serving(request); // before the exchange takes the hop-by-hop headers off the request
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
        deadlines.exchangeEnded();
        if (exchange.leftUpstreamIdle()) {
            upstream.idleAgain();
        }
        if (!keepAlive) {
            if (deadlines.readingCurrentBody() && !closing) {
                // Answered before its body was all read (a 413): read the rest and throw it away,
                // then close. Closed at once, the unread bytes would make the client's system
                // reset the connection, and a client that sends its whole body before reading
                // would get the reset instead of the answer (RFC 9112 9.6).
                long now = deadlines.ticker();
                lingering.begin(now);
                ctx.flush();
                deadlines.arm(now);
                return;
            }
            ctx.channel().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        while (!waiting.isEmpty() && (current == null || !current.requestComplete()) && ctx.channel().isActive()) {
            handle(waiting.poll());
        }
        if (waiting.roomToRead() && readPaused && !closing) {
            resumeReading();
        }
        if (current == null) {
            deadlines.armIdle(); // between requests: the idle deadline
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
        deadlines.restartClocks();
        ctx.channel().config().setAutoRead(true);
        ctx.read();
        deadlines.arm(deadlines.ticker());
    }

    // ---- what the client deadlines end (ClientDeadlines decides when) -----------------------------------

    /** Whether nothing is being served or read between requests: the idle deadline runs. */
    boolean betweenRequests() {
        return !deadlines.midRequest() && current == null && waiting.isEmpty() && !lingering.active() && !closing;
    }

    /** Whether the client's requests are read and served: the head and body deadlines run. */
    boolean readsRequests() {
        return !closing && !readPaused;
    }

    /** Whether the connection's last answer is written or queued. */
    boolean closing() {
        return closing;
    }

    /** A request head did not end within its deadline: 408, now or in its turn, and the connection closes. */
    void headTimedOut(long timeoutMillis) {
        String message = "mcp-chaos: the request head did not end within " + timeoutMillis + " ms of its first byte";
        log.info("client {}: {}: answered 408", ctx.channel().remoteAddress(), message.substring(11));
        if (current == null && waiting.isEmpty()) {
            answerTimedOut(HttpVersion.HTTP_1_1, message);
        } else {
            queueTimedOut(HttpVersion.HTTP_1_1, message); // pipelined behind an exchange in progress
        }
    }

    /**
     * The body of {@code request} did not end within its deadline, or came too slowly; {@code
     * queued}: it waits its pipelined turn. A 408 in its turn, or now for a POST that went nowhere;
     * else the connection closes.
     */
    void bodyTimedOut(HttpRequest request, boolean queued, String why) {
        String message = "mcp-chaos: " + why;
        if (lingering.active()) {
            log.info("client {}: {} while a refused body was thrown away: closing the connection",
                    ctx.channel().remoteAddress(), why);
            ctx.close();
            return;
        }
        String name = request.method() + " " + request.uri();
        if (queued) {
            // Pipelined: what came of it is dropped, and its turn answers 408.
            waiting.dropLast(request);
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
        waiting.addTimedOut(version, message);
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

    /**
     * What an exchange writes to the client: a response head to an HTTP/1.0 keep-alive request
     * says the connection stays open, one written while draining that it closes.
     */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse) {
            keepAlive.onResponse((HttpResponse) msg);
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        boolean writable = ctx.channel().isWritable();
        // Read the upstream only as fast as the client drains.
        upstream.clientWritable(writable);
        deadlines.writable(writable); // the send deadline
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        inactive = true;
        responseTimer.cancel();
        deadlines.cancel();
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
                waiting.releaseAll();
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
