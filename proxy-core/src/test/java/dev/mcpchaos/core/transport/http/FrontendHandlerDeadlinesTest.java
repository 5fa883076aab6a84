package dev.mcpchaos.core.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The client deadlines of a connection on virtual time: the client connection on an
 * {@link EmbeddedChannel} with the proxy's own pipeline (the byte watch, the codec, the
 * frontend) and frozen time, so each deadline is checked to the millisecond on both sides. A
 * request that reaches its exchange is answered 502 at once (its upstream side refuses it, see
 * {@link TestFrontends}): the twin where the request arrives.
 */
class FrontendHandlerDeadlinesTest {

    private EmbeddedChannel client;
    private final List<String> timeouts = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        HttpProxyConfig config = TestFrontends.builder(settings -> settings.idleTimeout(Duration.ofSeconds(30)))
                .observer(new TransportObserver() {
                    @Override
                    public void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
                        timeouts.add(deadline.tag());
                    }
                })
                .config(); // head 10 s, body 60 s, 500 B/s: the defaults
        client = clientOf(config);
    }

    /**
     * A connection with the proxy's pipeline, its time frozen from before it became active; no
     * proxy, and an upstream side that refuses every request.
     */
    private static EmbeddedChannel clientOf(HttpProxyConfig config) {
        EmbeddedChannel channel = new EmbeddedChannel(); // registered and active, with no handler yet
        channel.freezeTime();
        HttpProxy.initClientPipeline(channel.pipeline(), TestFrontends.unreachableUpstream(config), config);
        channel.pipeline().fireChannelActive(); // what the handlers would have heard
        return channel;
    }

    @AfterEach
    void stop() {
        client.finishAndReleaseAll();
    }

    private void send(String text) {
        client.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1));
    }

    /** Moves virtual time on, running every task when it is due. */
    private void advanceMillis(long millis) {
        long remaining = TimeUnit.MILLISECONDS.toNanos(millis);
        client.runPendingTasks();
        while (true) {
            long next = client.runScheduledPendingTasks();
            client.runPendingTasks();
            if (next < 0 || next > remaining) {
                break;
            }
            client.advanceTimeBy(next, TimeUnit.NANOSECONDS);
            remaining -= next;
        }
        client.advanceTimeBy(remaining, TimeUnit.NANOSECONDS);
        client.runScheduledPendingTasks();
        client.runPendingTasks();
    }

    /** What the client received so far. */
    private String received() {
        StringBuilder out = new StringBuilder();
        for (Object msg = client.readOutbound(); msg != null; msg = client.readOutbound()) {
            ByteBuf bytes = (ByteBuf) msg;
            out.append(bytes.toString(StandardCharsets.ISO_8859_1));
            bytes.release();
        }
        return out.toString();
    }

    private static String post(int contentLength) {
        return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + contentLength + "\r\n\r\n";
    }

    @Test
    void aHeadIsAnswered408TenSecondsAfterItsFirstByteHoweverItTrickles() {
        String head = post(10);
        for (int i = 0; i < head.length() && i < 10; i++) {
            send(head.substring(i, i + 1)); // a byte a second: each one a read
            advanceMillis(i < 9 ? 1_000 : 999);
        }
        assertThat(received()).as("9.999 s after the first byte").isEmpty();
        advanceMillis(1);
        String answer = received();
        assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout\r\n").contains("connection: close")
                .contains("\"id\":null").contains("did not end within 10000 ms of its first byte");
        assertThat(client.isActive()).isFalse();
        assertThat(timeouts).containsExactly("head");
    }

    @Test
    void aHeadThatEndsJustInTimeReachesItsExchange() {
        String head = post(2);
        send(head.substring(0, 5));
        advanceMillis(9_999);
        send(head.substring(5) + "{}");
        assertThat(received()).startsWith("HTTP/1.1 502 ");
        assertThat(client.isActive()).isTrue();
        assertThat(timeouts).isEmpty();
    }

    @Test
    void aBodyUnderFiveHundredBytesASecondIsAnswered408WhenItFallsBehind() {
        send(post(5_000) + "x".repeat(100));
        // 100 bytes are the rate's due for 0.2 s after the free first second.
        advanceMillis(1_199);
        assertThat(received()).isEmpty();
        advanceMillis(1);
        assertThat(received()).startsWith("HTTP/1.1 408 ").contains("slower than 500 bytes/s (100 bytes in 1200 ms)");
        assertThat(client.isActive()).isFalse();
        assertThat(timeouts).containsExactly("body");
    }

    @Test
    void aBodyAboveTheRateIsNotCutAndArrives() {
        send(post(3_500));
        for (int second = 0; second < 5; second++) {
            send("x".repeat(600)); // 600 bytes a second, 100 above the rate
            advanceMillis(1_000);
        }
        assertThat(received()).isEmpty();
        send("x".repeat(3_500 - 5 * 600));
        assertThat(received()).startsWith("HTTP/1.1 502 ");
        assertThat(timeouts).isEmpty();
    }

    @Test
    void aBodyThatStopsIsAnswered408AtTheBodyDeadlineWithNoMinimumRate() throws Exception {
        client.finishAndReleaseAll();
        timeouts.clear();
        HttpProxyConfig config = TestFrontends.builder(settings -> settings.minRequestBodyRate(0))
                .observer(new TransportObserver() {
                    @Override
                    public void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
                        timeouts.add(deadline.tag());
                    }
                }).config();
        client = clientOf(config);

        send(post(1_000_000) + "x".repeat(125)); // the attack of issue 19: 125 bytes, then silence
        advanceMillis(59_999);
        assertThat(received()).isEmpty();
        advanceMillis(1);
        assertThat(received()).startsWith("HTTP/1.1 408 ").contains("did not end within 60000 ms");
        assertThat(timeouts).containsExactly("body");
    }

    @Test
    void blankLinesBetweenRequestsDoNotKeepAConnectionFromIdlingOut() {
        send(post(2) + "{}");
        assertThat(received()).startsWith("HTTP/1.1 502 ");
        for (int i = 0; i < 29; i++) {
            advanceMillis(1_000);
            send("\r\n"); // allowed between requests, and no request
        }
        advanceMillis(999);
        assertThat(client.isActive()).as("29.999 s after the exchange ended").isTrue();
        advanceMillis(1);
        assertThat(client.isActive()).isFalse();
        assertThat(timeouts).containsExactly("idle");
    }

    @Test
    void aFinishedExchangeStartsTheIdleTimeoutOver() {
        for (int i = 0; i < 3; i++) {
            send(post(2) + "{}");
            assertThat(received()).startsWith("HTTP/1.1 502 ");
            advanceMillis(20_000);
        }
        assertThat(client.isActive()).as("60 s in all, never 30 s without a request").isTrue();
        advanceMillis(10_000);
        assertThat(client.isActive()).isFalse();
        assertThat(timeouts).containsExactly("idle");
    }
}
