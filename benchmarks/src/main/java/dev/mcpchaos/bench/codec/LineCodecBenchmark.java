package dev.mcpchaos.bench.codec;

import dev.mcpchaos.core.codec.line.LineFrameDecoder;
import dev.mcpchaos.core.codec.line.LineFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
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

import java.util.concurrent.TimeUnit;

/**
 * The stdio transport's framing: a stream of about 1 MiB of newline-terminated copies of one
 * message, fed in 64 KiB pooled heap chunks as {@code StreamPump} reads them from a pipe (so a
 * 64 KiB message is always split across chunks and gathered).
 *
 * <ul>
 *   <li>{@code framer}: {@link LineFramer} alone, each line released at once;</li>
 *   <li>{@code decoder}: {@link LineFrameDecoder}, framing plus the envelope sniff and the
 *       {@link Frame} of each line: what the relay does per message before the interceptors.</li>
 * </ul>
 *
 * One op is the whole stream; the {@code bytes} and {@code messages} counters give the rates.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class LineCodecBenchmark {

    static final int CHUNK_SIZE = 64 * 1024;
    static final int STREAM_SIZE = 1024 * 1024;

    @Param({"small", "call1k", "call64k", "toolsList"})
    public String message;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private byte[] stream;
    private int linesPerStream;
    private LineFramer framer;
    private LineFrameDecoder decoder;
    private long sink;

    private final LineFramer.Listener lineListener = new LineFramer.Listener() {
        @Override
        public void onLine(ByteBuf line, int contentLength) {
            sink += contentLength;
            line.release();
        }

        @Override
        public void onOversizedLine(long length) {
            throw new IllegalStateException("oversized line: " + length);
        }
    };

    private final LineFrameDecoder.FrameConsumer frameConsumer = frame -> {
        sink += frame.envelope().kind().ordinal() + frame.contentLength();
        frame.release();
    };

    @Setup(Level.Trial)
    public void setUp() {
        byte[] line = McpMessages.of(message);
        linesPerStream = Math.max(16, (STREAM_SIZE + line.length) / (line.length + 1));
        stream = new byte[linesPerStream * (line.length + 1)];
        for (int i = 0; i < linesPerStream; i++) {
            int at = i * (line.length + 1);
            System.arraycopy(line, 0, stream, at, line.length);
            stream[at + line.length] = '\n';
        }
        framer = new LineFramer(alloc);
        decoder = new LineFrameDecoder(Direction.SERVER_TO_CLIENT, new LineFramer(alloc));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        framer.close();
        decoder.finish(frameConsumer);
    }

    @Benchmark
    public long framer(Throughput counters) {
        for (int at = 0; at < stream.length; at += CHUNK_SIZE) {
            framer.feed(chunk(at), lineListener);
        }
        counters.bytes += stream.length;
        counters.messages += linesPerStream;
        return sink;
    }

    @Benchmark
    public long decoder(Throughput counters) {
        for (int at = 0; at < stream.length; at += CHUNK_SIZE) {
            decoder.decode(chunk(at), frameConsumer);
        }
        counters.bytes += stream.length;
        counters.messages += linesPerStream;
        return sink;
    }

    private ByteBuf chunk(int at) {
        int n = Math.min(CHUNK_SIZE, stream.length - at);
        return alloc.heapBuffer(n).writeBytes(stream, at, n);
    }
}
