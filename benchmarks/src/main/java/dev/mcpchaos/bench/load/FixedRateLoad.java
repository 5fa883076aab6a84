package dev.mcpchaos.bench.load;

import dev.mcpchaos.core.transport.NettyTransports;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import org.HdrHistogram.Histogram;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A fixed-rate HTTP/1.1 load driver without coordinated omission: POSTs a JSON-RPC request at
 * {@code --rate} requests/s in total, spread round-robin over {@code --connections} keep-alive
 * connections, for {@code --duration} seconds (after {@code --warmup} seconds at the same rate
 * that are not recorded).
 *
 * <p>Request {@code k} is <em>intended</em> to be sent at {@code start + k / rate}, on connection
 * {@code k mod connections}. A connection carries one request at a time (no pipelining), so when
 * answers are slow the requests due on it wait in its queue; their latency is still counted from
 * their intended send time, so a stall shows in the percentiles instead of silently lowering the
 * rate (the "coordinated omission" of closed-loop load generators such as wrk, see wrk2). The
 * driver's own lateness (pacing lag: from the intended time to handing the request to its
 * connection, before any wait for the connection) is reported apart, to tell a slow server from a
 * slow driver.
 *
 * <p>Bounded: at most {@code rate x (warmup + duration)} requests; after the sending window, at
 * most {@code --drain} seconds (default 5) for answers, then the rest count as timeouts and are
 * recorded with the time they had waited then (a lower bound). Limits: rate 1..1,000,000/s,
 * 1..20,000 connections, duration up to 600 s.
 *
 * <p>Prints a human summary and one {@code result:} line of {@code key=value} pairs for scripts.
 * Talk to 127.0.0.1 only.
 */
public final class FixedRateLoad {

    private static final String DEFAULT_BODY =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"ping\"}}}";

    private final URI uri;
    private final double rate;
    private final int connections;
    private final double warmupSeconds;
    private final double durationSeconds;
    private final double drainSeconds;
    private final int threads;
    private final byte[] body;
    private final String label;

    private final List<Conn> conns = new ArrayList<>();
    private final List<Pacer> pacers = new ArrayList<>();
    /**
     * The recordings, one pair per event loop, shared by its connections: a pair per connection
     * (100 connections, ~150 KB each once they reach 100 ms) was ~30 MB that every young GC of the
     * driver copied, in pauses of 14-30 ms (G1) to 120 ms (serial) that showed up as the driver's
     * own pacing lag and in every target's p99.
     */
    private final Map<EventLoop, Histograms> histograms = new ConcurrentHashMap<>();

    /** A latency and a pacing-lag histogram, written on one event loop only. */
    private static final class Histograms {
        final Histogram latency = new Histogram(3);
        final Histogram pacerLag = new Histogram(3);
    }
    private final String path;
    private final HttpHeaders requestHeaders = new DefaultHttpHeaders();
    private Bootstrap bootstrap;
    private volatile boolean finished;
    private long start;          // nanoTime of request 0's intended send
    private long recordFrom;     // intended times before this are warm-up, not recorded
    private long totalRequests;

