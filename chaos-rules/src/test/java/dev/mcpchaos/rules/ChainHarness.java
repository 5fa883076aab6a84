package dev.mcpchaos.rules;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.FrameSink;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A rule engine in an {@link InterceptorChain} on an {@link EmbeddedChannel}'s event loop with
 * frozen (virtual) time, and sinks that record exactly the bytes a stdio writer would write.
 * Messages go in as original frames, as the line framer makes them; nothing sleeps.
 */
final class ChainHarness implements AutoCloseable {

    /** One write to a sink: the bytes that would go on the wire, and when (virtual time). */
    record Written(Direction direction, String text, byte[] bytes, Duration at) {
        /** The line without its delimiter. */
        String line() {
            return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        }
    }

    /**
     * Something a peer could see (a write, an action on the connection), with how many fault
     * events the listeners had been given when it happened.
     */
    record Seen(String what, int eventsBefore) {
    }

    final EmbeddedChannel channel = new EmbeddedChannel();
    final List<Written> written = new ArrayList<>();
    final List<FaultEvent> events = new ArrayList<>();
    final List<String> connectionActions = new ArrayList<>();
    /** The {@link Frame#framing()} of each write, in the order of {@link #written} (an SSE fault's fields). */
    final List<Object> framings = new ArrayList<>();
    /** Every write and connection action, in order, each with the events delivered before it. */
    final List<Seen> seen = new ArrayList<>();
    final RuleEngine engine;
    private final InterceptorChain chain;
    private final EnvelopeSniffer sniffer = new EnvelopeSniffer();
    private final long startNanos;
    private long clientSequence;
    private long serverSequence;

    ChainHarness(RuleSet rules, long seed) {
        this(rules, seed, TransportKind.STDIO, b -> { });
    }

    ChainHarness(RuleSet rules, long seed, TransportKind transport, Consumer<RuleEngine.Builder> customize) {
        channel.freezeTime();
        startNanos = channel.eventLoop().ticker().nanoTime();
        RuleEngine.Builder builder = RuleEngine.builder(rules).seed(seed).transport(transport)
                .ticker(channel.eventLoop().ticker()).listener(events::add);
        customize.accept(builder);
        engine = builder.build();
        chain = new InterceptorChain(List.<FrameInterceptor>of(engine), new Session("test"), transport,
                channel.eventLoop(), PooledByteBufAllocator.DEFAULT, new RecordingControl(),
                sink(Direction.CLIENT_TO_SERVER), sink(Direction.SERVER_TO_CLIENT));
    }

    /** Rules from YAML text. */
    static ChainHarness of(String yaml, long seed) {
        return new ChainHarness(RuleSet.parse(yaml, "test.yaml"), seed);
    }

    /** Sends a line from the client, as the stdio transport would read it. */
    void fromClient(String json) {
        send(Direction.CLIENT_TO_SERVER, json);
    }

    /** Sends a line from the server. */
    void fromServer(String json) {
        send(Direction.SERVER_TO_CLIENT, json);
    }

    void send(Direction direction, String json) {
        sendOn(direction, json, null);
    }

    /** Sends a line that travels on {@code route} (an HTTP exchange, on that transport). */
    void sendOn(Direction direction, String json, Object route) {
        sendOn(direction, json, route, null);
    }

