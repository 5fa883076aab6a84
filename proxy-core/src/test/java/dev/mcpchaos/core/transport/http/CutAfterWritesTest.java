package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.IoTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A disconnect fault closes the client's connection only after what was let through before it
 * has gone out, on every I/O transport: an SSE event of 8 MiB, then the event the fault acts on,
 * to a client that takes its time to read, through a small receive buffer. Closed at once, the part of the
 * large event still waiting to be written would be lost (on io_uring, where a write is submitted
 * with the event loop's next batch, even a small one was), while the fault's event says only its
 * own message was cut. The twin without the fault gets both events and the stream's proper end.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CutAfterWritesTest {

    private static final int LARGE = 8 * 1024 * 1024;
    private static final String CUT_METHOD = "notifications/cut_here";

    private ServerSocket upstream;
    private Thread upstreamThread;
    private final List<Socket> upstreamConnections = new CopyOnWriteArrayList<>();
    private HttpProxy proxy;

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        upstreamThread = new Thread(this::serve, "sse-upstream");
        upstreamThread.setDaemon(true);
        upstreamThread.start();
    }

    @AfterEach
    void stop() throws IOException {
        if (proxy != null) {
            proxy.close();
        }
        upstream.close();
        for (Socket s : upstreamConnections) {
            s.close();
        }
    }

    /** Answers each POST with an SSE stream: the large event, the one the fault cuts at, the end; then stays open. */
    private void serve() {
        try {
            while (!upstream.isClosed()) {
                Socket s = upstream.accept();
                upstreamConnections.add(s);
                readRequest(s.getInputStream());
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                chunk(out, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                        + "\"params\":{\"data\":\"" + "x".repeat(LARGE) + "\"}}\n\n");
                chunk(out, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"" + CUT_METHOD + "\"}\n\n");
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
        } catch (IOException closed) {
            // the test is over
        }
    }

    private static void chunk(OutputStream out, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    /** Reads a head and its Content-Length body. */
    private static void readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("request cut short");
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        in.readNBytes(length);
    }

    /** Cuts the client's side at the event of {@link #CUT_METHOD}, or (the twin) lets everything through. */
    private static FrameInterceptor disconnectAtCut(boolean active) {
        return (InterceptorContext ctx, Frame frame) -> {
            if (active && CUT_METHOD.equals(frame.envelope().method())) {
                ctx.connection().closeClientSide(frame);
                ctx.drop(frame);
            } else {
                ctx.forward(frame);
            }
        };
    }

    /**
     * What a client that waits 300 ms before it reads, through a 4 KiB receive buffer, gets, up to the
     * stream's end (and whether the connection closed within 300 ms of it), EOF, or 3 s of silence.
     */
    private Received postThenReadLate() throws IOException, InterruptedException {
        try (Socket client = new Socket()) {
            client.setReceiveBufferSize(4096);
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.address().getPort()));
            String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"stream\"}}";
            client.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
            client.getOutputStream().flush();
            Thread.sleep(300); // the proxy fills the socket and holds the rest of the large event
            client.setSoTimeout(3000);
            InputStream in = client.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buffer = new byte[16 * 1024];
            while (true) {
                int n;
                try {
                    n = in.read(buffer);
                } catch (SocketTimeoutException silence) {
                    return new Received(got.toString(StandardCharsets.UTF_8), false);
                }
                if (n < 0) {
                    return new Received(got.toString(StandardCharsets.UTF_8), true);
                }
                got.write(buffer, 0, n);
                if (got.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n0\r\n\r\n")) {
                    // The stream's proper end: is the connection still open after it?
                    client.setSoTimeout(300);
                    try {
                        return new Received(got.toString(StandardCharsets.UTF_8), in.read() < 0);
                    } catch (SocketTimeoutException open) {
                        return new Received(got.toString(StandardCharsets.UTF_8), false);
                    }
                }
            }
        }
    }

    private record Received(String text, boolean closed) {
        String body() {
            return text.substring(text.indexOf("\r\n\r\n") + 4);
        }

        long largeCharacters() {
            return body().chars().filter(c -> c == 'x').count();
        }
    }

    private void startProxy(IoTransport io, boolean fault) throws Exception {
        assumeTrue(io.isAvailable(), () -> io.label() + " is not available here: " + io.unavailableBecause().orElse(""));
        proxy = HttpProxy.builder(URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp"))
                .io(io).interceptor(disconnectAtCut(fault)).start();
    }

    @ParameterizedTest
    @EnumSource(IoTransport.class)
    void aDisconnectAfterALargeEventClosesOnlyOnceTheClientHasAllOfIt(IoTransport io) throws Exception {
        startProxy(io, true);
        Received got = postThenReadLate();

        assertThat(got.text()).startsWith("HTTP/1.1 200");
        assertThat(got.largeCharacters()).as("the large event, whole").isEqualTo(LARGE);
        assertThat(got.body()).doesNotContain(CUT_METHOD).doesNotContain("\r\n0\r\n\r\n");
        assertThat(got.closed()).as("closed after it").isTrue();
    }

    @ParameterizedTest
    @EnumSource(IoTransport.class)
    void twinWithoutTheFaultBothEventsArriveAndTheStreamEndsProperlyOnAnOpenConnection(IoTransport io) throws Exception {
        startProxy(io, false);
        Received got = postThenReadLate();

        assertThat(got.largeCharacters()).isEqualTo(LARGE);
        assertThat(got.body()).contains(CUT_METHOD).endsWith("\r\n0\r\n\r\n");
        assertThat(got.closed()).as("kept alive").isFalse();
    }
}
