package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.testing.CatProxy;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients that send half a request and stop hold nobody else up: a well-behaved client is served
 * at once while they are held, and each of them is answered 408 and closed at its deadline.
 * Every socket talks to 127.0.0.1.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ControlApiSlowClientsTest {

    private static final Duration HEAD_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration BODY_TIMEOUT = Duration.ofSeconds(6);
    /** How late after its deadline an attacker may be closed, on a busy machine. */
    private static final Duration SLACK = Duration.ofSeconds(2);
    private static final int HALF_HEADS = 50;
    private static final int SHORT_BODIES = 10;
    private static final ObjectMapper JSON = new ObjectMapper();

    private CatProxy cat;
    private final List<Attacker> attackers = new ArrayList<>();

    @AfterEach
    void close() {
        attackers.forEach(Attacker::close);
        if (cat != null) {
            cat.close();
        }
    }

    /** A raw connection that sends what it is given and reads all it gets until the proxy closes it. */
    private static final class Attacker {
        final Socket socket;
        final Thread reader;
        final ByteArrayOutputStream received = new ByteArrayOutputStream();
        volatile long lastSentAt;
        volatile long closedAt;

        Attacker(int port, String name) throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(60_000);
            reader = new Thread(() -> {
                byte[] buffer = new byte[4096];
                try (InputStream in = socket.getInputStream()) {
                    for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                        synchronized (received) {
                            received.write(buffer, 0, n);
                        }
                    }
                } catch (IOException ignored) {
                    // a reset or our own close: the time is what counts
                }
                closedAt = System.nanoTime();
            }, name);
            reader.setDaemon(true);
            reader.start();
        }

        void send(String text) throws IOException {
            OutputStream out = socket.getOutputStream();
            out.write(text.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            lastSentAt = System.nanoTime();
        }

        String received() {
            synchronized (received) {
                return received.toString(StandardCharsets.UTF_8);
            }
        }

        boolean open() {
            return closedAt == 0;
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    @Test
    void halfRequestsHoldNobodyUpAndAreAnswered408AtTheirDeadlines() throws Exception {
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0))
                .controlHeadTimeout(HEAD_TIMEOUT).controlBodyTimeout(BODY_TIMEOUT));
        int port = cat.control().getPort();
        List<Attacker> halfHeads = new ArrayList<>();
        for (int i = 0; i < HALF_HEADS; i++) {
            Attacker a = new Attacker(port, "half-head-" + i);
            a.send("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ");
            halfHeads.add(a);
        }
        List<Attacker> shortBodies = new ArrayList<>();
        for (int i = 0; i < SHORT_BODIES; i++) {
            Attacker a = new Attacker(port, "short-body-" + i);
            a.send("PUT /rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nrules:\n  - name: never\n");
            shortBodies.add(a);
        }
        // One header byte every 250 ms: each byte must not buy it more time.
        Attacker trickler = new Attacker(port, "trickler");
        trickler.send("G");
        long trickleStart = trickler.lastSentAt;
        Thread trickle = new Thread(() -> {
            String rest = "ET /status HTTP/1.1\r\nX-Trickle: " + "a".repeat(200);
            try {
                for (int i = 0; i < rest.length() && trickler.open() && trickler.received().isEmpty(); i++) {
                    Thread.sleep(250);
                    trickler.send(rest.substring(i, i + 1));
                }
            } catch (IOException | InterruptedException ignored) {
                // closed by the proxy, as it should be
            }
        }, "trickle-writer");
        trickle.setDaemon(true);
        trickle.start();
        attackers.addAll(halfHeads);
        attackers.addAll(shortBodies);
        attackers.add(trickler);

        // A well-behaved client polls while all of them are held, well before the first deadline.
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long pollUntil = trickleStart + HEAD_TIMEOUT.minusMillis(1500).toNanos();
        int polls = 0;
        long slowestPoll = 0;
        while (polls < 300 && System.nanoTime() < pollUntil) {
            long pollStart = System.nanoTime();
            HttpResponse<String> health = client.send(get(port, "/health"), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).isEqualTo("ok");
            HttpResponse<String> status = client.send(get(port, "/status"), HttpResponse.BodyHandlers.ofString());
            assertThat(status.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(status.body()).path("transport").asText()).isEqualTo("stdio");
            if (polls % 10 == 0) {
                // And on a new connection each time: the server accepts and answers while they wait.
                assertThat(freshConnectionGet(port, "/metrics")).startsWith("HTTP/1.1 200 OK\r\n")
                        .contains("mcp_chaos_control_timeouts_total");
            }
            polls++;
            slowestPoll = Math.max(slowestPoll, System.nanoTime() - pollStart);
        }
        long pollsEnded = System.nanoTime();
        System.out.printf("%d polls of /health and /status while %d attackers were held; the slowest took %.1f ms%n",
                polls, attackers.size(), slowestPoll / 1e6);
        assertThat(polls).as("polls answered while the attackers were held").isGreaterThanOrEqualTo(20);
        assertThat(attackers).as("attackers still held when the polls ended").allMatch(Attacker::open);

        // Each is answered 408 with the reason, and closed, at its deadline: not before, not much after.
        for (Attacker a : halfHeads) {
            assertClosedAtDeadline(a, a.lastSentAt, HEAD_TIMEOUT, "the request head was not complete 5s after "
                    + "its first byte (expected: the whole head within 5s)");
        }
        for (Attacker a : shortBodies) {
            assertClosedAtDeadline(a, a.lastSentAt, BODY_TIMEOUT, "the request body was not complete 6s after "
                    + "the head (expected: the whole body within 6s)");
        }
        assertClosedAtDeadline(trickler, trickleStart, HEAD_TIMEOUT, "the request head was not complete 5s");
        trickle.join(5_000);
        assertThat(pollsEnded).isLessThan(trickler.closedAt);

        // Counted by phase; nothing of the short PUTs was applied; and it serves on.
        String metrics = client.send(get(port, "/metrics"), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(metrics).contains("mcp_chaos_control_timeouts_total{phase=\"head\"} " + (HALF_HEADS + 1) + ".0")
                .contains("mcp_chaos_control_timeouts_total{phase=\"body\"} " + SHORT_BODIES + ".0")
                .contains("mcp_chaos_control_timeouts_total{phase=\"send\"} 0.0");
        assertThat(client.send(get(port, "/rules"), HttpResponse.BodyHandlers.ofString()).body())
                .isEqualTo("{\"rules\":[]}");
    }

    @Test
    void aHeadCompletedWithinItsDeadlineIsServed() throws Exception {
        // The twin: slow, but within the deadline, it is answered like any other.
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0))
                .controlHeadTimeout(Duration.ofSeconds(3)).controlBodyTimeout(Duration.ofSeconds(3)));
        Attacker slow = new Attacker(cat.control().getPort(), "slow-but-in-time");
        attackers.add(slow);
        slow.send("PUT /rules HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        Thread.sleep(1_000);
        String body = "rules:\n  - name: late\n    fault: {type: drop}\n";
        slow.send("Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body.substring(0, 10));
        Thread.sleep(1_000);
        slow.send(body.substring(10));
        slow.reader.join(10_000);
        assertThat(slow.received()).startsWith("HTTP/1.1 200 OK\r\n").contains("\"name\":\"late\"");
        assertThat(cat.get("/rules").body()).contains("\"late\"");
    }

    @Test
    void withATokenABodyIsNotHeldForAClientWithout() throws Exception {
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0)).controlToken("t0ken-sEcret")
                .controlBodyTimeout(Duration.ofSeconds(4)));
        int port = cat.control().getPort();
        ByteBufAllocatorMetric memory = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
        long heldBefore = memory.usedDirectMemory() + memory.usedHeapMemory();
        // Each declares a body of 1 MiB without the token, sends 900 KB of it and stops.
        List<Attacker> bodies = new ArrayList<>();
        String part = "x".repeat(900 * 1024);
        for (int i = 0; i < 40; i++) {
            Attacker a = new Attacker(port, "no-token-" + i);
            a.send("PUT /rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + ControlServer.MAX_BODY_BYTES
                    + "\r\n\r\n");
            a.send(part);
            bodies.add(a);
        }
        attackers.addAll(bodies);
        // Each is refused at its head, at once, and its body read and dropped as it comes.
        await().atMost(Duration.ofSeconds(3)).until(() -> bodies.stream().allMatch(a -> a.received().contains("\r\n\r\n")));
        for (Attacker a : bodies) {
            assertThat(a.received()).startsWith("HTTP/1.1 401 Unauthorized\r\n").contains("PUT /rules: refused (no "
                    + "Authorization header");
            assertThat(a.open()).isTrue();
        }
        long held = memory.usedDirectMemory() + memory.usedHeapMemory() - heldBefore;
        System.out.printf("40 bodies of 900 KB without the token held %.1f MB of buffers%n", held / 1e6);
        assertThat(held).as("bytes held for 40 x 900 KB refused bodies").isLessThan(16L * 1024 * 1024);
        // The one with the token is served meanwhile.
        assertThat(cat.request("GET", "/rules", null, "Authorization", "Bearer t0ken-sEcret").statusCode())
                .isEqualTo(200);
        // At the body's deadline they are closed, without a second answer.
        for (Attacker a : bodies) {
            a.reader.join(Duration.ofSeconds(4).plus(SLACK).plusSeconds(5).toMillis());
            assertThat(a.open()).isFalse();
            assertThat(a.received()).doesNotContain("408");
        }
        String metrics = cat.request("GET", "/metrics", null, "Authorization", "Bearer t0ken-sEcret").body();
        assertThat(metrics).contains("mcp_chaos_control_timeouts_total{phase=\"body\"} 40.0");
    }

    /** 900 rules with names of 1,000 characters: GET /rules answers about 1 MB, more than sockets buffer. */
    private static String bigRuleFile() {
        StringBuilder yaml = new StringBuilder("rules:\n");
        for (int i = 0; i < 900; i++) {
            yaml.append("  - {name: r").append(i).append('-').append("x".repeat(1000)).append(", fault: {type: drop}, ")
                    .append("match: {tool: nothing-calls-this}}\n");
        }
        return yaml.toString();
    }

    @Test
    void aClientThatReadsNoneOfItsAnswersIsClosedAfterTheBodyTimeout() throws Exception {
        Duration bodyTimeout = Duration.ofSeconds(3);
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0)).controlBodyTimeout(bodyTimeout));
        int port = cat.control().getPort();
        assertThat(cat.request("PUT", "/rules", bigRuleFile()).statusCode()).isEqualTo(200);
        int rulesAnswer = cat.get("/rules").body().length();
        assertThat(rulesAnswer).isGreaterThan(900_000);
        String twelve = "GET /rules HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(12);

        // Twelve answers of about 1 MB asked for at once, none read.
        Socket deaf = new Socket();
        deaf.setReceiveBufferSize(2048);
        deaf.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        deaf.getOutputStream().write(twelve.getBytes(StandardCharsets.US_ASCII));
        long sentAt = System.nanoTime();
        try (deaf) {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            // Meanwhile others are served, and the deaf one is still open until its deadline.
            long closedAt = 0;
            while (closedAt == 0 && System.nanoTime() - sentAt < bodyTimeout.plus(SLACK).plusSeconds(3).toNanos()) {
                HttpResponse<String> metrics = client.send(get(port, "/metrics"), HttpResponse.BodyHandlers.ofString());
                assertThat(metrics.statusCode()).isEqualTo(200);
                if (metrics.body().contains("mcp_chaos_control_timeouts_total{phase=\"send\"} 1.0")) {
                    closedAt = System.nanoTime();
                } else {
                    assertThat(metrics.body()).contains("mcp_chaos_control_timeouts_total{phase=\"send\"} 0.0");
                    Thread.sleep(100);
                }
            }
            assertThat(closedAt).as("closed for its unread answers").isPositive();
            assertThat(Duration.ofNanos(closedAt - sentAt)).isBetween(bodyTimeout.minusMillis(50),
                    bodyTimeout.plus(SLACK));
        }

        // The twin: the same twelve, read as they come, are all answered in full and in order.
        try (Socket reader = new Socket()) {
            reader.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            reader.setSoTimeout(10_000);
            reader.getOutputStream().write((twelve + "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String all = new String(reader.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(all.split("HTTP/1.1 200 OK\r\n", -1)).hasSize(14);
            assertThat(all).endsWith("\r\n\r\nok");
            assertThat(all.length()).isGreaterThan(12 * rulesAnswer);
        }
    }

    private static void assertClosedAtDeadline(Attacker a, long startedAt, Duration deadline, String reason)
            throws InterruptedException {
        a.reader.join(deadline.plus(SLACK).plusSeconds(5).toMillis());
        assertThat(a.open()).as("%s closed", a.reader.getName()).isFalse();
        Duration after = Duration.ofNanos(a.closedAt - startedAt);
        assertThat(after).as("%s closed after", a.reader.getName())
                .isGreaterThanOrEqualTo(deadline.minusMillis(50))
                .isLessThanOrEqualTo(deadline.plus(SLACK));
        assertThat(a.received()).startsWith("HTTP/1.1 408 Request Timeout\r\n")
                .contains("Connection: close\r\n")
                .contains(reason);
    }

    private static HttpRequest get(int port, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(2)).GET().build();
    }

    /** A GET on a connection of its own, closed after the answer; the whole answer as text. */
    private static String freshConnectionGet(int port, String path) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
