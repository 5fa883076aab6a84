package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.session.Correlator;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER;
import static dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metrics interceptor in a real {@link InterceptorChain} (whose session's correlator matches
 * responses to requests) on an {@link EmbeddedChannel}'s event loop with time frozen, so that
 * durations are exact: tags stay bounded, frames pass untouched.
 */
class MetricsInterceptorTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ProxyMetrics metrics = new ProxyMetrics(registry);
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private int written;

    MetricsInterceptorTest() {
        channel.freezeTime();
    }

    @AfterEach
    void closeChannel() {
        channel.finishAndReleaseAll();
    }

    @Test
    void unknownMethodsShareOneSeriesAndEveryFrameIsForwarded() {
        InterceptorChain chain = chain(new Session("stdio"), TransportKind.STDIO);
        for (int i = 0; i < 1000; i++) {
            chain.process(frame(Envelope.ofObject("2.0", false, null, "x/" + i, null, false, false), "{}"));
        }
        chain.process(frame(Envelope.blank(), "  "));

        assertThat(written).isEqualTo(1001);
        assertThat(registry.find(ProxyMetrics.MESSAGES).counters()).hasSize(1);
        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "stdio", "direction", "client_to_server",
                "kind", "notification", "method", "other").counter().count()).isEqualTo(1000);
        assertThat(registry.get(ProxyMetrics.BYTES).counter().count()).isEqualTo(2000); // the blank line is not counted
        assertThat(registry.find(ProxyMetrics.REQUEST_DURATION).timers()).isEmpty();
    }

    @Test
    void aRequestIsTimedToItsResponseInTheSameSessionOnly() {
        InterceptorChain chain = chain(new Session("a"), TransportKind.STDIO);
        InterceptorChain other = chain(new Session("b"), TransportKind.STDIO);
        chain.process(frame(CLIENT_TO_SERVER,
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"add\"}}"));
        channel.advanceTimeBy(250, TimeUnit.MILLISECONDS);
        other.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}")); // another session's id 7
        assertThat(registry.find(ProxyMetrics.REQUEST_DURATION).timers()).isEmpty();
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"));

        Timer timer = registry.get(ProxyMetrics.REQUEST_DURATION).tags("transport", "stdio", "method", "tools/call")
                .timer();
        assertThat(timer.count()).isEqualTo(1);
        assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(250);
        assertThat(timer.max(TimeUnit.MILLISECONDS)).isEqualTo(250);
        assertThat(registry.find(ProxyMetrics.REQUEST_DURATION).timers()).hasSize(1);
        assertThat(written).isEqualTo(3);
    }

    @Test
    void requestsAreTimedInBothDirectionsEachToItsOwnResponse() {
        InterceptorChain chain = chain(new Session("stdio"), TransportKind.STDIO);
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"));
        channel.advanceTimeBy(10, TimeUnit.MILLISECONDS);
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\"}"));
        channel.advanceTimeBy(30, TimeUnit.MILLISECONDS);
        // The client answers the server's request (same id 1, the other id space), then the server the client's.
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
        channel.advanceTimeBy(60, TimeUnit.MILLISECONDS);
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));

        assertThat(totalMillis("stdio", "sampling/createMessage")).isEqualTo(30);
        assertThat(totalMillis("stdio", "tools/list")).isEqualTo(100);
        assertThat(registry.get(ProxyMetrics.REQUEST_DURATION).timers()).allSatisfy(t -> assertThat(t.count()).isOne());
    }

    @Test
    void anErrorIsTimedTaggedWithTheTransportAndTheMethodOfTheRequestItAnswers() {
        InterceptorChain chain = chain(new Session("http-1"), TransportKind.HTTP);
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"x-vendor/unknown\"}"));
        channel.advanceTimeBy(5, TimeUnit.MILLISECONDS);
        chain.process(frame(SERVER_TO_CLIENT,
                "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"error\":{\"code\":-32601,\"message\":\"no such method\"}}"));

        assertThat(totalMillis("http", "other")).isEqualTo(5);
        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "http", "direction", "server_to_client",
                "kind", "error", "method", "other").counter().count()).isOne();
    }

    @Test
    void onlyResponsesTheCorrelatorMatchedAreTimed() {
        // A session that remembers one request per direction: the second request evicts the first.
        InterceptorChain chain = chain(new Session("stdio", new Correlator(1)), TransportKind.STDIO);
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}")); // never asked for
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        channel.advanceTimeBy(1, TimeUnit.SECONDS);
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"));
        channel.advanceTimeBy(20, TimeUnit.MILLISECONDS);
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")); // evicted: not timed
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"));
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}")); // answered already

        Timer timer = registry.get(ProxyMetrics.REQUEST_DURATION).tags("transport", "stdio", "method", "ping").timer();
        assertThat(timer.count()).isOne();
        assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(20);
        assertThat(registry.find(ProxyMetrics.REQUEST_DURATION).timers()).hasSize(1);
        assertThat(written).isEqualTo(6);
    }

    @Test
    void methodsNamedLikeTheCatchAllTagsAreCountedAsOtherAndAMethodlessMessageAsNone() {
        // The meters are looked up by the method itself: "none" must not find the methodless meter.
        InterceptorChain chain = chain(new Session("http-2"), TransportKind.HTTP);
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"none\"}"));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"other\"}"));
        channel.advanceTimeBy(3, TimeUnit.MILLISECONDS);
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"));
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}")); // answers nothing asked

        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "http", "direction", "client_to_server",
                "kind", "request", "method", "other").counter().count()).isEqualTo(2);
        assertThat(registry.find(ProxyMetrics.MESSAGES).tags("direction", "client_to_server", "method", "none")
                .counters()).isEmpty();
        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "http", "direction", "server_to_client",
                "kind", "response", "method", "other").counter().count()).isEqualTo(2);
        assertThat(registry.get(ProxyMetrics.MESSAGES).tags("transport", "http", "direction", "server_to_client",
                "kind", "response", "method", "none").counter().count()).isOne();
        Timer other = registry.get(ProxyMetrics.REQUEST_DURATION).tags("transport", "http", "method", "other").timer();
        assertThat(other.count()).isEqualTo(2);
        assertThat(registry.find(ProxyMetrics.REQUEST_DURATION).timers()).hasSize(1);
        assertThat(written).isEqualTo(5);
    }

    @Test
    void methodTagsAreBounded() {
        assertThat(ProxyMetrics.methodTag("tools/call")).isEqualTo("tools/call");
        assertThat(ProxyMetrics.methodTag("tools/call2")).isEqualTo("other");
        assertThat(ProxyMetrics.methodTag(null)).isEqualTo("none");
    }

    // ---------------------------------------------------------------- helpers

    private double totalMillis(String transport, String method) {
        return registry.get(ProxyMetrics.REQUEST_DURATION).tags("transport", transport, "method", method).timer()
                .totalTime(TimeUnit.MILLISECONDS);
    }

    /** A chain of the metrics interceptor alone whose sinks count and release what comes out. */
    private InterceptorChain chain(Session session, TransportKind transport) {
        return new InterceptorChain(List.<FrameInterceptor>of(metrics.interceptor()), session, transport,
                channel.eventLoop(), ByteBufAllocator.DEFAULT, new NoConnection(), this::written, this::written);
    }

    private void written(Frame frame) {
        written++;
        frame.release();
    }

    /** A frame read off the wire: a line of this JSON, sniffed. */
    private static Frame frame(Direction direction, String json) {
        byte[] bytes = (json + "\n").getBytes(StandardCharsets.UTF_8);
        Envelope envelope = new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes, 0, bytes.length - 1));
        return Frame.original(Unpooled.wrappedBuffer(bytes), bytes.length - 1, envelope, direction, 0);
    }

    /** A client-to-server frame of this text with a given envelope. */
    private static Frame frame(Envelope envelope, String text) {
        return Frame.synthesized(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), envelope, CLIENT_TO_SERVER, 0);
    }

    /** Nothing here closes or kills anything. */
    private static final class NoConnection implements ConnectionControl {
        @Override
        public void closeClientSide(Frame at) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void closeServerSide(Frame at) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void terminateServer(Frame at) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void killServer(Frame at) {
            throw new UnsupportedOperationException();
        }
    }
}
