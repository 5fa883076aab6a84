package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An upstream that breaks HTTP, scripted byte by byte on a raw socket: every way it can fail ends
 * the exchange with a clear answer (a 502 or 504 with a JSON-RPC error before the response began,
 * a cut connection after: never a clean end that presents a broken body as complete), counted as
 * an upstream failure with its reason, and with every buffer released (paranoid leak detection
 * fails the test otherwise). Each failure has a twin where the same shape, sent right, arrives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UpstreamMisbehaviourTest {

    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}";

    /** What the upstream does once it has read a request; {@code out} is its side of the connection. */
    @FunctionalInterface
    private interface Script {
        void answer(OutputStream out) throws Exception;
    }

    private ServerSocket upstream;
    private Thread upstreamThread;
    private HttpProxy proxy;
    private final List<String> failures = new CopyOnWriteArrayList<>();

    private final TransportObserver observer = new TransportObserver() {
        @Override
        public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
            failures.add(reason.tag());
        }

        @Override
        public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
            failures.add("limit " + limit.tag());
        }
    };

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

    /** Starts an upstream that answers each request on each connection with {@code script}, and the proxy. */
    private void start(Script script, Duration bodyTimeout) throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        upstreamThread = new Thread(() -> {
            while (!upstream.isClosed()) {
                try (Socket connection = upstream.accept()) {
                    readRequest(connection.getInputStream());
                    OutputStream out = connection.getOutputStream();
                    script.answer(out);
                    out.flush();
                    // Hold the connection until the proxy closes it (or the test ends): a close here
                    // would be a failure of its own kind.
                    connection.setSoTimeout(10_000);
                    connection.getInputStream().read();
                } catch (Exception e) {
                    // the test closed the socket, or the proxy closed the connection: next one
                }
            }
        }, "scripted-upstream");
        upstreamThread.setDaemon(true);
        upstreamThread.start();
        HttpSettings.Builder settings = HttpSettings.builder(URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp"));
        if (bodyTimeout != null) {
            settings.responseBodyTimeout(bodyTimeout);
        }
        proxy = HttpProxy.builder(settings.build()).observer(observer).start();
    }

    /** Reads a request head and its Content-Length body. */
    private static void readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed");
            }
            head.append((char) b);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        }
    }

    /** What the client got: everything until the proxy closed the connection, or until {@code wait} passed. */
    private record Answer(String text, boolean closed, long millis) {
        String head() {
            int end = text.indexOf("\r\n\r\n");
            return end < 0 ? text : text.substring(0, end);
        }

        String body() {
            int end = text.indexOf("\r\n\r\n");
            return end < 0 ? "" : text.substring(end + 4);
        }
    }

    private Answer call(Duration wait) throws IOException {
        long start = System.nanoTime();
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: "
                    + CALL.length() + "\r\n\r\n" + CALL).getBytes(StandardCharsets.ISO_8859_1));
            socket.setSoTimeout((int) wait.toMillis());
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            boolean closed;
            try {
                socket.getInputStream().transferTo(got);
                closed = true;
            } catch (SocketTimeoutException e) {
                closed = false;
            } catch (IOException e) {
                closed = true; // a reset is a close too
            }
            return new Answer(got.toString(StandardCharsets.ISO_8859_1), closed,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    private static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    private static void assertJsonRpcError(Answer answer, int status, String says) {
        assertThat(answer.head()).startsWith("HTTP/1.1 " + status);
        assertThat(answer.head()).containsIgnoringCase("content-type: application/json");
        assertThat(answer.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{").contains(says);
    }

    @Test
    void aJsonBodyCutShortIsAnswered502AndItsGatheredBytesAreReleased() throws Exception {
        start(out -> {
            write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n");
            out.write(new byte[1_000_000]);
            out.flush();
            throw new IOException("the upstream goes away"); // closes the connection mid-body
        }, null);
        for (int i = 0; i < 3; i++) {
            Answer answer = call(Duration.ofSeconds(20));
            assertJsonRpcError(answer, 502, "closed the connection before answering");
        }
        assertThat(failures).containsExactly("closed", "closed", "closed");
    }

    @Test
    void aLargeJsonBodySentWholeArrivesWhole() throws Exception {
        String result = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"" + "z".repeat(1_000_000) + "\"}}";
        start(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + result.length() + "\r\n\r\n" + result), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertThat(answer.head()).startsWith("HTTP/1.1 200");
        assertThat(answer.body()).isEqualTo(result);
        assertThat(failures).isEmpty();
    }

    @Test
    void randomBytesInsteadOfAResponseAreAnswered502() throws Exception {
        byte[] noise = new byte[64 * 1024];
        new Random(42).nextBytes(noise);
        start(out -> {
            out.write(noise);
            out.flush();
        }, null);
        Answer answer = call(Duration.ofSeconds(20));
        assertJsonRpcError(answer, 502, "not valid HTTP");
        assertThat(failures).containsExactly("invalid_response");
    }

    @Test
    void aResponseHeaderBlockOverTheLimitIsAnswered502() throws Exception {
        start(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Big: " + "a".repeat(40_000)
                + "\r\nContent-Length: 2\r\n\r\n{}"), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertJsonRpcError(answer, 502, "not valid HTTP");
        assertThat(failures).containsExactly("invalid_response");
    }

    @Test
    void aBadChunkInAJsonAnswerIsAnswered502NotPresentedAsATruncatedBody() throws Exception {
        start(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\n{\"jso\r\nZZ\r\nnot a chunk\r\n0\r\n\r\n"), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertJsonRpcError(answer, 502, "not valid HTTP");
        assertThat(failures).containsExactly("invalid_response");
    }

    @Test
    void aWellChunkedJsonAnswerArrives() throws Exception {
        String result = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
        start(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\n" + result.substring(0, 5) + "\r\n" + Integer.toHexString(result.length() - 5) + "\r\n"
                + result.substring(5) + "\r\n0\r\n\r\n"), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertThat(answer.head()).startsWith("HTTP/1.1 200");
        assertThat(answer.body()).isEqualTo(result);
        assertThat(failures).isEmpty();
    }

    /**
     * An upstream may send 100 Continue before its answer (RFC 9110 15.2.1, even unasked). Its
     * empty end once ended the exchange before the final response: the client got a bare
     * chunk terminator and nothing else.
     */
    @Test
    void anInformationalResponseBeforeTheAnswerIsSkippedAndTheAnswerArrivesWhole() throws Exception {
        String result = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
        start(out -> write(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + result.length() + "\r\n\r\n" + result), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertThat(answer.head()).startsWith("HTTP/1.1 200");
        assertThat(answer.head()).doesNotContain("100 Continue");
        assertThat(answer.body()).isEqualTo(result);
        assertThat(failures).isEmpty();
    }

    @Test
    void aBadChunkInAnSseAnswerCutsTheClientAfterTheEventsThatCameWhole() throws Exception {
        String event = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
        start(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(event.length()) + "\r\n" + event + "\r\nZZ\r\ngarbage\r\n"), null);
        Answer answer = call(Duration.ofSeconds(20));
        assertThat(answer.head()).startsWith("HTTP/1.1 200");
        assertThat(answer.body()).contains("notifications/progress");
        assertThat(answer.closed()).isTrue();
        assertThat(answer.body()).as("no clean end: the stream was cut").doesNotEndWith("0\r\n\r\n");
        assertThat(failures).containsExactly("invalid_response");
    }

    @Test
    void aJsonBodyThatStallsIsAnswered504AfterTheBodyTimeout() throws Exception {
        start(out -> {
            write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
            write(out, "{\"jsonrpc\":\"2.0\",\"id\":7,");
            // then silence, with the connection open
        }, Duration.ofMillis(400));
        Answer answer = call(Duration.ofSeconds(20));
        assertJsonRpcError(answer, 504, "stopped sending its response for 400 ms");
        assertThat(answer.millis()).isBetween(400L, 10_000L);
        assertThat(failures).containsExactly("timeout");
    }

    @Test
    void aJsonBodyThatTricklesInFasterThanTheBodyTimeoutArrives() throws Exception {
        String result = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":1}}";
        start(out -> {
            write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + result.length()
                    + "\r\n\r\n");
            for (int i = 0; i < result.length(); i += 8) {
                write(out, result.substring(i, Math.min(result.length(), i + 8)));
                Thread.sleep(150); // the upstream's pace: each piece well within the timeout, all of them beyond it
            }
        }, Duration.ofMillis(400));
        Answer answer = call(Duration.ofSeconds(20));
        assertThat(answer.head()).startsWith("HTTP/1.1 200");
        assertThat(answer.body()).isEqualTo(result);
        assertThat(answer.millis()).isGreaterThan(400);
        assertThat(failures).isEmpty();
    }
}
