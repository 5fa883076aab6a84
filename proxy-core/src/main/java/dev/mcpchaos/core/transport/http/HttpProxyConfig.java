package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.observe.TransportObserver;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;

import javax.net.ssl.SSLException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Locale;

/**
 * What a running {@link HttpProxy} runs with, fixed at start: its {@link HttpSettings}, and what
 * is made from them and given beside them (the upstream's address and TLS context, the observer).
 */
final class HttpProxyConfig {
    final HttpSettings settings;
    final InetSocketAddress upstream;
    final String upstreamLabel;
    final String upstreamHostHeader;
    /** Null for an http:// upstream. */
    final SslContext upstreamTls;
    final TransportObserver observer;

    private HttpProxyConfig(HttpSettings settings, SslContext upstreamTls, TransportObserver observer) {
        URI url = settings.upstream();
        boolean defaultPort = url.getPort() == -1;
        int port = defaultPort ? upstreamTls != null ? 443 : 80 : url.getPort();
        this.settings = settings;
        this.upstream = InetSocketAddress.createUnresolved(url.getHost(), port);
        this.upstreamLabel = url.getScheme().toLowerCase(Locale.ROOT) + "://" + url.getHost() + ':' + port;
        this.upstreamHostHeader = defaultPort ? url.getHost() : url.getHost() + ':' + port;
        this.upstreamTls = upstreamTls;
        this.observer = observer;
    }

    /**
     * What a proxy with {@code settings} and {@code observer} would run with.
     *
     * @throws SSLException when the TLS settings cannot be used
     */
    static HttpProxyConfig of(HttpSettings settings, TransportObserver observer) throws SSLException {
        boolean tls = "https".equalsIgnoreCase(settings.upstream().getScheme());
        return new HttpProxyConfig(settings, tls ? sslContext(settings) : null, observer);
    }

    private static SslContext sslContext(HttpSettings settings) throws SSLException {
        SslContextBuilder tls = SslContextBuilder.forClient().endpointIdentificationAlgorithm("HTTPS");
        if (settings.trustAnyCertificate()) {
            tls.trustManager(InsecureTrustManagerFactory.INSTANCE).endpointIdentificationAlgorithm(null);
        } else if (settings.trustedCa() != null) {
            tls.trustManager(settings.trustedCa().toFile());
        }
        return tls.build();
    }
}
