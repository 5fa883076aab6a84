package dev.mcpchaos.bench.codec;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Bytes and messages handled, which JMH reports beside the benchmark's ops/s as rates per second
 * (secondary results {@code bytes} and {@code messages}): with one benchmark thread, bytes/s per
 * core.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class Throughput {
    public long bytes;
    public long messages;

    @Setup(Level.Iteration)
    public void reset() {
        bytes = 0;
        messages = 0;
    }
}
