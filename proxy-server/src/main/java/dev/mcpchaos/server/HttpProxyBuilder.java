package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.IoTransport;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.transport.http.HttpProxy;
import dev.mcpchaos.core.transport.http.HttpSettings;
import dev.mcpchaos.rules.RuleEngine;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/** Configures an HTTP proxy; made by {@link McpChaosProxy#http(URI)}. */
public final class HttpProxyBuilder extends AbstractChaosBuilder<HttpProxyBuilder> {

    /** The transport's settings: each setter here writes one, checked there. */
    private final HttpSettings.Builder transport;
    private final URI upstream;
    /** Null: {@link IoTransport#auto()}. Not a setting: an implementation the proxy runs on. */
    private IoTransport io;
    private boolean readyRequiresUpstream;
    /** Closed with the proxy, or when it fails to start: an upstream this builder's caller started for it. */
    private AutoCloseable owned;

    HttpProxyBuilder(URI upstream) {
        this.transport = HttpSettings.builder(upstream);
        this.upstream = upstream;
    }

    /**
     * Whether the {@link #operations operations listener}'s {@code /ready} also asks that the
     * upstream take TCP connections (checked every 2 s, each check within 1 s; {@code /ready}
     * answers from the last one). Default false: ready once listening and not draining.
     */
    public HttpProxyBuilder readyRequiresUpstream(boolean requires) {
        this.readyRequiresUpstream = requires;
        return this;
    }

    /** Where to listen; default 127.0.0.1 on a free port (see {@link RunningHttp#address()}, {@link RunningHttp#mcpUrl()}). */
    public HttpProxyBuilder listen(InetSocketAddress address) {
        transport.listen(address);
        return this;
    }

    /** Sends the upstream's host in {@code Host} instead of the client's. */
    public HttpProxyBuilder rewriteHost(boolean rewrite) {
        transport.rewriteHost(rewrite);
        return this;
    }

    /** Trusts upstream certificates issued by this CA (PEM). */
    public HttpProxyBuilder trustedCa(Path pemFile) {
        transport.trustedCa(pemFile);
        return this;
    }

    /** Accepts any upstream certificate (test servers only). */
    public HttpProxyBuilder trustAnyCertificate(boolean trustAny) {
        transport.trustAnyCertificate(trustAny);
        return this;
    }

    /** Largest POST body (413 above); default 16 MiB. */
    public HttpProxyBuilder maxRequestBody(int bytes) {
        transport.maxRequestBody(bytes);
        return this;
    }

    /**
     * Most bytes of bodies held for all clients at once; past it a new POST is answered 503 with
     * Retry-After and a JSON answer passes uninspected. Default: half the maximum heap.
     */
    public HttpProxyBuilder maxBuffered(long bytes) {
        transport.maxBuffered(bytes);
        return this;
    }

    /**
     * How the proxy's sockets talk to the kernel: io_uring, epoll or NIO. Default (or null):
     * io_uring, else epoll, else NIO ({@link IoTransport#auto()}: where a kernel or a seccomp
     * profile refuses io_uring, the proxy falls back and its start-up log line says why); one named
     * here that is not available makes {@link #start()} fail, saying why.
     */
    public HttpProxyBuilder io(IoTransport io) {
        this.io = io;
        return this;
    }

    /** Largest SSE event; default 16 MiB. */
    public HttpProxyBuilder maxSseEventSize(int bytes) {
        transport.maxSseEventSize(bytes);
        return this;
    }

    /** Most client connections (503 above); default 10,000. */
    public HttpProxyBuilder maxConnections(int connections) {
        transport.maxConnections(connections);
        return this;
    }

    /** Time to the upstream's response head (504 after); default 5 min. */
    public HttpProxyBuilder responseTimeout(Duration timeout) {
        transport.responseTimeout(timeout);
        return this;
    }

    /**
     * The longest wait between two pieces of a response body that is not SSE (504 before the
     * client got any of it, a cut after); default 60 s. SSE streams have no such deadline.
     */
    public HttpProxyBuilder responseBodyTimeout(Duration timeout) {
        transport.responseBodyTimeout(timeout);
        return this;
    }

    /** Time to connect to the upstream; default 5 s. */
    public HttpProxyBuilder connectTimeout(Duration timeout) {
        transport.connectTimeout(timeout);
        return this;
    }

    /**
     * Time a client connection is kept between requests; default 5 min. Only a finished
     * exchange starts it over: bytes trickling in start a request head, which has its own deadline.
     */
    public HttpProxyBuilder idleTimeout(Duration timeout) {
        transport.idleTimeout(timeout);
        return this;
    }

    /** Time from the first byte of a request head to its end (408 after); default 10 s. */
    public HttpProxyBuilder requestHeadTimeout(Duration timeout) {
        transport.requestHeadTimeout(timeout);
        return this;
    }

    /** Time from the end of a request head to the last byte of its body (408 after); default 60 s. */
    public HttpProxyBuilder requestBodyTimeout(Duration timeout) {
        transport.requestBodyTimeout(timeout);
        return this;
    }

    /**
     * The least a request body must average after its first second, in bytes per second (408
     * under it); 0: no minimum. Default 500.
     */
    public HttpProxyBuilder minRequestBodyRate(long bytesPerSecond) {
        transport.minRequestBodyRate(bytesPerSecond);
        return this;
    }

