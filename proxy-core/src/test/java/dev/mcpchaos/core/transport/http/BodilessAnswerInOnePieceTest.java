package dev.mcpchaos.core.transport.http;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 202 with no body that the upstream writes in one piece (head and the chunked end together,
 * as Node writes the answer to a POSTed notification or response) reaches the client in one
 * piece. The proxy flushed the head on its own before: 243 of these 300 answers (127 of 300 from
 * a Node server) reached the client in two reads, the head first, and a client that takes the
 * head of a 202 for the answer and cancels its body (the MCP TypeScript SDK over fetch) may find
 * the connection still busy with the rest.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BodilessAnswerInOnePieceTest {

    private static final int ANSWERS = 300;
    private static final String NOTIFICATION = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    private static final String ACCEPTED = "HTTP/1.1 202 Accepted\r\nConnection: keep-alive\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n";

    private ServerSocket upstream;
    private Thread upstreamThread;
    private HttpProxy proxy;
    private final AtomicInteger requestsSeen = new AtomicInteger();

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        if (upstreamThread != null) {
            upstreamThread.join(5_000);
        }
    }

    @Test
    void aBodilessAnswerWrittenInOnePieceReachesTheClientInOnePiece() throws Exception {
        upstream = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        upstreamThread = new Thread(this::answerEveryRequestWith202, "scripted-upstream");
        upstreamThread.setDaemon(true);
        upstreamThread.start();
        proxy = HttpProxy.builder(URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp")).start();

        int answers = 0;
        int inMoreThanOneRead = 0;
        try (Socket client = new Socket("127.0.0.1", proxy.address().getPort())) {
            client.setSoTimeout(10_000);
            client.setTcpNoDelay(true);
            byte[] request = ("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nContent-Length: " + NOTIFICATION.length()
                    + "\r\n\r\n" + NOTIFICATION).getBytes(StandardCharsets.ISO_8859_1);
            byte[] buffer = new byte[4096];
            for (int i = 0; i < ANSWERS; i++) {
                client.getOutputStream().write(request);
                StringBuilder answer = new StringBuilder();
                int reads = 0;
                while (!answer.toString().endsWith("\r\n0\r\n\r\n")) {
                    int n = client.getInputStream().read(buffer);
                    assertThat(n).as("answer %d so far: %s", i, answer).isPositive();
                    answer.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                    reads++;
                }
                // The twin: every answer arrives, whole and as the upstream sent it (the proxy drops
                // no header here but hop-by-hop Connection, which keep-alive makes implicit).
                assertThat(answer.toString()).isEqualTo("HTTP/1.1 202 Accepted\r\n"
                        + "transfer-encoding: chunked\r\n\r\n0\r\n\r\n");
                answers++;
                if (reads > 1) {
                    inMoreThanOneRead++;
                }
            }
        }

        assertThat(answers).isEqualTo(ANSWERS);
        assertThat(requestsSeen.get()).isEqualTo(ANSWERS);
        assertThat(inMoreThanOneRead).as("answers that reached the client in more than one read").isZero();
    }

    /** One connection at a time; every request on it is answered with the whole 202 in one write. */
    private void answerEveryRequestWith202() {
        while (!upstream.isClosed()) {
            try (Socket connection = upstream.accept()) {
                connection.setTcpNoDelay(true);
                InputStream in = connection.getInputStream();
                OutputStream out = connection.getOutputStream();
                while (readRequest(in)) {
                    requestsSeen.incrementAndGet();
                    out.write(ACCEPTED.getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                }
            } catch (IOException e) {
                // the test closed the socket, or the proxy closed the connection: next one
            }
        }
    }

    /** Reads a request head and its Content-Length body; false at the end of the connection. */
    private static boolean readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            if (b < 0) {
                return false;
            }
            head.append((char) b);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        }
        return true;
    }
}
