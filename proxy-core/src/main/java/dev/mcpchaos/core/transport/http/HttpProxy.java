package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.codec.http1.Http1ServerCodec;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.transport.IoTransport;
import dev.mcpchaos.core.transport.ProxyBuilder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.SystemPropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Streamable HTTP transport: a reverse proxy in front of an HTTP MCP server that relays every
 * request and response unchanged unless an interceptor acts, and streams Server-Sent Events
 * event by event.
 *
 * <p>POST bodies are JSON-RPC messages: each is read whole (up to {@code maxRequestBody}), sniffed,
 * and passed through the interceptor chain of its session before it goes upstream. A JSON
 * response is read whole (up to {@code maxJsonResponseBody}; larger ones are relayed uninspected)
 * and passed through the chain; an SSE response is relayed event by event, each event through the
 * chain as soon as it arrived. Anything else (202, GET streams that are not SSE, errors) is
 * streamed through as it comes. Paths, query strings, status codes and headers pass unchanged,
 * except hop-by-hop headers, which HTTP/1.1 says a proxy removes, and {@code Host} if asked.
 *
 * <p>Sessions are learned from the {@code Mcp-Session-Id} the upstream gives (or accepts with a
 * 2xx); each has its own correlation state. A session ends on DELETE or when the upstream answers
 * 404 for it; the proxy forgets one idle for {@code sessionIdleTimeout}, and past
 * {@code maxSessions} the least recently used, as if it had never seen it (see {@link HttpSessions}).
 *
 * <p>The proxy's own failures are answered with a JSON-RPC error body carrying the request's id:
 * 502 when the upstream refuses, resets or closes, 504 when it does not answer within
 * {@code responseTimeout}, 413 for a body over the limit, 431 for headers over the limit, 503
 * past {@code maxConnections}.
 *
 * <p><b>Limits</b> (defaults; each a setting of {@link HttpSettings.Builder}): request body 16 MiB; JSON response held for interception 64 MiB;
 * SSE event 16 MiB; header block 16 KiB; 10,000 client connections; connect timeout 5 s;
 * response timeout (to the response head) 5 min; response body timeout (between two pieces of a
 * body that is not SSE) 60 s; idle keep-alive connection 5 min (a connection
 * with an exchange in progress, such as an SSE stream, is never idle); 10,000 sessions kept, an
 * idle one for 30 min; request head 10 s from its
 * first byte; request body 60 s from the end of its head, and at least 500 bytes/s on average
 * after its first second; a client connection that takes nothing written to it, 60 s (the send
 * timeout). A request that misses its head or body deadline is answered 408 (a JSON-RPC error,
 * in its turn among pipelined requests) and its connection closed.
 *
 * <p>Requests must be valid HTTP/1.1 or 1.0: a request line, header or chunked body that Netty's
 * decoder refuses is answered 400 and its connection closed, and nothing of the request reaches
 * the upstream as a complete request. Pipelined requests are answered in order with no limit on
 * their number: past a few dozen waiting, the connection is not read until they are served.
 * A body over the limit is answered 413 and then read and thrown away (up to
 * 64 MiB, while it keeps coming and within the body deadline) before the
 * connection closes, so that a client that sends its whole body before reading sees the 413
 * rather than a reset.
 */
