package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.http.HttpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The drain's deadline, on the paths the process test ({@code DrainIT}) does not take: a request
 * the upstream never answers gets a 503 with a JSON-RPC error and {@code Connection: close}; an
 * SSE stream that stands in the middle of an event is cut (no clean end: that would present the
 * half event as whole), after the bytes that came. Counted in the report.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpDrainTest {

    private static final String SSE_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";
    private static final String WHOLE_EVENT = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n";
    private static final String HALF_EVENT = "data: {\"jsonrpc\":\"2.0\",\"meth";

    private final List<Socket> sockets = new ArrayList<>();
    private ServerSocket upstream;

    @AfterEach
    void close() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    /** An upstream that answers nothing to POST and half an SSE event to GET; counts the requests it read. */
    private void startUpstream(CountDownLatch requests) throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(() -> {
            while (!upstream.isClosed()) {
                try {
                    Socket socket = upstream.accept();
                    synchronized (sockets) {
                        sockets.add(socket);
                    }
                    Thread serve = new Thread(() -> serve(socket, requests));
                    serve.setDaemon(true);
                    serve.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        accept.setDaemon(true);
        accept.start();
    }

    private static void serve(Socket socket, CountDownLatch requests) {
        try {
            String head = readHead(socket.getInputStream());
            requests.countDown();
            if (head.startsWith("GET")) {
                OutputStream out = socket.getOutputStream();
                String chunk = WHOLE_EVENT + HALF_EVENT;
                out.write((SSE_HEAD + Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            socket.getInputStream().read(); // hold the connection until the proxy closes it
        } catch (IOException e) {
            // the proxy closed it
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed in the head");
            }
            head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        for (String line : text.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                in.readNBytes(Integer.parseInt(line.substring(15).trim()));
            }
        }
        return text;
    }

    private Socket client(InetSocketAddress proxy, String request) throws IOException {
        Socket socket = new Socket(proxy.getAddress(), proxy.getPort());
        sockets.add(socket);
        socket.setSoTimeout(20_000);
        socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
        return socket;
    }

    @Test
    void atTheDeadlineAnUnansweredRequestGets503AndAStreamMidEventIsCut() throws Exception {
        CountDownLatch requests = new CountDownLatch(2);
        startUpstream(requests);
        URI url = URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp");
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(url)
                .listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String body = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"hang\"}}";
            Socket post = client(proxy.address(), "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
            Socket get = client(proxy.address(), "GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
            String streamHead = readHead(get.getInputStream());
            assertThat(streamHead).startsWith("HTTP/1.1 200").containsIgnoringCase("transfer-encoding: chunked");
            assertThat(requests.await(10, TimeUnit.SECONDS)).isTrue();

            HttpProxy.DrainReport report = proxy.drain(Duration.ofMillis(300));

            String answer = new String(post.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 503 ").containsIgnoringCase("connection: close")
                    .contains("\"id\":5").contains("the proxy is shutting down");
            String rest = new String(get.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(rest).as("the bytes that came, then a cut: no terminating chunk, no comment")
                    .contains(WHOLE_EVENT + HALF_EVENT).doesNotContain("0\r\n\r\n").doesNotContain("shutting down");
            assertThat(report.inFlight()).isEqualTo(2);
            assertThat(report.answered()).isEqualTo(1);
            assertThat(report.cut()).isEqualTo(1);
            assertThat(report.finished() + report.ended()).isZero();
            assertThat(proxy.draining()).isTrue();
        }
    }

    @Test
    void withNothingInFlightADrainIsImmediate() throws Exception {
        startUpstream(new CountDownLatch(0));
        URI url = URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp");
        try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(url)
                .listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            Socket idle = new Socket(proxy.address().getAddress(), proxy.address().getPort());
            sockets.add(idle);
            idle.setSoTimeout(10_000);
            Thread.sleep(100); // accepted by the proxy
            HttpProxy.DrainReport report = proxy.drain(Duration.ofSeconds(20));
            assertThat(report.took()).isLessThan(Duration.ofSeconds(5));
            assertThat(report.inFlight()).isZero();
            assertThat(report.idleClosed()).isEqualTo(1);
            assertThat(idle.getInputStream().read()).as("the idle connection is closed").isEqualTo(-1);
        }
    }
}
