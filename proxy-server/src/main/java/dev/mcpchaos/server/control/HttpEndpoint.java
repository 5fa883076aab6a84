package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.mcpchaos.core.transport.NettyTransports;
import io.micrometer.core.instrument.Counter;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The small hardened HTTP/1.1 server under the control API and the operations listener: Netty on
 * an event loop of its own, apart from the proxy's, so that no client can hold it for the others.
 * Every connection is read as its bytes come, each phase of a request has a deadline, and what a
 * request gets is up to its {@link Handler}, which answers on the event loop, one request at a
 * time (each is short and none waits on anything). Limits:
 * <ul>
 *   <li>request head: complete within the head timeout of its first byte, else 408 and the
 *       connection is closed; request line 8 KiB (414), header block 16 KiB (431); a request the
 *       decoder refuses is answered 400 and the connection is closed;</li>
 *   <li>request body: complete within the body timeout of the end of the head, else 408 and a
 *       close; at most the body limit (413, the rest read and dropped);</li>
 *   <li>a connection with nothing of a request read is closed after the idle timeout, without an
 *       answer;</li>
 *   <li>a client that stops reading its answers: while they pile up past 64 KiB the connection
 *       reads no more of its requests, and it is closed when that lasts the body timeout, or when
 *       it sends more than 16 requests ahead of unread answers.</li>
 * </ul>
 * Each 408 and each close for a client that does not read is counted on the counter given for
 * its phase ({@code head}, {@code body}, {@code send}).
 */
