package dev.mcpchaos.bench.codec;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.MessageKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
 * {@link EnvelopeSniffer#sniff} of one whole message per op, as the stdio relay calls it for each
 * line: a heap buffer by default (the array path; {@code -p buffer=direct} for the copy through
 * the sniffer's scratch array that direct buffers take).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class EnvelopeSnifferBenchmark {

    @Param({"small", "call1k", "call64k", "toolsList"})
    public String message;

    @Param({"heap"})
    public String buffer;

    private final EnvelopeSniffer sniffer = new EnvelopeSniffer();
    private ByteBuf bytes;
    private int length;

    @Setup(Level.Trial)
    public void setUp() {
        byte[] array = McpMessages.of(message);
        length = array.length;
        if (buffer.equals("heap")) {
            bytes = Unpooled.wrappedBuffer(array);
        } else if (buffer.equals("direct")) {
            bytes = Unpooled.directBuffer(length).writeBytes(array);
        } else {
            throw new IllegalArgumentException("buffer: " + buffer + " (expected: heap or direct)");
        }
        Envelope envelope = sniffer.sniff(bytes);
        if (envelope.kind() == MessageKind.MALFORMED || envelope.kind() == MessageKind.BLANK) {
            throw new IllegalStateException(message + " sniffed as " + envelope);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bytes.release();
    }

    @Benchmark
    public Envelope sniff(Throughput counters) {
        counters.bytes += length;
        counters.messages++;
        return sniffer.sniff(bytes);
    }
}
