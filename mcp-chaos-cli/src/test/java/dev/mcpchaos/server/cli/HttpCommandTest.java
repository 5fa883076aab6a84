package dev.mcpchaos.server.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.server.HttpProxyBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mcp-chaos http}: the path of --upstream is not prepended to anything, every request's
 * path passes unchanged, and the proxy says so at start with the URL clients must use.
 */
@Timeout(60)
class HttpCommandTest {

    private HttpServer upstream;
    /** The request targets (path and query, raw) the upstream received, in order. */
    private final List<String> received = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        upstream.createContext("/", exchange -> {
            received.add(exchange.getRequestURI().getRawPath()
                    + (exchange.getRequestURI().getRawQuery() != null ? "?" + exchange.getRequestURI().getRawQuery() : ""));
            byte[] body = ("ok " + exchange.getRequestURI().getRawPath()).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        upstream.start();
    }

    @AfterEach
    void stopUpstream() {
        upstream.stop(0);
    }

    @Test
    void theStartLogNamesTheUrlForClientsAndEveryPathPassesUnchanged() throws Exception {
        String upstreamUrl = "http://127.0.0.1:" + upstream.getAddress().getPort() + "/some/prefix";
        HttpCommand command = new HttpCommand();
        new CommandLine(command).parseArgs("--quiet", "--listen", "127.0.0.1:0", "--control", "off",
                "--upstream", upstreamUrl);
        Logger log = (Logger) LoggerFactory.getLogger(HttpCommand.class);
        Level level = log.getLevel();
        log.setLevel(Level.INFO); // the tests' logback configuration keeps WARN and above only
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        log.addAppender(logged);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        try (HttpProxyBuilder.RunningHttp proxy = command.start(null)) {
            String base = "http://127.0.0.1:" + proxy.address().getPort();
            assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
                    "clients: " + base + "/some/prefix -> " + upstreamUrl + " (paths pass unchanged)");

            List<String> targets = List.of("/some/prefix", "/mcp", "/some/prefix/deeper?x=1&y=%20z", "/");
            for (String target : targets) {
                HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(base + target))
                        .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(target).isEqualTo(200);
                assertThat(response.body()).as(target).isEqualTo("ok " + URI.create(target).getRawPath());
            }
            assertThat(received).containsExactlyElementsOf(targets); // nothing prepended, nothing dropped
        } finally {
            log.detachAppender(logged);
            log.setLevel(level);
        }
    }

    @Test
    void theControlTimeoutsOfTheCommandLineReachTheControlApi() throws Exception {
        HttpCommand command = new HttpCommand();
        new CommandLine(command).parseArgs("--quiet", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0",
                "--control-head-timeout", "1s", "--control-body-timeout", "1500ms",
                "--upstream", "http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp");
        try (HttpProxyBuilder.RunningHttp proxy = command.start(null);
             Socket halfHead = new Socket();
             Socket shortBody = new Socket()) {
            int port = proxy.controlAddress().getPort();
            for (Socket socket : List.of(halfHead, shortBody)) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
                socket.setSoTimeout(10_000);
            }
            long start = System.nanoTime();
            halfHead.getOutputStream().write("GET /status HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            shortBody.getOutputStream().write("PUT /rules HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nrul"
                    .getBytes(StandardCharsets.US_ASCII));
            String head = new String(halfHead.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            Duration headAfter = Duration.ofNanos(System.nanoTime() - start);
            String body = new String(shortBody.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            Duration bodyAfter = Duration.ofNanos(System.nanoTime() - start);
            assertThat(head).startsWith("HTTP/1.1 408 ").contains("not complete 1s after its first byte");
            assertThat(headAfter).isBetween(Duration.ofMillis(950), Duration.ofSeconds(4));
            assertThat(body).startsWith("HTTP/1.1 408 ").contains("not complete 1.5s after the head");
            assertThat(bodyAfter).isBetween(Duration.ofMillis(1450), Duration.ofSeconds(5));
        }
    }

    @Test
    void theClientsLineTakesTheUpstreamPathAndWritesAddressesAsUrls() throws Exception {
        assertThat(HttpCommand.clientsLine(new InetSocketAddress("127.0.0.1", 8080),
                URI.create("http://upstream.example:3001/some/prefix")))
                .isEqualTo("clients: http://127.0.0.1:8080/some/prefix -> http://upstream.example:3001/some/prefix "
                        + "(paths pass unchanged)");
        assertThat(HttpCommand.clientsLine(new InetSocketAddress("127.0.0.1", 8080),
                URI.create("https://mcp.example.com")))
                .isEqualTo("clients: http://127.0.0.1:8080/ -> https://mcp.example.com/ (paths pass unchanged)");
        assertThat(HttpCommand.clientsLine(new InetSocketAddress(InetAddress.getByName("::1"), 8080),
                URI.create("http://127.0.0.1:3001/mcp")))
                .isEqualTo("clients: http://[0:0:0:0:0:0:0:1]:8080/mcp -> http://127.0.0.1:3001/mcp "
                        + "(paths pass unchanged)");
        assertThat(HttpCommand.clientsLine(new InetSocketAddress(8080), URI.create("http://127.0.0.1:3001/mcp")))
                .isEqualTo("clients: http://<this host>:8080/mcp -> http://127.0.0.1:3001/mcp (paths pass unchanged)");
    }

    @Test
    void httpAndHttpsUrlsWithAHostAreTaken() {
        assertThat(HttpCommand.parseUpstream("http://127.0.0.1:3001/mcp")).isEqualTo(URI.create("http://127.0.0.1:3001/mcp"));
        assertThat(HttpCommand.parseUpstream("HTTPS://mcp.example.com/mcp").getHost()).isEqualTo("mcp.example.com");
        assertThat(HttpCommand.parseUpstream("http://[::1]:3001").getPort()).isEqualTo(3001);
    }

    @Test
    void theClientDeadlineOptionsReachTheProxy() throws Exception {
        HttpCommand command = new HttpCommand();
        new CommandLine(command).parseArgs("--quiet", "--listen", "127.0.0.1:0", "--control", "off",
                "--upstream", "http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp",
                "--request-head-timeout", "300ms", "--request-body-timeout", "2s", "--min-request-body-rate", "1KiB/s",
                "--send-timeout", "5s");
        try (HttpProxyBuilder.RunningHttp proxy = command.start(null);
             java.net.Socket socket = new java.net.Socket("127.0.0.1", proxy.address().getPort())) {
            socket.setSoTimeout(10_000);
            long start = System.nanoTime();
            socket.getOutputStream().write("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.ISO_8859_1));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            long took = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(answer).startsWith("HTTP/1.1 408 ").contains("did not end within 300 ms");
            assertThat(took).isBetween(250L, 5_000L);
        }
        assertThat(received).isEmpty();
    }

    @Test
    void aMinimumRateIsASizePerSecond() {
        assertThat(HttpCommand.parseRate("500B/s")).isEqualTo(500);
        assertThat(HttpCommand.parseRate("1KiB/s")).isEqualTo(1024);
        assertThat(HttpCommand.parseRate("2KB")).isEqualTo(2000);
        assertThat(HttpCommand.parseRate("0")).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> HttpCommand.parseRate("fast"))
                .hasMessage("--min-request-body-rate: 'fast' (expected: a size per second, such as 500B/s or 1KiB/s, or 0)");
    }
}
