package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each {@link ResponseBody} strategy alone, on an {@link EmbeddedChannel}, through a
 * {@link ResponseOutput} that records what the client would be written, with a real
 * {@link InterceptorChain} on the channel's loop. What the exchange around them does (phases,
 * errors, the upstream) is {@code HttpProxyTest}'s and the fault matrix's.
 */
class ResponseBodyTest {

    private static final String EVENT_1 = "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n";
    private static final String EVENT_2 = "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n";
    private static final String ANSWER = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}";

    /** The bodies never act on a connection; the exchange does. */
    private static final ConnectionControl NO_CONNECTION = new ConnectionControl() {
        @Override
        public void closeClientSide(Frame at) {
        }

        @Override
        public void closeServerSide(Frame at) {
        }

        @Override
        public void terminateServer(Frame at) {
        }

        @Override
        public void killServer(Frame at) {
        }
    };

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final List<Object> written = new ArrayList<>();

    @AfterEach
    void release() {
        written.forEach(ReferenceCountUtil::release);
        channel.finishAndReleaseAll();
    }

    // ---------------------------------------------------------------- SSE

    @Test
    void anSseStreamNoInterceptorReadsIsRelayedByteForByteUnframedThenEnded() throws Exception {
        Output out = new Output(List.of());
        SseResponseBody body = new SseResponseBody(out);
        out.body = body;
        String stream = EVENT_1 + EVENT_2;
        // Split inside a field and inside the blank line that ends the first event.
        ResponseBody next = body.onContent(content(stream.substring(0, 9)));
        next = next.onContent(content(stream.substring(9, EVENT_1.length() - 1)));
        next = next.onContent(last(stream.substring(EVENT_1.length() - 1)));
        channel.runPendingTasks();

        assertThat(next).isSameAs(body);
        assertThat(body.framed()).isFalse();
        assertThat(out.bytesWritten()).isEqualTo(stream);
        assertThat(out.ended).isTrue();
        assertThat(out.processed).isZero();
    }

    @Test
    void anSseStreamWhoseObserversOnlyWatchIsRelayedAsItCameAndEachEventIsShownToThem() throws Exception {
        List<String> seen = new ArrayList<>();
        Output out = new Output(List.of(observer(seen)));
        SseResponseBody body = new SseResponseBody(out);
        out.body = body;
        body.onContent(content(EVENT_1 + EVENT_2.substring(0, 12)));
        body.onContent(last(EVENT_2.substring(12)));
        channel.runPendingTasks();

        assertThat(body.framed()).isFalse();
        assertThat(out.bytesWritten()).isEqualTo(EVENT_1 + EVENT_2);
        assertThat(seen).containsExactly("notifications/progress", "id 7");
        assertThat(out.ended).isTrue();
    }

    @Test
    void aFramedSseStreamEndsOnlyAfterTheEventsAnInterceptorHeldAndInTheirOrder() throws Exception {
        Holder holder = new Holder();
        Output out = new Output(List.of(holder));
        SseResponseBody body = new SseResponseBody(out);
        out.body = body;
        body.onContent(content(EVENT_1));
        body.onContent(last(EVENT_2));
        channel.runPendingTasks();

        assertThat(body.framed()).isTrue();
        assertThat(holder.held).hasSize(2);
        assertThat(out.bytesWritten()).as("nothing before the held events leave").isEmpty();
        assertThat(out.ended).as("the end waits behind the held events").isFalse();

        holder.releaseAll();
        channel.runPendingTasks();

        assertThat(out.bytesWritten()).isEqualTo(EVENT_1 + EVENT_2);
        assertThat(out.ended).isTrue();
    }

    @Test
    void anEventAFaultMadeKeepsTheIdAndTypeOfTheEventItReplaces() throws Exception {
        FrameInterceptor rewrite = (ctx, frame) -> {
            ByteBuf replaced = Unpooled.copiedBuffer("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"x\"}}",
                    StandardCharsets.UTF_8);
            ctx.forward(frame.withContent(replaced, dev.mcpchaos.core.frame.Envelope.ofOther()));
        };
        Output out = new Output(List.of(rewrite));
        SseResponseBody body = new SseResponseBody(out);
        out.body = body;
        body.onContent(last(EVENT_1));
        channel.runPendingTasks();

        String written = out.bytesWritten();
        assertThat(written).startsWith("id: 1\n").contains("event: message\n").contains("\"code\":-32603");
        assertThat(out.ended).isTrue();
    }

    // ---------------------------------------------------------------- JSON

    @Test
    void aJsonBodyInPiecesIsOneFrameAndOneWholeAnswerWithItsLength() throws Exception {
        List<String> seen = new ArrayList<>();
        Output out = new Output(List.of(forwardingRecorder(seen)));
        JsonResponseBody body = new JsonResponseBody(out, ANSWER.length());
        out.body = body;
        body.onContent(content(ANSWER.substring(0, 10)));
        body.onContent(last(ANSWER.substring(10)));
        channel.runPendingTasks();

        assertThat(seen).containsExactly("id 7");
        assertThat(out.whole).isNotNull();
        assertThat(out.whole.content().toString(StandardCharsets.UTF_8)).isEqualTo(ANSWER);
        assertThat(out.whole.headers().getInt(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo(ANSWER.length());
        assertThat(out.headWritten).as("no head before the whole answer").isFalse();
        assertThat(out.bodyDeadlineMoves).as("the deadline moved after the first piece").isPositive();
        assertThat(out.bodyAllCame).isTrue();
    }

    @Test
    void whatAFaultMadeOfADroppedJsonAnswerThatIsNoMessageIsTheBodyAtTheRoutesEnd() throws Exception {
        FrameInterceptor corrupt = (ctx, frame) -> {
            ctx.emit(Frame.synthesized(Unpooled.copiedBuffer("{\"jsonrpc\":", StandardCharsets.UTF_8),
                    dev.mcpchaos.core.frame.Envelope.ofOther(), Direction.SERVER_TO_CLIENT, 0));
            ctx.drop(frame);
        };
        Output out = new Output(List.of(corrupt));
        JsonResponseBody body = new JsonResponseBody(out, ANSWER.length());
        out.body = body;
        body.onContent(last(ANSWER));
        channel.runPendingTasks();

        assertThat(out.whole).isNotNull();
        assertThat(out.whole.content().toString(StandardCharsets.UTF_8)).isEqualTo("{\"jsonrpc\":");
    }

    @Test
    void aDroppedJsonAnswerWritesNothingAndTwinAnUpstreamAFaultCutAnswers502() throws Exception {
        FrameInterceptor drop = InterceptorContext::drop;
        Output dropped = new Output(List.of(drop));
        JsonResponseBody body = new JsonResponseBody(dropped, ANSWER.length());
        dropped.body = body;
        body.onContent(last(ANSWER));
        channel.runPendingTasks();
        assertThat(dropped.whole).isNull();
        assertThat(dropped.answeredCut).isFalse();

        Output cut = new Output(List.of(drop));
        cut.upstreamCut = true;
        JsonResponseBody cutBody = new JsonResponseBody(cut, ANSWER.length());
        cut.body = cutBody;
        cutBody.onContent(last(ANSWER));
        channel.runPendingTasks();
        assertThat(cut.answeredCut).isTrue();
    }

    @Test
    void aJsonBodyOverItsLimitGoesOnRawWithWhatWasGatheredFirstAndNothingInTheChain() throws Exception {
        List<String> seen = new ArrayList<>();
        Output out = new Output(List.of(forwardingRecorder(seen)), 20);
        JsonResponseBody body = new JsonResponseBody(out, -1);
        out.body = body;
        ResponseBody next = body.onContent(content(ANSWER.substring(0, 15)));
        assertThat(next).isSameAs(body);
        next = next.onContent(content(ANSWER.substring(15, 30)));
        assertThat(next).isInstanceOf(RawResponseBody.class);
        next = next.onContent(last(ANSWER.substring(30)));
        channel.runPendingTasks();

        assertThat(out.headWritten).isTrue();
        assertThat(out.bytesWritten()).isEqualTo(ANSWER);
        assertThat(out.ended).isTrue();
        assertThat(seen).isEmpty();
    }

    @Test
    void aJsonBodyThatWouldPassTheCeilingOnHeldBytesGoesOnRawAndTwinOneUnderItIsInspected() throws Exception {
        List<String> seen = new ArrayList<>();
        Output out = new Output(List.of(forwardingRecorder(seen)));
        out.budget = 20;
        JsonResponseBody body = new JsonResponseBody(out, ANSWER.length());
        out.body = body;
        // The budget counts the capacity held: a block for the whole declared answer, over 20.
        ResponseBody next = body.onContent(content(ANSWER.substring(0, 15)));
        assertThat(next).isInstanceOf(RawResponseBody.class);
        assertThat(out.reserved).isZero();
        next = next.onContent(last(ANSWER.substring(15)));
        channel.runPendingTasks();
        assertThat(out.bytesWritten()).isEqualTo(ANSWER);
        assertThat(seen).isEmpty();

        Output roomy = new Output(List.of(forwardingRecorder(seen)));
        roomy.budget = ANSWER.length();
        JsonResponseBody fits = new JsonResponseBody(roomy, ANSWER.length());
        roomy.body = fits;
        fits.onContent(last(ANSWER));
        channel.runPendingTasks();
        assertThat(seen).containsExactly("id 7");
        assertThat(roomy.whole.content().toString(StandardCharsets.UTF_8)).isEqualTo(ANSWER);
    }

    // ---------------------------------------------------------------- raw

    @Test
    void aRawBodyIsRelayedPieceByPieceAndEndsWithItsLastPiece() throws Exception {
        Output out = new Output(List.of());
        RawResponseBody body = new RawResponseBody(out);
        out.body = body;
        body.onContent(content("<html>"));
        assertThat(out.bodyDeadlineMoves).isEqualTo(1);
        body.onContent(last("</html>"));
        channel.runPendingTasks();

        assertThat(out.bytesWritten()).isEqualTo("<html></html>");
        assertThat(out.ended).isTrue();
        assertThat(out.processed).isZero();
    }

    // ---------------------------------------------------------------- helpers

    private static HttpContent content(String text) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    private static LastHttpContent last(String text) {
        return new DefaultLastHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    private static HttpResponse jsonHead(int length) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
        if (length >= 0) {
            head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, length);
        }
        return head;
    }

    /** Records the method (or the id of an answer) of each frame, and forwards it. */
    private static FrameInterceptor forwardingRecorder(List<String> seen) {
        return (ctx, frame) -> {
            seen.add(frame.method() != null ? frame.method() : "id " + frame.envelope().id());
            ctx.forward(frame);
        };
    }

    /** An observer in the chain's sense: forwards at once, keeps nothing. */
    private static FrameInterceptor observer(List<String> seen) {
        return new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                seen.add(frame.method() != null ? frame.method() : "id " + frame.envelope().id());
                ctx.forward(frame);
            }

            @Override
            public boolean onlyObserves(TransportKind transport, Direction direction) {
                return true;
            }
        };
    }

    /** Holds every frame until {@link #releaseAll}, and the route's end behind them. */
    private static final class Holder implements FrameInterceptor {
        final List<Frame> held = new ArrayList<>();
        InterceptorContext ctx;
        Runnable end;

        @Override
        public void onFrame(InterceptorContext ctx, Frame frame) {
            this.ctx = ctx;
            held.add(frame);
        }

        @Override
        public void onRouteEnd(InterceptorContext ctx, Direction direction, Object route, Runnable done) {
            if (held.isEmpty()) {
                done.run();
            } else {
                end = done;
            }
        }

        void releaseAll() {
            held.forEach(ctx::forward);
            held.clear();
            if (end != null) {
                end.run();
            }
        }
    }

    /** Records what a body writes to the client; its chain runs on the channel's loop and delivers to the body. */
    private final class Output implements ResponseOutput {
        final InterceptorChain chain;
        final HttpProxyConfig config;
        final Object route = new Object();
        ResponseBody body;
        boolean headWritten;
        FullHttpResponse whole;
        boolean ended;
        boolean answeredCut;
        boolean upstreamCut;
        int bodyDeadlineMoves;
        boolean bodyAllCame;
        int processed;
        long budget = Long.MAX_VALUE;
        long reserved;

        Output(List<FrameInterceptor> interceptors) throws Exception {
            this(interceptors, 1 << 20);
        }

        Output(List<FrameInterceptor> interceptors, int maxJsonBody) throws Exception {
            config = TestFrontends.builder(settings -> settings.maxJsonResponseBody(maxJsonBody)).config();
            chain = new InterceptorChain(interceptors, new Session("test"), TransportKind.HTTP, channel.eventLoop(),
                    ByteBufAllocator.DEFAULT, NO_CONNECTION, frame -> frame.release(),
                    frame -> body.deliver(frame));
        }

        @Override
        public String label() {
            return "POST /mcp";
        }

        String bytesWritten() {
            StringBuilder text = new StringBuilder();
            for (Object message : written) {
                if (message instanceof HttpContent) {
                    text.append(((HttpContent) message).content().toString(StandardCharsets.UTF_8));
                }
            }
            return text.toString();
        }

        @Override
        public ByteBufAllocator alloc() {
            return ByteBufAllocator.DEFAULT;
        }

        @Override
        public InterceptorChain chain() {
            return chain;
        }

        @Override
        public HttpProxyConfig config() {
            return config;
        }

        @Override
        public HttpResponse clientHead() {
            return jsonHead(-1);
        }

        @Override
        public void writeHead(HttpResponse head) {
            headWritten = true;
        }

        @Override
        public void writeContent(HttpContent content) {
            written.add(content);
        }

        @Override
        public void flushSoon() {
            channel.eventLoop().execute(body::writeQueued);
        }

        @Override
        public void writeWhole(FullHttpResponse response) {
            whole = response;
            written.add(response);
        }

        @Override
        public void endBody(LastHttpContent last) {
            body.writeQueued();
            written.add(last);
            ended = true;
        }

        @Override
        public void bodyProgress(boolean allCame) {
            if (allCame) {
                bodyAllCame = true;
            } else {
                bodyDeadlineMoves++;
            }
        }

        @Override
        public void process(List<Frame> frames) {
            processed += frames.size();
            frames.forEach(frame -> frame.route(route));
            chain.process(frames);
        }

        @Override
        public void observe(List<Frame> frames) {
            frames.forEach(frame -> frame.route(route));
            chain.observe(frames);
        }

        @Override
        public void observeLent(Frame frame) {
            frame.route(route);
            chain.observe(frame);
        }

        @Override
        public void endAfterHeld() {
            chain.endRoute(route, Direction.SERVER_TO_CLIENT, () -> body.onRouteEnd());
        }

        @Override
        public boolean reserve(long bytes) {
            if (reserved + bytes > budget) {
                return false;
            }
            reserved += bytes;
            return true;
        }

        @Override
        public boolean upstreamCutByFault() {
            return upstreamCut;
        }

        @Override
        public void answerUpstreamCut() {
            answeredCut = true;
        }
    }
}
