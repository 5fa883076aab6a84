package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks of #19, each against the packaged proxy as a user runs it ({@code java -Xmx256m
 * -jar mcp-chaos.jar http ...}, paranoid leak detection on) in front of server-everything, while
 * a well-behaved MCP Java SDK client calls a tool every 100 ms and a monitor polls
 * {@code /health}: the well-behaved client never fails, every attacker is closed within its
 * deadline with the answer it is owed, the process's RSS stays under its bound, and the proxy's
 * counters name what it did. Every loop is bounded in count and time; traffic goes to 127.0.0.1.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdversarialIT {

    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern CONTROL = Pattern.compile("control API on http://127\\.0\\.0\\.1:(\\d+)");
    private static final String TOKEN = "adversarial-test-token";
    /** The deadlines the proxy runs with here, short so that the suite stays short. */
    private static final Duration HEAD_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration BODY_TIMEOUT = Duration.ofSeconds(3);
    /** How late past its deadline an attacker may be closed (the machine is shared and slow). */
    private static final Duration SLACK = Duration.ofSeconds(3);
    /** The RSS the proxy process may reach under any attack here, with -Xmx256m. */
    private static final long RSS_BOUND = 640L * 1024 * 1024;

    @TempDir
    static Path tempDir;

    private HttpPeers.ServerEverything everything;
    private Process proxy;
    private Path stderr;
    private URI endpoint;
    private URI control;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Socket> attackers = new CopyOnWriteArrayList<>();
    private WellBehaved client;
    private long peakRss;

    @BeforeAll
    void start() throws Exception {
        everything = HttpPeers.ServerEverything.start(tempDir);
        stderr = tempDir.resolve("proxy.stderr");
        ProcessBuilder builder = new ProcessBuilder(TestPeers.java().toString(), "-Xmx256m",
                "-Dio.netty.leakDetection.level=paranoid", "-jar", TestPeers.mcpChaosJar().toString(),
                "http", "--listen", "127.0.0.1:0", "--upstream", everything.endpoint().toString(),
                "--control", "127.0.0.1:0",
                "--max-connections", "300",
                "--max-buffered", "64MiB",
                "--request-head-timeout", HEAD_TIMEOUT.toSeconds() + "s",
                "--request-body-timeout", BODY_TIMEOUT.toSeconds() + "s",
                "--max-sessions", "1000")
                .redirectOutput(tempDir.resolve("proxy.stdout").toFile())
                .redirectError(stderr.toFile());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        builder.environment().remove("_JAVA_OPTIONS");
        builder.environment().put("MCP_CHAOS_CONTROL_TOKEN", TOKEN);
        proxy = builder.start();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> !proxy.isAlive() || LISTENING.matcher(read(stderr)).find()
                        && CONTROL.matcher(read(stderr)).find());
        assertThat(proxy.isAlive()).as("the proxy is running; stderr:%n%s", read(stderr)).isTrue();
        Matcher listening = LISTENING.matcher(read(stderr));
        assertThat(listening.find()).isTrue();
        endpoint = URI.create("http://127.0.0.1:" + listening.group(1) + "/mcp");
        Matcher controlAt = CONTROL.matcher(read(stderr));
        assertThat(controlAt.find()).isTrue();
        control = URI.create("http://127.0.0.1:" + controlAt.group(1));
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (proxy != null && proxy.isAlive()) {
                proxy.destroy();
                assertThat(proxy.waitFor(20, TimeUnit.SECONDS)).as("the proxy stops on SIGTERM").isTrue();
                assertThat(read(stderr)).as("Netty's paranoid leak detector").doesNotContain("LEAK:");
                assertThat(read(stderr)).doesNotContain("OutOfMemoryError");
            }
        } finally {
            if (proxy != null) {
                proxy.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (everything != null) {
                everything.close();
            }
            System.out.printf("AdversarialIT: the proxy's largest RSS seen: %d MiB%n", peakRss >> 20);
        }
    }

    @BeforeEach
    void wellBehavedClientStarts() {
        client = new WellBehaved();
        client.start();
    }

    @AfterEach
    void wellBehavedClientNeverFailed() throws Exception {
        for (Socket socket : attackers) {
            socket.close();
        }
        attackers.clear();
        WellBehaved finished = client;
        client = null;
        finished.stopAndJoin();
        System.out.printf("AdversarialIT: well-behaved calls %d ok, %d failed; health polls %d ok, %d failed; "
                        + "slowest call %d ms, slowest poll %d ms; RSS now %d MiB%n", finished.calls.get(),
                finished.callFailures.size(), finished.polls.get(), finished.pollFailures.size(),
                finished.slowestCall.get(), finished.slowestPoll.get(), rss() >> 20);
        assertThat(finished.callFailures).as("the well-behaved client's failures").isEmpty();
        assertThat(finished.pollFailures).as("the health monitor's failures").isEmpty();
        assertThat(finished.calls.get()).as("the well-behaved client made calls").isPositive();
        assertThat(proxy.isAlive()).as("the proxy lives; stderr:%n%s", tail(read(stderr))).isTrue();
    }

    // ================================================================ the attacks

    /** One header byte every 300 ms: a slowloris. Each is closed once the head deadline passed. */
    @Test
    @Order(1)
    void slowHeadersAreClosedAfterTheHeadDeadline() throws Exception {
        int count = 100;
        byte[] head = ("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nX-Slow: "
                + "a".repeat(200)).getBytes(ISO_8859_1);
        List<Socket> sockets = open(count);
        long start = System.nanoTime();
        int sent = 0;
        // Bounded: at most head.length bytes each, and no longer than the deadline and its slack.
        while (sent < head.length && elapsed(start).compareTo(HEAD_TIMEOUT.plus(SLACK)) < 0) {
            for (Socket socket : sockets) {
                writeQuietly(socket, head, sent, 1);
            }
            sent++;
            sampleRss();
            TimeUnit.MILLISECONDS.sleep(300); // the attacker's pace
        }
        assertEachClosedBy(sockets, start, HEAD_TIMEOUT.plus(SLACK), "408");
    }

    /** A body declared at 1,000,000 bytes, 125 sent, then silence: closed once the body deadline passed. */
    @Test
    @Order(2)
    void stalledBodiesAreAnswered408AfterTheBodyDeadline() throws Exception {
        long rssBefore = rss();
        List<Socket> sockets = open(100);
        long start = System.nanoTime();
        for (Socket socket : sockets) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1000000\r\n\r\n").getBytes(ISO_8859_1));
            out.write(new byte[125]);
            out.flush();
        }
        TimeUnit.MILLISECONDS.sleep(500); // for the proxy to read them all before RSS is read
        long rssHeld = rss();
        sampleRss();
        System.out.printf("AdversarialIT: RSS %d KiB more with 100 stalled bodies held: about %d KiB each%n",
                (rssHeld - rssBefore) >> 10, (rssHeld - rssBefore) / 100 >> 10);
        assertEachClosedBy(sockets, start, BODY_TIMEOUT.plus(SLACK), "408");
    }

    /**
     * 40 clients declare 16 MiB each and send 15 as fast as they can, then stop, against a
     * proxy with 256 MiB of heap and a 64 MiB ceiling on what it holds: those past the ceiling
     * are answered 503 at once, the others 408 at the body deadline; the process stays alive
     * and under its RSS bound. (Without the ceiling, 34 of 40 died of OutOfMemoryError under 512 MiB.)
     */
    @Test
    @Order(3)
    void largeBodiesPastTheCeilingAre503AndTheProcessLives() throws Exception {
        int count = 40;
        List<Socket> sockets = open(count);
        long start = System.nanoTime();
        List<Thread> senders = new ArrayList<>();
        AtomicInteger refusedWhileSending = new AtomicInteger();
        for (Socket socket : sockets) {
            Thread sender = new Thread(() -> {
                try {
                    OutputStream out = socket.getOutputStream();
                    out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + (16 << 20) + "\r\n\r\n").getBytes(ISO_8859_1));
                    byte[] piece = new byte[64 * 1024];
                    for (int i = 0; i < (15 << 20) / piece.length; i++) {
                        out.write(piece);
                    }
                    out.flush();
                } catch (IOException e) {
                    refusedWhileSending.incrementAndGet(); // answered and closed before all was sent
                }
            }, "big-body");
            sender.setDaemon(true);
            sender.start();
            senders.add(sender);
        }
        for (Thread sender : senders) {
            sender.join(30_000);
            sampleRss();
        }
        List<String> answers = assertEachClosedBy(sockets, start, BODY_TIMEOUT.plus(SLACK).plusSeconds(20), null);
        long refused = answers.stream().filter(a -> a.startsWith("HTTP/1.1 503")).count();
        System.out.printf("AdversarialIT: large bodies: %d answered 503, %d 408, %d other%n", refused,
                answers.stream().filter(a -> a.startsWith("HTTP/1.1 408")).count(),
                answers.stream().filter(a -> !a.startsWith("HTTP/1.1 503") && !a.startsWith("HTTP/1.1 408")).count());
        assertThat(refused).as("bodies past the 64 MiB ceiling").isPositive();
        assertThat(metric("mcp_chaos_limit_breaches_total", "limit=\"buffered\"")).isPositive();
        assertThat(peakRss).as("the proxy's RSS").isLessThan(RSS_BOUND);
    }

    /** 20,000 POSTs with session ids nobody made: the table keeps at most its maximum. */
    @Test
    @Order(4)
    void madeUpSessionIdsTakeAtMostTheTablesMaximum() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        int sent = 0;
        try (Socket socket = new Socket("127.0.0.1", endpoint.getPort())) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
            while (sent < 20_000 && System.nanoTime() < deadline) {
                out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                        + "Accept: application/json, text/event-stream\r\nMcp-Session-Id: made-up-" + sent + "\r\n"
                        + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(ISO_8859_1));
                readResponse(in);
                sent++;
            }
        }
        sampleRss();
        double active = metric("mcp_chaos_sessions_active", "transport=\"http\"");
        System.out.printf("AdversarialIT: %d made-up session ids sent, %.0f sessions in the table%n", sent, active);
        assertThat(sent).isGreaterThan(2_000);
        assertThat(active).as("sessions in the table").isLessThanOrEqualTo(1000);
    }

    /** 50 clients that send half a request head to the control API and stop: /health still answers. */
    @Test
    @Order(5)
    void slowControlClientsStopNoOne() throws Exception {
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Socket socket = new Socket("127.0.0.1", control.getPort());
            socket.getOutputStream().write("GET /status HTTP/1.1\r\nHost: te".getBytes(ISO_8859_1));
            socket.getOutputStream().flush();
            sockets.add(socket);
            attackers.add(socket);
        }
        // The monitor polls /health all along; give it a few seconds among the slow ones.
        TimeUnit.SECONDS.sleep(3); // the attack's length, not a wait for a result
        assertThat(client.polls.get()).isPositive();
    }

    /** The seven broken chunked bodies of #19: each is answered 400 and its connection closed. */
    @Test
    @Order(6)
    void invalidChunkedBodiesAre400() throws Exception {
        List<String> bodies = List.of("ZZ\r\nhello\r\n0\r\n\r\n", "FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n",
                "-5\r\nhello\r\n0\r\n\r\n", "3\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\nXYZ\r\n0\r\n\r\n",
                "5\r\nhello0\r\n\r\n", "5;\u0001junk\r\nhello\r\n0\r\n\r\n");
        List<Socket> sockets = open(bodies.size());
        long start = System.nanoTime();
        for (int i = 0; i < bodies.size(); i++) {
            OutputStream out = sockets.get(i).getOutputStream();
            out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n" + bodies.get(i)).getBytes(ISO_8859_1));
            out.flush();
        }
        assertEachClosedBy(sockets, start, SLACK.plus(BODY_TIMEOUT), "400");
    }

    /** 17 MiB sent before anything is read: the client reads the 413, not a reset. */
    @Test
    @Order(7)
    void aBodyOverTheLimitSentBeforeReadingGets413() throws Exception {
        Socket socket = open(1).get(0);
        long start = System.nanoTime();
        OutputStream out = socket.getOutputStream();
        out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: "
                + (17 << 20) + "\r\n\r\n").getBytes(ISO_8859_1));
        byte[] piece = new byte[64 * 1024];
        for (int i = 0; i < (17 << 20) / piece.length; i++) {
            out.write(piece);
        }
        out.flush();
        assertEachClosedBy(List.of(socket), start, BODY_TIMEOUT.plus(SLACK), "413");
    }

    /** 200 requests pipelined on one connection: 200 answers, none lost. */
    @Test
    @Order(8)
    void pipelinedRequestsBeyondNettysDepthAreAllAnswered() throws Exception {
        int count = 200;
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        String request = "POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        try (Socket socket = new Socket("127.0.0.1", endpoint.getPort())) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(request.repeat(count).getBytes(ISO_8859_1));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            for (int i = 0; i < count; i++) {
                assertThat(readResponse(in)).as("answer %d", i).startsWith("HTTP/1.1 ");
            }
        }
    }

    /** HTTP/1.0 with Connection: keep-alive: the second request on the connection is answered too. */
    @Test
    @Order(9)
    void http10KeepAliveServesTheNextRequest() throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        String request = "POST /mcp HTTP/1.0\r\nHost: test\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n"
                + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        try (Socket socket = new Socket("127.0.0.1", endpoint.getPort())) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            for (int i = 0; i < 2; i++) {
                socket.getOutputStream().write(request.getBytes(ISO_8859_1));
                socket.getOutputStream().flush();
                assertThat(readResponse(in)).as("answer %d", i).startsWith("HTTP/1.").containsIgnoringCase("keep-alive");
            }
        }
    }

    // ================================================================ the well-behaved

    /** An SDK client calling echo every 100 ms, and a monitor polling /health every 200 ms. */
    private final class WellBehaved {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger polls = new AtomicInteger();
        final List<String> callFailures = new CopyOnWriteArrayList<>();
        final List<String> pollFailures = new CopyOnWriteArrayList<>();
        final AtomicLong slowestCall = new AtomicLong();
        final AtomicLong slowestPoll = new AtomicLong();
        private volatile boolean stopping;
        private Thread caller;
        private Thread monitor;

        void start() {
            McpSyncClient sdk = HttpPeers.sdkClient(endpoint).requestTimeout(Duration.ofSeconds(10)).build();
            sdk.initialize();
            caller = new Thread(() -> {
                try {
                    // Bounded: at most 1,200 calls (two minutes at this pace).
                    for (int i = 0; i < 1200 && !stopping; i++) {
                        long start = System.nanoTime();
                        try {
                            McpSchema.CallToolResult result = sdk.callTool(McpSchema.CallToolRequest.builder("echo")
                                    .arguments(Map.of("message", "m" + i)).build());
                            if (!HttpPeers.text(result).equals("Echo: m" + i)) {
                                callFailures.add("call " + i + ": " + HttpPeers.text(result));
                            }
                            calls.incrementAndGet();
                        } catch (RuntimeException e) {
                            callFailures.add("call " + i + ": " + e);
                        }
                        slowestCall.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                        sleepQuietly(100);
                    }
                } finally {
                    sdk.closeGracefully();
                }
            }, "well-behaved-client");
            monitor = new Thread(() -> {
                for (int i = 0; i < 600 && !stopping; i++) {
                    long start = System.nanoTime();
                    try {
                        HttpResponse<String> health = http.send(HttpRequest.newBuilder(control.resolve("/health"))
                                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                        if (health.statusCode() != 200) {
                            pollFailures.add("poll " + i + ": " + health.statusCode());
                        }
                        polls.incrementAndGet();
                    } catch (IOException | RuntimeException e) {
                        pollFailures.add("poll " + i + ": " + e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    slowestPoll.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                    sleepQuietly(200);
                }
            }, "health-monitor");
            caller.start();
            monitor.start();
        }

        void stopAndJoin() throws InterruptedException {
            stopping = true;
            caller.join(20_000);
            monitor.join(20_000);
        }
    }

    // ================================================================ helpers

    private List<Socket> open(int count) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Socket socket = new Socket("127.0.0.1", endpoint.getPort());
            sockets.add(socket);
            attackers.add(socket);
        }
        return sockets;
    }

    /**
     * Waits for each socket to be closed by the proxy, within {@code within} of {@code start};
     * returns what each received. With {@code status}, each must have been answered with it.
     */
    private List<String> assertEachClosedBy(List<Socket> sockets, long start, Duration within, String status)
            throws IOException {
        List<String> answers = new ArrayList<>();
        for (Socket socket : sockets) {
            long left = within.toMillis() - elapsed(start).toMillis();
            socket.setSoTimeout((int) Math.max(1, left));
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            boolean closed;
            try {
                socket.getInputStream().transferTo(got);
                closed = true;
            } catch (SocketTimeoutException e) {
                closed = false;
            } catch (IOException e) {
                closed = true; // a reset after the answer is a close too
            }
            String answer = got.toString(ISO_8859_1);
            assertThat(closed).as("closed within %s; got so far: %s", within, answer).isTrue();
            if (status != null) {
                assertThat(answer).as("what the attacker got").startsWith("HTTP/1.1 " + status);
            }
            answers.add(answer);
        }
        return answers;
    }

    /** Reads one response with a Content-Length or chunked body. */
    private static String readResponse(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed after: " + head);
            }
            head.append((char) b);
        }
        Matcher length = Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        } else if (head.toString().toLowerCase().contains("transfer-encoding: chunked")) {
            while (true) {
                StringBuilder size = new StringBuilder();
                for (int b = in.read(); b != '\n'; b = in.read()) {
                    if (b < 0) {
                        throw new IOException("closed in a chunk");
                    }
                    size.append((char) b);
                }
                int n = Integer.parseInt(size.toString().trim(), 16);
                in.readNBytes(n + 2);
                if (n == 0) {
                    break;
                }
            }
        }
        return head.toString();
    }

    private double metric(String name, String label) throws Exception {
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(control.resolve("/metrics"))
                .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        double sum = 0;
        for (String line : metrics.body().split("\n")) {
            if (line.startsWith(name + "{") && line.contains(label)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private long rss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + proxy.pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
                }
            }
        } catch (IOException e) {
            // the process is gone: the caller's assertions say so
        }
        return 0;
    }

    private void sampleRss() {
        peakRss = Math.max(peakRss, rss());
    }

    private static void writeQuietly(Socket socket, byte[] bytes, int offset, int length) {
        try {
            socket.getOutputStream().write(bytes, offset, length);
            socket.getOutputStream().flush();
        } catch (IOException e) {
            // the proxy closed it: what assertEachClosedBy checks
        }
    }

    private static Duration elapsed(long start) {
        return Duration.ofNanos(System.nanoTime() - start);
    }

    private static void sleepQuietly(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String tail(String text) {
        return text.length() <= 4000 ? text : text.substring(text.length() - 4000);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
