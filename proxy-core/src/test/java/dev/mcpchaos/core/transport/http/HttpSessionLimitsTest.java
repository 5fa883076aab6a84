package dev.mcpchaos.core.transport.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The session table's bounds through a running proxy, against a real upstream (the JDK's HTTP
 * server) and a real client (the JDK's HTTP client), on 127.0.0.1: a flood of made-up session
 * ids leaves at most the maximum (and none when the upstream refuses them), what was evicted is
 * collectable, an idle session is forgotten and counted while one with an open stream or regular
 * requests is not, and a forgotten id still works end to end when the upstream accepts it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpSessionLimitsTest {

    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
    private static final String NOTIFICATION = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    private HttpServer upstream;
    private HttpProxy proxy;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final AtomicInteger sessionsNamed = new AtomicInteger();
    private final AtomicLong upstreamRequests = new AtomicLong();
    private final CountDownLatch endStreams = new CountDownLatch(1);
    private final Counts counts = new Counts();

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newFixedThreadPool(4));
        upstream.createContext("/mcp", this::serveMcp);
        upstream.start();
    }

    @AfterEach
    void stop() {
        endStreams.countDown();
        if (proxy != null) {
            proxy.close();
        }
        upstream.stop(0);
    }

    /**
     * A server that names a session at initialize and accepts any id after it, as a server that
     * keeps no session state does, except ids beginning {@code refused-}: 400, the status the
     * TypeScript SDK's servers answer an id they do not know with.
     */
    private void serveMcp(HttpExchange exchange) throws IOException {
        upstreamRequests.incrementAndGet();
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String session = exchange.getRequestHeaders().getFirst("Mcp-Session-Id");
        if (session != null && session.startsWith("refused-")) {
            exchange.sendResponseHeaders(400, -1); // no body: one write, no wait on a delayed ACK
            exchange.close();
        } else if (exchange.getRequestMethod().equals("GET")) {
            // A GET stream that stays open, with a keep-alive comment now and then, until the test ends.
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            try {
                do {
                    out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
                    out.flush();
                } while (!endStreams.await(100, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException gone) {
                // the proxy closed the stream
            }
            exchange.close();
        } else if (body.contains("\"initialize\"")) {
            exchange.getResponseHeaders().set("Mcp-Session-Id", "s-" + sessionsNamed.incrementAndGet());
            respond(exchange, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}");
        } else if (body.contains("\"tools/call\"")) {
            respond(exchange, 200, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\","
                    + "\"text\":\"session " + session + "\"}]}}");
        } else {
            exchange.sendResponseHeaders(202, -1);
            exchange.close();
        }
    }

    private static void respond(HttpExchange exchange, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    private HttpProxy.Builder proxyBuilder() {
        return proxyBuilder(settings -> settings);
    }

    /** A proxy in front of the test's upstream, with these settings, counting what it observes. */
    private HttpProxy.Builder proxyBuilder(UnaryOperator<HttpSettings.Builder> settings) {
        return HttpProxy.builder(settings.apply(HttpSettings.builder(
                URI.create("http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"))).build()).observer(counts);
    }

    private HttpResponse<String> post(String body, String session) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String initialize() throws Exception {
        HttpResponse<String> answer = post(INIT, null);
        assertThat(answer.statusCode()).isEqualTo(200);
        return answer.headers().firstValue("Mcp-Session-Id").orElseThrow();
    }

    private static String toolsCall() {
        return "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
    }

    @Test
    void aFloodOfMadeUpIdsTheUpstreamAcceptsLeavesAtMostTheMaximumAndWhatWasEvictedIsCollectable() throws Exception {
        int max = 100;
        int flood = 10_000; // or as many as 45 s allow on a loaded machine, and at least 20 times the maximum
        List<WeakReference<Session>> firstSessions = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder(s -> s.maxSessions(max)).interceptor((ctx, frame) -> {
            if (firstSessions.size() < 50 && frame.envelope().kind() == MessageKind.NOTIFICATION) {
                firstSessions.add(new WeakReference<>(ctx.session()));
            }
            ctx.forward(frame);
        }).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
        int sent = 0;
        for (; sent < flood && System.nanoTime() < deadline; sent++) {
            assertThat(post(NOTIFICATION, "made-up-" + sent).statusCode()).isEqualTo(202);
            if (sent % 1000 == 0) {
                assertThat(proxy.sessionCount()).isLessThanOrEqualTo(max);
            }
        }
        assertThat(sent).as("requests sent in the time allowed").isGreaterThanOrEqualTo(20 * max);
        assertThat(upstreamRequests.get()).isEqualTo(sent);
        assertThat(proxy.sessionCount()).isEqualTo(max);
        assertThat(counts.started.get()).isEqualTo(sent);
        assertThat(counts.evicted.get()).isEqualTo(sent - max);
        assertThat(counts.idle.get()).isZero();
        assertThat(counts.started.get() - counts.ended.get() - counts.evicted.get()).as("kept, as the observer counts")
                .isEqualTo(proxy.sessionCount());
        assertThat(firstSessions).hasSize(50);
        awaitTrue(() -> {
            System.gc();
            return firstSessions.stream().allMatch(ref -> ref.get() == null);
        }, "the first sessions, long evicted, are collected");
    }

    @Test
    void idsTheUpstreamRefusesTakeNoPlace() throws Exception {
        proxy = proxyBuilder().start();
        for (int i = 0; i < 2_000; i++) {
            assertThat(post(NOTIFICATION, "refused-" + i).statusCode()).isEqualTo(400);
        }
        assertThat(proxy.sessionCount()).isZero();
        assertThat(counts.started.get()).isZero();
        // Its twin: an id the upstream accepts is kept.
        assertThat(post(NOTIFICATION, "accepted-1").statusCode()).isEqualTo(202);
        assertThat(proxy.sessionCount()).isEqualTo(1);
        assertThat(counts.started.get()).isEqualTo(1);
    }

    @Test
    void theNewestSessionsSurviveEviction() throws Exception {
        proxy = proxyBuilder(s -> s.maxSessions(3)).start();
        String[] ids = new String[6];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = initialize();
        }
        assertThat(proxy.sessionCount()).isEqualTo(3);
        for (int i = 0; i < ids.length; i++) {
            assertThat(proxy.sessions().isKnown(ids[i])).as(ids[i]).isEqualTo(i >= 3);
        }
        assertThat(counts.evicted.get()).isEqualTo(3);
    }

    @Test
    void anIdleSessionIsForgottenAndCountedWhileOneWithAnOpenStreamOrRegularRequestsIsKept() throws Exception {
        Duration idle = Duration.ofMillis(400);
        proxy = proxyBuilder(s -> s.sessionIdleTimeout(idle)).start();
        String forgotten = initialize();
        String streaming = initialize();
        String polling = initialize();
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp"))
                .header("Accept", "text/event-stream").header("Mcp-Session-Id", streaming).GET().build();
        CountDownLatch streamOpen = new CountDownLatch(1);
        var stream = client.sendAsync(get, info -> {
            streamOpen.countDown();
            return HttpResponse.BodySubscribers.discarding();
        });
        assertThat(streamOpen.await(10, TimeUnit.SECONDS)).isTrue();

        // Five timeouts long: a request of the polling session every 100 ms.
        long until = System.nanoTime() + idle.multipliedBy(5).toNanos();
        while (System.nanoTime() < until) {
            assertThat(post(toolsCall(), polling).statusCode()).isEqualTo(200);
            TimeUnit.MILLISECONDS.sleep(100); // the client's pace
        }
        assertThat(proxy.sessions().isKnown(forgotten)).as("idle for five timeouts").isFalse();
        assertThat(proxy.sessions().isKnown(streaming)).as("its GET stream is open").isTrue();
        assertThat(proxy.sessions().isKnown(polling)).as("used every 100 ms").isTrue();
        assertThat(counts.idle.get()).isEqualTo(1);
        assertThat(counts.expiredIds).containsExactly(forgotten);

        endStreams.countDown(); // the stream ends: its session is idle from then on
        stream.get(10, TimeUnit.SECONDS);
        awaitTrue(() -> proxy.sessionCount() == 0, "every session forgotten once idle");
        assertThat(counts.idle.get()).isEqualTo(3);
        assertThat(counts.started.get() - counts.ended.get() - counts.idle.get()).isZero();
    }

    @Test
    void aForgottenSessionStillWorksEndToEndAndIsKeptAgain() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyBuilder(s -> s.sessionIdleTimeout(Duration.ofMillis(200))).interceptor((ctx, frame) -> {
            if (frame.envelope().kind() == MessageKind.RESPONSE) {
                seen.add(ctx.session().id() + " " + frame.method());
            }
            ctx.forward(frame);
        }).start();
        String session = initialize();
        awaitTrue(() -> proxy.sessionCount() == 0, "the session forgotten");
        assertThat(counts.idle.get()).isEqualTo(1);

        HttpResponse<String> answer = post(toolsCall(), session);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\","
                + "\"text\":\"session " + session + "\"}]}}");
        assertThat(proxy.sessions().isKnown(session)).as("kept again: the upstream accepted it").isTrue();
        assertThat(counts.started.get()).isEqualTo(2);
        // Correlated as before: the response is matched to the request it answers.
        assertThat(seen).containsExactly(session + " initialize", session + " tools/call");
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    /** Counts session starts, ends and expiries by reason. */
    private static final class Counts implements TransportObserver {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger idle = new AtomicInteger();
        final AtomicInteger evicted = new AtomicInteger();
        final List<String> expiredIds = new CopyOnWriteArrayList<>();

        @Override
        public void sessionStarted(TransportKind transport, String sessionId) {
            started.incrementAndGet();
        }

        @Override
        public void sessionEnded(TransportKind transport, String sessionId) {
            ended.incrementAndGet();
        }

        @Override
        public void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
            (reason == SessionExpiry.IDLE ? idle : evicted).incrementAndGet();
            if (reason == SessionExpiry.IDLE) {
                expiredIds.add(sessionId);
            }
        }
    }
}
