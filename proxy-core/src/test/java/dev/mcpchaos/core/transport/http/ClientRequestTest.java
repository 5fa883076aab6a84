package dev.mcpchaos.core.transport.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The request side of an exchange alone: a POST body held within the limit and the proxy's
 * ceiling, the state that only moves forward, and the request as the client sent it after its
 * headers were made ready for the upstream.
 */
class ClientRequestTest {

    private static HttpProxyConfig config(int maxRequestBody) throws Exception {
        return TestFrontends.builder(settings -> settings.rewriteHost(true).maxRequestBody(maxRequestBody)).config();
    }

    private static HttpRequest post(int length) {
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/mcp");
        head.headers().set(HttpHeaderNames.HOST, "client.example").set(HttpHeaderNames.CONNECTION, "keep-alive")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, length);
        return head;
    }

    private static ByteBuf bytes(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    @Test
    void aBodyInPiecesIsHeldWholeAndItsReservationGoesWithIt() throws Exception {
        BufferBudget buffers = new BufferBudget(1 << 20);
        ClientRequest request = new ClientRequest(post(4), config(1024), buffers, UnpooledByteBufAllocator.DEFAULT);

        assertThat(request.gather(new DefaultHttpContent(bytes("{}")))).isEqualTo(ClientRequest.Gathered.MORE);
        assertThat(request.gather(new DefaultLastHttpContent(bytes("[]")))).isEqualTo(ClientRequest.Gathered.WHOLE);
        assertThat(buffers.held()).isPositive();
        ByteBuf body = request.takeBody();
        assertThat(body.toString(StandardCharsets.UTF_8)).isEqualTo("{}[]");
        body.release();
        request.release();
        assertThat(buffers.held()).isZero();
    }

    @Test
    void aBodyOverTheLimitOrTheCeilingIsNotHeld() throws Exception {
        ClientRequest tooLarge = new ClientRequest(post(8), config(4), new BufferBudget(1 << 20),
                UnpooledByteBufAllocator.DEFAULT);
        assertThat(tooLarge.gather(new DefaultLastHttpContent(bytes("12345678")))).isEqualTo(ClientRequest.Gathered.TOO_LARGE);
        assertThat(tooLarge.sizeSeen()).isEqualTo(8);
        tooLarge.release();

        BufferBudget full = new BufferBudget(1);
        ClientRequest overBudget = new ClientRequest(post(2), config(1024), full, UnpooledByteBufAllocator.DEFAULT);
        assertThat(overBudget.gather(new DefaultLastHttpContent(bytes("{}")))).isEqualTo(ClientRequest.Gathered.OVER_BUDGET);
        overBudget.release();
        assertThat(full.held()).isZero();
    }

    @Test
    void theStateOnlyMovesForward() throws Exception {
        ClientRequest request = new ClientRequest(post(0), config(1024), new BufferBudget(1 << 20),
                UnpooledByteBufAllocator.DEFAULT);
        assertThat(request.state()).isEqualTo(ClientRequest.State.RECEIVING);
        request.moveTo(ClientRequest.State.RECEIVED);
        assertThat(request.state().complete()).isTrue();
        assertThat(request.state().forwarded()).isFalse();
        request.moveTo(ClientRequest.State.SENT);
        assertThat(request.state().forwarded()).isTrue();
        assertThatThrownBy(() -> request.moveTo(ClientRequest.State.RECEIVING)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void whatWentUpstreamChangedIsStillReadAsTheClientSentIt() throws Exception {
        ClientRequest request = new ClientRequest(post(2), config(1024), new BufferBudget(1 << 20),
                UnpooledByteBufAllocator.DEFAULT);
        FullHttpRequest upstream = request.full(bytes("{\"a\":1}")); // a fault changed the body's length
        try {
            assertThat(upstream.headers().get(HttpHeaderNames.HOST)).isEqualTo("127.0.0.1:9");
            assertThat(upstream.headers().contains(HttpHeaderNames.CONNECTION)).isFalse();
            assertThat(upstream.headers().getInt(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo(7);
            assertThat(request.header("Host")).isEqualTo("client.example");
            assertThat(request.header("Connection")).isEqualTo("keep-alive");
            assertThat(request.header("Content-Length")).isEqualTo("2");
            assertThat(request.headers()).extracting(h -> h.getKey().toLowerCase())
                    .containsOnlyOnce("host", "connection", "content-length");
        } finally {
            upstream.release();
        }
    }
}
