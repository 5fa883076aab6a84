package dev.mcpchaos.core.intercept;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER;
import static dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link InterceptorChain} on an {@link EmbeddedChannel}'s event loop (everything runs on the
 * test thread, time is virtual) and, for the thread hop, on a {@link DefaultEventLoop}. Every
 * frame that reaches a sink is recorded and released.
 */
class InterceptorChainTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final Session session = new Session("test");
    private final RecordingSink toServer = new RecordingSink();
    private final RecordingSink toClient = new RecordingSink();
    private final RecordingConnection connection = new RecordingConnection();
    private final List<String> calls = new CopyOnWriteArrayList<>();

    /** Captures InterceptorChain's log, so that deliberate failures are asserted rather than printed. */
    private final ListAppender<ILoggingEvent> chainLog = new ListAppender<>();
    private final Logger chainLogger = (Logger) LoggerFactory.getLogger(InterceptorChain.class);

    @BeforeEach
    void captureLog() {
        chainLog.start();
        chainLogger.addAppender(chainLog);
        chainLogger.setAdditive(false);
    }

    @AfterEach
    void closeChannelAndRestoreLog() {
        channel.finishAndReleaseAll();
        chainLogger.detachAppender(chainLog);
        chainLogger.setAdditive(true);
    }

    @Test
    void withoutInterceptorsAFrameGoesStraightToItsSinkUntouched() {
        InterceptorChain chain = chain(List.of());
        Frame request = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        chain.process(request);
        chain.process(response);
        assertThat(toServer.frames).containsExactly(request);
        assertThat(toClient.frames).containsExactly(response);
        assertThat(toServer.wires).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        assertThat(chain.session()).isSameAs(session);
        assertThat(chain.executor()).isSameAs(channel.eventLoop());
    }

    @Test
    void framesOfADirectionNoInterceptorInspectsSkipTheChainAndCorrelation() {
        AtomicBoolean inspecting = new AtomicBoolean(false);
        FrameInterceptor sometimes = new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                calls.add("saw " + frame.direction().arrow());
                ctx.forward(frame);
            }

            @Override
            public boolean inspects(TransportKind transport, Direction direction) {
                return inspecting.get() && direction == CLIENT_TO_SERVER;
            }
        };
        InterceptorChain chain = chain(List.of(sometimes));
        assertThat(chain.inspects(CLIENT_TO_SERVER)).isFalse();
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        assertThat(calls).isEmpty();
        assertThat(session.correlator().pendingCount(CLIENT_TO_SERVER)).isZero();
        assertThat(toServer.ids()).containsExactly(1L);

        inspecting.set(true);
        assertThat(chain.inspects(CLIENT_TO_SERVER)).isTrue();
        assertThat(chain.inspects(SERVER_TO_CLIENT)).isFalse();
        chain.process(List.of(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"),
                frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}")));
        assertThat(calls).containsExactly("saw c->s");
        assertThat(session.correlator().pendingCount(CLIENT_TO_SERVER)).isOne();
        assertThat(toServer.ids()).containsExactly(1L, 2L);
        assertThat(toClient.ids()).containsExactly(2L);
    }

    @Test
    void aChunksFramesAreFlushedOnceAfterTheLast() {
        InterceptorChain chain = chain(List.of(named("a")));
        chain.process(List.of(
                frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"),
                frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"),
                frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}")));
        assertThat(toServer.log).containsExactly("w1", "w2", "w3", "flush");
        // A single frame is flushed right after it is written.
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}"));
        assertThat(toServer.log).containsExactly("w1", "w2", "w3", "flush", "w4", "flush");
        assertThat(calls).hasSize(4);
    }

    @Test
    void interceptorsRunInOrderInBothDirections() {
        InterceptorChain chain = chain(List.of(named("a"), named("b"), named("c")));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
        assertThat(calls).containsExactly("a c->s", "b c->s", "c c->s", "a s->c", "b s->c", "c s->c");
        assertThat(toServer.frames).hasSize(1);
        assertThat(toClient.frames).hasSize(1);
    }

    @Test
    void framesKeepTheirOrderPerDirection() {
        InterceptorChain chain = chain(List.of(named("a")));
        for (int id = 0; id < 5; id++) {
            chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}"));
        }
        assertThat(toServer.ids()).containsExactly(0L, 1L, 2L, 3L, 4L);
    }

    @Test
    void droppedFrameIsReleasedAndGoesNowhere() {
        FrameInterceptor dropper = (ctx, frame) -> {
            calls.add("drop");
            ctx.drop(frame);
        };
        InterceptorChain chain = chain(List.of(dropper, named("after")));
        Frame frame = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        chain.process(frame);
        assertThat(frame.refCnt()).isZero();
        assertThat(calls).containsExactly("drop");
        assertThat(toServer.frames).isEmpty();
        assertThat(toClient.frames).isEmpty();
    }

    @Test
    void emittedFramesSkipTheRestOfTheChain() {
        // An injected error answer back to the client, while the request still goes on.
        FrameInterceptor injector = (ctx, frame) -> {
            Envelope envelope = Envelope.ofObject("2.0", true, frame.envelope().id(), null, null, false, true);
            byte[] error = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"chaos\"}}"
                    .getBytes(StandardCharsets.UTF_8);
            ctx.emit(Frame.synthesized(ctx.alloc().buffer().writeBytes(error), envelope,
                    frame.direction().reverse(), frame.sequence()));
            ctx.forward(frame);
        };
        InterceptorChain chain = chain(List.of(injector, named("after")));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}"));
        assertThat(toClient.frames).singleElement().satisfies(emitted -> {
            assertThat(emitted.isOriginal()).isFalse();
            assertThat(emitted.envelope().isResponse()).isTrue();
        });
        assertThat(toServer.frames).singleElement().satisfies(forwarded -> assertThat(forwarded.isOriginal()).isTrue());
        // "after" saw the request only, not the emitted error.
        assertThat(calls).containsExactly("after c->s");
    }

    @Test
    void aReplacementCanBeForwarded() {
        FrameInterceptor replacer = (ctx, frame) -> {
            Frame replacement = frame.withContent(
                    Unpooled.copiedBuffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"replaced\":true}}", StandardCharsets.UTF_8),
                    frame.envelope());
            frame.release();
            ctx.forward(replacement);
        };
        InterceptorChain chain = chain(List.of(replacer, named("after")));
        Frame original = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        chain.process(original);
        assertThat(original.refCnt()).isZero();
        assertThat(toClient.wires).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"replaced\":true}}");
        assertThat(calls).containsExactly("after s->c");
    }

    @Test
    void anInterceptorThatThrowsHasItsFrameForwardedUnchanged() {
        FrameInterceptor broken = (ctx, frame) -> {
            calls.add("broken");
            throw new IllegalStateException("deliberately broken interceptor");
        };
        InterceptorChain chain = chain(List.of(broken, named("after")));
        Frame frame = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        chain.process(frame);
        assertThat(calls).containsExactly("broken", "after c->s");
        assertThat(toServer.frames).containsExactly(frame);
        assertThat(toServer.wires).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        assertThat(chainLog.list).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.ERROR);
            assertThat(event.getFormattedMessage()).contains("forwarding the frame unchanged");
            assertThat(event.getThrowableProxy().getMessage()).isEqualTo("deliberately broken interceptor");
        });
    }

    @Test
    void anInterceptorThatThrowsAfterHandingItsFrameOnDoesNotSendItTwice() {
        FrameInterceptor forwardsThenThrows = (ctx, frame) -> {
            ctx.forward(frame);
            throw new IllegalStateException("deliberately broken after forwarding");
        };
        FrameInterceptor dropsThenThrows = (ctx, frame) -> {
            ctx.drop(frame);
            throw new IllegalStateException("deliberately broken after dropping");
        };
        chain(List.of(forwardsThenThrows, named("after")))
                .process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        assertThat(toServer.frames).hasSize(1);
        assertThat(calls).containsExactly("after c->s");

        calls.clear();
        Frame dropped = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        chain(List.of(dropsThenThrows, named("after"))).process(dropped);
        assertThat(dropped.refCnt()).isZero();
        assertThat(toServer.frames).hasSize(1);
        assertThat(calls).isEmpty();
        assertThat(chainLog.list).hasSize(2).noneMatch(event -> event.getFormattedMessage().contains("unchanged"));
    }

    @Test
    void aFailingSinkDoesNotMakeTheChainSendTwice() {
        RecordingSink failing = new RecordingSink() {
            @Override
            public void write(Frame frame) {
                super.write(frame);
                throw new IllegalStateException("deliberately failing sink");
            }
        };
        InterceptorChain chain = new InterceptorChain(List.of(named("a")), session, TransportKind.STDIO,
                channel.eventLoop(), ALLOC, connection, failing, toClient);
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        assertThat(failing.frames).hasSize(1);
    }

    @Test
    void correlationSetsAnswersBeforeTheFirstInterceptor() {
        List<String> seen = new ArrayList<>();
        FrameInterceptor rule = (ctx, frame) -> {
            seen.add(frame.direction().arrow() + " " + frame.method() + " " + frame.toolName());
            ctx.forward(frame);
        };
        InterceptorChain chain = chain(List.of(rule));
        chain.process(frame(CLIENT_TO_SERVER,
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\"}}"));
        chain.process(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[]}}"));
        assertThat(seen).containsExactly("c->s tools/call search_docs", "s->c tools/call search_docs");
        assertThat(toClient.frames).singleElement().satisfies(response -> {
            assertThat(response.answers()).isNotNull();
            assertThat(response.answers().id()).isEqualTo(9L);
            assertThat(response.answers().toolName()).isEqualTo("search_docs");
        });
        assertThat(session.correlator().pendingCount(CLIENT_TO_SERVER)).isZero();
    }

    @Test
    void aResponseCarriesWhenItsRequestWasReadOnTheExecutorsTicker() {
        channel.freezeTime();
        List<Long> waited = new ArrayList<>();
        FrameInterceptor timer = (ctx, frame) -> {
            if (frame.answeredRequestArrivalNanos() >= 0) {
                waited.add(ctx.executor().ticker().nanoTime() - frame.answeredRequestArrivalNanos());
            }
            ctx.forward(frame);
        };
        InterceptorChain chain = chain(List.of(timer));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\"}"));
        channel.advanceTimeBy(250, TimeUnit.MILLISECONDS);
        chain.process(List.of(frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}")));
        assertThat(waited).containsExactly(TimeUnit.MILLISECONDS.toNanos(250));
    }

    @Test
    void aDelayedForwardRunsOnTheExecutorInVirtualTime() {
        channel.freezeTime();
        FrameInterceptor delay = (ctx, frame) -> ctx.executor().schedule(() -> ctx.forward(frame), 5, TimeUnit.SECONDS);
        InterceptorChain chain = chain(List.of(delay, named("after")));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        channel.runScheduledPendingTasks();
        assertThat(toServer.frames).isEmpty();
        channel.advanceTimeBy(4, TimeUnit.SECONDS);
        channel.runScheduledPendingTasks();
        assertThat(toServer.frames).isEmpty();
        channel.advanceTimeBy(1, TimeUnit.SECONDS);
        channel.runScheduledPendingTasks();
        assertThat(toServer.frames).hasSize(1);
        assertThat(calls).containsExactly("after c->s");
        // Written outside any chunk's processing, so flushed at once rather than left queued.
        assertThat(toServer.log).endsWith("w1", "flush");
    }

    @Test
    void theContextExposesTheSessionTransportAllocatorAndConnection() {
        List<Object> seen = new ArrayList<>();
        FrameInterceptor closer = (ctx, frame) -> {
            seen.add(ctx.session());
            seen.add(ctx.transport());
            seen.add(ctx.alloc());
            seen.add(ctx.executor());
            ctx.connection().closeServerSide(frame);
            ctx.drop(frame);
        };
        chain(List.of(closer)).process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
        assertThat(seen).containsExactly(session, TransportKind.STDIO, ALLOC, channel.eventLoop());
        assertThat(connection.actions).containsExactly("closeServerSide #0");
    }

    @Test
    void framesFromAnotherThreadHopOntoTheExecutor() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        try {
            CompletableFuture<Thread> interceptorThread = new CompletableFuture<>();
            CompletableFuture<Frame> written = new CompletableFuture<>();
            FrameInterceptor probe = (ctx, frame) -> {
                interceptorThread.complete(Thread.currentThread());
                ctx.forward(frame);
            };
            InterceptorChain chain = new InterceptorChain(List.of(probe), session, TransportKind.STDIO, loop, ALLOC,
                    connection, written::complete, toClient);
            assertThat(loop.inEventLoop()).isFalse();
            chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
            Frame frame = written.get(10, TimeUnit.SECONDS);
            frame.release();
            Thread thread = interceptorThread.get(10, TimeUnit.SECONDS);
            assertThat(thread).isNotSameAs(Thread.currentThread());
            // The loop's thread: a task run there sees the same thread.
            assertThat(loop.submit(Thread::currentThread).get(10, TimeUnit.SECONDS)).isSameAs(thread);
        } finally {
            assertThat(loop.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void observedFramesAreCorrelatedShownToObserversOnlyAndReleasedWithoutReachingASink() {
        AtomicBoolean acting = new AtomicBoolean(false);
        FrameInterceptor observer = new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                calls.add("observer " + frame.envelope().kind() + " " + frame.method());
                ctx.forward(frame);
            }

            @Override
            public boolean onlyObserves(TransportKind transport, Direction direction) {
                return true;
            }
        };
        FrameInterceptor rule = new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                calls.add("rule " + frame.envelope().kind());
                ctx.drop(frame);
            }

            @Override
            public boolean inspects(TransportKind transport, Direction direction) {
                return acting.get();
            }
        };
        InterceptorChain chain = chain(List.of(observer, rule));
        assertThat(chain.onlyObserves(SERVER_TO_CLIENT)).isTrue();
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"));
        Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
        Frame notification = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}");
        // A rule appears after the transport asked: the frames it relays itself are not the rule's.
        acting.set(true);
        assertThat(chain.onlyObserves(SERVER_TO_CLIENT)).isFalse();
        chain.observe(List.of(response, notification));

        assertThat(calls).containsExactly("observer REQUEST tools/list", "rule REQUEST",
                "observer RESPONSE tools/list", "observer NOTIFICATION notifications/message");
        assertThat(response.answers().method()).as("correlated").isEqualTo("tools/list");
        assertThat(toClient.frames).as("the transport relays observed bytes itself").isEmpty();
        assertThat(response.refCnt()).isZero();
        assertThat(notification.refCnt()).isZero();
    }

    @Test
    void aLentFrameIsShownOnTheExecutorBeforeObserveReturnsAndLeftToItsLender() {
        List<Frame> seen = new ArrayList<>();
        InterceptorChain chain = chain(List.of(observer(seen, calls)));
        chain.process(frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"));
        ByteBuf wire = buffer("data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n");
        Frame lent = Frame.lent(wire, 6, wire.readableBytes() - 8, sniff("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}"),
                SERVER_TO_CLIENT, 0);

        chain.observe(lent);

        assertThat(calls).containsExactly("observer REQUEST tools/list", "observer RESPONSE tools/list {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
        assertThat(seen).hasSize(2).last().isSameAs(lent);
        assertThat(lent.answers().method()).as("correlated").isEqualTo("tools/list");
        assertThat(lent.refCnt()).as("not released: it is its lender's").isEqualTo(1);
        assertThat(wire.refCnt()).isEqualTo(1);
        assertThat(toClient.frames).isEmpty();
        wire.release();
    }

    @Test
    void aLentFrameObservedFromAnotherThreadIsMadeOwnedAndShownOnTheExecutor() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        try {
            List<Frame> seen = new CopyOnWriteArrayList<>();
            InterceptorChain chain = new InterceptorChain(List.of(observer(seen, calls)), session, TransportKind.HTTP,
                    loop, ALLOC, connection, toServer, toClient);
            String json = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}";
            ByteBuf wire = buffer("data: " + json + "\n\n");
            ByteBuf joinedWire = buffer("data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"a\"}\n\n");
            ByteBuf joined = buffer("{\"jsonrpc\":\"2.0\",\n\"method\":\"a\"}");
            Frame lent = Frame.lent(wire, 6, json.length(), sniff(json), SERVER_TO_CLIENT, 0);
            Frame lentJoined = Frame.lent(joinedWire, joined, sniff("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}"),
                    SERVER_TO_CLIENT, 1);
            Frame lentInList = Frame.lent(wire, 6, json.length(), sniff(json), SERVER_TO_CLIENT, 2);
            assertThat(loop.inEventLoop()).isFalse();

            chain.observe(lent);
            chain.observe(List.of(lentJoined, lentInList));
            // The lender lets go of its bytes as soon as observe returns (had the frames not been
            // made owned, the observer would find them freed and fail).
            wire.release();
            joinedWire.release();
            joined.release();
            // Tasks run in order: once this one ran, the observing ones have.
            loop.submit(() -> { }).get(10, TimeUnit.SECONDS);

            assertThat(calls).containsExactly("observer NOTIFICATION notifications/message " + json,
                    "observer NOTIFICATION a {\"jsonrpc\":\"2.0\",\n\"method\":\"a\"}",
                    "observer NOTIFICATION notifications/message " + json);
            assertThat(seen).hasSize(3).noneMatch(Frame::isLent).noneMatch(frame -> frame == lent);
            assertThat(seen).extracting(Frame::sequence).containsExactly(0L, 1L, 2L);
            assertThat(seen).allSatisfy(frame -> assertThat(frame.refCnt()).as("released after the observers").isZero());
            assertThat(wire.refCnt()).isZero();
            assertThat(joinedWire.refCnt()).isZero();
            assertThat(joined.refCnt()).isZero();
            assertThat(toClient.frames).isEmpty();
        } finally {
            assertThat(loop.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    // ---------------------------------------------------------------- helpers

    private InterceptorChain chain(List<FrameInterceptor> interceptors) {
        EventExecutor executor = channel.eventLoop();
        return new InterceptorChain(interceptors, session, TransportKind.STDIO, executor, ALLOC, connection,
                toServer, toClient);
    }

    /** An interceptor that records its name and the frame's direction, and forwards. */
    private FrameInterceptor named(String name) {
        return new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                calls.add(name + " " + frame.direction().arrow());
                ctx.forward(frame);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /**
     * An interceptor that only observes: records the frame's kind, method and content (copied, as
     * it keeps no reference to the frame's bytes) and the frame itself (to check what it was given).
     */
    private static FrameInterceptor observer(List<Frame> seen, List<String> calls) {
        return new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                seen.add(frame);
                calls.add("observer " + frame.envelope().kind() + " " + frame.method()
                        + (frame.direction() == SERVER_TO_CLIENT ? " " + frame.content().toString(StandardCharsets.UTF_8) : ""));
                ctx.forward(frame);
            }

            @Override
            public boolean onlyObserves(TransportKind transport, Direction direction) {
                return true;
            }
        };
    }

    private static ByteBuf buffer(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return ALLOC.buffer(bytes.length).writeBytes(bytes);
    }

    private static Envelope sniff(String json) {
        return new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8)));
    }

    private static Frame frame(Direction direction, String json) {
        byte[] bytes = (json + "\n").getBytes(StandardCharsets.UTF_8);
        Envelope envelope = new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes, 0, bytes.length - 1));
        return Frame.original(ALLOC.buffer(bytes.length).writeBytes(bytes), bytes.length - 1, envelope, direction, 0);
    }

    /**
     * Records what reaches it, with the bytes, and releases each frame as a transport would. The
     * log interleaves writes ("w" and the frame's id) and flushes ("flush").
     */
    private static class RecordingSink implements FrameSink {
        final List<Frame> frames = new ArrayList<>();
        final List<String> wires = new ArrayList<>();
        final List<String> log = new ArrayList<>();

        @Override
        public void write(Frame frame) {
            frames.add(frame);
            wires.add(frame.wire().toString(StandardCharsets.UTF_8));
            log.add("w" + frame.envelope().id());
            frame.release();
        }

        @Override
        public void flush() {
            log.add("flush");
        }

        List<Object> ids() {
            List<Object> ids = new ArrayList<>();
            frames.forEach(frame -> ids.add(frame.envelope().id()));
            return ids;
        }
    }

    /** Records the actions asked for, with the sequence number of the frame that asked. */
    private static final class RecordingConnection implements ConnectionControl {
        final List<String> actions = new ArrayList<>();

        @Override
        public void closeClientSide(Frame at) {
            actions.add("closeClientSide #" + at.sequence());
        }

        @Override
        public void closeServerSide(Frame at) {
            actions.add("closeServerSide #" + at.sequence());
        }

        @Override
        public void terminateServer(Frame at) {
            actions.add("terminateServer #" + at.sequence());
        }

        @Override
        public void killServer(Frame at) {
            actions.add("killServer #" + at.sequence());
        }
    }
}
