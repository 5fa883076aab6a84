package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

import java.util.function.BooleanSupplier;

/**
 * What the {@code Connection} header of a response on one client connection says beyond what
 * the upstream said: {@code keep-alive} to an HTTP/1.0 request that asked for it (else the
 * client takes the response as the connection's last), {@code close} while the proxy drains
 * (every connection closes after its answer, and the client is told so). Owned by its
 * {@link FrontendHandler}, which shows it each request served and each response head written;
 * on the connection's event loop.
 */
final class KeepAliveHeader {

    /** Whether the proxy is draining. */
    private final BooleanSupplier draining;
    /** The request being served is HTTP/1.0 and asked for keep-alive. */
    private boolean http10KeepAlive;

    KeepAliveHeader(BooleanSupplier draining) {
        this.draining = draining;
    }

    /** A request's turn came; read before the exchange takes the hop-by-hop headers off it. */
    void serving(HttpRequest request) {
        http10KeepAlive = request.protocolVersion() == HttpVersion.HTTP_1_0 && HttpUtil.isKeepAlive(request);
    }

    /** A response head is written to the client: says what it must about the connection. */
    void onResponse(HttpResponse response) {
        if (draining.getAsBoolean()) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (http10KeepAlive) {
            HttpHeaders headers = response.headers();
            if (!headers.contains(HttpHeaderNames.CONNECTION)) {
                headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
        }
    }
}
