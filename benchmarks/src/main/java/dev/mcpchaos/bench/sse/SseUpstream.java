package dev.mcpchaos.bench.sse;

import dev.mcpchaos.core.transport.NettyTransports;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A minimal SSE upstream for the streaming benchmarks, on 127.0.0.1 only:
 *
 * <ul>
 *   <li>{@code GET /stream?events=N&size=S}: {@code 200 text/event-stream} with N events of
 *       {@code event: message\ndata: <a notifications/message of about S bytes>\n\n}, written as
 *       fast as the connection takes them (it waits while the channel is not writable), then the
 *       end of the response (N from 1 to 10,000,000; S from 100 to 16 MiB);</li>
 *   <li>{@code GET /hold}: {@code 200 text/event-stream}, one comment {@code : open}, then nothing
 *       until the client leaves (or a broadcast): an idle MCP GET stream;</li>
 *   <li>{@code POST /broadcast}: writes one {@code notifications/message} event to every held
 *       stream and answers {@code {"streams":N}}, N the streams it was written to;</li>
 *   <li>anything else: a {@code 200} JSON-RPC result.</li>
 * </ul>
 *
 * Usage: {@code SseUpstream PORT [THREADS]}; prints {@code listening on 127.0.0.1:PORT} and
 * every 10 s the number of open /hold streams; runs until killed.
 */
public final class SseUpstream {

    private static final AtomicInteger HELD = new AtomicInteger();
    /** The held streams, for a broadcast; a closed channel leaves the group by itself. */
    private static final ChannelGroup HOLDING = new DefaultChannelGroup("held", GlobalEventExecutor.INSTANCE);
    static final String BROADCAST_EVENT = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
            + "\"params\":{\"level\":\"info\",\"data\":\"broadcast\"}}\n\n";

    private SseUpstream() {
    }

    /** One event of about {@code size} bytes, JSON-RPC data on one line. */
    static byte[] event(int size) {
        String head = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"";
        String tail = "\"}}\n\n";
        int pad = Math.max(0, size - head.length() - tail.length());
        StringBuilder b = new StringBuilder(size + 64).append(head);
        for (int i = 0; i < pad; i++) {
            b.append((char) ('a' + i % 26));
        }
        return b.append(tail).toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Writes a stream's events in blocks of about 256 KiB, pausing while the channel is not writable. */
    private static final class Streamer {
        final Channel channel;
        final ByteBuf block;
        final int eventLength;
        final int eventsPerBlock;
        long remaining;

        Streamer(Channel channel, long events, int size) {
            this.channel = channel;
            byte[] one = event(size);
            eventsPerBlock = Math.max(1, (256 * 1024) / one.length);
            ByteBuf b = Unpooled.directBuffer(eventsPerBlock * one.length);
            for (int i = 0; i < eventsPerBlock; i++) {
                b.writeBytes(one);
            }
            block = b;
            eventLength = one.length;
            remaining = events;
        }

        void pump() {
            while (remaining > 0 && channel.isWritable()) {
                int n = (int) Math.min(eventsPerBlock, remaining);
                ByteBuf part = block.retainedSlice(0, n * eventLength);
                remaining -= n;
                channel.write(new DefaultHttpContent(part));
                if (remaining == 0) {
                    channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    block.release();
                    return;
                }
            }
            channel.flush();
        }
    }

    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        Streamer streamer;
        boolean holding;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            QueryStringDecoder query = new QueryStringDecoder(request.uri());
            if (request.method() == HttpMethod.GET && query.path().endsWith("/stream")) {
                long events = Math.max(1, Math.min(10_000_000L, Long.parseLong(param(query, "events", "1000"))));
                int size = Math.max(100, Math.min(16 * 1024 * 1024, Integer.parseInt(param(query, "size", "200"))));
                ctx.write(sseHead());
                streamer = new Streamer(ctx.channel(), events, size);
                streamer.pump();
            } else if (request.method() == HttpMethod.GET && query.path().endsWith("/hold")) {
                holding = true;
                HELD.incrementAndGet();
                ctx.write(sseHead());
                ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(": open\n\n", StandardCharsets.US_ASCII)));
                HOLDING.add(ctx.channel());
            } else if (request.method() == HttpMethod.POST && query.path().endsWith("/broadcast")) {
                int streams = HOLDING.size();
                HOLDING.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(BROADCAST_EVENT, StandardCharsets.US_ASCII)));
                answer(ctx, request, "{\"streams\":" + streams + "}");
            } else {
                answer(ctx, request, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
            }
        }

        private static void answer(ChannelHandlerContext ctx, FullHttpRequest request, String json) {
            byte[] body = json.getBytes(StandardCharsets.US_ASCII);
            DefaultFullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(body));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE : ChannelFutureListener.CLOSE);
        }

        private static HttpResponse sseHead() {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                    .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                    .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            return head;
        }

        private static String param(QueryStringDecoder query, String name, String fallback) {
            List<String> values = query.parameters().get(name);
            return values == null || values.isEmpty() ? fallback : values.get(0);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (streamer != null && ctx.channel().isWritable()) {
                streamer.pump();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (holding) {
                HELD.decrementAndGet();
                holding = false;
            }
            if (streamer != null && streamer.remaining > 0) {
                streamer.remaining = 0;
                streamer.block.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        EventLoopGroup group = NettyTransports.newEventLoopGroup(threads, "sse-upstream");
        Channel server = new ServerBootstrap().group(group).channel(NettyTransports.serverChannelType())
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1024 * 1024), new Handler());
                    }
                })
                .bind("127.0.0.1", port).sync().channel();
        System.err.println("listening on 127.0.0.1:" + port);
        while (server.isOpen()) {
            Thread.sleep(10_000);
            System.err.println("open /hold streams: " + HELD.get());
        }
    }
}