    /** The longest a client may take nothing the proxy writes to it (closed after); default 60 s. */
    public HttpProxyBuilder sendTimeout(Duration timeout) {
        transport.sendTimeout(timeout);
        return this;
    }

    /**
     * Time an MCP session is kept with no exchange of it in flight (an open GET stream counts as
     * one); then the proxy forgets it, as one it never saw: a later request with its id passes
     * on and the upstream answers as it will. Counted in {@code mcp.chaos.sessions.expired} and
     * logged as a {@code session_expired} event. Default 30 min.
     */
    public HttpProxyBuilder sessionIdleTimeout(Duration timeout) {
        transport.sessionIdleTimeout(timeout);
        return this;
    }

    /**
     * Most MCP sessions kept at once; past that the least recently used idle one is evicted (the
     * least recently used of all when every one is busy), counted and logged as an idle one is.
     * Default 10,000.
     */
    public HttpProxyBuilder maxSessions(int sessions) {
        transport.maxSessions(sessions);
        return this;
    }

    /** Makes the proxy close {@code upstream} when it closes, or when it fails to start. */
    HttpProxyBuilder owning(AutoCloseable upstream) {
        this.owned = upstream;
        return this;
    }

    /**
     * Binds the control endpoint (if any) and the proxy, and starts relaying. On failure nothing
     * is left listening.
     *
     * @throws ProxyStartException when a rule cannot work on HTTP (such as {@code crash};
     *         {@link ProxyStartException.Reason#RULES}, checked before anything listens), or an
     *         address cannot be bound or the TLS settings used ({@code ADDRESS}); its message
     *         says which, its cause is the original exception
     */
    public RunningHttp start() {
        ChaosRuntime runtime = ChaosRuntime.start(settings, TransportKind.HTTP, owned);
        HttpProxy proxy = runtime.startTransport((chain, observer) -> {
            HttpProxy.Builder http = HttpProxy.builder(transport.build()).io(io).observer(observer);
            chain.forEach(http::interceptor);
            try {
                return http.start();
            } catch (IOException e) {
                throw new ProxyStartException(ProxyStartException.Reason.ADDRESS, e.getMessage(), e);
            }
        });
        UpstreamCheck upstreamCheck = readyRequiresUpstream ? new UpstreamCheck(upstream) : null;
        runtime.readiness(() -> proxy.draining() ? "draining: the proxy is shutting down"
                : upstreamCheck != null ? upstreamCheck.problem() : null);
        String mcpPath = upstream.getRawPath() == null || upstream.getRawPath().isEmpty() ? "/" : upstream.getRawPath();
        return new Running(runtime, proxy, upstreamCheck, mcpPath);
    }

    /** The handle {@link #start()} returns. */
    private static final class Running extends RunningBase implements RunningHttp {
        private final HttpProxy proxy;
        private final String mcpPath;
        private final HttpDrain drain;

        Running(ChaosRuntime runtime, HttpProxy proxy, UpstreamCheck upstreamCheck, String mcpPath) {
            super(runtime, () -> {
                try {
                    if (upstreamCheck != null) {
                        upstreamCheck.close();
                    }
                } finally {
                    proxy.close();
                }
            });
            this.proxy = proxy;
            this.mcpPath = mcpPath;
            this.drain = new HttpDrain(proxy, runtime.registry(), runtime.events());
        }

        @Override
        public URI mcpUrl() {
            return ProxyUrls.on(proxy.address(), mcpPath);
        }

        @Override
        public URI uri(String path) {
            return ProxyUrls.on(proxy.address(), path);
        }

        @Override
        public InetSocketAddress address() {
            return proxy.address();
        }

        @Override
        public int sessionCount() {
            return proxy.sessionCount();
        }

        @Override
        public boolean draining() {
            return proxy.draining();
        }

        @Override
        public HttpProxy.DrainReport drain(Duration timeout) {
            return drain.run(timeout);
        }
    }

    /** A running HTTP proxy. */
    public interface RunningHttp extends RunningProxy {
        /** The address it listens on. */
        InetSocketAddress address();

        @Override
        default TransportKind transport() {
            return TransportKind.HTTP;
        }

        /** MCP sessions it knows. */
        int sessionCount();

        /**
         * The rules in force, to read or change while running ({@link RuleEngine#update},
         * {@link RuleEngine#faultsEnabled(boolean, String)}); empty when none were given.
         */
        @Override
        RuleEngine rules();

        /** Where the control endpoint listens, or null when there is none. */
        @Override
        default InetSocketAddress controlAddress() {
            return null;
        }

        /** Where the operations listener listens, or null when there is none. */
        default InetSocketAddress operationsAddress() {
            return null;
        }

        /** Whether a {@link #drain} has begun. */
        default boolean draining() {
            return false;
        }

        /**
         * Drains gracefully (what SIGTERM does in {@code mcp-chaos http}): stops accepting
         * connections, turns {@code /ready} to 503 and closes idle connections at once; every
         * answer from now on says {@code Connection: close}. Requests and SSE streams in flight get
         * up to {@code timeout} to finish; then an SSE stream between events gets a final comment
         * and a clean end of its chunked body, a request not yet answered a 503, anything else is
         * cut. Logged, counted in {@code mcp.chaos.drain.exchanges} and written to the event log.
         * Blocks until done; {@link #close} still follows.
         */
        HttpProxy.DrainReport drain(Duration timeout);

        /** Stops listening and closes every connection, then stops the control endpoint. */
        @Override
        void close();
    }
}
