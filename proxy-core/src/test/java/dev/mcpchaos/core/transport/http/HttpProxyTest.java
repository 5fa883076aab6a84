package dev.mcpchaos.core.transport.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.frame.MessageKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelConfig;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.RecvByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The HTTP transport against a real upstream (the JDK's HTTP server) and a real client (the
 * JDK's HTTP client), on 127.0.0.1: exact relay of JSON and SSE, streaming, sessions and
 * correlation, answers injected by an interceptor, and the proxy's own failure answers.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpProxyTest {

    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
    private static final String INIT_RESULT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}";

    private final RecordingObserver observed = new RecordingObserver();
    private HttpServer upstream;
    private HttpProxy proxy;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<String> upstreamBodies = new CopyOnWriteArrayList<>();
    private final AtomicReference<String> upstreamHost = new AtomicReference<>();
    private final List<String> upstreamHopHeaders = new CopyOnWriteArrayList<>();
    /** The proxy-side port of the upstream connection each request came on. */
    private final List<Integer> upstreamPorts = new CopyOnWriteArrayList<>();
    private final CountDownLatch releaseSecondEvent = new CountDownLatch(1);

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        upstream.createContext("/mcp", this::serveMcp);
        upstream.createContext("/long-stream", exchange -> {
            // A healthy long-lived GET stream: a keep-alive comment every 100 ms, then an event.
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            for (int i = 0; i < 12; i++) {
                out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                try {
                    TimeUnit.MILLISECONDS.sleep(100); // the upstream's pace, not a test wait
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            out.write("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
                    .getBytes(StandardCharsets.UTF_8));
            exchange.close();
        });
        upstream.start();
    }

    @AfterEach
    void stop() {
        releaseSecondEvent.countDown();
        if (proxy != null) {
            proxy.close();
        }
        upstream.stop(0);
    }

    private void serveMcp(HttpExchange exchange) throws IOException {
        upstreamHost.set(exchange.getRequestHeaders().getFirst("Host"));
        upstreamPorts.add(exchange.getRemoteAddress().getPort());
        upstreamHopHeaders.add("keep-alive=" + exchange.getRequestHeaders().getFirst("Keep-Alive") + " x-hop="
                + exchange.getRequestHeaders().getFirst("X-Hop") + " x-custom="
                + exchange.getRequestHeaders().getFirst("X-Custom"));
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        upstreamBodies.add(exchange.getRequestMethod() + " " + body);
        if (exchange.getRequestMethod().equals("DELETE")) {
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
            return;
        }
        if (exchange.getRequestMethod().equals("GET")) {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write(": keep-alive\n\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            exchange.close();
            return;
        }
        if (body.contains("\"initialize\"")) {
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.getResponseHeaders().set("Mcp-Session-Id", "s-123");
            exchange.getResponseHeaders().set("X-Custom", "kept");
            byte[] bytes = INIT_RESULT.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        } else if (body.contains("\"tools/call\"")) {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write(("id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                    + "\"params\":{\"progress\":1}}\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            await(releaseSecondEvent);
            out.write(("id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n")
                    .getBytes(StandardCharsets.UTF_8));
            exchange.close();
        } else if (body.contains("\"primed/")) {
            // A priming event (an id, empty data), then a message or nothing.
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write(PRIMING.getBytes(StandardCharsets.UTF_8));
            if (body.contains("\"primed/message\"")) {
                out.write(PRIMED_MESSAGE.getBytes(StandardCharsets.UTF_8));
            }
            exchange.close();
        } else if (body.contains("\"close/after\"")) {
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.getResponseHeaders().set("Connection", "close");
            byte[] bytes = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        } else if (body.contains("\"slow/never\"")) {
            await(releaseSecondEvent);
            exchange.close();
        } else {
            exchange.sendResponseHeaders(202, -1);
            exchange.close();
        }
    }

    private HttpProxy.Builder proxyBuilder() {
        return proxyBuilder(settings -> settings);
    }

    /** A proxy in front of the test's upstream, with these settings. */
    private HttpProxy.Builder proxyBuilder(UnaryOperator<HttpSettings.Builder> settings) {
        return HttpProxy.builder(settings.apply(HttpSettings.builder(
                URI.create("http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"))).build());
    }

    private URI proxyUri() {
        return URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp");
    }

    private HttpResponse<String> post(String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(proxyUri())
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void jsonResponseIsRelayedExactlyWithItsHeaders() throws Exception {
        proxy = proxyBuilder().observer(observed).start();
        HttpResponse<String> response = post(INIT, "X-Tenant", "blue");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo(INIT_RESULT);
        assertThat(response.headers().firstValue("Mcp-Session-Id")).hasValue("s-123");
        assertThat(response.headers().firstValue("X-Custom")).hasValue("kept");
        assertThat(upstreamBodies).containsExactly("POST " + INIT);
        // The client's Host goes upstream unchanged by default (DNS-rebinding protection keeps working).
        assertThat(upstreamHost.get()).isEqualTo("127.0.0.1:" + proxy.address().getPort());
        assertThat(proxy.sessionCount()).isEqualTo(1);
        assertThat(observed.events).containsExactly("session started s-123");
    }

    @Test
    void hostIsRewrittenWhenAsked() throws Exception {
        proxy = proxyBuilder(s -> s.rewriteHost(true)).start();
        post(INIT);
        assertThat(upstreamHost.get()).isEqualTo("127.0.0.1:" + upstream.getAddress().getPort());
    }

    @Test
    void rulesSeeTheRequestHeadersTheClientSentWhileTheUpstreamGetsThemPrepared() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder(s -> s.rewriteHost(true)).interceptor((ctx, frame) -> {
            seen.add(frame.direction().arrow() + " host=" + frame.requestHeader("Host") + " keep-alive="
                    + frame.requestHeader("keep-alive") + " x-hop=" + frame.requestHeader("X-Hop")
                    + " x-custom=" + frame.requestHeader("x-custom"));
            ctx.forward(frame);
        }).start();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: client.example\r\n"
                    + "Connection: keep-alive, X-Hop\r\nKeep-Alive: timeout=5\r\nX-Hop: 1\r\nX-Custom: c\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + INIT.length() + "\r\n\r\n" + INIT)
                    .getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = socket.getInputStream();
            String head = new String(in.readNBytes(12), StandardCharsets.ISO_8859_1);
            assertThat(head).isEqualTo("HTTP/1.1 200");
        }
        assertThat(upstreamHost.get()).isEqualTo("127.0.0.1:" + upstream.getAddress().getPort());
        assertThat(upstreamHopHeaders).containsExactly("keep-alive=null x-hop=null x-custom=c");
        assertThat(seen).containsExactly(
                "c->s host=client.example keep-alive=timeout=5 x-hop=1 x-custom=c",
                "s->c host=client.example keep-alive=timeout=5 x-hop=1 x-custom=c");
    }

    /** Sends one request on a connection of its own, which the client closes after the answer. */
    private String postOnNewConnection(String body, String... extraHeaders) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            StringBuilder head = new StringBuilder("POST /mcp HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n");
            for (String header : extraHeaders) {
                head.append(header).append("\r\n");
            }
            socket.getOutputStream().write((head + "\r\n" + body).getBytes(StandardCharsets.ISO_8859_1));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void anIdleUpstreamConnectionOutlivesItsClientConnectionAndServesTheNext() throws Exception {
        proxy = proxyBuilder(s -> s.ioThreads(1)).start();
        for (int i = 0; i < 3; i++) {
            assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
            awaitIdleUpstreams(1);
        }
        assertThat(upstreamPorts).hasSize(3);
        assertThat(Set.copyOf(upstreamPorts)).as("one upstream connection for the three clients").hasSize(1);
    }

    /**
     * Until the pool holds {@code count} idle upstream connections: a client that closed has its
     * upstream connection back in the pool only once the proxy has seen the close, which on
     * io_uring can come after the next client's request (a completion of its own), on epoll in
     * the same turn.
     */
    private void awaitIdleUpstreams(int count) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> proxy.upstreamPool().idleCount() == count);
    }

    @Test
    void upstreamConnectionsUseTheProxysAllocatorAsClientConnectionsDo() throws Exception {
        ByteBufAllocator alloc = new UnpooledByteBufAllocator(false);
        proxy = proxyBuilder(s -> s.ioThreads(1)).alloc(alloc).start();
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> proxy.upstreamPool().idleCount() == 1);
        assertThat(proxy.upstreamPool().idleChannels())
                .singleElement()
                .satisfies(channel -> assertThat(channel.config().getAllocator()).isSameAs(alloc));
    }

    @Test
    void upstreamConnectionsReadUpToAQuarterMebibyteAtATimeOnceAStreamRunsFast() throws Exception {
        proxy = proxyBuilder(s -> s.ioThreads(1)).start();
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> proxy.upstreamPool().idleCount() == 1);
        ChannelConfig config = proxy.upstreamPool().idleChannels().get(0).config();
        RecvByteBufAllocator.ExtendedHandle reads =
                (RecvByteBufAllocator.ExtendedHandle) config.getRecvByteBufAllocator().newHandle();
        int largest = 0;
        for (int turn = 0; turn < 20; turn++) { // every read fills its buffer, as a fast stream's do
            reads.reset(config);
            int guess = reads.guess();
            largest = Math.max(largest, guess);
            reads.incMessagesRead(1);
            reads.lastBytesRead(guess);
            reads.readComplete();
        }
        assertThat(largest).isEqualTo(UpstreamConnection.MAX_UPSTREAM_READ);
    }

    @Test
    void anUpstreamUrlWithAQueryOrFragmentIsRefusedAndOneWithAPathIsTaken() {
        assertThatThrownBy(() -> HttpProxy.builder(URI.create("http://127.0.0.1:3001/mcp?key=1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("upstream: http://127.0.0.1:3001/mcp?key=1 (expected: no query or fragment; the client's "
                        + "request line passes unchanged)");
        assertThatThrownBy(() -> HttpProxy.builder(URI.create("http://127.0.0.1:3001/mcp#top")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no query or fragment");
        assertThatThrownBy(() -> HttpProxy.builder(URI.create("ftp://127.0.0.1/mcp")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("http:// or https://");
        assertThat(HttpProxy.builder(URI.create("http://127.0.0.1:3001/some/prefix"))).isNotNull();
    }

    /** Seen in CI: a proxy handed the port its upstream was meant to take relayed to itself until no fd was left. */
    @Test
    void anUpstreamThatIsTheProxyItselfIsRefusedAtStartAndItsPortLetGo() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        for (String listen : List.of("127.0.0.1", "0.0.0.0")) {
            for (String host : List.of("127.0.0.1", "localhost")) {
                URI itself = URI.create("http://" + host + ":" + port + "/mcp");
                assertThatThrownBy(() -> HttpProxy.builder(HttpSettings.builder(itself).listen(new InetSocketAddress(listen, port)).build()).start())
                        .as("listening on %s, upstream %s", listen, itself).isInstanceOf(IOException.class)
                        .hasMessageStartingWith("the upstream " + itself + " is this proxy's own address")
                        .hasMessageContaining("expected: the MCP server's address");
            }
        }
        // The twin: the same listen address with an upstream one port away starts, and the refused
        // starts let their port go.
        URI next = URI.create("http://127.0.0.1:" + (port == 65535 ? port - 1 : port + 1) + "/mcp");
        proxy = HttpProxy.builder(HttpSettings.builder(next).listen(new InetSocketAddress("127.0.0.1", port)).build()).start();
        assertThat(proxy.address().getPort()).isEqualTo(port);
        assertThat(HttpProxy.isOwnAddress(URI.create("http://127.0.0.2:" + port + "/mcp"), proxy.address()))
                .as("another loopback address is another socket").isFalse();
    }

    @Test
    void anUpstreamConnectionTheUpstreamClosesIsNotReusedAndAGoneUpstreamIsStillAnswered502() throws Exception {
        proxy = proxyBuilder(s -> s.ioThreads(1)).start();
        // The upstream closes after this answer (Connection: close): its connection is not kept.
        assertThat(postOnNewConnection("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"close/after\"}"))
                .startsWith("HTTP/1.1 200");
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200");
        assertThat(Set.copyOf(upstreamPorts)).hasSize(2);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> proxy.upstreamPool().idleCount() == 1);
        // The upstream goes away: the idle connection it closes is dropped, and the next client
        // gets the proxy's own error, with its request's id.
        upstream.stop(0);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> proxy.upstreamPool().idleCount() == 0);
        String answer = postOnNewConnection("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
        assertThat(answer).startsWith("HTTP/1.1 502").contains("\"id\":8").contains("mcp-chaos: cannot reach the upstream");
    }

    @Test
    void faultsStillActPerRequestOnPooledUpstreamConnections() throws Exception {
        proxy = proxyBuilder(s -> s.ioThreads(1)).interceptor((ctx, frame) -> {
            if ("busy".equals(frame.method())) {
                ctx.connection().respondHttp(frame, 503, java.util.Map.of(), Unpooled.EMPTY_BUFFER);
                ctx.drop(frame);
            } else if (frame.direction() == Direction.SERVER_TO_CLIENT && frame.requestHeader("X-Cut") != null) {
                ctx.connection().closeServerSide(frame); // the answer still goes; its connection does not
                ctx.forward(frame);
            } else {
                ctx.forward(frame);
            }
        }).start();
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200");
        awaitIdleUpstreams(1);
        assertThat(postOnNewConnection("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"busy\"}"))
                .startsWith("HTTP/1.1 503");
        awaitIdleUpstreams(1);
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200");
        assertThat(Set.copyOf(upstreamPorts)).as("the injected 503 left the pooled connection usable").hasSize(1);
        awaitIdleUpstreams(1);
        assertThat(postOnNewConnection(INIT, "X-Cut: 1")).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
        awaitIdleUpstreams(0);
        assertThat(postOnNewConnection(INIT)).startsWith("HTTP/1.1 200");
        assertThat(upstreamPorts).hasSize(4);
        assertThat(upstreamPorts.get(2)).isEqualTo(upstreamPorts.get(0));
        assertThat(upstreamPorts.get(3)).as("the connection the fault closed is not reused")
                .isNotEqualTo(upstreamPorts.get(0));
    }

    /** The session's tools/call of "search", id 2, which the scripted upstream answers with two SSE events. */
    private HttpRequest searchCall() {
        return HttpRequest.newBuilder(proxyUri())
                .header("Content-Type", "application/json")
                .header("Mcp-Session-Id", "s-123")
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}"))
                .build();
    }

    private static final String PRIMING = "id: p0\ndata: \n\n";
    private static final String PRIMED_MESSAGE = "id: p1\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n";

    /** An interceptor that holds leading events (as a priming_drop rule does) and notes each frame's kind and held bytes. */
    private FrameInterceptor holdingLeadingEvents(List<String> seen) {
        return new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                if (frame.direction() == Direction.SERVER_TO_CLIENT) {
                    byte[] leading = frame.framing() instanceof dev.mcpchaos.core.codec.sse.SseFields f ? f.leading()
                            : null;
                    seen.add(frame.envelope().kind() + (leading == null ? ""
                            : " after " + new String(leading, StandardCharsets.UTF_8).strip()));
                }
                ctx.forward(frame);
            }

            @Override
            public boolean holdsLeadingEvents(TransportKind transport) {
                return true;
            }
        };
    }

    @Test
    void heldPrimingEventsGoWithTheFirstMessageAndReachTheClientAsTheyCame() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder().interceptor(holdingLeadingEvents(seen)).start();
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"primed/message\"}");
        assertThat(response.body()).isEqualTo(PRIMING + PRIMED_MESSAGE);
        assertThat(seen).as("no frame of its own for the priming event: the message carries it")
                .containsExactly("RESPONSE after id: p0\ndata:");
    }

    @Test
    void heldPrimingEventsOfAStreamWithoutAMessageGoAtItsEnd() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder().interceptor(holdingLeadingEvents(seen)).start();
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"primed/only\"}");
        assertThat(response.body()).isEqualTo(PRIMING);
        assertThat(seen).containsExactly("BLANK");
    }

    @Test
    void sseEventsAreStreamedOneByOneAndUnchanged() throws Exception {
        proxy = proxyBuilder().start();
        HttpRequest request = searchCall();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        InputStream body = response.body();
        String first = "id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                + "\"params\":{\"progress\":1}}\n\n";
        // The first event arrives while the upstream still holds the second: streamed, not buffered.
        assertThat(new String(body.readNBytes(first.length()), StandardCharsets.UTF_8)).isEqualTo(first);
        releaseSecondEvent.countDown();
        assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8))
                .isEqualTo("id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n");
    }

    @Test
    void anSseStreamNobodyInspectsIsRelayedAsItComesAndFramedFromTheNextEventOnceSomebodyDoes() throws Exception {
        AtomicBoolean inspecting = new AtomicBoolean(false);
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder().interceptor(new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                seen.add(frame.direction().arrow() + " " + frame.envelope().kind() + " " + frame.envelope().id());
                ctx.forward(frame);
            }

            @Override
            public boolean inspects(TransportKind transport, Direction direction) {
                return inspecting.get();
            }
        }).start();
        HttpRequest request = searchCall();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        InputStream body = response.body();
        String first = "id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                + "\"params\":{\"progress\":1}}\n\n";
        assertThat(new String(body.readNBytes(first.length()), StandardCharsets.UTF_8)).isEqualTo(first);
        assertThat(seen).as("nothing inspected the request or the first event").isEmpty();
        inspecting.set(true);
        releaseSecondEvent.countDown();
        assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8))
                .isEqualTo("id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n");
        assertThat(seen).containsExactly("s->c RESPONSE 2");
    }

    @ParameterizedTest(name = "sessions on {0}")
    @ValueSource(strings = {"the connection's event loop", "an executor of their own"})
    void observersSeeEachSseEventLentOnTheLoopAndOwnedAcrossAHop(String where) throws Exception {
        boolean ownExecutor = where.startsWith("an executor");
        DefaultEventLoop sessions = new DefaultEventLoop();
        List<String> seen = new CopyOnWriteArrayList<>();
        try {
            HttpProxy.Builder builder = proxyBuilder().interceptor(new FrameInterceptor() {
                @Override
                public void onFrame(InterceptorContext ctx, Frame frame) {
                    seen.add((frame.isLent() ? "lent " : "owned ") + frame.envelope().kind() + " "
                            + frame.content().toString(StandardCharsets.UTF_8));
                    ctx.forward(frame);
                }

                @Override
                public boolean inspects(TransportKind transport, Direction direction) {
                    return direction == Direction.SERVER_TO_CLIENT;
                }

                @Override
                public boolean onlyObserves(TransportKind transport, Direction direction) {
                    return true;
                }
            });
            if (ownExecutor) {
                builder.executor(sessions);
            }
            proxy = builder.start();
            HttpResponse<String> stream = client.send(HttpRequest.newBuilder(proxyUri())
                    .header("Accept", "text/event-stream").header("Mcp-Session-Id", "s-123").GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(stream.body()).isEqualTo(
                    ": keep-alive\n\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n");
            // Off the connection's loop, the frames are made owned before they hop: their bytes
            // are still there when the observer reads them on the other executor.
            String how = ownExecutor ? "owned " : "lent ";
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 2);
            assertThat(seen).containsExactly(how + "BLANK ",
                    how + "NOTIFICATION {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}");
        } finally {
            sessions.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void notificationGets202AndGetStreamAndDeletePass() throws Exception {
        proxy = proxyBuilder().start();
        assertThat(post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "Mcp-Session-Id", "s-123").statusCode()).isEqualTo(202);
        HttpResponse<String> stream = client.send(HttpRequest.newBuilder(proxyUri())
                .header("Accept", "text/event-stream").header("Mcp-Session-Id", "s-123").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(stream.statusCode()).isEqualTo(200);
        assertThat(stream.body()).isEqualTo(
                ": keep-alive\n\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n");
        HttpResponse<String> deleted = client.send(HttpRequest.newBuilder(proxyUri())
                .header("Mcp-Session-Id", "s-123").DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(deleted.statusCode()).isEqualTo(204);
        assertThat(proxy.sessionCount()).isZero();
    }

    @Test
    void interceptorsSeeCorrelatedFramesOfTheSession() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() != MessageKind.BLANK) {
                seen.add(ctx.session().id() + " " + frame.direction().arrow() + " " + frame.envelope().kind()
                        + " " + frame.method() + " " + frame.toolName());
            }
            ctx.forward(frame);
        }).start();
        post(INIT);
        HttpRequest call = searchCall();
        releaseSecondEvent.countDown();
        client.send(call, HttpResponse.BodyHandlers.ofString());
        assertThat(seen).containsExactly(
                "http-1 c->s REQUEST initialize null",
                "s-123 s->c RESPONSE initialize null",
                "s-123 c->s REQUEST tools/call search",
                "s-123 s->c NOTIFICATION notifications/progress null",
                "s-123 s->c RESPONSE tools/call search");
    }

    @Test
    void anInterceptorCanAnswerARequestItself() throws Exception {
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.REQUEST) {
                String error = "{\"jsonrpc\":\"2.0\",\"id\":" + frame.envelope().id()
                        + ",\"error\":{\"code\":-32603,\"message\":\"injected\"}}";
                ByteBuf content = Unpooled.copiedBuffer(error, StandardCharsets.UTF_8);
                ctx.emit(frame.reply(content, Envelope.ofObject("2.0", true, frame.envelope().id(), null, null,
                        false, true)));
                ctx.drop(frame);
            } else {
                ctx.forward(frame);
            }
        }).start();
        HttpResponse<String> response = post(INIT);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"injected\"}}");
        assertThat(upstreamBodies).isEmpty();
    }

    @Test
    void strayBytesBeforeAJsonAnswerLeadItsBody() throws Exception {
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.RESPONSE) {
                ctx.forward(frame.withContent(Unpooled.copiedBuffer("INFO warming up", StandardCharsets.UTF_8),
                        Envelope.malformed("noise")));
            }
            ctx.forward(frame);
        }).start();
        HttpResponse<String> response = post(INIT);
        assertThat(response.body()).isEqualTo("INFO warming up\n" + INIT_RESULT);
    }

    @Test
    void anInterceptorCanAnswerWithAnHttpStatus() throws Exception {
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.REQUEST) {
                ctx.connection().respondHttp(frame, 429, java.util.Map.of("Retry-After", "7"),
                        Unpooled.copiedBuffer("slow down", StandardCharsets.UTF_8));
                ctx.drop(frame);
            } else {
                ctx.forward(frame);
            }
        }).start();
        HttpResponse<String> response = post(INIT);
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("7");
        assertThat(response.body()).isEqualTo("slow down");
        assertThat(upstreamBodies).isEmpty();
    }

    @Test
    void anInterceptorCanMakeTheResponseClaimAnotherContentType() throws Exception {
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.REQUEST) {
                ctx.connection().overrideContentType(frame, "text/html");
            }
            ctx.forward(frame);
        }).start();
        HttpResponse<String> response = post(INIT);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html");
        assertThat(response.body()).isEqualTo(INIT_RESULT);
    }

    @Test
    void aJsonResponseCanClaimAnotherContentTypeButNotAnSseStreamWhoseHeadLeft() throws Exception {
        List<String> claimed = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.direction() == Direction.SERVER_TO_CLIENT) {
                claimed.add(frame.envelope().kind() + " " + ctx.connection().overrideContentType(frame, "text/html"));
            }
            ctx.forward(frame);
        }).start();
        HttpResponse<String> json = post(INIT);
        assertThat(json.headers().firstValue("Content-Type")).hasValue("text/html");
        releaseSecondEvent.countDown();
        HttpResponse<String> sse = client.send(searchCall(), HttpResponse.BodyHandlers.ofString());
        assertThat(sse.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        assertThat(sse.body()).contains("\"progress\":1", "\"id\":2");
        assertThat(claimed).containsExactly("RESPONSE true", "NOTIFICATION false", "RESPONSE false");
    }

    @Test
    void anExpiredSessionIsAnswered404ByTheProxy() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean expireNext = new java.util.concurrent.atomic.AtomicBoolean();
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (expireNext.get() && frame.envelope().kind() == MessageKind.NOTIFICATION) {
                ctx.connection().expireSession(frame);
            }
            ctx.forward(frame);
        }).start();
        post(INIT);
        expireNext.set(true);
        assertThat(post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", "Mcp-Session-Id", "s-123")
                .statusCode()).isEqualTo(202);
        HttpResponse<String> after = post("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}",
                "Mcp-Session-Id", "s-123");
        assertThat(after.statusCode()).isEqualTo(404);
        assertThat(after.body()).contains("\"id\":5").contains("session s-123 expired");
        assertThat(upstreamBodies).hasSize(2); // initialize and the notification, not tools/list
        assertThat(proxy.sessionCount()).isZero();
    }

    @Test
    void duplicatedRequestReachesTheUpstreamTwiceAndTheClientGetsOneAnswer() throws Exception {
        proxy = proxyBuilder().interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.REQUEST) {
                ctx.forward(frame.duplicate());
            }
            ctx.forward(frame);
        }).start();
        HttpResponse<String> response = post(INIT);
        assertThat(response.body()).isEqualTo(INIT_RESULT);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> upstreamBodies.size() == 2);
        assertThat(upstreamBodies).containsExactly("POST " + INIT, "POST " + INIT);
    }

    @Test
    void unreachableUpstreamIsAnswered502WithTheRequestId() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            closedPort = socket.getLocalPort();
        }
        proxy = HttpProxy.builder(URI.create("http://127.0.0.1:" + closedPort + "/mcp")).observer(observed).start();
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}");
        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"error\":{\"code\":-32000,"
                + "\"message\":\"mcp-chaos: cannot reach the upstream http://127.0.0.1:" + closedPort);
        // And it keeps serving.
        assertThat(post("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}").body()).contains("\"id\":7");
        assertThat(observed.events).containsExactly("upstream unreachable", "upstream unreachable");
    }

    @Test
    void silentUpstreamIsAnswered504() throws Exception {
        proxy = proxyBuilder(s -> s.responseTimeout(Duration.ofMillis(300))).observer(observed).start();
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"slow/never\"}");
        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(response.body()).contains("\"id\":9").contains("did not answer within 300 ms");
        assertThat(observed.events).containsExactly("upstream timeout");
    }

    @Test
    void theResponseTimeoutCountsFromEachRequestOnAKeptAliveConnection() throws Exception {
        // One timer serves the connection's requests: the one started by the first (answered) request
        // fires before the second's deadline, and must wait on for it, not answer the second early.
        proxy = proxyBuilder(s -> s.responseTimeout(Duration.ofMillis(600))).observer(observed).start();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            writePost(socket, INIT);
            assertThat(readResponse(in)).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
            Thread.sleep(300);
            long sent = System.nanoTime();
            writePost(socket, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"slow/never\"}");
            String answer = readResponse(in);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertThat(answer).startsWith("HTTP/1.1 504").contains("did not answer within 600 ms");
            assertThat(waitedMillis).isBetween(580L, 5_000L);
        }
        assertThat(observed.events).containsExactly("session started s-123", "upstream timeout");
    }

    private static void writePost(Socket socket, String body) throws IOException {
        socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Reads one response with a Content-Length body from a kept-alive connection. */
    private static String readResponse(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed after " + head);
            }
            head.append((char) b);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        assertThat(length.find()).as("Content-Length in %s", head).isTrue();
        return head + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
    }

    @Test
    void bodyOverTheLimitIsAnswered413() throws Exception {
        proxy = proxyBuilder(s -> s.maxRequestBody(100)).observer(observed).start();
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"p\":\""
                + "z".repeat(500) + "\"}}");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(upstreamBodies).isEmpty();
        assertThat(observed.events).containsExactly("limit request_body CLIENT_TO_SERVER");
    }

    @Test
    void garbageInsteadOfHttpIsAnsweredAndTheProxyKeepsServing() throws Exception {
        proxy = proxyBuilder().start();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.getOutputStream().write("\u0000\u0001garbage that is not HTTP\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            socket.setSoTimeout(10_000);
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertThat(answer).startsWith("HTTP/1.1 400");
        }
        assertThat(post(INIT).body()).isEqualTo(INIT_RESULT);
    }

    @Test
    void idleTimeoutClosesIdleConnectionsButNeverAStreamInProgress() throws Exception {
        proxy = proxyBuilder(s -> s.idleTimeout(Duration.ofMillis(300))).start();
        try (Socket idle = new Socket("127.0.0.1", proxy.address().getPort())) {
            idle.setSoTimeout(10_000);
            assertThat(idle.getInputStream().read()).isEqualTo(-1); // closed by the proxy
        }
        HttpResponse<String> stream = client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/long-stream"))
                .header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(stream.body()).isEqualTo(": keep-alive\n\n".repeat(12)
                + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n");
    }

    @Test
    void theIdleTimeoutCountsFromTheLastExchangeOnAKeptAliveConnection() throws Exception {
        // A connection in use past the timeout is not cut; once it has had no exchange for the
        // timeout, it is.
        proxy = proxyBuilder(s -> s.idleTimeout(Duration.ofMillis(800))).start();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            long opened = System.nanoTime();
            long lastAnswered = opened;
            while (System.nanoTime() - opened < TimeUnit.MILLISECONDS.toNanos(1_500)) {
                writePost(socket, INIT);
                String answer = readResponse(in);
                // Before the assertion: its first use loads AssertJ (hundreds of ms in a cold JVM),
                // which would start this clock that much after the proxy's.
                lastAnswered = System.nanoTime();
                assertThat(answer).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
                Thread.sleep(200); // well inside the timeout: the connection is in use
            }
            assertThat(in.read()).as("closed once idle").isEqualTo(-1);
            long idleMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastAnswered);
            assertThat(idleMillis).isBetween(780L, 5_000L);
        }
    }

    @Test
    void aClientStillSendingItsRequestHeadIsNotIdle() throws Exception {
        // Nothing is decoded until the head is whole, but every read counts as activity.
        proxy = proxyBuilder(s -> s.idleTimeout(Duration.ofMillis(500))).start();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            String[] pieces = {"POST /mcp HTTP/1.1\r\n", "Host: test\r\n", "Content-Type: application/json\r\n",
                "X-Slow: 1\r\n", "X-Slow: 2\r\n", "Content-Length: " + INIT.length() + "\r\n"};
            for (String piece : pieces) { // 6 x 200 ms: twice the idle timeout in all
                out.write(piece.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                Thread.sleep(200);
            }
            out.write(("\r\n" + INIT).getBytes(StandardCharsets.ISO_8859_1));
            assertThat(readResponse(socket.getInputStream())).startsWith("HTTP/1.1 200").endsWith(INIT_RESULT);
        }
    }

    @Test
    void connectionsOverTheLimitAreAnswered503() throws Exception {
        proxy = proxyBuilder(s -> s.maxConnections(1)).observer(observed).start();
        try (Socket held = new Socket("127.0.0.1", proxy.address().getPort())) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> proxy.openConnections() == 1);
            try (Socket refused = new Socket("127.0.0.1", proxy.address().getPort())) {
                refused.setSoTimeout(10_000);
                String answer = new String(refused.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertThat(answer).startsWith("HTTP/1.1 503");
            }
            assertThat(held.isConnected()).isTrue();
        }
        assertThat(observed.events).containsExactly("limit connections null");
    }

    /** Records what the transport reports, as short strings. */
    static final class RecordingObserver implements TransportObserver {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void sessionStarted(TransportKind transport, String sessionId) {
            events.add("session started " + sessionId);
        }

        @Override
        public void sessionEnded(TransportKind transport, String sessionId) {
            events.add("session ended " + sessionId);
        }

        @Override
        public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
            events.add("limit " + limit.tag() + " " + direction);
        }

        @Override
        public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
            events.add("upstream " + reason.tag());
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
