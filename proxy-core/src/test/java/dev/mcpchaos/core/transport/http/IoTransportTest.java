package dev.mcpchaos.core.transport.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.transport.IoTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The proxy relays the same way on each I/O transport this machine has: every request arrives
 * upstream once and every answer comes back whole, small and large bodies, on kept-alive
 * connections, several at once; {@code auto} takes io_uring, else epoll, else NIO, and says why
 * when it passed io_uring over.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IoTransportTest {

    private HttpServer upstream;
    private HttpProxy proxy;
    private final AtomicInteger upstreamRequests = new AtomicInteger();

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        // Answers each call with the SHA-256 of its body and, for a body of "large", 300 KB back.
        upstream.createContext("/mcp", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            upstreamRequests.incrementAndGet();
            String digest = sha256(body);
            String text = new String(body, StandardCharsets.UTF_8).contains("\"large\"") ? "x".repeat(300_000) : "";
            byte[] answer = ("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sha\":\"" + digest + "\",\"text\":\"" + text
                    + "\"}}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        upstream.start();
    }

    @AfterEach
    void stop() {
        if (proxy != null) {
            proxy.close();
        }
        upstream.stop(0);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String call(String name, String padding) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + name
                + "\",\"arguments\":{\"pad\":\"" + padding + "\"}}}";
    }

    @ParameterizedTest
    @EnumSource(IoTransport.class)
    void everyCallArrivesOnceAndEveryAnswerComesBackWhole(IoTransport io) throws Exception {
        assumeTrue(io.isAvailable(), () -> io.label() + " is not available here: " + io.unavailableBecause().orElse(""));
        proxy = HttpProxy.builder(URI.create("http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"))
                .io(io).start();
        assertThat(proxy.ioTransport()).isEqualTo(io);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        URI endpoint = URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp");

        List<String> sent = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            // Small calls, calls of 200 KB that come in many reads, and calls with a large answer.
            String body = i % 3 == 0 ? call("echo", "p" + i) : i % 3 == 1 ? call("big", "y".repeat(200_000) + i)
                    : call("large", "q" + i);
            sent.add(body);
            answers.add(client.sendAsync(HttpRequest.newBuilder(endpoint).header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        for (int i = 0; i < sent.size(); i++) {
            HttpResponse<String> answer = answers.get(i).get(30, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as("call %d", i).isEqualTo(200);
            assertThat(answer.body()).as("call %d", i)
                    .contains("\"sha\":\"" + sha256(sent.get(i).getBytes(StandardCharsets.UTF_8)) + "\"")
                    .endsWith("\"}}");
            if (i % 3 == 2) {
                assertThat(answer.body()).contains("x".repeat(300_000));
            }
        }
        assertThat(upstreamRequests).hasValue(sent.size());
    }

    @Test
    void autoTakesTheFirstAvailableOfIoUringEpollAndNio() {
        IoTransport expected = IoTransport.IO_URING.isAvailable() ? IoTransport.IO_URING
                : IoTransport.EPOLL.isAvailable() ? IoTransport.EPOLL : IoTransport.NIO;
        assertThat(IoTransport.auto()).isEqualTo(expected);
        assertThat(IoTransport.autoChoice().note()).startsWith(expected.label());
        assertThat(IoTransport.NIO.isAvailable()).isTrue();
        assertThat(IoTransport.NIO.unavailableBecause()).isEmpty();
    }

    @Test
    void aTransportNamedThatIsNotAvailableFailsSayingWhy() {
        for (IoTransport io : IoTransport.values()) {
            if (io.isAvailable()) {
                assertThat(io.requireAvailable()).isEqualTo(io);
            } else {
                assertThatThrownBy(io::requireAvailable).isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("io transport " + io.label() + " is not available here ("
                                + io.unavailableBecause().orElseThrow() + ")");
            }
        }
    }

    @Test
    void theStartUpLineNamesTheDefaultsChoiceOnceAndANamedTransportPlainly() throws Exception {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        Logger proxyLog = (Logger) LoggerFactory.getLogger(HttpProxy.class);
        Level level = proxyLog.getLevel();
        // The tests' configuration logs warnings only; this test reads the INFO line, and keeps it off stderr.
        proxyLog.setLevel(Level.INFO);
        proxyLog.setAdditive(false);
        proxyLog.addAppender(logged);
        logged.start();
        URI target = URI.create("http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp");
        try {
            proxy = HttpProxy.builder(target).start();
            assertThat(proxy.ioTransport()).isEqualTo(IoTransport.auto());
            proxy.close();
            proxy = HttpProxy.builder(target).io(IoTransport.NIO).start();
            assertThat(proxy.ioTransport()).isEqualTo(IoTransport.NIO);
        } finally {
            proxyLog.detachAppender(logged);
            proxyLog.setAdditive(true);
            proxyLog.setLevel(level);
        }
        List<String> lines = logged.list.stream().filter(e -> e.getLevel() == Level.INFO)
                .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("(transport ")).toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("(transport " + IoTransport.autoChoice().note() + "), relaying to");
        assertThat(lines.get(1)).contains("(transport nio), relaying to");
    }

    @Test
    void wordsAreParsedAndAnythingElseIsRefusedNamingWhatIsExpected() {
        assertThat(IoTransport.parse("auto")).isNull();
        assertThat(IoTransport.parse("io_uring")).isEqualTo(IoTransport.IO_URING);
        assertThat(IoTransport.parse("IO-URING")).isEqualTo(IoTransport.IO_URING);
        assertThat(IoTransport.parse(" epoll ")).isEqualTo(IoTransport.EPOLL);
        assertThat(IoTransport.parse("nio")).isEqualTo(IoTransport.NIO);
        assertThatThrownBy(() -> IoTransport.parse("kqueue")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("io transport: 'kqueue' (expected: auto, io_uring, epoll or nio)");
    }
}
