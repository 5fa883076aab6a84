package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a client connection may cost the proxy, against raw-socket clients and
 * {@link ScriptedUpstream}: every phase of a connection has a deadline (request head, request
 * body and its rate, idle between requests, a client that does not read), every request that is
 * not valid HTTP is refused before it reaches the upstream, and what HTTP allows (pipelining,
 * HTTP/1.0 keep-alive, a body sent whole before the answer is read) is served. Each attack has
 * a twin where the well-behaved request must arrive; deadlines are short and real (hundreds of
 * milliseconds), and each expiry is counted in {@value ProxyMetrics#CLIENT_TIMEOUTS}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpClientLimitsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ExecutorService background = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "limits-it-client");
        thread.setDaemon(true);
        return thread;
    });
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @AfterEach
    void closeAll() throws Exception {
        background.shutdownNow();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private ScriptedUpstream upstream() {
        return closeLater(ScriptedUpstream.start(HttpClientLimitsIT::echoId));
    }

    private RunningHttp proxy(URI upstream, UnaryOperator<HttpProxyBuilder> options) throws IOException {
        return closeLater(options.apply(McpChaosProxy.http(upstream).metrics(registry)).start());
    }

    /** Answers a POST with a result that carries the request's id. */
    private static void echoId(ScriptedUpstream.Request request, ScriptedUpstream.Conn conn) throws IOException {
        String id = request.body.length == 0 ? "null" : JSON.readTree(request.body).path("id").toString();
        conn.respond(200, List.of("Content-Type: application/json"),
                ("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}").getBytes(UTF_8));
    }

    private static String ping(int id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}";
    }

    /** A ping of exactly {@code size} bytes. */
    private static byte[] ping(int id, int size) {
        String start = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\",\"params\":{\"pad\":\"";
        String end = "\"}}";
        return (start + "x".repeat(size - start.length() - end.length()) + end).getBytes(UTF_8);
    }

    private static byte[] postHead(String version, int contentLength, String... headers) {
        StringBuilder head = new StringBuilder("POST /mcp ").append(version).append("\r\nHost: 127.0.0.1\r\n")
                .append("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        if (contentLength >= 0) {
            head.append("Content-Length: ").append(contentLength).append("\r\n");
        }
        return head.append("\r\n").toString().getBytes(ISO_8859_1);
    }

    private double timeouts(String phase) {
        Counter counter = registry.find(ProxyMetrics.CLIENT_TIMEOUTS).tag("phase", phase).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void assertProxyError(RawHttp.Response response, int status) throws IOException {
        assertThat(response.status).isEqualTo(status);
        assertThat(response.header("Content-Type")).startsWith("application/json");
        JsonNode body = JSON.readTree(response.readBody());
        assertThat(body.path("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(body.get("id").isNull()).as("no id: the request's message never came whole").isTrue();
        assertThat(body.path("error").path("code").asInt()).isEqualTo(-32000);
        assertThat(body.path("error").path("message").asText()).startsWith("mcp-chaos: ");
    }

    private static void assertAnswered(RawHttp.Response response, int id) throws IOException {
        assertThat(response.status).isEqualTo(200);
        assertThat(JSON.readTree(response.readBody()).path("id").asInt()).isEqualTo(id);
    }

    /** Writes {@code bytes} a piece at a time on a thread of its own, until all went or the proxy closed. */
    private Future<?> trickle(RawHttp client, byte[] bytes, int piece, Duration every) {
        return background.submit(() -> {
            try {
                for (int at = 0; at < bytes.length; at += piece) {
                    client.write(java.util.Arrays.copyOfRange(bytes, at, Math.min(bytes.length, at + piece)));
                    Thread.sleep(every.toMillis());
                }
            } catch (IOException | InterruptedException e) {
                // the proxy closed the connection, or the test is over
            }
            return null;
        });
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    // ------------------------------------------------------------------------------ request head

    @Test
    void aHeadThatTricklesIsAnswered408AtItsDeadlineWhileAHeadInPiecesOnTimeArrives() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.requestHeadTimeout(Duration.ofMillis(400)));

        try (RawHttp slow = RawHttp.connect(proxy.address().getPort())) {
            // One byte every 50 ms: 7 s for the whole head, each byte a read of its own.
            long start = System.nanoTime();
            trickle(slow, postHead("HTTP/1.1", 10, "X-Padding: " + "a".repeat(40)), 1, Duration.ofMillis(50));
            RawHttp.Response response = slow.readResponse();
            long took = millisSince(start);
            assertProxyError(response, 408);
            assertThat(response.header("Connection")).isEqualToIgnoringCase("close");
            assertThat(slow.awaitClosedByPeer()).isTrue();
            System.out.printf("trickled head (deadline 400 ms): 408 after %d ms%n", took);
            assertThat(took).as("ms to the 408").isBetween(350L, 3_000L);
        }
        assertThat(timeouts("head")).isEqualTo(1);

        // The twin: a head in three pieces, 100 ms apart, ends within the deadline.
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(3).getBytes(UTF_8);
            byte[] head = postHead("HTTP/1.1", body.length);
            client.write(java.util.Arrays.copyOfRange(head, 0, 20));
            Thread.sleep(100);
            client.write(java.util.Arrays.copyOfRange(head, 20, 60));
            Thread.sleep(100);
            client.write(java.util.Arrays.copyOfRange(head, 60, head.length)).write(body);
            assertAnswered(client.readResponse(), 3);
        }
        assertThat(upstream.requests).as("only the twin reached the upstream").hasSize(1);
        assertThat(timeouts("head")).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------ request body

    @Test
    void aBodyThatStopsIsAnswered408AtTheBodyDeadlineWhileABodyInPiecesOnTimeArrives() throws Exception {
        ScriptedUpstream upstream = upstream();
        // The idle timeout is no help here (the attack of issue 19: 125 bytes of a 1,000,000 byte body).
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.requestBodyTimeout(Duration.ofMillis(500))
                .minRequestBodyRate(0).idleTimeout(Duration.ofSeconds(10)));

        try (RawHttp stalled = RawHttp.connect(proxy.address().getPort())) {
            long start = System.nanoTime();
            stalled.write(postHead("HTTP/1.1", 1_000_000)).write(java.util.Arrays.copyOf(ping(1, 200), 125));
            RawHttp.Response response = stalled.readResponse();
            long took = millisSince(start);
            assertProxyError(response, 408);
            assertThat(JSON.readTree(response.readBody()).path("error").path("message").asText())
                    .contains("did not end within 500 ms");
            assertThat(stalled.awaitClosedByPeer()).isTrue();
            System.out.printf("stalled body (deadline 500 ms): 408 after %d ms%n", took);
            assertThat(took).as("ms to the 408").isBetween(450L, 3_000L);
        }
        assertThat(timeouts("body")).isEqualTo(1);

        // The twin: a body in two halves 200 ms apart.
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(2, 200);
            client.write(postHead("HTTP/1.1", body.length)).write(java.util.Arrays.copyOf(body, 100));
            Thread.sleep(200);
            client.write(java.util.Arrays.copyOfRange(body, 100, 200));
            assertAnswered(client.readResponse(), 2);
            assertThat(upstream.requests).hasSize(1);
            assertThat(upstream.requests.get(0).body).isEqualTo(body);
        }
        assertThat(timeouts("body")).isEqualTo(1);
    }

    @Test
    void aBodyUnderTheMinimumRateIsAnswered408LongBeforeTheBodyDeadlineWhileOneAboveItArrives() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.requestBodyTimeout(Duration.ofSeconds(30))
                .minRequestBodyRate(2_000));

        try (RawHttp trickling = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(1, 10_000);
            long start = System.nanoTime();
            trickling.write(postHead("HTTP/1.1", body.length));
            trickle(trickling, body, 20, Duration.ofMillis(100)); // 200 bytes/s: 50 s for the body
            RawHttp.Response response = trickling.readResponse();
            long took = millisSince(start);
            assertProxyError(response, 408);
            assertThat(JSON.readTree(response.readBody()).path("error").path("message").asText())
                    .contains("slower than 2000 bytes/s");
            assertThat(trickling.awaitClosedByPeer()).isTrue();
            System.out.printf("body at 200 B/s (minimum 2000 B/s): 408 after %d ms%n", took);
            assertThat(took).as("ms to the 408: the first second is free, then 2000 B/s").isBetween(1_000L, 5_000L);
        }
        assertThat(timeouts("body")).isEqualTo(1);

        // The twin: slow too, but above the rate (5,000 bytes/s, 1.2 s for the body).
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(2, 6_000);
            client.write(postHead("HTTP/1.1", body.length));
            trickle(client, body, 500, Duration.ofMillis(100)).get(20, TimeUnit.SECONDS);
            assertAnswered(client.readResponse(), 2);
            assertThat(upstream.requests).hasSize(1);
            assertThat(upstream.requests.get(0).body).isEqualTo(body);
        }
        assertThat(timeouts("body")).isEqualTo(1);
    }

    /**
     * A pipelined request that misses its deadline while the one before it is still being
     * answered: the one before is answered, then the late one 408, in order, then the close.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"head", "body"})
    void aPipelinedRequestThatMissesItsDeadlineIsAnswered408InItsTurn(String phase) throws Exception {
        ScriptedUpstream upstream = closeLater(ScriptedUpstream.start((request, conn) -> {
            try {
                Thread.sleep(1_000); // the first request's answer takes a second
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            echoId(request, conn);
        }));
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.requestHeadTimeout(Duration.ofMillis(300))
                .requestBodyTimeout(Duration.ofMillis(300)).minRequestBodyRate(0));
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] first = ping(1).getBytes(UTF_8);
            client.write(postHead("HTTP/1.1", first.length)).write(first);
            Thread.sleep(50);
            byte[] second = ping(2, 100);
            if (phase.equals("head")) {
                client.write(java.util.Arrays.copyOf(postHead("HTTP/1.1", second.length), 30));
            } else {
                client.write(postHead("HTTP/1.1", second.length)).write(java.util.Arrays.copyOf(second, 50));
            }
            assertAnswered(client.readResponse(), 1);
            RawHttp.Response late = client.readResponse();
            assertProxyError(late, 408);
            assertThat(client.awaitClosedByPeer()).isTrue();
        }
        assertThat(upstream.requests).as("only the first request went upstream").hasSize(1);
        assertThat(timeouts(phase)).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------ idle

    @Test
    void bytesThatAreNoRequestDoNotKeepAnIdleConnectionOpenWhileRequestsDo() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.idleTimeout(Duration.ofMillis(600)));

        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            client.readTimeout(Duration.ofSeconds(5));
            assertAnswered(client.post("/mcp", ping(1)).readResponse(), 1);
            long start = System.nanoTime();
            // Blank lines between requests (HTTP allows them), one every 100 ms: not a request, not activity.
            trickle(client, "\r\n".repeat(100).getBytes(ISO_8859_1), 2, Duration.ofMillis(100));
            assertThat(client.awaitClosedByPeer()).as("closed as idle").isTrue();
            assertThat(millisSince(start)).isBetween(550L, 3_000L);
        }
        assertThat(timeouts("idle")).isEqualTo(1);

        // The twin: a request every 300 ms keeps the connection, 1.2 s in all (twice the idle timeout).
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            for (int id = 2; id <= 5; id++) {
                assertAnswered(client.post("/mcp", ping(id)).readResponse(), id);
                Thread.sleep(300);
            }
            assertAnswered(client.post("/mcp", ping(6)).readResponse(), 6);
        }
        assertThat(upstream.requests).hasSize(6);
        assertThat(timeouts("idle")).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------ send

    @Test
    void aClientThatStopsReadingIsClosedAtTheSendDeadlineWhileOneThatReadsIsNot() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failedAt = new AtomicLong();
        byte[] event = ("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
                + "{\"data\":\"" + "z".repeat(4000) + "\"}}\n\n").getBytes(UTF_8);
        ScriptedUpstream upstream = closeLater(ScriptedUpstream.start((request, conn) -> {
            conn.writeHead(200, List.of("Content-Type: text/event-stream", "Transfer-Encoding: chunked"));
            try {
                while (!stop.get()) {
                    conn.chunk(event);
                }
            } catch (IOException e) {
                failedAt.set(System.nanoTime()); // the proxy closed this connection
                throw e;
            }
            conn.endChunked();
        }));
        closeables.add(() -> stop.set(true));
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.sendTimeout(Duration.ofMillis(500)));

        // The twin first: a client that reads all the time, for 2 s (four send timeouts).
        try (RawHttp reader = RawHttp.connect(proxy.address().getPort())) {
            RawHttp.Response stream = reader.request("GET", "/mcp", List.of("Accept: text/event-stream"), null)
                    .readHead();
            assertThat(stream.status).isEqualTo(200);
            InputStream body = stream.body();
            byte[] buffer = new byte[1 << 16];
            long read = 0;
            long start = System.nanoTime();
            while (millisSince(start) < 2_000) {
                int n = body.read(buffer);
                assertThat(n).as("the stream goes on").isPositive();
                read += n;
            }
            assertThat(read).isGreaterThan(1_000_000);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> failedAt.get() != 0); // the reader left
        assertThat(timeouts("send")).isZero();
        failedAt.set(0);

        try (RawHttp client = RawHttp.connect(proxy.address().getPort(), 32 * 1024)) {
            RawHttp.Response stream = client.request("GET", "/mcp", List.of("Accept: text/event-stream"), null)
                    .readHead();
            assertThat(stream.status).isEqualTo(200);
            assertThat(stream.nextEvent()).startsWith("event: message\n");
            long start = System.nanoTime();
            // Reads nothing more: the proxy's buffers fill, the connection stops being writable.
            await().atMost(Duration.ofSeconds(10)).until(() -> failedAt.get() != 0);
            long took = TimeUnit.NANOSECONDS.toMillis(failedAt.get() - start);
            System.out.printf("client not reading (send timeout 500 ms): closed after %d ms%n", took);
            assertThat(took).as("ms to the close of the stream's upstream connection").isBetween(450L, 5_000L);
            assertThat(timeouts("send")).isEqualTo(1);
            // What the proxy had sent before it closed can still be read, then the connection ends.
            client.readTimeout(Duration.ofSeconds(5));
            assertThat(client.awaitClosedByPeer()).isTrue();
        }
    }

    // ------------------------------------------------------------------------------ strict HTTP

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ZZ\r\nhello\r\n0\r\n\r\n", "FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n", "3\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\nXYZ\r\n0\r\n\r\n",
        "5\r\nhello0\r\n\r\n", "5;\u0001junk\r\nhello\r\n0\r\n\r\n"})
    void anInvalidChunkedBodyIsAnswered400AndNothingReachesTheUpstream(String chunked) throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), UnaryOperator.identity());
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(postHead("HTTP/1.1", -1, "Transfer-Encoding: chunked"));
            out.write(chunked.getBytes(ISO_8859_1));
            byte[] next = ping(2).getBytes(UTF_8);
            out.write(postHead("HTTP/1.1", next.length)); // a valid request after it, on the same connection
            out.write(next);
            client.write(out.toByteArray());
            RawHttp.Response response = client.readResponse();
            assertProxyError(response, 400);
            assertThat(response.header("Connection")).isEqualToIgnoringCase("close");
            assertThat(client.awaitClosedByPeer()).isTrue();
        }
        Thread.sleep(200); // anything forwarded would have arrived by now
        assertThat(upstream.requests).as("what reached the upstream").isEmpty();
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            assertAnswered(client.post("/mcp", ping(3)).readResponse(), 3);
        }
        assertThat(upstream.requests).hasSize(1);
    }

    @Test
    void aValidChunkedBodyArrivesAndTheNextRequestOnItsConnectionIsAnswered() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), UnaryOperator.identity());
        String json = ping(1);
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(postHead("HTTP/1.1", -1, "Transfer-Encoding: chunked"));
            out.write(("5;ext=1\r\n" + json.substring(0, 5) + "\r\n" + Integer.toHexString(json.length() - 5) + "\r\n"
                    + json.substring(5) + "\r\n0\r\n\r\n").getBytes(ISO_8859_1));
            byte[] next = ping(2).getBytes(UTF_8);
            out.write(postHead("HTTP/1.1", next.length));
            out.write(next);
            client.write(out.toByteArray());
            assertAnswered(client.readResponse(), 1);
            assertAnswered(client.readResponse(), 2);
        }
        assertThat(upstream.requests).hasSize(2);
        assertThat(upstream.requests.get(0).bodyText()).isEqualTo(json);
    }

    @Test
    void twoHundredPipelinedRequestsAreAllAnsweredInOrder() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), UnaryOperator.identity());
        int count = 200; // past Netty's default pipeline depth (128), which closed the connection
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int id = 1; id <= count; id++) {
                byte[] body = ping(id).getBytes(UTF_8);
                out.write(postHead("HTTP/1.1", body.length));
                out.write(body);
            }
            client.write(out.toByteArray()); // all at once, before reading any answer
            for (int id = 1; id <= count; id++) {
                assertAnswered(client.readResponse(), id);
            }
            // And the connection serves on.
            assertAnswered(client.post("/mcp", ping(count + 1)).readResponse(), count + 1);
        }
        assertThat(upstream.requests).hasSize(count + 1);
    }

    @Test
    void http10KeepAliveIsHonouredAndHttp10WithoutItIsClosedAfterItsAnswer() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), UnaryOperator.identity());
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            for (int id = 1; id <= 3; id++) {
                byte[] body = ping(id).getBytes(UTF_8);
                client.write(postHead("HTTP/1.0", body.length, "Connection: keep-alive")).write(body);
                RawHttp.Response response = client.readResponse();
                assertAnswered(response, id);
                assertThat(response.header("Content-Length")).as("an HTTP/1.0 client needs the length").isNotNull();
                assertThat(response.header("Connection")).isEqualToIgnoringCase("keep-alive");
            }
        }
        assertThat(upstream.requests).hasSize(3);
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(4).getBytes(UTF_8);
            client.write(postHead("HTTP/1.0", body.length)).write(body);
            assertAnswered(client.readResponse(), 4);
            client.readTimeout(Duration.ofSeconds(5));
            assertThat(client.awaitClosedByPeer()).as("HTTP/1.0 closes unless asked").isTrue();
        }
    }

    @Test
    void aClientThatSendsSeventeenMebibytesBeforeReadingReads413() throws Exception {
        ScriptedUpstream upstream = upstream();
        RunningHttp proxy = proxy(upstream.endpoint(), UnaryOperator.identity()); // the limit: 16 MiB
        int size = 17 * 1024 * 1024;
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            Future<?> sent = background.submit(() -> {
                client.write(postHead("HTTP/1.1", size)).write(ping(1, size));
                return null;
            });
            sent.get(60, TimeUnit.SECONDS); // the whole body went: the proxy read it
            RawHttp.Response response = client.readResponse();
            assertProxyError(response, 413);
            assertThat(response.header("Connection")).isEqualToIgnoringCase("close");
            client.readTimeout(Duration.ofSeconds(5));
            assertThat(client.awaitClosedByPeer()).isTrue();
        }
        assertThat(upstream.requests).isEmpty();

        // The twin: 15 MiB, sent whole before reading, arrives.
        try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
            byte[] body = ping(2, 15 * 1024 * 1024);
            Future<?> sent = background.submit(() -> client.write(postHead("HTTP/1.1", body.length)).write(body));
            sent.get(60, TimeUnit.SECONDS);
            assertAnswered(client.readResponse(), 2);
        }
        assertThat(upstream.requests).hasSize(1);
        assertThat(upstream.requests.get(0).body).hasSize(15 * 1024 * 1024);
    }

    // ------------------------------------------------------------------------------ all slots held

    /**
     * 300 clients that trickle their heads hold all 300 connections the proxy allows: a client
     * that comes then is refused (503), and served once they are past their head deadline.
     */
    @Test
    void threeHundredSlowClientsHoldEverySlotOnlyUntilTheirHeadDeadline() throws Exception {
        ScriptedUpstream upstream = upstream();
        int slots = 300;
        RunningHttp proxy = proxy(upstream.endpoint(), b -> b.maxConnections(slots)
                .requestHeadTimeout(Duration.ofSeconds(4)));
        List<RawHttp> slow = new ArrayList<>();
        long start = System.nanoTime(); // before the first slow client's first byte
        for (int i = 0; i < slots; i++) {
            RawHttp client = closeLater(RawHttp.connect(proxy.address().getPort()));
            client.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".getBytes(ISO_8859_1));
            slow.add(client);
        }
        Future<?> trickle = background.submit(() -> {
            // A byte to each, every 100 ms, for at most 20 s.
            for (int round = 0; round < 200 && !Thread.currentThread().isInterrupted(); round++) {
                for (RawHttp client : slow) {
                    try {
                        client.write(new byte[] {'a'});
                    } catch (IOException e) {
                        // answered 408 and closed
                    }
                }
                Thread.sleep(100);
            }
            return null;
        });
        // For the proxy to accept them all: connect returns once the kernel has, and the proxy
        // (with paranoid leak detection) takes a few milliseconds a connection.
        Thread.sleep(1_500);
        try (RawHttp late = RawHttp.connect(proxy.address().getPort())) {
            late.readTimeout(Duration.ofSeconds(5));
            // The 503 comes unasked (sending a request too could meet the close and a reset).
            assertThat(late.readResponse().status).as("every slot is held").isEqualTo(503);
        }
        assertThat(millisSince(start)).as("the slots were all held before the deadline").isLessThan(4_000);

        // A well-behaved client, every 200 ms: served once the slow ones are gone (bounded).
        int[] served = {0};
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            try (RawHttp client = RawHttp.connect(proxy.address().getPort())) {
                RawHttp.Response response = client.post("/mcp", ping(2)).readResponse();
                if (response.status == 200) {
                    served[0]++;
                    return true;
                }
                return false;
            } catch (IOException e) {
                return false;
            }
        });
        long took = millisSince(start);
        System.out.printf("300 slow clients (head deadline 4 s): a well-behaved client served %d ms after the first"
                + " began%n", took);
        assertThat(served[0]).isEqualTo(1);
        assertThat(took).as("ms until the well-behaved client was served").isBetween(3_900L, 15_000L);
        for (RawHttp client : slow) {
            client.readTimeout(Duration.ofSeconds(5));
            assertThat(client.readResponse().status).isEqualTo(408);
        }
        assertThat(timeouts("head")).isEqualTo(slots);
        trickle.cancel(true);
        assertThat(upstream.requests).hasSize(1);
    }
}
