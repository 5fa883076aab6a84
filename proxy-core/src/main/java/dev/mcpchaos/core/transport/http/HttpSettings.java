package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.observe.TransportObserver;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The settings of the HTTP transport: each option declared once, in {@link Builder}, with its
 * default, the check of its value (failing with {@code "name: value (expected: ...)"}) and its
 * Javadoc, which is the reference. An {@code HttpSettings} is immutable and already valid; an
 * {@link HttpProxy} runs with one ({@link HttpProxy#builder(HttpSettings)}), the embeddable
 * library's {@code HttpProxyBuilder} writes into a {@link Builder}, and the command line maps its
 * options onto that.
 *
 * <p>A setting is a plain value that can be given from outside (the command line, a variable) and
 * checked on its own. What the proxy runs with but is not such a value, such as its interceptors,
 * observer, executor, allocator and I/O transport, is given to {@link HttpProxy.Builder} instead.
 *
 * <p>To add an option: a field with its default and a setter with its check in {@link Builder},
 * its field and accessor here, its setter on {@code HttpProxyBuilder}, and its command-line option
 * in {@code HttpCommand}.
 */
public final class HttpSettings {

    private final URI upstream;
    private final InetSocketAddress listen;
    private final boolean rewriteHost;
    private final Path trustedCa;
    private final boolean trustAnyCertificate;
    private final int maxRequestBody;
    private final long maxBuffered;
    private final int maxJsonResponseBody;
    private final int maxSseEventSize;
    private final int maxHeaderSize;
    private final int maxConnections;
    private final Duration connectTimeout;
    private final Duration responseTimeout;
    private final Duration responseBodyTimeout;
    private final Duration idleTimeout;
    private final Duration sessionIdleTimeout;
    private final int maxSessions;
    private final Duration requestHeadTimeout;
    private final Duration requestBodyTimeout;
    private final long minRequestBodyRate;
    private final Duration sendTimeout;
    private final int ioThreads;

    // The deadlines in milliseconds, as the connections read them on every event.
    final int connectTimeoutMillis;
    final long responseTimeoutMillis;
    final long responseBodyTimeoutMillis;
    final long idleTimeoutMillis;
    final long requestHeadTimeoutMillis;
    final long requestBodyTimeoutMillis;
    final long sendTimeoutMillis;

    private HttpSettings(Builder b) {
        upstream = b.upstream;
        listen = b.listen;
        rewriteHost = b.rewriteHost;
        trustedCa = b.trustedCa;
        trustAnyCertificate = b.trustAnyCertificate;
        maxRequestBody = b.maxRequestBody;
        maxBuffered = b.maxBuffered;
        maxJsonResponseBody = b.maxJsonResponseBody;
        maxSseEventSize = b.maxSseEventSize;
        maxHeaderSize = b.maxHeaderSize;
        maxConnections = b.maxConnections;
        connectTimeout = b.connectTimeout;
        responseTimeout = b.responseTimeout;
        responseBodyTimeout = b.responseBodyTimeout;
        idleTimeout = b.idleTimeout;
        sessionIdleTimeout = b.sessionIdleTimeout;
        maxSessions = b.maxSessions;
        requestHeadTimeout = b.requestHeadTimeout;
        requestBodyTimeout = b.requestBodyTimeout;
        minRequestBodyRate = b.minRequestBodyRate;
        sendTimeout = b.sendTimeout;
        ioThreads = b.ioThreads;
        connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis());
        responseTimeoutMillis = responseTimeout.toMillis();
        responseBodyTimeoutMillis = responseBodyTimeout.toMillis();
        idleTimeoutMillis = idleTimeout.toMillis();
        requestHeadTimeoutMillis = requestHeadTimeout.toMillis();
        requestBodyTimeoutMillis = requestBodyTimeout.toMillis();
        sendTimeoutMillis = sendTimeout.toMillis();
    }

    /** A builder of settings for a proxy in front of {@code upstream}, such as {@code http://127.0.0.1:3001/mcp}. */
    public static Builder builder(URI upstream) {
        return new Builder(upstream);
    }

    /** The MCP server relayed to ({@link #builder}). */
    public URI upstream() {
        return upstream;
    }

    /** See {@link Builder#listen}. */
    public InetSocketAddress listen() {
        return listen;
    }

    /** See {@link Builder#rewriteHost}. */
    public boolean rewriteHost() {
        return rewriteHost;
    }

    /** See {@link Builder#trustedCa}; null when none was given. */
    public Path trustedCa() {
        return trustedCa;
    }

    /** See {@link Builder#trustAnyCertificate}. */
    public boolean trustAnyCertificate() {
        return trustAnyCertificate;
    }

    /** See {@link Builder#maxRequestBody}. */
    public int maxRequestBody() {
        return maxRequestBody;
    }

    /** See {@link Builder#maxBuffered}; 0 when not given (then half the maximum heap). */
    public long maxBuffered() {
        return maxBuffered;
    }

    /** See {@link Builder#maxJsonResponseBody}. */
    public int maxJsonResponseBody() {
        return maxJsonResponseBody;
    }

    /** See {@link Builder#maxSseEventSize}. */
    public int maxSseEventSize() {
        return maxSseEventSize;
    }

    /** See {@link Builder#maxHeaderSize}. */
    public int maxHeaderSize() {
        return maxHeaderSize;
    }

    /** See {@link Builder#maxConnections}. */
    public int maxConnections() {
        return maxConnections;
    }

    /** See {@link Builder#connectTimeout}. */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** See {@link Builder#responseTimeout}. */
    public Duration responseTimeout() {
        return responseTimeout;
    }

    /** See {@link Builder#responseBodyTimeout}. */
    public Duration responseBodyTimeout() {
        return responseBodyTimeout;
    }

    /** See {@link Builder#idleTimeout}. */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** See {@link Builder#sessionIdleTimeout}. */
    public Duration sessionIdleTimeout() {
        return sessionIdleTimeout;
    }

    /** See {@link Builder#maxSessions}. */
    public int maxSessions() {
        return maxSessions;
    }

    /** See {@link Builder#requestHeadTimeout}. */
    public Duration requestHeadTimeout() {
        return requestHeadTimeout;
    }

    /** See {@link Builder#requestBodyTimeout}. */
    public Duration requestBodyTimeout() {
        return requestBodyTimeout;
    }

    /** See {@link Builder#minRequestBodyRate}. */
    public long minRequestBodyRate() {
        return minRequestBodyRate;
    }

    /** See {@link Builder#sendTimeout}. */
    public Duration sendTimeout() {
        return sendTimeout;
    }

    /** See {@link Builder#ioThreads}; 0 when not given (then one per core). */
    public int ioThreads() {
        return ioThreads;
    }

    /** Declares the HTTP transport's options, each with its default and its check, and makes {@link HttpSettings}. */
    public static final class Builder {
        private final URI upstream;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 0);
        private boolean rewriteHost;
        private Path trustedCa;
        private boolean trustAnyCertificate;
        private int maxRequestBody = 16 * 1024 * 1024;
        /** 0: half the maximum heap, decided at start. */
        private long maxBuffered;
        private int maxJsonResponseBody = 64 * 1024 * 1024;
        private int maxSseEventSize = 16 * 1024 * 1024;
        private int maxHeaderSize = 16 * 1024;
        private int maxConnections = 10_000;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration responseTimeout = Duration.ofMinutes(5);
        private Duration responseBodyTimeout = Duration.ofSeconds(60);
        private Duration idleTimeout = Duration.ofMinutes(5);
        private Duration sessionIdleTimeout = HttpSessions.DEFAULT_IDLE_TIMEOUT;
        private int maxSessions = HttpSessions.DEFAULT_MAX_SESSIONS;
        private Duration requestHeadTimeout = Duration.ofSeconds(10);
        private Duration requestBodyTimeout = Duration.ofSeconds(60);
        private long minRequestBodyRate = 500;
        private Duration sendTimeout = Duration.ofSeconds(60);
        /** 0: one per core, decided at start. */
        private int ioThreads;

        private Builder(URI upstream) {
            this.upstream = Objects.requireNonNull(upstream, "upstream");
            String scheme = upstream.getScheme() == null ? "" : upstream.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https") || upstream.getHost() == null) {
                throw new IllegalArgumentException("upstream: " + upstream
                        + " (expected: an http:// or https:// URL with a host, such as http://127.0.0.1:3001/mcp)");
            }
            // Request paths and queries pass as the client sent them: a query or fragment here
            // would be silently ignored, so it is refused.
            if (upstream.getRawQuery() != null || upstream.getRawFragment() != null) {
                throw new IllegalArgumentException("upstream: " + upstream
                        + " (expected: no query or fragment; the client's request line passes unchanged)");
            }
        }

        /** Where to listen; default 127.0.0.1 on a free port. */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /** Sends the upstream's own host in {@code Host} instead of the client's; default: the client's. */
        public Builder rewriteHost(boolean rewrite) {
            this.rewriteHost = rewrite;
            return this;
        }

        /** Trusts upstream certificates issued by the CA in this PEM file (https upstreams). */
        public Builder trustedCa(Path pemFile) {
            this.trustedCa = Objects.requireNonNull(pemFile, "pemFile");
            return this;
        }

        /** Accepts any upstream certificate. For test servers only: it gives up TLS's protection. */
        public Builder trustAnyCertificate(boolean trustAny) {
            this.trustAnyCertificate = trustAny;
            return this;
        }

        /** Largest POST body, in bytes; larger ones are answered 413. Default 16 MiB. */
        public Builder maxRequestBody(int bytes) {
            this.maxRequestBody = requirePositive(bytes, "maxRequestBody");
            return this;
        }

        /**
         * The most bytes of bodies held for all clients at once: POST bodies being read or held
         * by a fault, JSON answers being gathered. Past it a new request body is answered 503
         * with {@code Retry-After} and a JSON answer passes uninspected; both are counted as the
         * limit {@code buffered}. Default: half the maximum heap.
         */
        public Builder maxBuffered(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxBuffered: " + bytes + " (expected: >= 1)");
            }
            this.maxBuffered = bytes;
            return this;
        }

        /** Largest JSON response held for interception; larger ones pass uninspected. Default 64 MiB. */
        public Builder maxJsonResponseBody(int bytes) {
            this.maxJsonResponseBody = requirePositive(bytes, "maxJsonResponseBody");
            return this;
        }

        /**
         * Largest SSE event that interceptors may act on; a larger one is dropped, counted and
         * logged then. While no interceptor acts on a stream (none inspects it, or all only
         * observe), its bytes are relayed as they come and an event over the limit is only
         * counted and logged: nothing holds it. Default 16 MiB.
         */
        public Builder maxSseEventSize(int bytes) {
            this.maxSseEventSize = requirePositive(bytes, "maxSseEventSize");
            return this;
        }

        /** Largest header block, in bytes; larger ones are answered 431. Default 16 KiB. */
        public Builder maxHeaderSize(int bytes) {
            this.maxHeaderSize = requirePositive(bytes, "maxHeaderSize");
            return this;
        }

        /** Most client connections open at once; more are answered 503. Default 10,000. */
        public Builder maxConnections(int connections) {
            this.maxConnections = requirePositive(connections, "maxConnections");
            return this;
        }

        /** Time to connect to the upstream. Default 5 s. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = requirePositive(timeout, "connectTimeout");
            return this;
        }

        /** Time from sending a request to the upstream's response head; then 504. Default 5 min. */
        public Builder responseTimeout(Duration timeout) {
            this.responseTimeout = requirePositive(timeout, "responseTimeout");
            return this;
        }

        /**
         * The longest wait between two pieces of a response body that is not an SSE stream (a JSON
         * answer, a download), from the head on: then 504 while nothing of it reached the client,
         * a cut connection after. SSE streams have no such deadline: they may idle as long as
         * the server likes. Default 60 s, as nginx's {@code proxy_read_timeout}.
         */
        public Builder responseBodyTimeout(Duration timeout) {
            this.responseBodyTimeout = requirePositive(timeout, "responseBodyTimeout");
            return this;
        }

        /**
         * Time a client connection may sit between requests (no exchange in progress, nothing of
         * a next request read) before it is closed. Only a finished exchange starts it again:
         * bytes that trickle in start a request head, which has its own deadline
         * ({@link #requestHeadTimeout}). Default 5 min.
         */
        public Builder idleTimeout(Duration timeout) {
            this.idleTimeout = requirePositive(timeout, "idleTimeout");
            return this;
        }

        /**
         * Time an MCP session is kept with no exchange of it in flight (an open GET stream, or a
         * request waiting for its answer, is one) and none ended; then the proxy forgets it, as
         * it would one it never saw: a later request with its id passes on to the upstream,
         * which answers as it will. Counted ({@link TransportObserver#sessionExpired}). Default 30 min.
         */
        public Builder sessionIdleTimeout(Duration timeout) {
            this.sessionIdleTimeout = requirePositive(timeout, "sessionIdleTimeout");
            return this;
        }

        /**
         * Most MCP sessions kept at once; a new one past that evicts the least recently used idle
         * session (the least recently used of all when every one is busy), counted as
         * {@link TransportObserver#sessionExpired}. Default 10,000.
         */
        public Builder maxSessions(int sessions) {
            this.maxSessions = requirePositive(sessions, "maxSessions");
            return this;
        }

        /**
         * Time from the first byte of a request head to its end; then 408 and the connection
         * closed. Default 10 s (nginx's {@code client_header_timeout} is 60 s; Envoy's
         * {@code request_headers_timeout} is off unless set).
         */
        public Builder requestHeadTimeout(Duration timeout) {
            this.requestHeadTimeout = requirePositive(timeout, "requestHeadTimeout");
            return this;
        }

        /**
         * Time from the end of a request head to the last byte of its body; then 408 (with a
         * JSON-RPC error) and the connection closed. Default 60 s (nginx's
         * {@code client_body_timeout}, 60 s, counts between two reads instead; Envoy's
         * {@code request_timeout}, off unless set, counts the whole request).
         */
        public Builder requestBodyTimeout(Duration timeout) {
            this.requestBodyTimeout = requirePositive(timeout, "requestBodyTimeout");
            return this;
        }

        /**
         * The least a request body must average from the end of its head, in bytes per second,
         * once its first second is over: a body that falls behind is answered 408 at once,
         * instead of holding its connection until {@link #requestBodyTimeout}. 0: no minimum.
         * Default 500 bytes/s (Apache's {@code RequestReadTimeout body=20,MinRate=500}; nginx and
         * Envoy have none).
         */
        public Builder minRequestBodyRate(long bytesPerSecond) {
            if (bytesPerSecond < 0) {
                throw new IllegalArgumentException("minRequestBodyRate: " + bytesPerSecond + " (expected: >= 0)");
            }
            this.minRequestBodyRate = bytesPerSecond;
            return this;
        }

        /**
         * The longest a client connection may go without taking what the proxy writes to it:
         * counted while the connection is not writable (more than Netty's high water mark, 64 KiB,
         * waits to be sent), from the moment it became so; then the connection is closed.
         * Default 60 s (nginx's {@code send_timeout}; Envoy has none per connection).
         */
        public Builder sendTimeout(Duration timeout) {
            this.sendTimeout = requirePositive(timeout, "sendTimeout");
            return this;
        }

        /**
         * I/O threads (event loops); 0, the default: one per core, or {@code io.netty.eventLoopThreads}
         * when that system property is set.
         */
        public Builder ioThreads(int threads) {
            if (threads < 0) {
                throw new IllegalArgumentException("ioThreads: " + threads + " (expected: >= 0)");
            }
            this.ioThreads = threads;
            return this;
        }

        /** The settings as given so far. */
        public HttpSettings build() {
            return new HttpSettings(this);
        }

        private static int requirePositive(int value, String name) {
            if (value < 1) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: >= 1)");
            }
            return value;
        }

        private static Duration requirePositive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
            }
            return value;
        }
    }
}