public final class HttpProxy implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpProxy.class);

    private final HttpProxyConfig config;
    private final EventLoopGroup group;
    private final HttpSessions sessions;
    private final Channel serverChannel;
    private final AtomicInteger connections = new AtomicInteger();
    private final UpstreamPool upstreamPool = new UpstreamPool();
    private final BufferBudget buffers;
    private final IoTransport io;
    /** The open client connections, closed before the event loops stop so each lets go of what it holds. */
    private final ChannelGroup clients = new DefaultChannelGroup("mcp-chaos-http-clients", GlobalEventExecutor.INSTANCE);
    /** The open upstream connections, in use or idle in the pool: closed, as the clients' are, before the loops stop. */
    private final ChannelGroup upstreams = new DefaultChannelGroup("mcp-chaos-http-upstreams", GlobalEventExecutor.INSTANCE);

    private HttpProxy(Builder builder, HttpProxyConfig config) throws IOException {
        this.config = config;
        HttpSettings settings = config.settings;
        this.buffers = new BufferBudget(settings.maxBuffered() > 0 ? settings.maxBuffered() : defaultMaxBuffered());
        // The default's note says which transport it took and, where io_uring was refused, why:
        // logged once below, so that a container whose seccomp profile refuses io_uring says so.
        IoTransport.Choice choice = builder.io != null
                ? new IoTransport.Choice(builder.io.requireAvailable(), builder.io.label()) : IoTransport.autoChoice();
        this.io = choice.transport();
        this.group = io.newEventLoopGroup(settings.ioThreads() > 0 ? settings.ioThreads() : defaultIoThreads(),
                "mcp-chaos-http");
        // Without an executor of the user's, each session's interceptors run on the event loop of
        // the connection that began it: no thread hop for a session that stays on one connection.
        // Interceptors are shared by sessions, so they must be safe across threads (the rule
        // engine and the traffic log are).
        ByteBufAllocator alloc = builder.alloc();
        sessions = newSessions(builder.interceptors(), builder.executor(), alloc, config.observer,
                settings.sessionIdleTimeout(), settings.maxSessions(), builder.executor() != null ? builder.executor() : group.next());
        // No TCP_NODELAY child option: both of Netty's transports set it on every socket already,
        // and setting it again was one system call more per connection.
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(io.serverChannelType())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.ALLOCATOR, alloc)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        initClientChannel(ch);
                    }
                });
        try {
            serverChannel = bootstrap.bind(settings.listen()).syncUninterruptibly().channel();
        } catch (Exception e) {
            shutdownExecutors();
            throw new IOException("cannot listen on " + settings.listen() + ": " + e.getMessage(), e);
        }
        if (isOwnAddress(settings.upstream(), address())) {
            serverChannel.close().syncUninterruptibly();
            shutdownExecutors();
            throw new IOException("the upstream " + settings.upstream() + " is this proxy's own address (listening on "
                    + format(address()) + "): every request would come back to the proxy, each on a new "
                    + "connection, until it runs out of file descriptors (expected: the MCP server's address)");
        }
        log.info("listening on http://{} (transport {}), relaying to {}", format(address()), choice.note(),
                config.upstreamLabel);
    }

    /**
     * A session table whose chains hand frames to the exchanges they travel on and let faults act
     * on them ({@link ExchangeContext}): the proxy's, and a test's front end's.
     */
    static HttpSessions newSessions(List<FrameInterceptor> interceptors, EventExecutor executor, ByteBufAllocator alloc,
                                    TransportObserver observer, Duration idleTimeout, int maxSessions,
                                    EventExecutor sweeper) {
        return new HttpSessions(interceptors, executor, alloc, ExchangeRoutes.CONTROL, ExchangeRoutes.TO_SERVER,
                ExchangeRoutes.TO_CLIENT, observer, idleTimeout, maxSessions, sweeper);
    }

    /**
     * Whether {@code upstream} names the socket the proxy listens on: the same port on the same
     * address, or on any local address when the proxy listens on the wildcard. A host that does
     * not resolve now is not this proxy (it is resolved again per connection).
     */
    static boolean isOwnAddress(URI upstream, InetSocketAddress bound) {
        boolean tls = "https".equalsIgnoreCase(upstream.getScheme());
        int port = upstream.getPort() != -1 ? upstream.getPort() : tls ? 443 : 80;
        if (port != bound.getPort()) {
            return false; // the cheap test first: no lookup for the usual case
        }
        try {
            for (InetAddress candidate : InetAddress.getAllByName(upstream.getHost())) {
                if (bound.getAddress().isAnyLocalAddress()
                        ? candidate.isLoopbackAddress() || candidate.isAnyLocalAddress()
                                || NetworkInterface.getByInetAddress(candidate) != null
                        : candidate.equals(bound.getAddress())) {
                    return true;
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /**
     * One event loop per core, unless {@code io.netty.eventLoopThreads} says otherwise. Netty's
     * own default, twice the cores, suits loops that wait on something; the proxy's never do, and
     * on 2 cores 4 loops relayed 13-16k requests/s where 2 relayed 19k (they only take turns).
     */
    static int defaultIoThreads() {
        return SystemPropertyUtil.contains("io.netty.eventLoopThreads") ? 0 : NettyRuntime.availableProcessors();
    }

    /**
     * Half the heap the JVM may grow to: bodies are gathered on the heap, and the other half is
     * left for everything else (frames in flight, SSE events being framed, the rules).
     */
    static long defaultMaxBuffered() {
        return Runtime.getRuntime().maxMemory() / 2;
    }

    /** A builder for a proxy with these settings. */
    public static Builder builder(HttpSettings settings) {
        return new Builder(settings);
    }

    /**
     * A builder for a proxy in front of {@code upstream}, such as {@code http://127.0.0.1:3001/mcp},
     * with the default settings ({@link HttpSettings#builder}).
     */
    public static Builder builder(URI upstream) {
        return new Builder(HttpSettings.builder(upstream).build());
    }

    private void initClientChannel(SocketChannel ch) {
        if (draining) {
            ch.close(); // accepted just before the listener closed: a client retries elsewhere
            return;
        }
        if (connections.incrementAndGet() > config.settings.maxConnections()) {
            connections.decrementAndGet();
            config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.CONNECTIONS, null,
                    config.settings.maxConnections() + 1L);
            log.warn("refused a connection from {}: {} connections open (the limit)", ch.remoteAddress(),
                    config.settings.maxConnections());
            ch.writeAndFlush(Unpooled.copiedBuffer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    + "Connection: close\r\n\r\n", StandardCharsets.US_ASCII)).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ch.closeFuture().addListener(f -> connections.decrementAndGet());
        clients.add(ch);
        initClientPipeline(ch.pipeline(), new FrontendHandler(this));
    }

    /**
     * The handlers of a client connection. Netty's pipeline depth limit (128 requests decoded and
     * not yet answered: then an exception and a close) is lifted: the frontend answers pipelined
     * requests in order and stops reading while enough of them wait.
     */
    void initClientPipeline(ChannelPipeline pipeline, FrontendHandler frontend) {
        initClientPipeline(pipeline, frontend, config);
    }

    /** {@link #initClientPipeline(ChannelPipeline, FrontendHandler)} with these settings: also a test's, with no proxy. */
    static void initClientPipeline(ChannelPipeline pipeline, FrontendHandler frontend, HttpProxyConfig config) {
        // Named: a generated name is looked up in a per-thread weak map of class names, on every
        // connection (1 % of the CPU of a client that connects per request).
        // Before the codec: the first byte of a request head starts its deadline.
        pipeline.addLast("read-watch", frontend.readWatch());
        // Heads the scanner vouches for are read in place; the rest by Netty's decoder, as before.
        pipeline.addLast("http", new Http1ServerCodec(new HttpDecoderConfig().setMaxInitialLineLength(8192)
                .setMaxHeaderSize(config.settings.maxHeaderSize()).setMaxChunkSize(64 * 1024), Math.min(8192, config.settings.maxHeaderSize())));
        pipeline.addLast("frontend", frontend);
    }

    /** The address the proxy listens on (with the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** How many client connections are open. */
    public int openConnections() {
        return connections.get();
    }

    /** How many MCP sessions the proxy knows. */
    public int sessionCount() {
        return sessions.size();
    }

    HttpProxyConfig config() {
        return config;
    }

    HttpSessions sessions() {
        return sessions;
    }

    /** How many bytes of bodies the proxy holds for its clients now (see {@link HttpSettings.Builder#maxBuffered}). */
    public long bufferedBytes() {
        return buffers.held();
    }

    BufferBudget buffers() {
        return buffers;
    }

    UpstreamPool upstreamPool() {
        return upstreamPool;
    }

    Class<? extends SocketChannel> socketChannelType() {
        return io.socketChannelType();
    }

    /** How the proxy's sockets talk to the kernel. */
    public IoTransport ioTransport() {
        return io;
    }

    // ---- graceful drain -------------------------------------------------------------------------------

    /** How an exchange in flight when a drain began came to its end. */
    public enum DrainOutcome {
        /** It ended by itself within the drain timeout (answered, its stream ended, or its client left). */
        FINISHED,
        /** An SSE stream the proxy ended at the deadline: a final comment, then the end of the chunked body. */
        ENDED,
        /** A request the upstream had not begun to answer by the deadline: answered 503 with a JSON-RPC error. */
        ANSWERED,
        /** Closed at the deadline without a proper end: a body mid-way, or an SSE stream mid-event. */
        CUT
    }

    /**
     * What a drain found and did: the connections with an exchange in flight when it began (and
     * the idle ones it closed then), and how many of those exchanges ended each way.
     */
    public record DrainReport(int inFlight, int idleClosed, int finished, int ended, int answered, int cut,
                              Duration took) {
        /** How many ended as {@code outcome}. */
        public int count(DrainOutcome outcome) {
            return switch (outcome) {
                case FINISHED -> finished;
                case ENDED -> ended;
                case ANSWERED -> answered;
                case CUT -> cut;
            };
        }
    }

    /** The SSE comment an SSE stream ends with when the proxy ends it at a drain's deadline. */
    public static final String DRAIN_SSE_COMMENT = ": mcp-chaos: the proxy is shutting down; reconnect to carry on";

    private volatile boolean draining;
    private List<Channel> drainingBusy = List.of();
    private int drainingIdle;
    private long drainStartNanos;

    /** Whether a drain has begun ({@link #beginDrain}): no new connection is taken. */
    public boolean draining() {
        return draining;
    }

    /**
     * Begins a graceful drain: stops accepting connections and closes the idle ones at once; from
     * now on every answer says {@code Connection: close} and its connection closes after it. The
     * exchanges in flight (requests, SSE streams) go on; {@link #finishDrain} waits for them.
     *
     * @return how many connections have an exchange in flight
     */
    public synchronized int beginDrain() {
        if (draining) {
            return drainingBusy.size();
        }
        draining = true;
        drainStartNanos = System.nanoTime();
        serverChannel.close().syncUninterruptibly();
        List<Channel> busy = new ArrayList<>();
        int idle = 0;
        for (Channel ch : List.copyOf(clients)) {
            FrontendHandler frontend = ch.pipeline().get(FrontendHandler.class);
            if (frontend == null) {
                continue;
            }
            boolean inFlight;
            try {
                inFlight = ch.eventLoop().submit(frontend::beginDrain).get(2, TimeUnit.SECONDS);
            } catch (Exception e) {
                inFlight = ch.isActive(); // its loop is gone or stuck: the deadline deals with it
            }
            if (inFlight) {
                busy.add(ch);
            } else {
                idle++;
            }
        }
        drainingBusy = busy;
        drainingIdle = idle;
        return busy.size();
    }

    /**
     * Waits up to {@code timeout} for the exchanges in flight when {@link #beginDrain} ran (begun
     * here if it was not), then ends those left as {@link DrainOutcome} says. The proxy still has
     * to be {@link #close closed}.
     */
    public DrainReport finishDrain(Duration timeout) {
        beginDrain();
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Channel> busy;
        synchronized (this) {
            busy = drainingBusy;
        }
        int finished = 0;
        List<Channel> left = new ArrayList<>();
        for (Channel ch : busy) {
            long remaining = deadline - System.nanoTime();
            if (ch.closeFuture().awaitUninterruptibly(Math.max(0, remaining), TimeUnit.NANOSECONDS)) {
                finished++;
            } else {
                left.add(ch);
            }
        }
        int ended = 0;
        int answered = 0;
        int cut = 0;
        for (Channel ch : left) {
            FrontendHandler frontend = ch.pipeline().get(FrontendHandler.class);
            DrainOutcome outcome;
            try {
                outcome = frontend == null ? DrainOutcome.FINISHED
                        : ch.eventLoop().submit(frontend::endForDrain).get(2, TimeUnit.SECONDS);
            } catch (Exception e) {
                ch.close();
                outcome = DrainOutcome.CUT;
            }
            switch (outcome) {
                case FINISHED -> finished++;
                case ENDED -> ended++;
                case ANSWERED -> answered++;
                case CUT -> cut++;
            }
        }
        for (Channel ch : left) {
            ch.closeFuture().awaitUninterruptibly(2, TimeUnit.SECONDS); // the last bytes on their way
        }
        return new DrainReport(busy.size(), drainingIdle, finished, ended, answered, cut,
                Duration.ofNanos(System.nanoTime() - drainStartNanos));
    }

    /** Stops listening, closes every connection and waits for the event loops to stop. */
    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        // Closed while the loops run, each connection's exchange is ended and its buffers let go;
        // a loop that stops first may never run their close.
        clients.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        // Idle ones in the pool too: with io_uring a read is always pending on an open connection,
        // and one the stopping loop closes may never see that read's end, nor release its buffer.
        upstreams.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        sessions.close();
        shutdownExecutors();
    }

    /** The upstream side of a new client connection: its own upstream connection, on its loop. */
    UpstreamLink openUpstream(Channel client, UpstreamLink.Listener listener) {
        return new UpstreamConnection(client, listener, config, upstreamPool, io.socketChannelType(), this::trackUpstream);
    }

    /** An upstream connection was made: it is closed with the proxy. */
    void trackUpstream(Channel channel) {
        upstreams.add(channel);
    }

    private void shutdownExecutors() {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static String format(InetSocketAddress address) {
        return address.getHostString() + ':' + address.getPort();
    }

    /**
     * Starts an {@link HttpProxy} with {@link HttpSettings} and what is not a setting: the
     * interceptors, the observer, and how it runs (I/O transport, executor, allocator). Without an
     * {@link #executor(EventExecutor) executor}, each session's interceptors run on the event loop
     * of the connection that began it; one given serves every session.
     */
    public static final class Builder extends ProxyBuilder<Builder> {
        private final HttpSettings settings;
        /** null: {@link IoTransport#auto()}. */
        private IoTransport io;

        private Builder(HttpSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * How the proxy's sockets talk to the kernel: io_uring, epoll or NIO. Default (or null):
         * io_uring, else epoll, else NIO ({@link IoTransport#auto()}), the choice and, when
         * io_uring was refused, why, logged when the proxy starts. One named here that is not
         * available makes {@link #start()} fail, saying why.
         */
        public Builder io(IoTransport io) {
            this.io = io;
            return this;
        }

        /**
         * Binds and starts relaying.
         *
         * @throws IOException when the address cannot be bound or the TLS settings cannot be used
         */
        public HttpProxy start() throws IOException {
            return new HttpProxy(this, config());
        }

        /** What a proxy started now would run with; also what a test drives a part of the proxy with. */
        HttpProxyConfig config() throws SSLException {
            return HttpProxyConfig.of(settings, observer());
        }
    }
}