    private FixedRateLoad(URI uri, double rate, int connections, double warmupSeconds, double durationSeconds,
            double drainSeconds, int threads, byte[] body, String label) {
        this.uri = uri;
        this.rate = rate;
        this.connections = connections;
        this.warmupSeconds = warmupSeconds;
        this.durationSeconds = durationSeconds;
        this.drainSeconds = drainSeconds;
        this.threads = threads;
        this.body = body;
        this.label = label;
        this.path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        requestHeaders.set(HttpHeaderNames.HOST, uri.getHost() + ":" + port())
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.ACCEPT, "application/json, text/event-stream")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    }

    /**
     * One keep-alive connection and the requests due on it. Touched only on its event loop. When
     * the server closes it (a {@code Connection: close}, a keep-alive limit), it is opened again
     * on the same loop and the queue goes on; a request lost on the wire counts as an error.
     */
    @ChannelHandler.Sharable
    private final class Conn extends SimpleChannelInboundHandler<FullHttpResponse> {
        final int index;
        Channel channel;
        boolean connected;
        final ArrayDeque<Long> queue = new ArrayDeque<>(); // intended times of due, unsent requests
        long inFlight = -1;         // intended time of the request on the wire; -1 when none
        boolean dead;               // could not connect again: what it holds is never answered
        Histograms recorded;        // its event loop's, set when its channel is initialized
        long completed;
        long recordedCompleted;
        long errors;
        long reconnects;

        Conn(int index) {
            this.index = index;
        }

        /** Request {@code intended} falls due: queued, and sent if the connection is free. */
        void due(long intended, long now) {
            if (intended >= recordFrom) {
                recorded.pacerLag.recordValue(Math.max(0, now - intended));
            }
            queue.add(intended);
            sendNext(now);
        }

        void sendNext(long now) {
            if (inFlight >= 0 || queue.isEmpty() || !connected) {
                return;
            }
            long intended = queue.poll();
            inFlight = intended;
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                    path, Unpooled.wrappedBuffer(body), requestHeaders.copy(), EmptyHttpHeaders.INSTANCE);
            channel.writeAndFlush(request, channel.voidPromise());
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
            long now = System.nanoTime();
            if (inFlight < 0) {
                errors++; // an answer nobody asked for
                return;
            }
            if (inFlight >= recordFrom) {
                recorded.latency.recordValue(Math.max(0, now - inFlight));
                recordedCompleted++;
                if (response.status().code() != 200) {
                    errors++;
                }
            }
            completed++;
            inFlight = -1;
            if (!HttpUtil.isKeepAlive(response)) {
                ctx.close(); // channelInactive opens it again
                return;
            }
            sendNext(now);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (ctx.channel() != channel) {
                return;
            }
            connected = false;
            if (inFlight >= 0) {
                if (inFlight >= recordFrom) {
                    errors++;
                }
                inFlight = -1;
            }
            if (!finished) {
                connect(ctx.channel().eventLoop());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        ChannelFuture connect(EventLoopGroup group) {
            ChannelFuture f = bootstrap.clone(group).handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    recorded = histograms.computeIfAbsent(ch.eventLoop(), loop -> new Histograms());
                    ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(16 * 1024 * 1024), Conn.this);
                }
            }).connect(uri.getHost(), port());
            boolean first = channel == null;
            channel = f.channel();
            f.addListener(done -> {
                if (done.isSuccess()) {
                    connected = true;
                    if (!first) {
                        reconnects++;
                    }
                    sendNext(System.nanoTime());
                } else {
                    dead = true;
                }
            });
            return f;
        }
    }

    private int port() {
        return uri.getPort() > 0 ? uri.getPort() : 80;
    }

    /**
     * Sends on one event loop's connections: walks the schedule from request to request, hands
     * each due one to its connection, and wakes again at the next intended time of one of its own.
     */
    private final class Pacer implements Runnable {
        final EventLoop loop;
        volatile long k;            // the next request number not yet looked at (written on the loop only)

        Pacer(EventLoop loop) {
            this.loop = loop;
        }

        @Override
        public void run() {
            long now = System.nanoTime();
            while (k < totalRequests) {
                long intended = intendedTime(k);
                if (intended > now) {
                    break;
                }
                Conn c = conns.get((int) (k % connections));
                if (c.channel.eventLoop() == loop) {
                    c.due(intended, now);
                }
                k++;
            }
            if (k < totalRequests) {
                loop.schedule(this, Math.max(0, intendedTime(k) - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }
    }

    private long intendedTime(long k) {
        return start + (long) (k * 1e9 / rate);
    }

    private void run() throws Exception {
        totalRequests = (long) Math.ceil(rate * (warmupSeconds + durationSeconds));
        EventLoopGroup group = NettyTransports.newEventLoopGroup(threads, "fixed-rate-load");
        try {
            bootstrap = new Bootstrap().group(group).channel(NettyTransports.socketChannelType())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000);
            List<ChannelFuture> connecting = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                Conn conn = new Conn(i);
                conns.add(conn);
                connecting.add(conn.connect(group));
            }
            for (ChannelFuture f : connecting) {
                f.syncUninterruptibly();
            }
            // All pacers start from one instant a little ahead, once every connection is up.
            start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            recordFrom = start + (long) (warmupSeconds * 1e9);
            for (Conn c : conns) {
                EventLoop loop = c.channel.eventLoop();
                if (pacers.stream().noneMatch(p -> p.loop == loop)) {
                    pacers.add(new Pacer(loop));
                }
            }
            for (Pacer p : pacers) {
                p.loop.schedule(p, Math.max(0, start - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            long sendEnd = start + (long) ((warmupSeconds + durationSeconds) * 1e9);
            long deadline = sendEnd + (long) (drainSeconds * 1e9);
            // Wait for the window and then for the answers, polling the loops' own state on them.
            while (true) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    break;
                }
                if (now >= sendEnd && outstanding() == 0) {
                    break;
                }
                Thread.sleep(now < sendEnd ? Math.min(200, Math.max(1, (sendEnd - now) / 1_000_000)) : 20);
            }
            finished = true;
            report(System.nanoTime());
        } finally {
            finished = true;
            for (Conn c : conns) {
                if (c.channel != null) {
                    c.channel.close();
                }
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** Requests not answered yet (read on each connection's loop). */
    private long outstanding() throws InterruptedException {
        long[] sum = {0};
        CountDownLatch done = new CountDownLatch(conns.size());
        for (Conn c : conns) {
            c.channel.eventLoop().execute(() -> {
                synchronized (sum) {
                    sum[0] += c.dead ? 0 : c.queue.size() + (c.inFlight >= 0 ? 1 : 0);
                }
                done.countDown();
            });
        }
        done.await(5, TimeUnit.SECONDS);
        synchronized (sum) {
            return sum[0] + notHandedOut();
        }
    }

    /** Requests whose intended time no pacer has reached (none once the window is over). */
    private long notHandedOut() {
        return pacers.stream().mapToLong(p -> totalRequests - p.k).max().orElse(totalRequests);
    }

    private void report(long end) throws InterruptedException {
        Histogram latency = new Histogram(3);
        Histogram pacerLag = new Histogram(3);
        long[] totals = new long[5]; // completed, recorded completed, errors, timeouts, reconnects
        CountDownLatch done = new CountDownLatch(conns.size());
        for (Conn c : conns) {
            c.channel.eventLoop().execute(() -> {
                synchronized (totals) {
                    // What is still waiting has waited at least until now: record it so. On a
                    // connection that died it will never be answered: an error.
                    long waiting = 0;
                    for (long intended : c.queue) {
                        if (intended >= recordFrom) {
                            if (!c.dead) {
                                c.recorded.latency.recordValue(Math.max(0, end - intended));
                            }
                            waiting++;
                        }
                    }
                    if (c.inFlight >= recordFrom) {
                        if (!c.dead) {
                            c.recorded.latency.recordValue(Math.max(0, end - c.inFlight));
                        }
                        waiting++;
                    }
                    totals[0] += c.completed;
                    totals[1] += c.recordedCompleted;
                    totals[2] += c.errors + (c.dead ? waiting : 0);
                    totals[3] += c.dead ? 0 : waiting;
                    totals[4] += c.reconnects;
                }
                done.countDown();
            });
        }
        done.await(5, TimeUnit.SECONDS);
        CountDownLatch merged = new CountDownLatch(histograms.size());
        histograms.forEach((loop, recorded) -> loop.execute(() -> {
            synchronized (totals) {
                latency.add(recorded.latency);
                pacerLag.add(recorded.pacerLag);
            }
            merged.countDown();
        }));
        merged.await(5, TimeUnit.SECONDS);
        synchronized (totals) {
            long notSent = notHandedOut();
            double achieved = totals[1] / durationSeconds;
            System.out.printf(Locale.ROOT, "%s: target %,.0f req/s over %d connections for %.0f s (+%.0f s warm-up)%n",
                    label, rate, connections, durationSeconds, warmupSeconds);
            System.out.printf(Locale.ROOT, "%s: answered %,d in the window (%,.0f req/s), errors %d, timeouts %d, not sent %d, reconnects %d%n",
                    label, totals[1], achieved, totals[2], totals[3], notSent, totals[4]);
            System.out.printf(Locale.ROOT, "%s: latency from intended send time: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s%n",
                    label, ms(latency, 50), ms(latency, 90), ms(latency, 99), ms(latency, 99.9), fmt(latency.getMaxValue()));
            System.out.printf(Locale.ROOT, "%s: driver pacing lag (intended time to hand-over to the connection): p50 %s  p99 %s  max %s%n",
                    label, ms(pacerLag, 50), ms(pacerLag, 99), fmt(pacerLag.getMaxValue()));
            System.out.printf(Locale.ROOT, "result: label=%s rate=%.0f achieved=%.0f p50=%.3f p90=%.3f p99=%.3f p999=%.3f max=%.3f"
                    + " errors=%d timeouts=%d notsent=%d lag_p99=%.3f%n",
                    label, rate, achieved, msv(latency, 50), msv(latency, 90), msv(latency, 99), msv(latency, 99.9),
                    latency.getMaxValue() / 1e6, totals[2], totals[3], notSent, msv(pacerLag, 99));
        }
    }

    private static double msv(Histogram h, double p) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / 1e6;
    }

    private static String ms(Histogram h, double p) {
        return h.getTotalCount() == 0 ? "-" : fmt(h.getValueAtPercentile(p));
    }

    private static String fmt(long nanos) {
        return String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }

    public static void main(String[] args) throws Exception {
        String url = null;
        double rate = 1000;
        int connections = 50;
        double warmup = 2;
        double duration = 10;
        double drain = 5;
        int threads = 1;
        String body = DEFAULT_BODY;
        String label = "load";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--url": url = args[++i]; break;
                case "--rate": rate = Double.parseDouble(args[++i]); break;
                case "--connections": connections = Integer.parseInt(args[++i]); break;
                case "--warmup": warmup = Double.parseDouble(args[++i]); break;
                case "--duration": duration = Double.parseDouble(args[++i]); break;
                case "--drain": drain = Double.parseDouble(args[++i]); break;
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                case "--body": body = args[++i]; break;
                case "--label": label = args[++i]; break;
                default:
                    usage("unknown argument: " + a);
            }
        }
        if (url == null) {
            usage("--url is required");
        }
        URI uri = URI.create(url);
        if (!"http".equals(uri.getScheme()) || uri.getHost() == null) {
            usage("--url: " + url + " (expected: http://HOST:PORT/PATH)");
        }
        if (!(rate >= 1 && rate <= 1_000_000)) {
            usage("--rate: " + rate + " (expected: 1..1000000)");
        }
        if (connections < 1 || connections > 20_000) {
            usage("--connections: " + connections + " (expected: 1..20000)");
        }
        if (!(duration > 0 && duration <= 600) || !(warmup >= 0 && warmup <= 60) || !(drain >= 0 && drain <= 60)) {
            usage("--duration 0..600, --warmup 0..60, --drain 0..60 seconds");
        }
        if (threads < 1 || threads > 64) {
            usage("--threads: " + threads + " (expected: 1..64)");
        }
        new FixedRateLoad(uri, rate, connections, warmup, duration, drain, threads,
                body.getBytes(StandardCharsets.UTF_8), label).run();
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: FixedRateLoad --url http://127.0.0.1:PORT/mcp [--rate R] [--connections N]"
                + " [--duration S] [--warmup S] [--drain S] [--threads T] [--body JSON] [--label NAME]");
        System.exit(2);
    }
}
