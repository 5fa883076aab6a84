package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The metrics interceptor alone: tags stay bounded, frames pass untouched, durations are exact. */
class MetricsInterceptorTest {

    private final MockClock clock = new MockClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    private final ProxyMetrics metrics = new ProxyMetrics(registry);
    private final Context ctx = new Context();

    @Test
    void unknownMethodsShareOneSeriesAndEveryFrameIsForwarded() {
        for (int i = 0; i < 1000; i++) {
            metrics.interceptor().onFrame(ctx, frame(Envelope.ofObject("2.0", false, null, "x/" + i, null, false, false),
                    Direction.CLIENT_TO_SERVER, "{}"));
        }
        metrics.interceptor().onFrame(ctx, frame(Envelope.blank(), Direction.CLIENT_TO_SERVER, "  "));

        assertThat(ctx.forwarded).hasSize(1001);
        assertThat(registry.find(ProxyMetrics.MESSAGES).counters()).hasSize(1);
        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "stdio", "direction", "client_to_server",
                "kind", "notification", "method", "other").counter().count()).isEqualTo(1000);
        assertThat(registry.get(ProxyMetrics.BYTES).counter().count()).isEqualTo(2000); // the blank line is not counted
        ctx.forwarded.forEach(Frame::release);
    }

    @Test
    void aRequestIsTimedToItsResponseInTheSameSessionOnly() {
        metrics.interceptor().onFrame(ctx, frame(Envelope.ofObject("2.0", true, 7L, "tools/call", "add", false, false),
                Direction.CLIENT_TO_SERVER, "{}"));
        clock.add(Duration.ofMillis(250));
        Context other = new Context();
        metrics.interceptor().onFrame(other, frame(Envelope.ofObject("2.0", true, 7L, null, null, true, false),
                Direction.SERVER_TO_CLIENT, "{}")); // another session's id 7
        metrics.interceptor().onFrame(ctx, frame(Envelope.ofObject("2.0", true, 7L, null, null, true, false),
                Direction.SERVER_TO_CLIENT, "{}"));

        var timer = registry.get(ProxyMetrics.REQUEST_DURATION).tags("method", "tools/call").timer();
        assertThat(timer.count()).isEqualTo(1);
        assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(250);
        assertThat(((MetricsInterceptor) metrics.interceptor()).pendingCount()).isZero();
    }

    @Test
    void pendingRequestsAreBounded() {
        for (long id = 0; id < MetricsInterceptor.MAX_PENDING + 500; id++) {
            metrics.interceptor().onFrame(ctx, frame(Envelope.ofObject("2.0", true, id, "ping", null, false, false),
                    Direction.CLIENT_TO_SERVER, "{}"));
        }
        assertThat(((MetricsInterceptor) metrics.interceptor()).pendingCount()).isEqualTo(MetricsInterceptor.MAX_PENDING);
        ctx.forwarded.forEach(Frame::release);
    }

    @Test
    void methodTagsAreBounded() {
        assertThat(ProxyMetrics.methodTag("tools/call")).isEqualTo("tools/call");
        assertThat(ProxyMetrics.methodTag("tools/call2")).isEqualTo("other");
        assertThat(ProxyMetrics.methodTag(null)).isEqualTo("none");
    }

    private static Frame frame(Envelope envelope, Direction direction, String text) {
        return Frame.synthesized(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), envelope, direction, 0);
    }

    /** Records what is forwarded; nothing else is expected of it. */
    private static final class Context implements InterceptorContext {
        final List<Frame> forwarded = new ArrayList<>();
        private final Session session = new Session("stdio");

        @Override
        public Session session() {
            return session;
        }

        @Override
        public TransportKind transport() {
            return TransportKind.STDIO;
        }

        @Override
        public EventExecutor executor() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ByteBufAllocator alloc() {
            return ByteBufAllocator.DEFAULT;
        }

        @Override
        public void forward(Frame frame) {
            forwarded.add(frame);
        }

        @Override
        public void emit(Frame frame) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void drop(Frame frame) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ConnectionControl connection() {
            throw new UnsupportedOperationException();
        }
    }
}
