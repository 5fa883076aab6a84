package dev.mcpchaos.core.transport.http;

import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ceiling on bytes held for all clients ({@code maxBuffered}): clients that declare large
 * bodies and send them slowly can fill it, and then a new body is refused with 503 and
 * Retry-After before anything of it is held; when they go, it is free again. A body is held in
 * a buffer sized by what came, not by what was declared.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BufferCeilingTest {

    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}";
    private static final String RESULT = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";

    private HttpServer upstream;
    private HttpProxy proxy;
    private final AtomicInteger upstreamRequests = new AtomicInteger();
    private final List<String> limits = new CopyOnWriteArrayList<>();
    private final List<Socket> attackers = new ArrayList<>();

    private final TransportObserver observer = new TransportObserver() {
        @Override
        public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
            limits.add(limit.tag() + " " + direction.arrow());
        }
    };

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        upstream.createContext("/mcp", exchange -> {
            exchange.getRequestBody().readAllBytes();
            upstreamRequests.incrementAndGet();
            byte[] bytes = RESULT.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        upstream.start();
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket socket : attackers) {
            socket.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        upstream.stop(0);
    }

    private void startProxy(long maxBuffered, ByteBufAllocator alloc) throws IOException {
        proxy = HttpProxy.builder(HttpSettings.builder(
                        URI.create("http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"))
                .maxBuffered(maxBuffered).build()).alloc(alloc).observer(observer).start();
    }

    /** Opens a connection that declares {@code declared} bytes of body, sends {@code sent}, and stops. */
    private Socket slowBody(int declared, int sent) throws IOException {
        Socket socket = new Socket("127.0.0.1", proxy.address().getPort());
        attackers.add(socket);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: " + declared
                + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(new byte[sent]);
        out.flush();
        return socket;
    }

    /** A well-behaved call on a connection of its own: what came back, whole. */
    private String call() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", proxy.address().getPort())) {
            socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Connection: close\r\nContent-Length: " + CALL.length() + "\r\n\r\n" + CALL)
                    .getBytes(StandardCharsets.ISO_8859_1));
            socket.setSoTimeout(10_000);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                socket.getInputStream().transferTo(got);
            } catch (SocketTimeoutException e) {
                // what came is what the test looks at
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void slowBodiesThatFillTheCeilingMakeNewOnes503UntilTheyGoAndThenCallsPassAgain() throws Exception {
        startProxy(256 * 1024, new PooledByteBufAllocator(false));
        // Sixteen small holders (16 KiB declared, all but one byte sent) fill the whole ceiling,
        // the part kept for small ones included.
        for (int i = 0; i < 16; i++) {
            slowBody(16 * 1024, 16 * 1024 - 1);
        }
        await("the sixteen slow bodies held").atMost(10, TimeUnit.SECONDS)
                .until(() -> proxy.bufferedBytes() >= 16 * (16 * 1024 - 1));
        long held = proxy.bufferedBytes();
        assertThat(held).isLessThanOrEqualTo(256 * 1024);

        String refused = call();
        assertThat(refused).startsWith("HTTP/1.1 503");
        assertThat(refused).containsIgnoringCase("retry-after: 1");
        assertThat(refused).contains("\"error\":{").contains("try again");
        assertThat(limits).containsExactly("buffered " + Direction.CLIENT_TO_SERVER.arrow());
        assertThat(upstreamRequests).hasValue(0);
        assertThat(proxy.bufferedBytes()).as("the refused body held nothing").isEqualTo(held);

        for (Socket socket : attackers) {
            socket.close();
        }
        await("the slow bodies let go").atMost(10, TimeUnit.SECONDS).until(() -> proxy.bufferedBytes() == 0);
        String answered = call();
        assertThat(answered).startsWith("HTTP/1.1 200");
        assertThat(answered).endsWith(RESULT);
        assertThat(upstreamRequests).hasValue(1);
        assertThat(proxy.bufferedBytes()).isZero();
    }

    /**
     * Large bodies fill at most fifteen sixteenths of the ceiling: the fourth of four 64 KiB
     * bodies is refused 503 under a 256 KiB ceiling, and a small call beside them is still
     * answered (AdversarialIT's well-behaved client got a 503 when large bodies held it all).
     */
    @Test
    void largeBodiesLeaveTheLastSixteenthToSmallCalls() throws Exception {
        startProxy(256 * 1024, new PooledByteBufAllocator(false));
        for (int i = 0; i < 3; i++) {
            slowBody(64 * 1024, 64 * 1024 - 1);
        }
        await("the three large bodies held").atMost(10, TimeUnit.SECONDS)
                .until(() -> proxy.bufferedBytes() >= 3 * (64 * 1024 - 1));
        Socket fourth = slowBody(64 * 1024, 64 * 1024 - 1);
        fourth.setSoTimeout(10_000);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        try {
            fourth.getInputStream().transferTo(got);
        } catch (IOException e) {
            // a reset after the answer: what came is what is checked
        }
        assertThat(got.toString(StandardCharsets.ISO_8859_1)).as("the fourth large body").startsWith("HTTP/1.1 503");

        for (int i = 0; i < 5; i++) {
            assertThat(call()).as("small call %d beside the large bodies", i).startsWith("HTTP/1.1 200").endsWith(RESULT);
        }
        assertThat(upstreamRequests).hasValue(5);
        assertThat(proxy.bufferedBytes()).as("the three large bodies still held").isGreaterThanOrEqualTo(3 * (64 * 1024 - 1));
        for (Socket socket : attackers) {
            socket.close();
        }
        await("the slow bodies let go").atMost(10, TimeUnit.SECONDS).until(() -> proxy.bufferedBytes() == 0);
    }

    @Test
    void aBodyUnderTheCeilingIsHeldAndForwardedAndGivesBackWhatItReserved() throws Exception {
        startProxy(256 * 1024, new PooledByteBufAllocator(false));
        for (int i = 0; i < 20; i++) {
            assertThat(call()).startsWith("HTTP/1.1 200").endsWith(RESULT);
        }
        assertThat(upstreamRequests).hasValue(20);
        assertThat(limits).isEmpty();
        assertThat(proxy.bufferedBytes()).isZero();
    }

    /**
     * A client that declares a large body and sends a few bytes holds a buffer the size of what
     * it sent, not of what it declared (it was 64 KiB each: 10,000 such clients took the
     * proxy's RSS from 294 to 1,095 MB).
     */
    @Test
    void aDeclaredButUnsentBodyHoldsABufferTheSizeOfWhatCameNotOfWhatWasDeclared() throws Exception {
        // Unpooled, so that what is held is counted to the byte (a pool counts whole chunks).
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false);
        startProxy(Long.MAX_VALUE / 2, alloc);
        long before = alloc.metric().usedHeapMemory();
        int clients = 200;
        for (int i = 0; i < clients; i++) {
            slowBody(1_000_000, 125);
        }
        // What the ceiling counts is the heap the bodies hold, to the byte: not only what came.
        await("every slow body held").atMost(20, TimeUnit.SECONDS)
                .until(() -> proxy.bufferedBytes() >= clients * 125L
                        && proxy.bufferedBytes() == alloc.metric().usedHeapMemory() - before);
        long perClient = (alloc.metric().usedHeapMemory() - before) / clients;
        System.out.printf("heap held per client that declared 1,000,000 bytes and sent 125: %d bytes%n", perClient);
        assertThat(perClient).as("heap per held body").isLessThan(16 * 1024);
        for (Socket socket : attackers) {
            socket.close();
        }
        await("the slow bodies let go").atMost(10, TimeUnit.SECONDS).until(() -> proxy.bufferedBytes() == 0);
    }
}