    /** {@link #sendOn(Direction, String, Object)} with the transport's {@code framing} (an SSE event's fields). */
    void sendOn(Direction direction, String json, Object route, Object framing) {
        byte[] line = (json + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuf wire = PooledByteBufAllocator.DEFAULT.buffer(line.length).writeBytes(line);
        int contentLength = line.length - 1;
        Frame frame = Frame.original(wire, contentLength, sniffer.sniff(wire.slice(0, contentLength)), direction,
                direction == Direction.CLIENT_TO_SERVER ? clientSequence++ : serverSequence++);
        frame.route(route);
        frame.framing(framing);
        chain.process(frame);
    }

    /** Says no more frames come on {@code route} in {@code direction}; {@code then} runs when its held ones left. */
    void endRoute(Object route, Direction direction, Runnable then) {
        chain.endRoute(route, direction, then);
    }

    /** Says no more frames come in {@code direction}; {@code then} runs when the held ones left. */
    void endInput(Direction direction, Duration timeout, Runnable then) {
        chain.endInput(direction, timeout, then);
    }

    /**
     * Moves virtual time on by {@code by}, stopping at every deadline on the way so that a task
     * scheduled by a task runs at its own time, as it would on a real clock.
     */
    void advance(Duration by) {
        long remaining = by.toNanos();
        channel.runPendingTasks();
        while (true) {
            long next = channel.runScheduledPendingTasks(); // runs what is due; nanos to the next, or -1
            channel.runPendingTasks();
            if (next < 0 || next > remaining) {
                break;
            }
            channel.advanceTimeBy(next, TimeUnit.NANOSECONDS);
            remaining -= next;
        }
        channel.advanceTimeBy(remaining, TimeUnit.NANOSECONDS);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();
    }

    void advanceMillis(long millis) {
        advance(Duration.ofMillis(millis));
    }

    /** The lines written towards the server (delimiters stripped). */
    List<String> toServer() {
        return lines(Direction.CLIENT_TO_SERVER);
    }

    /** The lines written towards the client (delimiters stripped). */
    List<String> toClient() {
        return lines(Direction.SERVER_TO_CLIENT);
    }

    List<String> lines(Direction direction) {
        List<String> lines = new ArrayList<>();
        for (Written w : written) {
            if (w.direction == direction) {
                lines.add(w.line());
            }
        }
        return lines;
    }

    /** Everything written in one direction, concatenated, as the peer's pipe would carry it. */
    String stream(Direction direction) {
        StringBuilder sb = new StringBuilder();
        for (Written w : written) {
            if (w.direction == direction) {
                sb.append(w.text);
            }
        }
        return sb.toString();
    }

    Duration now() {
        return Duration.ofNanos(channel.eventLoop().ticker().nanoTime() - startNanos);
    }

    private FrameSink sink(Direction direction) {
        return frame -> {
            try {
                byte[] bytes;
                if (frame.isOriginal()) {
                    bytes = ByteBufUtil.getBytes(frame.wire());
                } else {
                    byte[] content = ByteBufUtil.getBytes(frame.content());
                    bytes = new byte[content.length + 1];
                    System.arraycopy(content, 0, bytes, 0, content.length);
                    bytes[content.length] = '\n';
                }
                if (frame.direction() != direction) {
                    throw new AssertionError("frame " + frame + " written to the " + direction + " sink");
                }
                written.add(new Written(direction, new String(bytes, StandardCharsets.UTF_8), bytes, now()));
                framings.add(frame.framing());
                seen("write " + direction + " " + new String(bytes, StandardCharsets.UTF_8).strip());
            } finally {
                frame.release();
            }
        };
    }

    /** Notes that a peer could see {@code what} now. */
    void seen(String what) {
        seen.add(new Seen(what, events.size()));
    }

    @Override
    public void close() {
        // Anything still scheduled would hold frames: run it out, then stop the loop.
        advance(Duration.ofHours(1));
        channel.finishAndReleaseAll();
    }

    private final class RecordingControl implements ConnectionControl {
        @Override
        public void closeClientSide(Frame at) {
            connectionActions.add("closeClientSide");
            seen("closeClientSide");
        }

        @Override
        public void closeServerSide(Frame at) {
            connectionActions.add("closeServerSide");
            seen("closeServerSide");
        }

        @Override
        public void terminateServer(Frame at) {
            connectionActions.add("terminateServer");
            seen("terminateServer");
        }

        @Override
        public void killServer(Frame at) {
            connectionActions.add("killServer");
            seen("killServer");
        }

        @Override
        public void stallResponse(Frame at) {
            connectionActions.add("stallResponse");
            seen("stallResponse");
        }
    }
}
