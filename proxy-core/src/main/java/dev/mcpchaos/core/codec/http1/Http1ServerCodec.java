package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The server side of HTTP/1.1 (requests in, responses out) as Netty's {@code HttpServerCodec}
 * does it, with request heads read in place where {@link HeadScanner} vouches for them (see
 * {@link HeadFramingDecoder}) and {@link FlatHttpHeaders} written back in one copy (#16). What
 * {@code HttpServerCodec} does besides framing it does too: the methods of the requests in
 * flight, so that the answer to {@code HEAD} has no body and a {@code CONNECT}'s none of
 * {@code Transfer-Encoding}; a connection whose request had both {@code Transfer-Encoding} and
 * {@code Content-Length} closes after its response. No pipelining limit (the proxy's was none).
 */
public final class Http1ServerCodec extends CombinedChannelDuplexHandler<Http1ServerCodec.RequestDecoder,
        Http1ServerCodec.ResponseEncoder> {

    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    private boolean closeAfterResponse;

    /**
     * @param config       Netty's decoder's limits, for the heads it reads
     * @param maxHeadSize  the largest head the scanner accepts; no more than {@code config}'s
     *                     limits allow, so that it passes none Netty's decoder would refuse
     */
    public Http1ServerCodec(HttpDecoderConfig config, int maxHeadSize) {
        init(new RequestDecoder(config, maxHeadSize), new ResponseEncoder());
    }

    /** How many times heads were scanned: for tests. */
    long headScans() {
        return inboundHandler().scanner().scans();
    }

    /** Reads requests (see {@link Http1ServerCodec}). */
    final class RequestDecoder extends HeadFramingDecoder {
        private final HttpDecoderConfig config;

        RequestDecoder(HttpDecoderConfig config, int maxHeadSize) {
            super(HeadScanner.forRequests(maxHeadSize, 128), config.getMaxChunkSize());
            this.config = config;
        }

        @Override
        Fallback newFallback() {
            return new NettyRequests(config);
        }

        @Override
        HttpMessage newHead(HeadScanner scanner) {
            HttpMethod method = scanner.httpMethod();
            methods.add(method);
            return new DefaultHttpRequest(scanner.http11() ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_1_0, method,
                    scanner.target(), FlatHttpHeaders.of(scanner));
        }

        @Override
        long bodyLength(HeadScanner scanner) {
            return scanner.contentLength();
        }
    }

    /** Netty's request decoder, keeping the same account of methods as the fast path. */
    private final class NettyRequests extends HttpRequestDecoder implements HeadFramingDecoder.Fallback {
        NettyRequests(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            int from = out.size();
            super.decode(ctx, buffer, out);
            for (int i = from; i < out.size(); i++) {
                if (out.get(i) instanceof HttpRequest) {
                    methods.add(((HttpRequest) out.get(i)).method());
                }
            }
        }

        @Override
        public void decodeOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
            decode(ctx, in, out);
        }

        @Override
        public void decodeLastOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
            decodeLast(ctx, in, out);
        }

        @Override
        public void release(ChannelHandlerContext ctx) throws Exception {
            handlerRemoved0(ctx);
        }

        @Override
        protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
            super.handleTransferEncodingChunkedWithContentLength(message);
            closeAfterResponse = true;
        }
    }

    /** Writes responses (see {@link Http1ServerCodec}). */
    final class ResponseEncoder extends HttpResponseEncoder {
        private HttpMethod method;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (closeAfterResponse && msg instanceof LastHttpContent) {
                closeAfterResponse = false;
                promise = promise.unvoid().addListener(ChannelFutureListener.CLOSE);
            }
            super.write(ctx, msg, promise);
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse msg) {
            if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(msg); // not the answer its request waits for
            }
            method = methods.poll();
            return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(msg);
        }

        @Override
        protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
            if (!isAlwaysEmpty && HttpMethod.CONNECT.equals(method)
                    && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
                msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING); // RFC 9110 9.3.6
                return;
            }
            super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
        }

        @Override
        protected void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
            if (headers instanceof FlatHttpHeaders) {
                ((FlatHttpHeaders) headers).encodeTo(buf);
            } else {
                super.encodeHeaders(headers, buf);
            }
        }
    }
}
