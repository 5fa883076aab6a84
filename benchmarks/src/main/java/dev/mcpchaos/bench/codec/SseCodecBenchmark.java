package dev.mcpchaos.bench.codec;

import dev.mcpchaos.core.codec.sse.SseEvent;
import dev.mcpchaos.core.codec.sse.SseFrameDecoder;
import dev.mcpchaos.core.codec.sse.SseFramer;
import dev.mcpchaos.core.frame.Direction;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The Streamable HTTP transport's SSE framing: a stream of about 1 MiB of events
 * {@code event: message\nid: N\ndata: <message>\n\n}, as MCP servers write them, fed in 64 KiB
 * pooled chunks, direct by default as the epoll transport reads them ({@code -p buffer=heap} for
 * heap).
 *
 * <ul>
 *   <li>{@code framer}: {@link SseFramer} alone, each event released at once;</li>
 *   <li>{@code decoder}: {@link SseFrameDecoder}, framing plus the envelope sniff of each event's
 *       data and its Frame.</li>
 * </ul>
 *
 * One op is the whole stream; the {@code bytes} and {@code messages} counters give the rates.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class SseCodecBenchmark {

    static final int CHUNK_SIZE = 64 * 1024;
    static final int STREAM_SIZE = 1024 * 1024;

    @Param({"small", "call1k", "call64k", "toolsList"})
    public String message;

    @Param({"direct"})
    public String buffer;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private byte[] stream;
    private int eventsPerStream;
    private SseFramer framer;
    private SseFrameDecoder decoder;
    private long sink;

    private final SseFramer.Listener eventListener = new SseFramer.Listener() {
        @Override
        public void onEvent(SseEvent event) {
            sink += event.raw().readableBytes();
            event.release();
        }

        @Override
        public void onOversizedEvent(long size) {
            throw new IllegalStateException("oversized event: " + size);
        }

        @Override
        public void onUnterminatedTail(ByteBuf tail) {
            tail.release();
            throw new IllegalStateException("unterminated tail");
        }
    };

    private final SseFrameDecoder.FrameConsumer frameConsumer = frame -> {
        sink += frame.envelope().kind().ordinal() + frame.contentLength();
        frame.release();
    };

    @Setup(Level.Trial)
    public void setUp() {
        if (!buffer.equals("direct") && !buffer.equals("heap")) {
            throw new IllegalArgumentException("buffer: " + buffer + " (expected: direct or heap)");
        }
        byte[] data = McpMessages.of(message);
        ByteArrayOutputStream out = new ByteArrayOutputStream(STREAM_SIZE + 2 * data.length);
        int n = 0;
        while (out.size() < STREAM_SIZE || n < 16) {
            out.writeBytes(("event: message\nid: " + n + "\ndata: ").getBytes(StandardCharsets.UTF_8));
            out.writeBytes(data);
            out.writeBytes(new byte[] {'\n', '\n'});
            n++;
        }
        stream = out.toByteArray();
        eventsPerStream = n;
        framer = new SseFramer(alloc);
        decoder = new SseFrameDecoder(Direction.SERVER_TO_CLIENT, new SseFramer(alloc));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        framer.close();
        decoder.finish(frameConsumer);
    }

    @Benchmark
    public long framer(Throughput counters) {
        for (int at = 0; at < stream.length; at += CHUNK_SIZE) {
            framer.feed(chunk(at), eventListener);
        }
        counters.bytes += stream.length;
        counters.messages += eventsPerStream;
        return sink;
    }

    @Benchmark
    public long decoder(Throughput counters) {
        for (int at = 0; at < stream.length; at += CHUNK_SIZE) {
            decoder.decode(chunk(at), frameConsumer);
        }
        counters.bytes += stream.length;
        counters.messages += eventsPerStream;
        return sink;
    }

    private ByteBuf chunk(int at) {
        int n = Math.min(CHUNK_SIZE, stream.length - at);
        ByteBuf chunk = buffer.equals("direct") ? alloc.directBuffer(n) : alloc.heapBuffer(n);
        return chunk.writeBytes(stream, at, n);
    }
}
