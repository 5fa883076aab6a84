package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client connection lets go of every buffer when it closes, whatever state its exchanges are
 * in: the fuzzing findings F6 and F7 (docs/fuzzing.md) as plain tests. The upstream is
 * unreachable from an embedded channel (its connection cannot even be registered), so every
 * request that reaches it is answered 502 at once.
 */
class FrontendHandlerReleaseTest {

    private static HttpProxy proxy;

    @BeforeAll
    static void start() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            closedPort = socket.getLocalPort();
        }
        proxy = HttpProxy.builder(URI.create("http://127.0.0.1:" + closedPort + "/mcp")).start();
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
    }

    /** F7: the second exchange's half-read body was kept when closing the failed upstream threw. */
    @Test
    void aBodyCutShortAfterAKeepAliveAnswerIsReleasedOnClose() {
        String first = "POST /mcp HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}";
        String second = "POST /mcp HTTP/1.0\r\nContent-Length: 3\r\n\r\n[]";

        Connection connection = new Connection();
        String received = connection.send(first + second);

        assertThat(received).as("the first request is answered, and only it").startsWith("HTTP/1.0 502 ");
        assertThat(received.split("HTTP/1\\.[01] \\d{3} ", -1)).as("answers").hasSize(2);
        connection.closeAndAssertAllReleased();
    }

    /** The twin: the second body completes, so both requests are answered, and nothing is held after. */
    @Test
    void aCompleteSecondBodyIsAnsweredAndNothingIsHeld() {
        String first = "POST /mcp HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}";
        String second = "POST /mcp HTTP/1.0\r\nContent-Length: 3\r\n\r\n[1]";

        Connection connection = new Connection();
        String received = connection.send(first + second);

        assertThat(received.split("HTTP/1\\.0 502 ", -1)).as("answers").hasSize(3);
        connection.closeAndAssertAllReleased();
    }

    /** F6: a request decoded from the read that closed the connection starts nothing that holds a buffer. */
    @Test
    void aRequestBehindOneAnsweredWithACloseHoldsNothing() {
        String first = "POST /mcp HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
        String second = "POST /mcp HTTP/1.1\r\nContent-Length: 4\r\n\r\n[1]";

        Connection connection = new Connection();
        String received = connection.send(first + second);

        assertThat(received).startsWith("HTTP/1.1 502 ");
        assertThat(received.split("HTTP/1\\.1 \\d{3} ", -1)).as("answers").hasSize(2);
        connection.closeAndAssertAllReleased();
    }

    /** One client connection wired as HttpProxy wires a real one, on a tracking allocator. */
    private static final class Connection {
        private final TrackingAllocator alloc = new TrackingAllocator();
        private final EmbeddedChannel channel = new EmbeddedChannel();

        Connection() {
            channel.config().setAllocator(alloc);
            proxy.initClientPipeline(channel.pipeline(), new FrontendHandler(proxy));
        }

        String send(String bytes) {
            byte[] data = bytes.getBytes(StandardCharsets.ISO_8859_1);
            channel.writeInbound(alloc.buffer(data.length).writeBytes(data));
            channel.runPendingTasks();
            channel.checkException();
            StringBuilder received = new StringBuilder();
            for (Object out = channel.readOutbound(); out != null; out = channel.readOutbound()) {
                try {
                    received.append(((ByteBuf) out).toString(StandardCharsets.ISO_8859_1));
                } finally {
                    ReferenceCountUtil.release(out);
                }
            }
            return received.toString();
        }

        void closeAndAssertAllReleased() {
            channel.finishAndReleaseAll();
            channel.checkException();
            alloc.assertAllReleased("the connection closed");
        }
    }
}
