package dev.mcpchaos.core.transport.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An SSE event over {@code maxSseEventSize} in a response: relayed whole while only observers
 * look at the stream (nothing holds the event, so nothing cuts it), dropped once an interceptor
 * may act on it; in both cases counted once as a breach, and logged as what happened to it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OversizedSseEventTest {

    private static final int LIMIT = 64 * 1024;
    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}";
    private static final String PROGRESS = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
    private static final String BIG = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"pad\":\""
            + "x".repeat(3 * LIMIT) + "\"}}\n\n";
    private static final String RESULT = "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n";
    private static final String BODY = PROGRESS + BIG + RESULT;

    private ServerSocket upstream;
    private Thread upstreamThread;
    private HttpProxy proxy;
    private final List<String> breaches = new CopyOnWriteArrayList<>();
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger decoderLog = (Logger) LoggerFactory.getLogger(SseFrameDecoder.class);

    private final TransportObserver observer = new TransportObserver() {
        @Override
        public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
            breaches.add(limit.tag() + " " + direction + " " + size);
        }
    };

    @BeforeEach
    void captureTheDecodersLog() {
        logged.start();
        decoderLog.addAppender(logged);
        decoderLog.setAdditive(false);
    }

    @AfterEach
    void stop() throws Exception {
        decoderLog.detachAppender(logged);
        decoderLog.setAdditive(true);
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
    void whileOnlyObserversLookTheEventIsRelayedWholeAndTheLogSaysSo() throws Exception {
        start(new Recorder(true));

        String body = call();

        assertThat(body).isEqualTo(BODY); // byte for byte, the big event included
        // The observers saw the events that fit, not the one over their limit.
        assertThat(seen).containsExactly("notifications/progress", "null");
        assertThat(breaches).hasSize(1).allSatisfy(breach -> assertThat(breach).startsWith("sse_event_size SERVER_TO_CLIENT "));
        String size = breaches.get(0).substring(breaches.get(0).lastIndexOf(' ') + 1);
        assertThat(logged.list).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getFormattedMessage()).isEqualTo("s->c: relayed an SSE event of " + size
                    + " bytes whole without showing it to observers: it is over the limit of " + LIMIT
                    + " bytes for events they see; relaying goes on");
        });
    }

    @Test
    void onceAnInterceptorMayActOnTheStreamTheEventIsDiscardedAndTheLogSaysSo() throws Exception {
        start(new Recorder(false));

        String body = call();

        assertThat(body).isEqualTo(PROGRESS + RESULT);
        assertThat(seen).containsExactly("notifications/progress", "null");
        assertThat(breaches).hasSize(1);
        String size = breaches.get(0).substring(breaches.get(0).lastIndexOf(' ') + 1);
        assertThat(logged.list).singleElement().satisfies(event -> assertThat(event.getFormattedMessage())
                .isEqualTo("s->c: discarded an SSE event of " + size + " bytes, over the limit of " + LIMIT
                        + " bytes; relaying goes on"));
    }

    /** Forwards every frame and notes the method of each server-to-client one. */
    private final class Recorder implements FrameInterceptor {
        private final boolean onlyObserves;

        Recorder(boolean onlyObserves) {
            this.onlyObserves = onlyObserves;
        }

        @Override
        public void onFrame(InterceptorContext ctx, Frame frame) {
            if (frame.direction() == Direction.SERVER_TO_CLIENT && frame.envelope().kind() != dev.mcpchaos.core.frame.MessageKind.BLANK) {
                seen.add(String.valueOf(frame.envelope().method()));
            }
            ctx.forward(frame);
        }

        @Override
        public boolean onlyObserves(TransportKind transport, Direction direction) {
            return onlyObserves;
        }
    }

    /** Starts an upstream that answers every request with {@link #BODY} as an SSE response, and the proxy. */
    private void start(FrameInterceptor interceptor) throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        upstreamThread = new Thread(() -> {
            while (!upstream.isClosed()) {
                try (Socket connection = upstream.accept()) {
                    readRequest(connection.getInputStream());
                    OutputStream out = connection.getOutputStream();
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + BODY.length()
                            + "\r\n\r\n" + BODY).getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    connection.setSoTimeout(10_000);
                    connection.getInputStream().read(); // held until the proxy closes it, or the test ends
                } catch (Exception e) {
                    // the test closed the socket, or the proxy closed the connection: next one
                }
            }
        }, "sse-upstream");
        upstreamThread.setDaemon(true);
        upstreamThread.start();
        proxy = HttpProxy.builder(HttpSettings.builder(URI.create("http://127.0.0.1:" + upstream.getLocalPort() + "/mcp"))
                        .maxSseEventSize(LIMIT).build())
                .interceptor(interceptor)
                .observer(observer)
                .start();
    }

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

    /** POSTs the call and returns the body the client got (the proxy closes after it: Connection: close). */
    private String call() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: "
                    + CALL.length() + "\r\n\r\n" + CALL).getBytes(StandardCharsets.ISO_8859_1));
            socket.setSoTimeout(20_000);
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertThat(answer).startsWith("HTTP/1.1 200");
            String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
            return answer.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked") ? dechunk(body) : body;
        }
    }

    private static String dechunk(String chunked) {
        StringBuilder body = new StringBuilder();
        int at = 0;
        while (true) {
            int lineEnd = chunked.indexOf("\r\n", at);
            int size = Integer.parseInt(chunked.substring(at, lineEnd).trim(), 16);
            if (size == 0) {
                return body.toString();
            }
            body.append(chunked, lineEnd + 2, lineEnd + 2 + size);
            at = lineEnd + 2 + size + 2;
        }
    }
}
