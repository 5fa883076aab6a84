package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.core.JsonFactory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the command line does before picocli runs, so that a proxy relays its first message
 * sooner: in stdio mode the proxy's start-up is added in full to the time before an MCP client
 * can do anything.
 */
final class StartUp {

    /** The commands that run a proxy (and so log, and relay through Netty's buffers). */
    private static final Set<String> PROXY_COMMANDS = Set.of("stdio", "http", "demo");

    /** Logging's set-up may take this long on a busy machine before the command goes ahead anyway. */
    private static final long LOGGING_WAIT_SECONDS = 10;

    /** Netty's system property for its leak detection, and the older name it still reads. */
    static final String LEAK_DETECTION_LEVEL = "io.netty.leakDetection.level";
    private static final String LEAK_DETECTION_LEVEL_OLD = "io.netty.leakDetectionLevel";

    /** Netty's system property for its default allocator. */
    static final String ALLOCATOR_TYPE = "io.netty.allocator.type";

    private final CountDownLatch loggingReady = new CountDownLatch(1);

    private StartUp() {
    }

    /**
     * Begins start-up for the command line {@code args}. Turns Netty's JFR allocator events off
     * unless {@code -Dio.netty.jfr.enabled} says otherwise (registering them loaded JFR's metadata
     * on the first buffer, about 0.15 s, in front of the first relayed message), and for a proxy
     * command starts setting up logging, Netty's buffer pool and jackson on a second thread while
     * the main one builds the command line. Netty's leak detection is off too unless
     * {@code -Dio.netty.leakDetection.level} (or its old name) says otherwise: its sampling and
     * the pipeline's {@code touch} of every message were 7-8 % of the HTTP relay's Java samples,
     * and the test suite runs the proxy with paranoid detection that fails on any leak.
     */
    static StartUp begin(String[] args) {
        setNettyProperties(args);
        StartUp startUp = new StartUp();
        if (args.length > 0 && PROXY_COMMANDS.contains(args[0])) {
            // A Runnable of its own, not a method reference: nothing on the way to a stdio proxy's
            // spawn links a lambda that it can do without (each is linked on first use).
            Thread warmUp = new Thread(startUp.new WarmUp(), "mcp-chaos-warm-up");
            warmUp.setDaemon(true); // never keeps the JVM up, whatever the command does
            warmUp.start();
        } else {
            startUp.loggingReady.countDown();
        }
        return startUp;
    }

    /**
     * The system properties {@link #begin} sets for Netty, which reads them when its classes are
     * initialized: each unless already set.
     */
    static void setNettyProperties(String[] args) {
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
        if (System.getProperty(LEAK_DETECTION_LEVEL) == null && System.getProperty(LEAK_DETECTION_LEVEL_OLD) == null) {
            System.setProperty(LEAK_DETECTION_LEVEL, "disabled");
        }
        if (args.length > 0 && args[0].equals("stdio")) {
            stdioAllocator();
        }
    }

    /**
     * For a stdio proxy, unless {@code -Dio.netty.allocator.type} says otherwise: Netty's default
     * allocator ({@code ByteBufAllocator.DEFAULT}, which the stdio relay does not use) is the
     * pooled one the relay uses. Otherwise it is the adaptive one, made by {@code ByteBufUtil}'s
     * class initialization the first time the relay looks for a line's end in a buffer: 10 ms of
     * CPU on the reader of the client's first message.
     *
     * <p>Not one heap arena, though that spares each pipe reader a 4 MiB chunk of its own (an
     * arena's first chunk, zeroed by the interpreter, 15-20 ms of CPU before a reader's first
     * read): with both directions on one arena, 1 MiB messages both ways were relayed about 8 %
     * slower (bench/stdio-throughput.sh's "both" case, alternated runs).
     */
    private static void stdioAllocator() {
        if (System.getProperty(ALLOCATOR_TYPE) == null) {
            System.setProperty(ALLOCATOR_TYPE, "pooled");
        }
    }

    /**
     * Waits until logging is set up, before the command runs: SLF4J hands out stand-in loggers to
     * a thread that asks while another sets it up, and prints a warning on stderr when it replays
     * what they logged.
     */
    void awaitLogging() {
        try {
            loggingReady.await(LOGGING_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The warm-up thread's work: {@link #warmUp()}. */
    private final class WarmUp implements Runnable {
        @Override
        public void run() {
            warmUp();
        }
    }

    /**
     * Initializes what every proxy needs and the main thread would otherwise wait for. Class
     * initialization is once per JVM and thread-safe, so whichever thread gets there first does
     * it and the other waits for it; nothing here has an effect beyond that.
     */
    private void warmUp() {
        try {
            LoggerFactory.getILoggerFactory();
        } catch (RuntimeException | LinkageError e) {
            // The command meets the same problem on its own path and says so there.
        } finally {
            loggingReady.countDown();
        }
        try {
            ByteBuf probe = PooledByteBufAllocator.DEFAULT.heapBuffer(64);
            probe.writeByte('{');
            probe.release();
            new JsonFactory().createNonBlockingByteArrayParser().close();
        } catch (IOException | RuntimeException | LinkageError e) {
            // Only an optimization: the proxy meets the same problem on its own path and says so there.
        }
    }
}
