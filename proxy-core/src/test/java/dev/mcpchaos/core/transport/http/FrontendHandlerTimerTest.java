package dev.mcpchaos.core.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

/**
 * The response timer of a client connection is one scheduled task that outlives each request;
 * when the connection closes, the task goes too. Left behind, it held the closed connection's
 * handler (and through it the connection) until the timeout (5 minutes by default) passed: with
 * a connection per request, a few thousand closed connections a second piled up on the heap.
 */
class FrontendHandlerTimerTest {

    @Test
    void theResponseTimerGoesWithTheConnection() throws Exception {
        // The client connection on an embedded channel, its upstream one that cannot be reached:
        // the request is answered 502 at once, after its response timer started.
        EmbeddedChannel client = new EmbeddedChannel(TestFrontends.unreachableUpstream(TestFrontends.config()));
        byte[] body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".getBytes(StandardCharsets.UTF_8);
        DefaultFullHttpRequest post = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/mcp",
                Unpooled.wrappedBuffer(body));
        post.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        client.writeInbound(post);
        FullHttpResponse answer = client.readOutbound();
        assertThat(answer.status().code()).isEqualTo(502);
        answer.release();
        assertThat(client.runScheduledPendingTasks()).as("nanoseconds to the timer's task").isPositive();

        // What the handler hears when the connection closes (EmbeddedChannel.close() would also
        // cancel every task of its loop, and so hide one left behind).
        client.pipeline().fireChannelInactive();
        assertThat(client.runScheduledPendingTasks()).as("nothing scheduled once the connection closed").isEqualTo(-1);
        client.finishAndReleaseAll();
    }
}
