package dev.mcpchaos.bench.sse;

import dev.mcpchaos.core.transport.NettyTransports;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opens many idle MCP GET SSE streams at once and holds them: {@code --streams N} connections
 * (at most 30,000), opened at {@code --connect-rate} per second (default 2,000), each sending
 * {@code GET URL} with {@code Accept: text/event-stream} and counted as open once the
 * {@code 200} and its first bytes have arrived. When all are open (or after 60 s), prints
 * {@code holding N streams}, holds them {@code --hold} seconds (default 20, at most 600), prints
 * {@code closing}, closes them and exits. With {@code --broadcast URL}, at the end of the hold it
 * POSTs to URL (the upstream's {@code /broadcast}, which writes one event to every stream it
 * holds) and waits up to 30 s for a {@code data:} line on every held stream, then prints
 * {@code message reached R of N held streams in T ms}. Bounded in count and time; 127.0.0.1 only.
 */
public final class HeldStreams {

    private static final io.netty.util.AttributeKey<Boolean> CONNECTED = io.netty.util.AttributeKey.valueOf("connected");

    private HeldStreams() {
    }

    public static void main(String[] args) throws Exception {
        String url = null;
        int streams = 1000;
        int connectRate = 2000;
        int holdSeconds = 20;
        String broadcastUrl = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--url": url = args[++i]; break;
                case "--streams": streams = Integer.parseInt(args[++i]); break;
                case "--connect-rate": connectRate = Integer.parseInt(args[++i]); break;
                case "--hold": holdSeconds = Integer.parseInt(args[++i]); break;
                case "--broadcast": broadcastUrl = args[++i]; break;
                default:
                    throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        if (url == null || streams < 1 || streams > 30_000 || connectRate < 1 || holdSeconds < 0 || holdSeconds > 600) {
            System.err.println("usage: HeldStreams --url http://127.0.0.1:PORT/hold [--streams 1..30000]"
                    + " [--connect-rate N/s] [--hold 0..600 s] [--broadcast http://127.0.0.1:PORT/broadcast]");
            System.exit(2);
        }
        URI uri = URI.create(url);
        String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        AtomicInteger open = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger connectFailed = new AtomicInteger();
        AtomicInteger badStatus = new AtomicInteger();
        AtomicInteger closedBeforeOpen = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> firstProblem = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicInteger closedEarly = new AtomicInteger();
        AtomicInteger reached = new AtomicInteger();
        EventLoopGroup group = NettyTransports.newEventLoopGroup(1, "held-streams");
        List<Channel> channels = new ArrayList<>(streams);
        long started = System.nanoTime();
        try {
            Bootstrap bootstrap = new Bootstrap().group(group).channel(NettyTransports.socketChannelType())
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpClientCodec(), new ChannelInboundHandlerAdapter() {
                                boolean ok;
                                boolean counted;
                                boolean gotMessage;

                                @Override
                                public void channelActive(ChannelHandlerContext ctx) {
                                    ctx.channel().attr(CONNECTED).set(Boolean.TRUE);
                                    DefaultFullHttpRequest get = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
                                    get.headers().set(HttpHeaderNames.HOST, uri.getHost() + ":" + uri.getPort())
                                            .set(HttpHeaderNames.ACCEPT, "text/event-stream");
                                    ctx.writeAndFlush(get);
                                }

                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    try {
                                        if (msg instanceof HttpResponse) {
                                            ok = ((HttpResponse) msg).status().code() == 200;
                                            if (!ok) {
                                                failed.incrementAndGet();
                                                badStatus.incrementAndGet();
                                                firstProblem.compareAndSet(null, "status " + ((HttpResponse) msg).status());
                                                counted = true;
                                                ctx.close();
                                            }
                                        }
                                        if (msg instanceof HttpContent && ok && !counted
                                                && ((HttpContent) msg).content().isReadable()) {
                                            counted = true;
                                            open.incrementAndGet();
                                        }
                                        if (msg instanceof HttpContent && ok && !gotMessage
                                                && ((HttpContent) msg).content().toString(StandardCharsets.US_ASCII).contains("data:")) {
                                            gotMessage = true; // the comment that opens a stream has none
                                            reached.incrementAndGet();
                                        }
                                    } finally {
                                        ReferenceCountUtil.release(msg);
                                    }
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    if (counted && ok) {
                                        closedEarly.incrementAndGet();
                                    } else if (!counted && ctx.channel().hasAttr(CONNECTED)) {
                                        counted = true;
                                        failed.incrementAndGet();
                                        closedBeforeOpen.incrementAndGet();
                                        firstProblem.compareAndSet(null, "closed before the stream opened");
                                    }
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    ctx.close();
                                }
                            });
                        }
                    });
            long intervalNanos = 1_000_000_000L / connectRate;
            for (int i = 0; i < streams; i++) {
                long due = started + i * intervalNanos;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                ChannelFuture f = bootstrap.connect(uri.getHost(), uri.getPort());
                f.addListener(done -> {
                    if (!done.isSuccess()) {
                        failed.incrementAndGet();
                        connectFailed.incrementAndGet();
                        firstProblem.compareAndSet(null, "connect: " + done.cause());
                    }
                });
                channels.add(f.channel());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (open.get() + failed.get() < streams && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("opened %d streams in %.1f s, %d failed (connect %d, status %d, closed before opening %d)%s%n",
                    open.get(), seconds, failed.get(), connectFailed.get(), badStatus.get(), closedBeforeOpen.get(),
                    firstProblem.get() == null ? "" : "; first: " + firstProblem.get());
            System.out.printf("holding %d streams%n", open.get() - closedEarly.get());
            System.out.flush();
            HttpClient broadcaster = broadcastUrl == null ? null : HttpClient.newHttpClient(); // set up outside the timing
            Thread.sleep(TimeUnit.SECONDS.toMillis(holdSeconds));
            if (broadcaster != null) {
                int held = open.get() - closedEarly.get();
                long sent = System.nanoTime();
                String answer = broadcaster.send(
                        HttpRequest.newBuilder(URI.create(broadcastUrl)).timeout(Duration.ofSeconds(10))
                                .POST(HttpRequest.BodyPublishers.noBody()).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                long until = sent + TimeUnit.SECONDS.toNanos(30);
                while (reached.get() < held && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                System.out.printf("message reached %d of %d held streams in %d ms (upstream wrote it to %s)%n",
                        reached.get(), held, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent), answer);
            }
            System.out.printf("closing: %d still open, %d closed by the other side while held%n",
                    open.get() - closedEarly.get(), closedEarly.get());
            System.out.flush();
        } finally {
            for (Channel c : channels) {
                c.close();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
