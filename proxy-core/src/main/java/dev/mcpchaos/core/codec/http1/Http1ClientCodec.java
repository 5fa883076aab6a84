package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The client side of HTTP/1.1 (requests out, responses in) as Netty's {@code HttpClientCodec}
 * does it, with response heads read in place where {@link HeadScanner} vouches for them (see
 * {@link HeadFramingDecoder}) and {@link FlatHttpHeaders} written back in one copy (#16). The
 * methods of the requests sent are kept, so that the answer to {@code HEAD} has no body whatever
 * its head says, and a {@code CONNECT}'s answer is Netty's to read.
 */
public final class Http1ClientCodec extends CombinedChannelDuplexHandler<Http1ClientCodec.ResponseDecoder,
        Http1ClientCodec.RequestEncoder> {

    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    /** A CONNECT was answered 200: what follows is the tunnel's, passed on as bytes (as HttpClientCodec does). */
    private boolean tunnel;

    /**
     * @param config      Netty's decoder's limits, for the heads it reads
     * @param maxHeadSize the largest head the scanner accepts; no more than {@code config}'s
     *                    limits allow
     */
    public Http1ClientCodec(HttpDecoderConfig config, int maxHeadSize) {
        init(new ResponseDecoder(config, maxHeadSize), new RequestEncoder());
    }

    /** Reads responses (see {@link Http1ClientCodec}). */
    final class ResponseDecoder extends HeadFramingDecoder {
        private final HttpDecoderConfig config;
        private boolean noBody;

        ResponseDecoder(HttpDecoderConfig config, int maxHeadSize) {
            super(HeadScanner.forResponses(maxHeadSize, 128), config.getMaxChunkSize());
            this.config = config;
        }

        @Override
        Fallback newFallback() {
            return new NettyResponses(config);
        }

        @Override
        HttpMessage newHead(HeadScanner scanner) {
            HttpMethod method = methods.peek();
            if (HttpMethod.CONNECT.equals(method)) {
                return null; // a tunnel's answer: Netty's decoder's rules
            }
            methods.poll();
            noBody = HttpMethod.HEAD.equals(method);
            return new DefaultHttpResponse(scanner.http11() ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_1_0,
                    scanner.responseStatus(), FlatHttpHeaders.of(scanner));
        }

        @Override
        long bodyLength(HeadScanner scanner) {
            return noBody ? 0 : scanner.contentLength();
        }

        @Override
        boolean leftHttp() {
            return tunnel;
        }
    }

    /** Netty's response decoder, with {@code HttpClientCodec}'s rules for HEAD and CONNECT. */
    private final class NettyResponses extends HttpResponseDecoder implements HeadFramingDecoder.Fallback {
        NettyResponses(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            if (tunnel) {
                if (buffer.isReadable()) {
                    out.add(buffer.readBytes(buffer.readableBytes()));
                }
                return;
            }
            super.decode(ctx, buffer, out);
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
        protected boolean isContentAlwaysEmpty(HttpMessage msg) {
            HttpResponseStatus status = ((HttpResponse) msg).status();
            if (status.codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(msg); // the final answer is still to come
            }
            HttpMethod method = methods.poll();
            if (HttpMethod.CONNECT.equals(method) && status.code() == 200) {
                tunnel = true;
                methods.clear();
                return true;
            }
            if (HttpMethod.HEAD.equals(method)) {
                return true;
            }
            return super.isContentAlwaysEmpty(msg);
        }
    }

    /** Writes requests, and keeps their methods for their answers. */
    final class RequestEncoder extends HttpRequestEncoder {
        @Override
        protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) throws Exception {
            if (msg instanceof HttpRequest) {
                methods.add(((HttpRequest) msg).method());
            }
            super.encode(ctx, msg, out);
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
