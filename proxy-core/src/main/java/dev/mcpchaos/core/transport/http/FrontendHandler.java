package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

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
 */
final class FrontendHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(FrontendHandler.class);

    /** The most one read of an upstream connection takes. */
    static final int MAX_UPSTREAM_READ = 256 * 1024;

    /**
     * Reads of up to {@value #MAX_UPSTREAM_READ} bytes from the upstream (Netty's default stops at
     * 64 KiB), a quarter as many system calls and relayed chunks for a fast stream: SSE of 64 KiB
     * events 1.07-1.27x events/s, of 120 B events 0.94-1.37x (median 1.19). At most 4 reads per
     * turn of the loop (Netty's default, 16, would let one stream take 4 MiB before the loop's
     * other connections).
     */
    private static final RecvByteBufAllocator UPSTREAM_READS =
            new AdaptiveRecvByteBufAllocator(64, 2048, MAX_UPSTREAM_READ).maxMessagesPerRead(4);

    private final HttpProxy proxy;
    private ChannelHandlerContext ctx;
    private Channel upstream;
    private ChannelFuture upstreamReady;
    private Exchange current;
    /**
     * A request went on the upstream connection and its response has not all come back (or the
     * connection's state is unknown): the connection may not serve another client connection.
     */
    private boolean upstreamBusy;
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    /** Pipelined HTTP objects held before the connection stops being read. */
    private static final int MAX_WAITING = 64;

    /**
     * The exchange waiting for its response head, and until when (on the event loop's ticker, the
     * clock its scheduled tasks keep). One timer task per connection serves every exchange on it:
     * starting a wait only moves the deadline, and the task, when it fires early, sleeps on until
     * the deadline. A task per request (and its cancellation) was a sixth of the proxy's sampled
     * allocation per request. The task is cancelled when the connection closes: it holds the
     * handler, and with it the connection.
     */
    private Exchange awaitingResponse;
    private long responseDeadline;
    private ScheduledFuture<?> responseTimer;
    /** When {@link #responseTimer} is due, on the loop's ticker. */
    private long responseTimerDue;

    /**
     * When the connection last read something or ended an exchange (on the loop's ticker): it is
     * idle, and closed, once it has done neither for the idle timeout. One task per connection
     * checks it, as for the response timeout; Netty's IdleStateHandler put a listener on every
     * write's promise instead.
     */
    private long lastActive;
    private ScheduledFuture<?> idleTimer;

    FrontendHandler(HttpProxy proxy) {
        this.proxy = proxy;
    }

    HttpSessions sessions() {
        return proxy.sessions();
    }

    BufferBudget buffers() {
        return proxy.buffers();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        long idleMillis = proxy.config().idleTimeoutMillis;
        if (idleMillis > 0) {
            lastActive = ctx.executor().ticker().nanoTime();
            idleTimer = ctx.executor().schedule(this::checkIdle, idleMillis, TimeUnit.MILLISECONDS);
        }
        super.channelActive(ctx);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        // Any read counts, a request head still in pieces included: a slow client is not idle.
        lastActive = ctx.executor().ticker().nanoTime();
        super.channelReadComplete(ctx);
    }

    /** Idle means no exchange at all: a long-lived SSE stream is an exchange and is never cut. */
    private void checkIdle() {
        idleTimer = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        long idleNanos = TimeUnit.MILLISECONDS.toNanos(proxy.config().idleTimeoutMillis);
        long left = current == null ? lastActive + idleNanos - ctx.executor().ticker().nanoTime() : idleNanos;
        if (left <= 0) {
            log.debug("closing idle connection from {}", ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        idleTimer = ctx.executor().schedule(this::checkIdle, left, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (current != null && current.requestComplete() || !waiting.isEmpty()) {
            waiting.add(msg); // a pipelined request: its turn comes when the current one is answered
            if (waiting.size() >= MAX_WAITING) {
                ctx.channel().config().setAutoRead(false); // enough queued: read on once they are served
            }
            return;
        }
        handle(msg);
    }

    private void handle(Object msg) {
        if (msg instanceof HttpRequest) {
            HttpRequest request = (HttpRequest) msg;
            if (request.decoderResult().isFailure()) {
                rejectMalformed(request.decoderResult().cause());
                ReferenceCountUtil.release(msg);
                return;
            }
            current = new Exchange(this, ctx.channel(), request, proxy.config(), proxy.sessions());
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

    private void rejectMalformed(Throwable cause) {
        HttpResponseStatus status = cause instanceof TooLongHttpHeaderException
                ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                : cause instanceof TooLongFrameException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                : HttpResponseStatus.BAD_REQUEST;
        if (cause instanceof TooLongHttpHeaderException) {
            proxy.config().observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.HEADER_SIZE,
                    Direction.CLIENT_TO_SERVER, -1);
        }
        log.info("malformed HTTP request from {}: {}: answered {}", ctx.channel().remoteAddress(), cause.getMessage(),
                status.code());
        FullHttpResponse response = HttpMessages.jsonRpcError(ctx.alloc(), HttpVersion.HTTP_1_1, status, null,
                "mcp-chaos: malformed HTTP request: " + cause.getMessage());
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /** The exchange is answered: serve the next request, or close. */
    void exchangeDone(Exchange exchange, boolean keepAlive) {
        if (exchange != current) {
            return;
        }
        current = null;
        lastActive = ctx.executor().ticker().nanoTime();
        if (exchange.leftUpstreamIdle()) {
            upstreamBusy = false;
        }
        if (!keepAlive) {
            ctx.channel().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        while (!waiting.isEmpty() && (current == null || !current.requestComplete())) {
            handle(waiting.poll());
        }
        if (waiting.size() < MAX_WAITING && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
    }

    /** The exchange's request went upstream: it is answered 504 unless its response head comes within the timeout. On the loop. */
    void startResponseTimer(Exchange exchange, long timeoutMillis) {
        awaitingResponse = exchange;
        responseDeadline = ctx.executor().ticker().nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        if (responseTimer != null && responseDeadline - responseTimerDue < 0) {
            // A shorter deadline than the one the task sleeps to (the body timeout after the
            // response timeout): the task must wake up sooner.
            responseTimer.cancel(false);
            responseTimer = null;
        }
        if (responseTimer == null && ctx.channel().isActive()) {
            responseTimerDue = responseDeadline;
            responseTimer = ctx.executor().schedule(this::checkResponseDeadline, timeoutMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** The exchange got its response head, or ended. On the loop. */
    void stopResponseTimer(Exchange exchange) {
        if (awaitingResponse == exchange) {
            awaitingResponse = null;
        }
    }

    private void checkResponseDeadline() {
        responseTimer = null;
        Exchange exchange = awaitingResponse;
        if (exchange == null) {
            return;
        }
        long left = responseDeadline - ctx.executor().ticker().nanoTime();
        if (left > 0) { // a later request moved the deadline since this task was scheduled
            responseTimerDue = responseDeadline;
            responseTimer = ctx.executor().schedule(this::checkResponseDeadline, left, TimeUnit.NANOSECONDS);
            return;
        }
        awaitingResponse = null;
        exchange.onResponseTimeout();
    }

    /** Sends a request head, a full request or a piece of a body upstream, connecting first if needed. */
    void sendUpstream(Exchange exchange, HttpObject message) {
        ChannelFuture ready = upstreamReady();
        upstreamBusy = true;
        if (ready.isDone()) {
            writeUpstream(exchange, ready, message);
        } else {
            ready.addListener(f -> writeUpstream(exchange, ready, message));
        }
    }

    private void writeUpstream(Exchange exchange, ChannelFuture ready, HttpObject message) {
        if (!ready.isSuccess()) {
            ReferenceCountUtil.release(message);
            exchange.onUpstreamUnreachable(ready.cause());
            return;
        }
        // No promise and listener per write: a write that fails reaches BackendHandler's
        // exceptionCaught, and one that fails on the socket closes the connection (channelInactive).
        Channel channel = ready.channel();
        channel.writeAndFlush(message, channel.voidPromise());
    }

    /** A duplicate of a request goes on a connection of its own; its answer is read and thrown away. */
    void sendShadow(HttpObject request) {
        connect(new ShadowHandler()).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                f.channel().writeAndFlush(request);
            } else {
                ReferenceCountUtil.release(request);
            }
        });
    }

    private ChannelFuture upstreamReady() {
        if (upstreamReady == null || upstreamReady.isDone() && (!upstreamReady.isSuccess() || !upstream.isActive())) {
            Channel pooled = proxy.upstreamPool().acquire(ctx.channel().eventLoop());
            if (pooled != null) {
                pooled.pipeline().get(BackendHandler.class).frontend = this;
                upstream = pooled;
                upstreamReady = pooled.newSucceededFuture();
                pooled.config().setAutoRead(ctx.channel().isWritable());
            } else {
                BackendHandler backend = new BackendHandler(proxy.upstreamPool(), this);
                upstreamReady = connect(backend);
                upstream = upstreamReady.channel();
            }
            upstreamBusy = false;
        }
        return upstreamReady;
    }

    private ChannelFuture connect(ChannelInboundHandlerAdapter handler) {
        HttpProxyConfig config = proxy.config();
        Bootstrap bootstrap = new Bootstrap()
                .group(ctx.channel().eventLoop())
                .channel(proxy.socketChannelType())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, config.connectTimeoutMillis)
                .option(ChannelOption.TCP_NODELAY, true)
                // The proxy's allocator, as the client connection has: Netty's default (adaptive)
                // cost the request's encoding and the response's read 8 % more CPU per request.
                .option(ChannelOption.ALLOCATOR, ctx.alloc())
                .option(ChannelOption.RCVBUF_ALLOCATOR, UPSTREAM_READS)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (config.upstreamTls != null) {
                            ch.pipeline().addLast(config.upstreamTls.newHandler(ch.alloc(),
                                    config.upstream.getHostString(), config.upstream.getPort()));
                        }
                        ch.pipeline().addLast(new HttpClientCodec(4096, config.maxHeaderSize, 64 * 1024));
                        ch.pipeline().addLast(handler);
                    }
                });
        return bootstrap.connect(config.upstream);
    }

    /** Closes the upstream connection (its state is unknown after a timeout or an injected answer). */
    void closeUpstream() {
        if (upstream != null) {
            upstream.close();
        }
        upstreamReady = null;
        upstream = null;
    }

    /** Called by the backend for what the upstream sends. */
    void onUpstreamMessage(Channel from, Object msg) {
        if (from != upstream || current == null) {
            ReferenceCountUtil.release(msg);
            return;
        }
        current.onUpstream(msg);
    }

    /** Called by the backend when writing to or reading from the upstream failed other than on its socket. */
    void onUpstreamError(Channel from, Throwable cause) {
        if (from == upstream && current != null) {
            current.onUpstreamUnreachable(cause);
        }
    }

    void onUpstreamInactive(Channel from) {
        if (from != upstream) {
            return;
        }
        upstreamReady = null;
        upstream = null;
        if (current != null) {
            current.onUpstreamClosed();
        }
    }

    /** Closes the client's connection (a disconnect fault). */
    void closeClient() {
        ctx.close();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        // Read the upstream only as fast as the client drains.
        if (upstream != null) {
            upstream.config().setAutoRead(ctx.channel().isWritable());
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (responseTimer != null) {
            responseTimer.cancel(false);
            responseTimer = null;
        }
        if (idleTimer != null) {
            idleTimer.cancel(false);
            idleTimer = null;
        }
        awaitingResponse = null;
        // The upstream first: whatever else fails here, a client that left must not leave its
        // upstream stream open.
        if (upstream != null) {
            if (current == null && !upstreamBusy && upstreamReady.isDone() && upstreamReady.isSuccess()
                    && upstream.isActive()) {
                upstream.pipeline().get(BackendHandler.class).frontend = null;
                proxy.upstreamPool().release(upstream);
            } else {
                upstream.close();
            }
            upstream = null;
            upstreamReady = null;
        }
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

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (isOutOfMemory(cause)) {
            // Closing the connection lets go of everything it holds (channelInactive): the proxy
            // goes on serving the others, and the operator learns why this one was cut.
            log.error("out of memory serving the client connection {} ({} bytes of bodies held, ceiling {}): closing it",
                    ctx.channel().remoteAddress(), proxy.buffers().held(), proxy.buffers().limit(), cause);
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

    /** Reads an upstream connection: for the {@link FrontendHandler} that holds it, or idle in the pool. */
    private static final class BackendHandler extends ChannelInboundHandlerAdapter {
        private final UpstreamPool pool;
        /** The client connection this upstream connection serves; null while it waits in the pool. */
        private FrontendHandler frontend;

        BackendHandler(UpstreamPool pool, FrontendHandler frontend) {
            this.pool = pool;
            this.frontend = frontend;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (frontend == null) {
                // Nothing was asked on an idle connection: whatever comes makes it unusable.
                ReferenceCountUtil.release(msg);
                pool.remove(ctx.channel());
                ctx.close();
                return;
            }
            frontend.onUpstreamMessage(ctx.channel(), msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (frontend == null) {
                pool.remove(ctx.channel());
            } else {
                frontend.onUpstreamInactive(ctx.channel());
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (isOutOfMemory(cause)) {
                log.error("out of memory reading the upstream connection: closing it", cause);
            } else {
                log.debug("upstream connection failed: {}", cause.toString());
            }
            if (frontend != null && !(cause instanceof IOException)) {
                // Not the socket (which closing reports as the upstream's close): a request that
                // could not be encoded, say. The exchange answers 502 with the cause.
                frontend.onUpstreamError(ctx.channel(), cause);
            }
            ctx.close();
        }
    }

    /** Reads and discards the answer to a duplicated request, then closes. */
    private static final class ShadowHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) {
                ctx.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
