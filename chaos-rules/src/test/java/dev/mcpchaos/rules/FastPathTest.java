package dev.mcpchaos.rules;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A message no rule matches costs a look at its envelope: nothing is allocated for it, however
 * many rules there are. Measured with the JVM's per-thread allocation counter, not with a clock.
 */
class FastPathTest {

    @Test
    void aMessageNoRuleMatchesAllocatesNothing() {
        StringBuilder yaml = new StringBuilder("rules:\n");
        for (int i = 0; i < 20; i++) {
            yaml.append("  - name: r").append(i).append("\n    match: {method: 'tools/*', tool: 'search")
                    .append(i).append("*', direction: client_to_server}\n    fault: {type: latency, latency: 1s}\n");
        }
        EmbeddedChannel channel = new EmbeddedChannel();
        RuleEngine engine = RuleEngine.builder(RuleSet.parse(yaml.toString(), "twenty.yaml")).seed(1)
                .ticker(channel.eventLoop().ticker()).build();
        String json = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"fetch\"}}";
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        Frame frame = Frame.original(Unpooled.wrappedBuffer(bytes), bytes.length,
                new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes)), Direction.CLIENT_TO_SERVER, 0);
        CountingContext ctx = new CountingContext(channel.eventLoop());

        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 200_000; i++) { // warm up, so the JIT has compiled the path being measured
            engine.onFrame(ctx, frame);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            engine.onFrame(ctx, frame);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(ctx.forwarded).isEqualTo(300_000);
        // Zero per message; a few hundred bytes of slack for the measurement itself.
        assertThat(allocated).as("bytes allocated for 100000 unmatched messages").isLessThan(4096);
        frame.release();
        channel.finishAndReleaseAll();
    }

    /** Counts forwards; the frame stays with the test. */
    private static final class CountingContext implements InterceptorContext {
        private final EventExecutor executor;
        private final Session session = new Session("bench");
        long forwarded;

        CountingContext(EventExecutor executor) {
            this.executor = executor;
        }

        @Override
        public Session session() {
            return session;
        }

        @Override
        public TransportKind transport() {
            return TransportKind.STDIO;
        }

        @Override
        public EventExecutor executor() {
            return executor;
        }

        @Override
        public ByteBufAllocator alloc() {
            return ByteBufAllocator.DEFAULT;
        }

        @Override
        public void forward(Frame frame) {
            forwarded++;
        }

        @Override
        public void emit(Frame frame) {
            throw new AssertionError("nothing is emitted on the fast path");
        }

        @Override
        public void drop(Frame frame) {
            throw new AssertionError("nothing is dropped on the fast path");
        }

        @Override
        public ConnectionControl connection() {
            throw new AssertionError("the connection is not touched on the fast path");
        }
    }
}
