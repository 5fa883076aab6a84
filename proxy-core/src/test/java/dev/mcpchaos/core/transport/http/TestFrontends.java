package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.observe.TransportObserver;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;

import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Front ends for {@code EmbeddedChannel} tests with no proxy and no server: the settings of a
 * proxy's builder, a session table of their own, and an upstream side that refuses every request,
 * as a server that is not there does, without a socket.
 */
final class TestFrontends {

    private TestFrontends() {
    }

    /** The proxy's default settings, in front of an upstream nobody asks. */
    static HttpProxyConfig config() throws Exception {
        return builder().config();
    }

    /** A builder with the default settings, which a test gives an observer and then takes with {@code config()}. */
    static HttpProxy.Builder builder() {
        return builder(settings -> settings);
    }

    /** A builder with the settings a test changes, to take with {@code config()}. */
    static HttpProxy.Builder builder(UnaryOperator<HttpSettings.Builder> settings) {
        return HttpProxy.builder(settings.apply(HttpSettings.builder(URI.create("http://127.0.0.1:9/mcp"))).build());
    }

    /** A front end with {@code config} whose upstream cannot be reached: every request is answered 502 at once. */
    static FrontendHandler unreachableUpstream(HttpProxyConfig config) {
        HttpSessions sessions = HttpProxy.newSessions(List.of(), null, UnpooledByteBufAllocator.DEFAULT,
                config.observer, Duration.ofMinutes(30), 100, ImmediateEventExecutor.INSTANCE);
        return new FrontendHandler(config, sessions, new BufferBudget(1 << 20), () -> false,
                (channel, listener) -> new UnreachableUpstream());
    }

    /** An upstream side that cannot connect: every request's exchange hears that it is unreachable. */
    private static final class UnreachableUpstream implements UpstreamLink {
        @Override
        public void send(Exchange exchange, HttpObject message) {
            ReferenceCountUtil.release(message);
            exchange.onUpstreamUnreachable(new ConnectException("Connection refused"));
        }

        @Override
        public void sendShadow(HttpObject request) {
            ReferenceCountUtil.release(request);
        }

        @Override
        public void close() {
        }

        @Override
        public boolean busy() {
            return false;
        }

        @Override
        public void idleAgain() {
        }

        @Override
        public void clientWritable(boolean writable) {
        }

        @Override
        public void release(boolean exchangeInProgress) {
        }
    }
}
