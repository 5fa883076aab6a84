package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * The client-facing write side of an {@link Exchange}: what its {@link ResponseBody} does to the
 * client ({@link ResponseOutput}) and the answers the exchange writes itself. It writes, flushes
 * once per turn of the loop, holds back an end a fault stalls, and keeps what a JSON answer being
 * gathered reserves of the proxy's {@link BufferBudget}. It decides nothing about where the
 * response stands: a head, a whole answer or an end moves the exchange's {@link Exchange.Phase}
 * through the exchange. All on the client connection's event loop, but {@link #answeredStatus}.
 */
final class ResponseWriter implements ResponseOutput {

    private static final Logger log = LoggerFactory.getLogger(Exchange.class);

    private final Exchange exchange;
    private final Channel downstream;
    private final UpstreamResponse response;
    private final InterceptorChain chain;
    private final HttpProxyConfig config;
    private final BufferBudget buffers;
    private final ResponseTimer timer;

    /** The status of the head written to the client, 0 before; volatile: the referee reads it off the loop. */
    private volatile int answeredStatus;
    /** What a JSON answer being gathered holds of the proxy's {@link BufferBudget}, until the exchange ends. */
    private long reserved;
    /** A flush of the client connection is queued on its event loop (see {@link #flushSoon}). */
    private boolean flushPending;
    /** A fault (blackhole) keeps this response from ending: the client waits until it gives up. */
    private boolean stalled;

    ResponseWriter(Exchange exchange, Channel downstream, BufferBudget buffers, ResponseTimer timer) {
        this.exchange = exchange;
        this.downstream = downstream;
        this.response = exchange.response;
        this.chain = exchange.chain;
        this.config = exchange.config;
        this.buffers = buffers;
        this.timer = timer;
    }

    /** The status of the head the client got, 0 while none went; from any thread. */
    int answeredStatus() {
        return answeredStatus;
    }

    /** A fault keeps this response from ending: its end is held back ({@link #endBody}). */
    void stall() {
        stalled = true;
    }

    /** Writes and flushes an answer of the proxy's (an error) in place of the response; the exchange ends it. */
    void writeAnswer(FullHttpResponse answer) {
        answeredStatus = answer.status().code();
        downstream.writeAndFlush(answer);
    }

    /** Ends an SSE stream at the drain's deadline: what is queued, {@code drainEnd}, and the end of its chunked body. */
    void writeDrainEnd(ResponseBody body, HttpContent drainEnd) {
        body.writeQueued();
        downstream.write(drainEnd);
        downstream.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
    }

    /** Gives back what a gathered JSON answer reserved of the proxy's budget: the exchange is over. */
    void releaseReserved() {
        buffers.release(reserved);
        reserved = 0;
    }

    // ---- ResponseOutput: what the body strategies do ---------------------------------------------------

    @Override
    public ByteBufAllocator alloc() {
        return downstream.alloc();
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
    public String label() {
        return exchange.label();
    }

    @Override
    public HttpResponse clientHead() {
        return response.clientHead();
    }

    /**
     * Writes the response head and flushes it once this turn of the loop is over, so that the
     * head leaves in one write with what came with it from the upstream (the end of a 202 with no
     * body, the first events of a stream). Flushed at once, a bodiless answer that Node wrote in
     * one piece reached the client in two (127 of 300 202s), and a client that takes the head of
     * a 202 for the answer and cancels its body (the MCP TypeScript SDK over fetch) may find the
     * connection still busy with the rest.
     */
    @Override
    public void writeHead(HttpResponse out) {
        exchange.moveTo(Exchange.Phase.STREAMING);
        answeredStatus = out.status().code();
        downstream.write(out);
        flushSoon();
    }

    @Override
    public void writeContent(HttpContent content) {
        if (exchange.isDone()) {
            content.release();
        } else {
            downstream.write(content);
        }
    }

    /**
     * Flushes the client connection once the event loop is done with what it is doing now: the
     * events of one upstream read go out in one write instead of one system call each. An event
     * a fault delays is flushed in its own turn of the loop, so nothing waits for the next read.
     */
    @Override
    public void flushSoon() {
        if (flushPending) {
            return;
        }
        flushPending = true;
        try {
            downstream.eventLoop().execute(() -> {
                flushPending = false;
                flushNow();
            });
        } catch (RejectedExecutionException e) {
            flushPending = false;
            flushNow(); // shutting down: flush now rather than never
        }
    }

    private void flushNow() {
        if (response.body() != null && !exchange.isDone()) {
            response.body().writeQueued();
        }
        downstream.flush();
    }

    @Override
    public void writeWhole(FullHttpResponse answer) {
        exchange.moveTo(Exchange.Phase.STREAMING);
        answeredStatus = answer.status().code();
        downstream.writeAndFlush(answer);
        exchange.complete();
    }

    @Override
    public void endBody(LastHttpContent last) {
        if (exchange.isDone()) {
            last.release();
            return;
        }
        response.body().writeQueued();
        if (stalled) {
            // What came went out; the end does not, so the client waits as on a silent server.
            last.release();
            downstream.flush();
            log.debug("{} {}: the end of the response is held back by a fault", exchange.head.method(), exchange.head.uri());
            return;
        }
        downstream.writeAndFlush(last);
        exchange.complete();
    }

    @Override
    public void bodyProgress(boolean allCame) {
        if (allCame) {
            timer.stop(exchange);
        } else {
            exchange.awaitMoreBody();
        }
    }

    @Override
    public void process(List<Frame> frames) {
        onThisExchange(frames);
        try {
            if (frames.size() == 1) {
                chain.process(frames.get(0));
            } else {
                chain.process(frames);
            }
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    @Override
    public void observe(List<Frame> frames) {
        onThisExchange(frames);
        try {
            chain.observe(frames);
        } catch (RejectedExecutionException e) {
            frames.forEach(Frame::release);
        }
    }

    /** Gives the frames a body made this exchange's route, before the chain sees them. */
    private void onThisExchange(List<Frame> frames) {
        Object route = exchange.route;
        for (Frame frame : frames) {
            frame.route(route);
        }
    }

    @Override
    public void observeLent(Frame frame) {
        frame.route(exchange.route);
        chain.observe(frame);
    }

    @Override
    public void endAfterHeld() {
        exchange.afterHeld(() -> {
            if (!exchange.isDone()) {
                response.body().onRouteEnd();
            }
        });
    }

    @Override
    public boolean reserve(long bytes) {
        if (buffers.tryReserve(bytes, reserved + bytes)) {
            reserved += bytes;
            return true;
        }
        config.observer.limitBreached(TransportKind.HTTP, TransportObserver.Limit.BUFFERED,
                Direction.SERVER_TO_CLIENT, buffers.held());
        return false;
    }

    @Override
    public boolean upstreamCutByFault() {
        return response.state().cutByFault;
    }

    @Override
    public void answerUpstreamCut() {
        exchange.answerUpstreamCut();
    }
}
