package dev.mcpchaos.core.transport.http;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.mcpchaos.testing.Cuts;
import dev.mcpchaos.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of the proxy's client-facing HTTP pipeline (Jazzer; see
 * docs/fuzzing.md): arbitrary bytes from a client into the codec and
 * {@link FrontendHandler} on an {@link EmbeddedChannel}, wired as {@code HttpProxy} wires a client
 * connection. The proxy is real; its upstream is a closed port on 127.0.0.1, and an upstream
 * connection cannot be made from an embedded channel's loop anyway, so every request that gets
 * that far is answered 502 at once: what is fuzzed is the parsing of requests, the limits, and
 * the handler's state across pipelined requests, bad bodies and a connection that closes. The
 * input is written whole and in irregular pieces ({@link Cuts}). Properties:
 * <ul>
 *   <li>no exception escapes the pipeline ({@link EmbeddedChannel#checkException()});</li>
 *   <li>what the client gets is HTTP responses: every write is a buffer, and the bytes, when
 *       there are any, begin with a status line;</li>
 *   <li>every buffer of the connection (its allocator is a {@link TrackingAllocator}) is released
 *       once the connection has closed; no Netty leak report (paranoid detection, as everywhere).</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code HttpFrontendFuzzTestInputs/}.
 */
class HttpFrontendFuzzTest {

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

    @DictionaryEntries({"POST /mcp HTTP/1.1\\x0D\\x0A", "GET /mcp HTTP/1.1\\x0D\\x0A", "DELETE /mcp HTTP/1.1\\x0D\\x0A", "HTTP/1.0", "\\x0D\\x0A\\x0D\\x0A", "Content-Length: ", "Transfer-Encoding: chunked\\x0D\\x0A", "Connection: keep-alive\\x0D\\x0A", "Connection: close\\x0D\\x0A", "Expect: 100-continue\\x0D\\x0A", "Mcp-Session-Id: ", "Accept: text/event-stream\\x0D\\x0A", "Content-Type: application/json\\x0D\\x0A", "0\\x0D\\x0A\\x0D\\x0A", ";ext=1", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"})
    @FuzzTest
    void answersAnyBytesWithoutEscapingOrLeaking(byte[] input) {
        List<List<byte[]>> cuts = Cuts.of(input);
        for (List<byte[]> chunks : List.of(cuts.get(0), cuts.get(cuts.size() - 1))) {
            TrackingAllocator alloc = new TrackingAllocator();
            EmbeddedChannel client = new EmbeddedChannel();
            client.config().setAllocator(alloc);
            // Wired as a real client connection is, read watch and codec included.
            proxy.initClientPipeline(client.pipeline(), new FrontendHandler(proxy));
            StringBuilder received = new StringBuilder();
            String what = chunks.size() + " chunks";
            try {
                for (byte[] chunk : chunks) {
                    if (!client.isOpen()) {
                        break; // a closed connection reads no more
                    }
                    client.writeInbound(alloc.buffer(chunk.length).writeBytes(chunk));
                    client.runPendingTasks();
                    drain(client, received);
                }
                client.checkException();
                drain(client, received);
            } finally {
                client.finishAndReleaseAll();
            }
            if (received.length() > 0) {
                // HTTP/1.x only: a request line of another version is answered 505 in HTTP/1.1
                // (docs/fuzzing.md, finding F1; input finding-http2-version-echoed).
                assertThat(received.toString()).as("what the client received, " + what).matches("(?s)HTTP/1\\.[01] \\d{3} .*");
            }
            alloc.assertAllReleased("the connection closed, " + what);
        }
    }

    private static void drain(EmbeddedChannel client, StringBuilder received) {
        for (Object out = client.readOutbound(); out != null; out = client.readOutbound()) {
            try {
                assertThat(out).as("a write to the client").isInstanceOf(ByteBuf.class);
                received.append(((ByteBuf) out).toString(StandardCharsets.ISO_8859_1));
            } finally {
                io.netty.util.ReferenceCountUtil.release(out);
            }
        }
    }
}