final class HttpEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

    static final int MAX_REQUEST_LINE_BYTES = 8 * 1024;
    static final int MAX_HEADER_BYTES = 16 * 1024;
    /** Requests read ahead of their answers while a client does not read; more close the connection. */
    private static final int MAX_REQUESTS_WAITING = 16;
    static final String JSON_TYPE = "application/json";
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    /** What a server built on this endpoint does with requests. Called on the endpoint's event loop. */
    interface Handler {
        /** The answer to a request that was read whole and decoded; the endpoint releases the request. */
        FullHttpResponse handle(FullHttpRequest request, String peer);

        /**
         * Whether a request is answered from its head alone (a refusal, such as a 401): its body
         * is then read and dropped, never held, and {@link #handle} gets the head with an empty body.
         */
        default boolean answerFromHead(HttpRequest head) {
            return false;
        }
    }

    /** The per-phase counters of closed connections, for {@code mcp.chaos.*.timeouts}-style meters. */
    record TimeoutCounters(Counter head, Counter body, Counter send) {
    }

    private final String name;
    private final Handler handler;
    private final int maxBodyBytes;
    private final long headTimeoutNanos;
    private final long bodyTimeoutNanos;
    private final long idleTimeoutNanos;
    private final Counter headTimeouts;
    private final Counter bodyTimeouts;
    private final Counter sendTimeouts;
    private final EventLoopGroup group;
    private final Channel serverChannel;

    /**
     * Binds {@code address} and starts serving.
     *
     * @param name what it serves, for its thread's name, logs and errors ("control", "operations")
     * @throws IOException when the address cannot be bound; the message names the address
     */
    HttpEndpoint(String name, InetSocketAddress address, Handler handler, int maxBodyBytes, Duration headTimeout,
                 Duration bodyTimeout, Duration idleTimeout, TimeoutCounters timeouts) throws IOException {
        this.name = Objects.requireNonNull(name, "name");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.maxBodyBytes = maxBodyBytes;
        this.headTimeoutNanos = headTimeout.toNanos();
        this.bodyTimeoutNanos = bodyTimeout.toNanos();
        this.idleTimeoutNanos = idleTimeout.toNanos();
        this.headTimeouts = timeouts.head();
        this.bodyTimeouts = timeouts.body();
        this.sendTimeouts = timeouts.send();
        // One loop is enough: no request waits on anything, and a slow client costs it nothing.
        this.group = NettyTransports.newEventLoopGroup(1, "mcp-chaos-" + name);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(NettyTransports.serverChannelType())
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        new Connection().install(ch);
                    }
                });
        try {
            serverChannel = bootstrap.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            throw new IOException("cannot listen for " + name + " requests on " + address.getHostString() + ":"
                    + address.getPort() + ": " + e.getMessage(), e);
        }
    }

    /** The address it listens on (the real port when 0 was asked for). */
    InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** Stops listening and closes every connection at once. */
    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** {@code {"error": message}}. */
    static String errorJson(String message) {
        return JSON.createObjectNode().put("error", message).toString();
    }

    /** A JSON error answer. */
    static FullHttpResponse error(int status, String message, boolean head) {
        return response(status, JSON_TYPE, errorJson(message), head);
    }

    /** An answer with a body (none for HEAD and 204, whose length is still said for HEAD). */
    static FullHttpResponse response(int status, String contentType, String body, boolean head) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        boolean noBody = head || status == 204;
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(status), noBody ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        if (status != 204) {
            // A HEAD answer says how long the GET's body would be.
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        }
        return response;
    }

    /** The answer to a request the decoder could not read: its status, and the connection is closed. */
    static FullHttpResponse malformed(FullHttpRequest http) {
        Throwable cause = http.decoderResult().cause();
        int status;
        String message;
        if (cause instanceof TooLongHttpLineException) {
            status = 414;
            message = "the request line is longer than " + MAX_REQUEST_LINE_BYTES + " bytes";
        } else if (cause instanceof TooLongHttpHeaderException) {
            status = 431;
            message = "the request's header block is larger than " + MAX_HEADER_BYTES + " bytes";
        } else if (cause instanceof TooLongFrameException) {
            status = 400;
            message = "the request is too large to read: " + cause.getMessage();
        } else {
            status = 400;
            message = "the request is not valid HTTP/1.1: " + cause;
        }
        FullHttpResponse response = error(status, message, false);
        HttpUtil.setKeepAlive(response, false);
        return response;
    }

    /** {@code 10s}, {@code 1.5s}, {@code 250ms}. */
    static String human(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis >= 1000 ? millis / 1000.0 + "s" : millis + "ms";
    }

    /**
     * One client connection: the deadline of the phase it is in, and its answers in order. Its
     * handlers run on the connection's event loop only.
     */
    private final class Connection {
        /** What the connection waits for: a request to begin, the rest of its head, or of its body. */
        private enum Phase { IDLE, HEAD, BODY }

        private Channel channel;
        private Phase phase = Phase.IDLE;
        private ScheduledFuture<?> deadline;
        private ScheduledFuture<?> sendDeadline;
        /** Requests read while the client was not reading its answers; answered once it does. */
        private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
        /** The request being read was answered already (401, 413): the rest of its body is dropped. */
        private boolean answeredEarly;
        private String peer;

        void install(SocketChannel ch) {
            channel = ch;
            peer = ch.remoteAddress() == null ? "?" : ch.remoteAddress().getAddress().getHostAddress();
            ch.pipeline().addLast(new FirstByte());
            ch.pipeline().addLast(new HttpServerCodec(MAX_REQUEST_LINE_BYTES, MAX_HEADER_BYTES, 64 * 1024));
            ch.pipeline().addLast(new Deadlines());
            ch.pipeline().addLast(new Authorize());
            ch.pipeline().addLast(new BodyLimit());
            ch.pipeline().addLast(new Answers());
            ch.closeFuture().addListener(f -> {
                cancel();
                cancelSend();
                waiting.forEach(ReferenceCountUtil::release);
                waiting.clear();
            });
            enter(Phase.IDLE);
        }

        private void enter(Phase next) {
            phase = next;
            cancel();
            long nanos = switch (next) {
                case IDLE -> idleTimeoutNanos;
                case HEAD -> headTimeoutNanos;
                case BODY -> bodyTimeoutNanos;
            };
            deadline = channel.eventLoop().schedule(() -> expire(next), nanos, TimeUnit.NANOSECONDS);
        }

        private void cancel() {
            if (deadline != null) {
                deadline.cancel(false);
                deadline = null;
            }
        }

        private void cancelSend() {
            if (sendDeadline != null) {
                sendDeadline.cancel(false);
                sendDeadline = null;
            }
        }

        private void expire(Phase expired) {
            if (phase != expired || !channel.isActive()) {
                return;
            }
            deadline = null;
            if (expired == Phase.IDLE) {
                channel.close(); // nothing of a request was read: nothing to answer
                return;
            }
            if (expired == Phase.BODY && answeredEarly) {
                bodyTimeouts.increment();
                log.debug("{} connection from {} closed: the body of a request answered already was not "
                        + "complete after {}", name, peer, human(Duration.ofNanos(bodyTimeoutNanos)));
                channel.close(); // it has its answer; a 408 after it would answer one request twice
                return;
            }
            Duration limit = Duration.ofNanos(expired == Phase.HEAD ? headTimeoutNanos : bodyTimeoutNanos);
            String message = expired == Phase.HEAD
                    ? "the request head was not complete " + human(limit) + " after its first byte (expected: the "
                    + "whole head within " + human(limit) + ")"
                    : "the request body was not complete " + human(limit) + " after the head (expected: the whole "
                    + "body within " + human(limit) + ")";
            (expired == Phase.HEAD ? headTimeouts : bodyTimeouts).increment();
            log.debug("{} connection from {} closed with 408: {}", name, peer, message);
            channel.config().setAutoRead(false);
            // Straight to the socket, under the codec: the decoder is mid-request, and this ends it.
            byte[] body = errorJson(message).getBytes(StandardCharsets.UTF_8);
            String head = "HTTP/1.1 408 Request Timeout\r\nContent-Type: " + JSON_TYPE + "\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n";
            ByteBuf out = channel.alloc().buffer(head.length() + body.length);
            out.writeCharSequence(head, StandardCharsets.US_ASCII);
            out.writeBytes(body);
            channel.pipeline().firstContext().writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
        }

        /** Before the codec: the first byte of a request starts the head's deadline. */
        private final class FirstByte extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (phase == Phase.IDLE && msg instanceof ByteBuf bytes && bytes.isReadable()) {
                    enter(Phase.HEAD);
                }
                ctx.fireChannelRead(msg);
            }
        }

        /** After the codec: the end of the head starts the body's deadline, the end of the body ends it. */
        private final class Deadlines extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest) {
                    enter(Phase.BODY);
                }
                if (msg instanceof LastHttpContent) {
                    enter(Phase.IDLE);
                }
                ctx.fireChannelRead(msg);
                if (msg instanceof LastHttpContent) {
                    answeredEarly = false;
                }
            }
        }

        /**
         * Refuses a request without the token at its head, before any of its body is held: the
         * body is read and dropped, and the 401 takes its turn among the answers as a request
         * with no body.
         */
        private final class Authorize extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest request && !(msg instanceof FullHttpRequest)
                        && request.decoderResult().isSuccess() && handler.answerFromHead(request)) {
                    answeredEarly = true;
                    ctx.fireChannelRead(new DefaultFullHttpRequest(request.protocolVersion(), request.method(),
                            request.uri(), Unpooled.EMPTY_BUFFER, request.headers(), EmptyHttpHeaders.INSTANCE));
                    return;
                }
                if (answeredEarly && msg instanceof HttpContent) {
                    ReferenceCountUtil.release(msg);
                    return;
                }
                ctx.fireChannelRead(msg);
            }
        }

        /** The aggregator, with the endpoint's own 413: JSON, and the rest of the body read and dropped. */
        private final class BodyLimit extends HttpObjectAggregator {
            BodyLimit() {
                super(maxBodyBytes);
            }

            @Override
            protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
                String method = oversized instanceof HttpRequest r ? r.method().name() : "?";
                String uri = oversized instanceof HttpRequest r ? r.uri() : "?";
                FullHttpResponse response = error(413, method + " " + uri + ": the body is larger than "
                        + maxBodyBytes + " bytes", false);
                // Kept open, the rest of the body is read and dropped (within the body's deadline),
                // so that a client that sends all before it reads still gets this answer.
                boolean keepAlive = !(oversized instanceof FullHttpRequest) && HttpUtil.isKeepAlive(oversized);
                answeredEarly = true;
                HttpUtil.setKeepAlive(response, keepAlive);
                ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
                        : ChannelFutureListener.CLOSE);
            }
        }

        /** Answers each request in turn; holds further ones back while the client does not read. */
        private final class Answers extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (!(msg instanceof FullHttpRequest request)) {
                    ReferenceCountUtil.release(msg);
                    return;
                }
                if (!waiting.isEmpty() || !channel.isWritable()) {
                    if (waiting.size() >= MAX_REQUESTS_WAITING) {
                        request.release();
                        sendTimeouts.increment(); // the same cause: it does not read its answers
                        log.debug("{} connection from {} closed: {} requests sent ahead of their answers, "
                                + "which it does not read", name, peer, MAX_REQUESTS_WAITING);
                        channel.close();
                        return;
                    }
                    waiting.add(request);
                    holdBack();
                    return;
                }
                answer(ctx, request);
            }

            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                if (channel.isWritable()) {
                    cancelSend();
                    while (!waiting.isEmpty() && channel.isWritable()) {
                        answer(ctx, waiting.poll());
                    }
                    if (waiting.isEmpty() && channel.isWritable() && channel.isActive()) {
                        channel.config().setAutoRead(true);
                    } else {
                        holdBack();
                    }
                }
                ctx.fireChannelWritabilityChanged();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                // A reset by a client that went away, mostly: its business, not a warning.
                log.debug("{} connection from {} failed", name, peer, cause);
                ctx.close();
            }

            private void answer(ChannelHandlerContext ctx, FullHttpRequest request) {
                FullHttpResponse response;
                boolean keepAlive;
                try {
                    response = request.decoderResult().isSuccess() ? handler.handle(request, peer) : malformed(request);
                    keepAlive = request.decoderResult().isSuccess() && HttpUtil.isKeepAlive(request)
                            && HttpUtil.isKeepAlive(response);
                } finally {
                    request.release();
                }
                HttpUtil.setKeepAlive(response, keepAlive);
                if (keepAlive && request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                    // An HTTP/1.0 client keeps the connection only when told so.
                    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                }
                if (!keepAlive) {
                    channel.config().setAutoRead(false);
                    ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
                    return;
                }
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
                if (!channel.isWritable()) {
                    holdBack();
                }
            }

            /** Reads no more of a client that does not read, and gives it the body's deadline to start again. */
            private void holdBack() {
                channel.config().setAutoRead(false);
                if (sendDeadline == null) {
                    sendDeadline = channel.eventLoop().schedule(() -> {
                        sendDeadline = null;
                        if (channel.isActive() && (!channel.isWritable() || !waiting.isEmpty())) {
                            sendTimeouts.increment();
                            log.debug("{} connection from {} closed: it read none of its answers for {}", name,
                                    peer, human(Duration.ofNanos(bodyTimeoutNanos)));
                            channel.close();
                        }
                    }, bodyTimeoutNanos, TimeUnit.NANOSECONDS);
                }
            }
        }
    }
}
