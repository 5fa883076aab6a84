package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upstream's side of an exchange alone: the body a head chooses, the head made ready for the
 * client, and the one state that says how much arrived and whether the proxy took the answer over.
 */
class UpstreamResponseTest {

    private static HttpResponse head(int status, String contentType, Integer length) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status));
        if (contentType != null) {
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        if (length != null) {
            head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, length);
        }
        return head;
    }

    private static UpstreamResponse.Kind kind(HttpMethod method, HttpResponse head) {
        return new UpstreamResponse(method, true, 100).onHead(head);
    }

    @Test
    void theHeadChoosesTheBody() {
        assertThat(kind(HttpMethod.POST, head(100, null, null))).isEqualTo(UpstreamResponse.Kind.INFORMATIONAL);
        assertThat(kind(HttpMethod.GET, head(200, "text/event-stream", null))).isEqualTo(UpstreamResponse.Kind.SSE);
        assertThat(kind(HttpMethod.GET, head(201, "text/event-stream", null))).isEqualTo(UpstreamResponse.Kind.RAW);
        assertThat(kind(HttpMethod.POST, head(200, "application/json", 100))).isEqualTo(UpstreamResponse.Kind.JSON);
        assertThat(kind(HttpMethod.POST, head(400, "application/json", null))).isEqualTo(UpstreamResponse.Kind.JSON);
        assertThat(kind(HttpMethod.POST, head(200, "application/json", 101))).isEqualTo(UpstreamResponse.Kind.RAW);
        assertThat(kind(HttpMethod.POST, head(200, "text/plain", 5))).isEqualTo(UpstreamResponse.Kind.RAW);
        assertThat(kind(HttpMethod.HEAD, head(200, "application/json", 5))).isEqualTo(UpstreamResponse.Kind.EMPTY);
        assertThat(kind(HttpMethod.POST, head(204, null, null))).isEqualTo(UpstreamResponse.Kind.EMPTY);
        assertThat(kind(HttpMethod.GET, head(304, null, null))).isEqualTo(UpstreamResponse.Kind.EMPTY);
    }

    @Test
    void anInformationalHeadIsNotTheResponse() {
        UpstreamResponse response = new UpstreamResponse(HttpMethod.POST, true, 100);
        response.onHead(head(100, null, null));
        assertThat(response.headCame()).isFalse();
        assertThat(response.status()).isZero();
        assertThat(response.headers()).isEmpty();
    }

    @Test
    void theClientHeadLosesHopByHopFieldsAndSaysCloseWhenEitherSideDoes() {
        UpstreamResponse response = new UpstreamResponse(HttpMethod.POST, true, 100);
        HttpResponse head = head(200, "text/plain", null);
        head.headers().set(HttpHeaderNames.CONNECTION, "close").set("keep-alive", "timeout=5");
        response.onHead(head);
        response.overrideContentType("text/html");

        HttpResponse out = response.relayHead(true);
        assertThat(response.keepAlive()).isFalse();
        assertThat(out.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        assertThat(out.headers().contains("keep-alive")).isFalse();
        assertThat(out.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("text/html");
        assertThat(HttpUtil.isTransferEncodingChunked(out)).isTrue();

        UpstreamResponse sse = new UpstreamResponse(HttpMethod.GET, false, 100);
        sse.onHead(head(200, "text/event-stream", 7));
        HttpResponse stream = sse.streamHead();
        assertThat(stream.headers().contains(HttpHeaderNames.CONTENT_LENGTH)).isFalse();
        assertThat(HttpUtil.isTransferEncodingChunked(stream)).isTrue();
        assertThat(stream.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
    }

    @Test
    void theStateOnlyGainsMarks() {
        UpstreamResponse response = new UpstreamResponse(HttpMethod.POST, true, 100);
        response.onHead(head(200, "application/json", 2));
        assertThat(response.state()).isEqualTo(UpstreamResponse.State.COMING);
        assertThat(response.leftIdle()).isFalse();

        response.answerHere();
        assertThat(response.state()).isEqualTo(UpstreamResponse.State.ANSWERED_HERE);
        assertThat(response.state().received).isFalse();
        response.answerHere();
        assertThat(response.state()).isEqualTo(UpstreamResponse.State.ANSWERED_HERE);
        assertThat(response.leftIdle()).isFalse();
    }

    @Test
    void aCutByAFaultKeepsWhatArrived() {
        UpstreamResponse.State[] seen = UpstreamResponse.State.values();
        assertThat(seen).hasSize(6);
        for (UpstreamResponse.State state : seen) {
            // a cut by a fault is only ever marked on a response that all arrived
            assertThat(!state.cutByFault || state.received).as(state.name()).isTrue();
        }
    }
}
