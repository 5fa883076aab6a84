package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameSink;
import io.netty.buffer.ByteBuf;

import java.util.Map;

/**
 * How the chain of an HTTP session reaches the exchanges its frames travel on: the sinks that
 * hand a frame the chain let through to its exchange, and what faults may do to that exchange.
 * Both go through {@link ExchangeContext#of}, the frame's typed route.
 */
final class ExchangeRoutes {

    /** Client-to-server frames the chain let through: upstream, on their exchange. */
    static final FrameSink TO_SERVER = frame -> exchangeOf(frame).sendRequest(frame);

    /** Server-to-client frames the chain let through (or a fault made): to the client, on their exchange. */
    static final FrameSink TO_CLIENT = frame -> exchangeOf(frame).sendResponse(frame);

    /** What faults may do on HTTP. */
    static final ConnectionControl CONTROL = new Control();

    private ExchangeRoutes() {
    }

    /** The exchange {@code frame} travels on; a frame on none is released, and that is a fault's bug. */
    static ExchangeContext exchangeOf(Frame frame) {
        ExchangeContext exchange = ExchangeContext.of(frame);
        if (exchange != null) {
            return exchange;
        }
        frame.release();
        throw new IllegalStateException("frame has no HTTP exchange to travel on: " + frame
                + " (make replies with Frame.reply and copies with Frame.duplicate or Frame.withContent)");
    }

    /**
     * What faults may do on HTTP: act on the exchange a frame travels on ({@link ExchangeContext});
     * a frame on none (made by a test, say) has nothing to act on.
     */
    private static final class Control implements ConnectionControl {
        @Override
        public void closeClientSide(Frame at) {
            ExchangeContext exchange = ExchangeContext.of(at);
            if (exchange != null) {
                exchange.closeClient();
            }
        }

        @Override
        public void closeServerSide(Frame at) {
            ExchangeContext exchange = ExchangeContext.of(at);
            if (exchange != null) {
                exchange.closeUpstream();
            }
        }

        @Override
        public void terminateServer(Frame at) {
            closeServerSide(at);
        }

        @Override
        public void killServer(Frame at) {
            closeServerSide(at);
        }

        @Override
        public boolean respondHttp(Frame at, int status, Map<String, String> headers, ByteBuf body) {
            ExchangeContext exchange = ExchangeContext.of(at);
            if (exchange == null) {
                body.release();
                return false;
            }
            return exchange.respondWith(status, headers, body);
        }

        @Override
        public boolean carriesOneMessage(Frame at) {
            ExchangeContext exchange = ExchangeContext.of(at);
            return exchange != null && exchange.carriesOneMessage(at.direction());
        }

        @Override
        public boolean overrideContentType(Frame at, String contentType) {
            ExchangeContext exchange = ExchangeContext.of(at);
            return exchange != null && exchange.overrideContentType(contentType);
        }

        @Override
        public void stallResponse(Frame at) {
            ExchangeContext exchange = ExchangeContext.of(at);
            if (exchange != null) {
                exchange.stall();
            }
        }

        @Override
        public boolean expireSession(Frame at) {
            ExchangeContext exchange = ExchangeContext.of(at);
            return exchange != null && exchange.expireSession(at);
        }
    }
}
