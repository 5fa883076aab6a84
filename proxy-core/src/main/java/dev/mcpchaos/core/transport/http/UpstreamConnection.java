package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.codec.http1.Http1ClientCodec;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * The proxy's {@link UpstreamLink}: one upstream connection per client connection, on the
 * client connection's event loop (the HexDumpProxy shape), made on its first request or taken
 * from the loop's {@link UpstreamPool}, and kept while both live. When the client's goes away,
 * an idle and healthy upstream connection goes back to the pool; any other is closed.
 *
 * <p>Reads of up to {@value #MAX_UPSTREAM_READ} bytes, at most 4 per turn of the loop; the
 * connection is not read while the client connection is not writable.
 */
final class UpstreamConnection implements UpstreamLink {

    private static final Logger log = LoggerFactory.getLogger(UpstreamConnection.class);

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

    private final Channel client;
    private final Listener listener;
    private final HttpProxyConfig config;
    private final UpstreamPool pool;
    private final Class<? extends SocketChannel> channelType;
    /** Each upstream connection made is handed here, so that the proxy closes it with itself. */
    private final Consumer<Channel> track;
    private Channel upstream;
    private ChannelFuture upstreamReady;
    /**
     * A request went on the upstream connection and its response has not all come back (or the
     * connection's state is unknown): the connection may not serve another client connection.
     */
    private boolean busy;

    UpstreamConnection(Channel client, Listener listener, HttpProxyConfig config, UpstreamPool pool,
                       Class<? extends SocketChannel> channelType, Consumer<Channel> track) {
        this.client = client;
        this.listener = listener;
        this.config = config;
        this.pool = pool;
        this.channelType = channelType;
        this.track = track;
    }

    @Override
    public void send(Exchange exchange, HttpObject message) {
        ChannelFuture ready = upstreamReady();
        busy = true;
        if (ready.isDone()) {
            write(exchange, ready, message);
        } else {
            // On this loop (the upstream connection's too); a connection whose registration failed
            // may complete elsewhere, and the exchange is touched on its own loop only.
            ready.addListener(f -> {
                if (client.eventLoop().inEventLoop()) {
                    write(exchange, ready, message);
                } else {
                    try {
                        client.eventLoop().execute(() -> write(exchange, ready, message));
                    } catch (RejectedExecutionException e) {
                        ReferenceCountUtil.release(message); // shutting down: nobody to answer
                    }
                }
            });
        }
    }

    private void write(Exchange exchange, ChannelFuture ready, HttpObject message) {
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

    @Override
    public void sendShadow(HttpObject request) {
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
            Channel pooled = pool.acquire(client.eventLoop());
            if (pooled != null) {
                pooled.pipeline().get(BackendHandler.class).owner = this;
                upstream = pooled;
                upstreamReady = pooled.newSucceededFuture();
                pooled.config().setAutoRead(client.isWritable());
            } else {
                BackendHandler backend = new BackendHandler(pool, this);
                upstreamReady = connect(backend);
                upstream = upstreamReady.channel();
            }
            busy = false;
        }
        return upstreamReady;
    }

    private ChannelFuture connect(ChannelInboundHandlerAdapter handler) {
        Bootstrap bootstrap = new Bootstrap()
                .group(client.eventLoop())
                .channel(channelType)
                // TCP_NODELAY is both transports' default: setting it again is a system call more.
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, config.settings.connectTimeoutMillis)
                // The proxy's allocator, as the client connection has: Netty's default (adaptive)
                // cost the request's encoding and the response's read 8 % more CPU per request.
                .option(ChannelOption.ALLOCATOR, client.alloc())
                .option(ChannelOption.RCVBUF_ALLOCATOR, UPSTREAM_READS)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        track.accept(ch);
                        // Named, as the client connection's handlers are (see HttpProxy.initClientPipeline).
                        if (config.upstreamTls != null) {
                            ch.pipeline().addLast("tls", config.upstreamTls.newHandler(ch.alloc(),
                                    config.upstream.getHostString(), config.upstream.getPort()));
                        }
                        ch.pipeline().addLast("http", new Http1ClientCodec(new HttpDecoderConfig().setMaxInitialLineLength(4096)
                                .setMaxHeaderSize(config.settings.maxHeaderSize()).setMaxChunkSize(64 * 1024),
                                Math.min(4096, config.settings.maxHeaderSize())));
                        ch.pipeline().addLast("http10-keep-alive", HTTP10_KEEP_ALIVE);
                        ch.pipeline().addLast("backend", handler);
                    }
                });
        return bootstrap.connect(config.upstream);
    }

    @Override
    public void close() {
        if (upstream != null && !(upstreamReady.isDone() && !upstreamReady.isSuccess())) {
            upstream.close(); // one that failed to connect is closed already, and may have no event loop to close on
        }
        upstreamReady = null;
        upstream = null;
    }

    @Override
    public boolean busy() {
        return busy;
    }

    @Override
    public void idleAgain() {
        busy = false;
    }

    @Override
    public void clientWritable(boolean writable) {
        if (upstream != null) {
            upstream.config().setAutoRead(writable);
        }
    }

    @Override
    public void release(boolean exchangeInProgress) {
        Channel channel = upstream;
        ChannelFuture ready = upstreamReady;
        upstream = null;
        upstreamReady = null;
        if (channel == null) {
            return;
        }
        if (ready.isDone() && !ready.isSuccess()) {
            return; // a connection that failed is closed already (and may never have been registered)
        }
        if (!exchangeInProgress && !busy && ready.isDone() && channel.isActive()) {
            channel.pipeline().get(BackendHandler.class).owner = null;
            pool.release(channel);
        } else {
            channel.close();
        }
    }

    private void onMessage(Channel from, Object msg) {
        if (from != upstream) {
            ReferenceCountUtil.release(msg);
            return;
        }
        listener.onUpstreamMessage(msg);
    }

    private void onError(Channel from, Throwable cause) {
        if (from == upstream) {
            listener.onUpstreamError(cause);
        }
    }

    private void onInactive(Channel from) {
        if (from != upstream) {
            return;
        }
        upstreamReady = null;
        upstream = null;
        listener.onUpstreamClosed();
    }

    /** Reads an upstream connection: for the {@link UpstreamConnection} that holds it, or idle in the pool. */
    private static final class BackendHandler extends ChannelInboundHandlerAdapter {
        private final UpstreamPool pool;
        /** The client connection's upstream side this connection serves; null while it waits in the pool. */
        private UpstreamConnection owner;

        BackendHandler(UpstreamPool pool, UpstreamConnection owner) {
            this.pool = pool;
            this.owner = owner;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (owner == null) {
                // Nothing was asked on an idle connection: whatever comes makes it unusable.
                ReferenceCountUtil.release(msg);
                pool.remove(ctx.channel());
                ctx.close();
                return;
            }
            owner.onMessage(ctx.channel(), msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (owner == null) {
                pool.remove(ctx.channel());
            } else {
                owner.onInactive(ctx.channel());
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (FrontendHandler.isOutOfMemory(cause)) {
                log.error("out of memory reading the upstream connection: closing it", cause);
            } else {
                log.debug("upstream connection failed: {}", cause.toString());
            }
            if (owner != null && !(cause instanceof IOException)) {
                // Not the socket (which closing reports as the upstream's close): a request that
                // could not be encoded, say. The exchange answers 502 with the cause.
                owner.onError(ctx.channel(), cause);
            }
            ctx.close();
        }
    }

    /**
     * An HTTP/1.0 request goes upstream as the client sent it, but asking for keep-alive: the
     * upstream connection is the proxy's, pooled and reused (the client's own Connection header
     * is hop-by-hop and was removed). Without it an HTTP/1.0 upstream answer ends with a close,
     * and the client's connection would be closed after it.
     */
    private static final ChannelOutboundHandler HTTP10_KEEP_ALIVE = new Http10KeepAlive();

    @ChannelHandler.Sharable
    private static final class Http10KeepAlive extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof HttpRequest && ((HttpRequest) msg).protocolVersion() == HttpVersion.HTTP_1_0) {
                HttpHeaders headers = ((HttpRequest) msg).headers();
                if (!headers.contains(HttpHeaderNames.CONNECTION)) {
                    headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                }
            }
            ctx.write(msg, promise);
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
